/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Registry rules, fail-soft flags, env scrubbing, shell quoting.  */
#include "config.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "berth-private.h"

static int
failing_flag (const berth_config *cfg, uint32_t flag, bool *ret)
{
  return -EIO;
}

static int
guards_from_config (const berth_config *cfg, uint32_t flag, bool *ret)
{
  if (flag != BERTH_FLAG_SKIP_CONTAINER_GUARDS)
    return -ENOENT;
  *ret = berth_config_bool (cfg, "terminal.test_guards", false);
  return 0;
}

static int
stub_ensure (berth_env *env, berth_error **reterr)
{
  return 0;
}

static int
stub_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  return -ENOTSUP;
}

/* The callbacks every provider needs (berth_check_ops).  */
#define STUB_OPS BERTH_PROVIDER_OPS_INIT, .ensure = stub_ensure, .exec_prefix = stub_prefix

static const char *const box_keys[] = { "BOX_SESSION", NULL };

static const berth_provider_ops box = {
  STUB_OPS,
  .name = "box",
  .flags = BERTH_FLAG_IS_CONTAINER | BERTH_FLAG_SKIP_CONTAINER_GUARDS,
  .strip_env_keys = box_keys,
  .flag = failing_flag,
};
static const berth_provider_ops cfgbox = { STUB_OPS, .name = "cfgbox", .flag = guards_from_config };
static const berth_provider_ops reserved = { STUB_OPS, .name = "docker" };
static const berth_provider_ops badname = { STUB_OPS, .name = "Bad-Name" };
/* malformed: no transport, a relative default_cwd */
static const berth_provider_ops notransport = { BERTH_PROVIDER_OPS_INIT, .name = "notransport", .ensure = stub_ensure };
static const berth_provider_ops badcwd = { STUB_OPS, .name = "badcwd", .default_cwd = "work" };

static int
setup (void **state)
{
  berth_ctx *ctx = NULL;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  *state = ctx;
  return 0;
}

static int
teardown (void **state)
{
  berth_ctx_unref (*state);
  return 0;
}

static void
test_plugin_cannot_take_a_reserved_name (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_ctx_register (*state, &reserved, "/p/docker.so", NULL, true, &err), -BERTH_E_PLUGIN);
  assert_non_null (strstr (berth_error_message (err), "'docker' is reserved"));
  berth_error_free (err);
  /* The same name from berth's own table is fine.  */
  assert_int_equal (berth_ctx_register (*state, &reserved, "builtin", NULL, false, NULL), 0);
}

static void
test_duplicates_and_bad_names_are_rejected (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_ctx_register (*state, &box, "builtin", NULL, false, NULL), 0);
  assert_int_equal (berth_ctx_register (*state, &box, "/p/box.so", NULL, true, &err), -BERTH_E_PLUGIN);
  assert_non_null (strstr (berth_error_message (err), "already registered"));
  berth_error_free (err);
  err = NULL;
  assert_int_equal (berth_ctx_register (*state, &badname, "/p/x.so", NULL, true, &err), -BERTH_E_PLUGIN);
  assert_non_null (strstr (berth_error_message (err), "invalid backend name"));
  berth_error_free (err);
}

/* A built-in is checked as a module or plugin is (issue 12: only
   dlopened providers were).  */
static void
test_malformed_builtin_is_refused (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_ctx_register (*state, &notransport, "builtin", NULL, false, &err), -BERTH_E_PLUGIN);
  assert_non_null (strstr (berth_error_message (err), "neither exec_prefix nor start"));
  assert_non_null (strstr (berth_error_message (err), "builtin"));
  berth_error_free (err);
  err = NULL;
  assert_int_equal (berth_ctx_register (*state, &badcwd, "builtin", NULL, false, &err), -BERTH_E_PLUGIN);
  assert_non_null (strstr (berth_error_message (err), "default_cwd"));
  berth_error_free (err);
  assert_null (berth_ctx_find_registered (*state, "notransport"));
  assert_null (berth_ctx_find_registered (*state, "badcwd"));
}

static void
test_flags_are_data_and_fail_soft (void **state)
{
  berth_ctx *ctx = *state;
  berth_ctx_register (ctx, &box, "builtin", NULL, false, NULL);
  berth_provider *p = berth_ctx_find_provider (ctx, "box");
  assert_non_null (p);
  /* The callback fails: the declared defaults stand.  */
  assert_true (berth_provider_flag (p, BERTH_FLAG_IS_CONTAINER));
  assert_true (berth_provider_flag (p, BERTH_FLAG_SKIP_CONTAINER_GUARDS));
  assert_false (berth_provider_flag (p, BERTH_FLAG_IS_REMOTE));
  assert_null (berth_ctx_find_provider (ctx, "nope"));
  assert_string_equal (berth_flag_name (BERTH_FLAG_USES_HOST_FILESYSTEM), "uses_host_filesystem");
}

static void
test_dynamic_flag_reads_config (void **state)
{
  berth_ctx *ctx = *state;
  berth_ctx_register (ctx, &cfgbox, "builtin", NULL, false, NULL);
  berth_provider *p = berth_ctx_find_provider (ctx, "cfgbox");
  assert_false (berth_provider_flag (p, BERTH_FLAG_SKIP_CONTAINER_GUARDS));
  const char yaml[] = "terminal:\n  test_guards: true\n";
  assert_int_equal (berth_config_merge_string (ctx->config, "t.yaml", yaml, sizeof yaml - 1, NULL), 0);
  assert_true (berth_provider_flag (p, BERTH_FLAG_SKIP_CONTAINER_GUARDS));
}

static void
test_strip_union_and_passthrough (void **state)
{
  berth_ctx *ctx = *state;
  berth_ctx_register (ctx, &box, "builtin", NULL, false, NULL);
  assert_true (berth_ctx_env_is_stripped (ctx, "OPENAI_API_KEY"));
  assert_true (berth_ctx_env_is_stripped (ctx, "MY_SERVICE_TOKEN"));
  assert_true (berth_ctx_env_is_stripped (ctx, "AWS_SECRET_ACCESS_KEY"));
  assert_true (berth_ctx_env_is_stripped (ctx, "BOX_SESSION")); /* a provider's key */
  assert_true (berth_ctx_env_is_stripped (ctx, "BERTH_JOB"));
  assert_false (berth_ctx_env_is_stripped (ctx, "PATH"));
  assert_false (berth_ctx_env_is_stripped (ctx, "HOME"));
  const char yaml[] = "terminal:\n  env_passthrough: [MY_SERVICE_TOKEN, BOX_SESSION]\n";
  assert_int_equal (berth_config_merge_string (ctx->config, "t.yaml", yaml, sizeof yaml - 1, NULL), 0);
  assert_false (berth_ctx_env_is_stripped (ctx, "MY_SERVICE_TOKEN"));
  assert_false (berth_ctx_env_is_stripped (ctx, "BOX_SESSION"));
  assert_true (berth_ctx_env_is_stripped (ctx, "OPENAI_API_KEY"));
}

/* Quote, hand to sh -c, compare what arrives.  */
static void
test_shell_quote_round_trips (void **state)
{
  const char *words[] = { "plain", "with space", "it's", "\"dq\"", "$(echo no)", "`x`", "a\nb", "-n", "*", "~", "ü€", "", "\\", NULL };
  for (size_t i = 0; words[i]; i++)
    {
      char *q = berth_shell_quote (words[i]);
      char *cmd = berth_strdup_printf ("printf %%s %s", q);
      const char *argv[] = { "sh", "-c", cmd, NULL };
      char *out = NULL;
      int status = -1;
      assert_int_equal (berth_run_capture (argv, NULL, NULL, 10, 4096, &out, &status, NULL), 0);
      assert_int_equal (status, 0);
      assert_string_equal (out, words[i]);
      free (out);
      free (cmd);
      free (q);
    }
  char *joined = berth_shell_join (words);
  assert_non_null (joined);
  free (joined);
}

static void
test_run_capture_times_out (void **state)
{
  const char *argv[] = { "sleep", "30", NULL };
  char *out = NULL;
  int status = -1;
  berth_error *err = NULL;
  assert_int_equal (berth_run_capture (argv, NULL, NULL, 0.3, 100, &out, &status, &err), -ETIMEDOUT);
  assert_non_null (strstr (berth_error_message (err), "timed out"));
  berth_error_free (err);
}

static void
test_error_keeps_the_first_cause (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_error_set (&err, BERTH_E_BACKEND, "first %d", 1), -BERTH_E_BACKEND);
  berth_error_set (&err, BERTH_E_FAILED, "second");
  assert_string_equal (berth_error_message (err), "first 1");
  assert_int_equal (berth_error_code (err), BERTH_E_BACKEND);
  berth_error_free (err);
  assert_int_equal (berth_error_errno (NULL, ENOENT, "x"), -ENOENT);
}

static void
test_error_wrap_adds_context_and_keeps_the_code (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_error_set (&err, BERTH_E_BACKEND, "the daemon said no"), -BERTH_E_BACKEND);
  assert_int_equal (berth_error_wrap (&err, EIO, "bwrap: creating the jail"), -BERTH_E_BACKEND);
  assert_int_equal (berth_error_wrap (&err, EIO, "open %s", "x"), -BERTH_E_BACKEND);
  assert_string_equal (berth_error_message (err), "open x: bwrap: creating the jail: the daemon said no");
  assert_int_equal (berth_error_code (err), BERTH_E_BACKEND);
  berth_error_free (err);
  /* Nothing set below: the wrap is the error, with its errno text.  */
  err = NULL;
  assert_int_equal (berth_error_wrap (&err, -ENOENT, "reading %s", "f"), -ENOENT);
  assert_int_equal (berth_error_code (err), ENOENT);
  assert_string_equal (berth_error_message (err), "reading f: No such file or directory");
  berth_error_free (err);
  /* NULL reterr: harmless, the code comes back.  */
  assert_int_equal (berth_error_wrap (NULL, -ENOENT, "ctx"), -ENOENT);
  assert_int_equal (berth_error_wrap (NULL, BERTH_E_CONFIG, "ctx %d", 1), -BERTH_E_CONFIG);
}

static void
test_error_codes_are_positive_inside (void **state)
{
  berth_error *err = NULL;
  assert_int_equal (berth_error_set (&err, -BERTH_E_BACKEND, "x"), -BERTH_E_BACKEND);
  assert_int_equal (berth_error_code (err), BERTH_E_BACKEND);
  err = berth_error_free (err);
  assert_int_equal (berth_error_set (&err, -ENOTSUP, "y"), -ENOTSUP);
  assert_int_equal (berth_error_code (err), ENOTSUP);
  err = berth_error_free (err);
  assert_int_equal (berth_error_errno (&err, -EACCES, "z"), -EACCES);
  assert_int_equal (berth_error_code (err), EACCES);
  assert_string_equal (berth_error_message (err), "z: Permission denied");
  err = berth_error_free (err);
  /* 0 is no failure code: never an error whose code reads as success.  */
  assert_int_equal (berth_error_set (&err, 0, "w"), -BERTH_E_FAILED);
  assert_int_equal (berth_error_code (err), BERTH_E_FAILED);
  berth_error_free (err);
}

static int
nobin_ensure (berth_env *env, berth_error **reterr)
{
  return 0;
}

static int
nobin_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  *ret_argv = berth_strv_new ("/nonexistent/berth-test-client", NULL);
  *ret_flags = 0;
  return *ret_argv ? 0 : -ENOMEM;
}

static const berth_provider_ops nobin = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "nobin",
  .ensure = nobin_ensure,
  .exec_prefix = nobin_exec_prefix,
};

/* review-0.1 §3.4: the context berth_job_start adds to a failed spawn
   was dropped (a second berth_error_set is a no-op).  */
static void
test_spawn_failure_names_the_backend_and_the_cause (void **state)
{
  berth_ctx *ctx = *state;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  berth_env *env = NULL;
  berth_result *res = NULL;
  berth_error *err = NULL;
  assert_int_equal (berth_ctx_register (ctx, &nobin, "test", NULL, false, NULL), 0);
  es.backend = "nobin";
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open: %s", berth_error_message (err));
  xs.command = "true";
  assert_true (berth_env_execute (env, &xs, &res, &err) < 0);
  assert_null (res);
  const char *msg = berth_error_message (err);
  assert_non_null (strstr (msg, "nobin: "));
  assert_non_null (strstr (msg, "/nonexistent/berth-test-client"));
  assert_non_null (strstr (msg, strerror (ENOENT)));
  assert_int_equal (berth_error_code (err), ENOENT);
  berth_error_free (err);
  berth_env_unref (env);
}

/* Public handles are reference counted (issue 12.6).  */
static void
test_ctx_and_env_are_reference_counted (void **state)
{
  berth_ctx *ctx = *state;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  struct stat st;

  assert_ptr_equal (berth_ctx_ref (ctx), ctx);
  assert_null (berth_ctx_unref (ctx)); /* one left: the fixture's */
  assert_int_equal (berth_ctx_register (ctx, &nobin, "test", NULL, false, NULL), 0);
  assert_non_null (berth_ctx_find_provider (ctx, "nobin"));
  assert_null (berth_ctx_ref (NULL));

  es.backend = "nobin";
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open: %s", berth_error_message (err));
  char *dir = strdup (berth_env_state_dir (env));
  assert_non_null (dir);
  assert_int_equal (stat (dir, &st), 0);
  assert_ptr_equal (berth_env_ref (env), env);
  assert_null (berth_env_unref (env));
  /* Still held: a throw-away environment is not cleaned up yet.  */
  assert_int_equal (stat (dir, &st), 0);
  assert_string_equal (berth_env_backend (env), "nobin");
  assert_null (berth_env_unref (env));
  /* The last reference: cleaned up and freed.  */
  assert_int_equal (stat (dir, &st), -1);
  assert_null (berth_env_ref (NULL));
  free (dir);
}

/* ---- the ABI-2 lifecycle: order and the data block ---- */

static char life_log[512];

typedef struct life_data
{
  char zeroed[64];
  int attached;
} life_data;

static void
life_note (const char *what)
{
  strncat (life_log, what, sizeof life_log - strlen (life_log) - 2);
  strcat (life_log, " ");
}

static bool life_attach_fails;

static int
life_attach (berth_env *env, berth_error **reterr)
{
  life_data *d = berth_env_get_data (env);
  assert_non_null (d);
  if (life_attach_fails)
    {
      d->zeroed[0] = 'x'; /* half filled: zeroed again before the next attach */
      life_note ("attach-fails");
      return berth_error_set (reterr, BERTH_E_CONFIG, "life: bad settings");
    }
  for (size_t i = 0; i < sizeof d->zeroed; i++)
    assert_int_equal (d->zeroed[i], 0);
  assert_int_equal (d->attached, 0);
  d->attached = 1;
  life_note ("attach");
  return 0;
}

static int
life_ensure (berth_env *env, berth_error **reterr)
{
  assert_int_equal (((life_data *) berth_env_get_data (env))->attached, 1);
  life_note ("ensure");
  return 0;
}

static int
life_stop (berth_env *env, berth_error **reterr)
{
  life_note ("stop");
  return 0;
}

static int
life_remove (berth_env *env, berth_error **reterr)
{
  assert_int_equal (((life_data *) berth_env_get_data (env))->attached, 1);
  life_note ("remove");
  return 0;
}

static void
life_release (berth_env *env)
{
  life_note ("release");
}

static int
life_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  *ret_argv = berth_strv_new (NULL);
  *ret_flags = BERTH_PREFIX_PASSES_ENV | BERTH_PREFIX_PASSES_FDS;
  return 0;
}

static const berth_provider_ops life = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "life",
  .env_data_size = sizeof (life_data),
  .attach = life_attach,
  .ensure = life_ensure,
  .stop = life_stop,
  .remove = life_remove,
  .release = life_release,
  .exec_prefix = life_prefix,
};

static void
run_true (berth_env *env)
{
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  xs.command = "true";
  if (berth_env_execute (env, &xs, &res, &err) < 0)
    fail_msg ("execute: %s", berth_error_message (err));
  assert_int_equal (berth_result_exit_code (res), 0);
  assert_false (berth_result_environment_recreated (res));
  berth_result_free (res);
}

/* Attach runs first and once, on a zeroed block; a throw-away environment
   is removed at its end, a named one only by berth_env_remove (which
   attaches without ensuring); release comes last; a suspended one is
   ensured again by the next execute.  */
static void
test_lifecycle_order_and_data_block (void **state)
{
  char dir[] = "/tmp/berth-test-life-XXXXXX";
  assert_non_null (mkdtemp (dir));
  berth_ctx *ctx = NULL;
  berth_env *env = NULL;
  berth_error *err = NULL;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &life, "test", NULL, false, NULL), 0);
  es.backend = "life";

  life_log[0] = '\0';
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open: %s", berth_error_message (err));
  run_true (env);
  berth_env_unref (env);
  assert_string_equal (life_log, "attach ensure remove release ");

  life_log[0] = '\0';
  es.name = "kept";
  assert_int_equal (berth_env_open (ctx, &es, &env, NULL), 0);
  assert_int_equal (berth_env_stop_idle (env, NULL), 0);
  assert_int_equal (berth_env_stop_idle (env, NULL), 0); /* suspended already: once */
  run_true (env);
  run_true (env);
  berth_env_unref (env);
  assert_string_equal (life_log, "attach ensure stop ensure release ");

  life_log[0] = '\0';
  assert_int_equal (berth_env_remove (ctx, "kept", NULL), 0);
  assert_string_equal (life_log, "attach remove release ");

  /* A failing attach: released at once, never ensured or removed on a
     half-filled block; the open fails with its error.  */
  life_log[0] = '\0';
  life_attach_fails = true;
  es.name = NULL;
  assert_int_equal (berth_env_open (ctx, &es, &env, &err), -BERTH_E_CONFIG);
  assert_string_equal (berth_error_message (err), "life: bad settings");
  berth_error_free (err);
  err = NULL;
  life_attach_fails = false;
  assert_string_equal (life_log, "attach-fails release attach-fails release ");
  berth_ctx_unref (ctx);
  char *rm = NULL;
  assert_true (asprintf (&rm, "rm -rf %s", dir) > 0);
  assert_int_equal (system (rm), 0);
  free (rm);
}

/* ---- files: the host path and the transport path agree ---- */

static const berth_provider_ops hostfs = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "hostfs",
  .flags = BERTH_FLAG_USES_HOST_FILESYSTEM,
  .ensure = nobin_ensure,
  .exec_prefix = life_prefix,
};
/* the same host, reached only through its transport (as a container)  */
static const berth_provider_ops viaexec = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "viaexec",
  .ensure = nobin_ensure,
  .exec_prefix = life_prefix,
};

static void
files_on (berth_ctx *ctx, const char *backend, const char *dir)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  void *data = NULL;
  size_t len = 0;
  char *s = NULL, path[512];
  static const char bytes[] = "a\0b\xff\n";
  es.backend = backend;
  es.cwd = dir;
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open %s: %s", backend, berth_error_message (err));

  snprintf (path, sizeof path, "%s/d/e/f.bin", dir);
  assert_int_equal (berth_env_write_file (env, path, bytes, sizeof bytes, 0600, &err), 0);
  struct stat st;
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  assert_int_equal (berth_env_read_file (env, "d/e/f.bin", 0, &data, &len, &err), 0); /* relative: the cwd */
  assert_int_equal (len, sizeof bytes);
  assert_memory_equal (data, bytes, sizeof bytes);
  free (data);
  /* bounded */
  assert_int_equal (berth_env_read_file (env, path, 3, &data, &len, &err), -EFBIG);
  assert_non_null (strstr (berth_error_message (err), "larger than the 3 bytes"));
  err = berth_error_free (err);
  /* errors with the path */
  assert_int_equal (berth_env_read_file (env, "/no/such/berth-file", 0, &data, &len, &err), -ENOENT);
  assert_string_equal (berth_error_message (err), "cannot read /no/such/berth-file: No such file or directory");
  err = berth_error_free (err);
  assert_int_equal (berth_env_read_file (env, dir, 0, &data, &len, &err), -EISDIR);
  err = berth_error_free (err);
  assert_int_equal (berth_env_fetch_file (env, "/dev/null", 0, &data, &len, &err), -EINVAL);
  assert_string_equal (berth_error_message (err), "cannot fetch /dev/null: not a regular file");
  err = berth_error_free (err);
  assert_int_equal (berth_env_fetch_file (env, path, 0, &data, &len, &err), 0);
  free (data);
  /* realpath through a link */
  snprintf (path, sizeof path, "%s/link", dir);
  assert_int_equal (symlink ("d/e", path), 0);
  assert_int_equal (berth_env_realpath (env, "link/f.bin", &s, &err), 0);
  char want[512];
  snprintf (want, sizeof want, "%s/d/e/f.bin", dir);
  assert_string_equal (s, want);
  free (s);
  assert_int_equal (berth_env_realpath (env, "no-such", &s, &err), -ENOENT);
  err = berth_error_free (err);
  unlink (path);
  assert_int_equal (berth_env_temp_dir (env, &s, &err), 0);
  assert_true (s[0] == '/');
  free (s);
  berth_env_unref (env);
}

static void
test_files_host_and_transport (void **state)
{
  berth_ctx *ctx = *state;
  assert_int_equal (berth_ctx_register (ctx, &hostfs, "test", NULL, false, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &viaexec, "test", NULL, false, NULL), 0);
  const char *const backends[] = { "hostfs", "viaexec" };
  for (size_t i = 0; i < 2; i++)
    {
      char dir[] = "/tmp/berth-test-files-XXXXXX";
      assert_non_null (mkdtemp (dir));
      files_on (ctx, backends[i], dir);
      char *rm = NULL;
      assert_true (asprintf (&rm, "rm -rf %s", dir) > 0);
      assert_int_equal (system (rm), 0);
      free (rm);
    }
}

/* A running exec holds its environment and an environment its context:
   the caller may drop its own references first.  */
static void
test_exec_holds_env_holds_ctx (void **state)
{
  berth_ctx *ctx = NULL;
  berth_env *env = NULL;
  berth_exec *x = NULL;
  berth_result *res = NULL;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &life, "test", NULL, false, NULL), 0);
  es.backend = "life";
  assert_int_equal (berth_env_open (ctx, &es, &env, NULL), 0);
  assert_null (berth_ctx_unref (ctx)); /* the environment keeps it */
  xs.command = "echo still here";
  assert_int_equal (berth_env_exec_begin (env, &xs, &x, NULL), 0);
  life_log[0] = '\0';
  assert_null (berth_env_unref (env)); /* the exec keeps it */
  assert_string_equal (life_log, "");
  int r;
  while ((r = berth_exec_step (x, &res, NULL)) > 0)
    {
      struct pollfd p = { berth_exec_fd (x), POLLIN, 0 };
      poll (&p, 1, 1000);
    }
  assert_int_equal (r, 0);
  assert_string_equal (berth_result_output (res, NULL), "still here\n");
  berth_result_free (res);
  berth_exec_free (x); /* the last reference: removed, released, ctx freed */
  assert_string_equal (life_log, "remove release ");
}

/* Small allocations abort instead of returning NULL (DESIGN §4).  */
static void
test_small_allocations_abort_when_memory_runs_out (void **state)
{
  char *s = xasprintf ("%s-%d", "a", 1);
  assert_string_equal (s, "a-1");
  free (s);
  s = xstrdup ("b");
  assert_string_equal (s, "b");
  free (s);
  assert_null (xstrdup (NULL));
  free (xmalloc (0));
  free (xcalloc (0, 0));
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      volatile size_t huge = SIZE_MAX / 2;
      struct rlimit no_core = { 0, 0 };
      setrlimit (RLIMIT_CORE, &no_core);
      signal (SIGABRT, SIG_DFL); /* not cmocka's handler */
      free (xmalloc (huge));
      _exit (0);
    }
  int status = 0;
  assert_int_equal (waitpid (pid, &status, 0), pid);
#if defined(__SANITIZE_ADDRESS__)
  /* ASan refuses the size itself (allocation-size-too-big) and ends the
     process with its own report: what matters is that it never returns. */
  assert_true (WIFSIGNALED (status) || (WIFEXITED (status) && WEXITSTATUS (status) != 0));
#else
  assert_true (WIFSIGNALED (status));
  assert_int_equal (WTERMSIG (status), SIGABRT);
#endif
}

/* ---- admission under a hosted scope ---- */

static int
nop_op (berth_env *env, berth_error **reterr)
{
  return 0;
}

/* A backend that claims serves_hosted_scopes but lacks an op of the
   hosted interface is refused before anything is made, naming it.  */
static const berth_provider_ops hosted_nostop = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "nostop",
  .flags = BERTH_FLAG_SERVES_HOSTED_SCOPES,
  .ensure = nobin_ensure,
  .remove = nop_op,
  .exec_prefix = life_prefix,
};
static const berth_provider_ops hosted_noexec = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "noexec",
  .flags = BERTH_FLAG_SERVES_HOSTED_SCOPES,
  .ensure = nobin_ensure,
  .stop = nop_op,
  .remove = nop_op,
};
static const berth_provider_ops hosted_noremove = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "noremove",
  .flags = BERTH_FLAG_SERVES_HOSTED_SCOPES,
  .ensure = nobin_ensure,
  .stop = nop_op,
  .exec_prefix = life_prefix,
};

static void
test_admit_wants_the_whole_hosted_interface (void **state)
{
  char dir[] = "/tmp/berth-test-admit-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *old = getenv ("XDG_STATE_HOME") ? strdup (getenv ("XDG_STATE_HOME")) : NULL;
  setenv ("XDG_STATE_HOME", dir, 1);
  berth_ctx *ctx = NULL;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &hosted_nostop, "test", NULL, false, NULL), 0);
  /* no transport: refused at registration already (berth_check_ops, for
     built-ins as for plugins), before any open */
  assert_int_equal (berth_ctx_register (ctx, &hosted_noexec, "test", NULL, false, NULL), -BERTH_E_PLUGIN);
  assert_int_equal (berth_ctx_register (ctx, &hosted_noremove, "test", NULL, false, NULL), 0);
  assert_int_equal (berth_ctx_set_scope (ctx, "acme", "agent-a", NULL), 0);
  const char *names[] = { "nostop", "noremove" }, *missing[] = { "stop", "remove" };
  for (int i = 0; i < 2; i++)
    {
      berth_env_spec es = BERTH_ENV_SPEC_INIT;
      berth_env *env = NULL;
      berth_error *err = NULL;
      es.backend = names[i];
      int r = berth_env_open (ctx, &es, &env, &err);
      if (r != -BERTH_E_HOSTED || strstr (berth_error_message (err), missing[i]) == NULL)
        fail_msg ("%s: %d %s (wanted BERTH_E_HOSTED naming %s)", names[i], r, err ? berth_error_message (err) : "", missing[i]);
      berth_error_free (err);
      assert_null (env);
    }
  /* nothing was made: no state directory for the sandbox */
  char *envs = NULL, *cmd = NULL;
  assert_true (asprintf (&envs, "%s/berth/envs", dir) > 0);
  struct stat st;
  assert_true (stat (envs, &st) < 0 || st.st_nlink == 2);
  berth_ctx_unref (ctx);
  if (old)
    setenv ("XDG_STATE_HOME", old, 1);
  else
    unsetenv ("XDG_STATE_HOME");
  free (old);
  assert_true (asprintf (&cmd, "rm -rf %s", dir) > 0);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (envs);
}

/* Under a hosted scope with terminal.container_persistent: false, a
   backend declaring session_isolated_when_nonpersistent gives each
   session its own sandbox; one without keeps the agent's (by identity).  */
static const berth_provider_ops hosted_shared = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "sharedbox",
  .flags = BERTH_FLAG_SERVES_HOSTED_SCOPES,
  .ensure = nobin_ensure,
  .stop = nop_op,
  .remove = nop_op,
  .exec_prefix = life_prefix,
};
static const berth_provider_ops hosted_isolated = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "isobox",
  .flags = BERTH_FLAG_SERVES_HOSTED_SCOPES | BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT,
  .ensure = nobin_ensure,
  .stop = nop_op,
  .remove = nop_op,
  .exec_prefix = life_prefix,
};

static void
test_nonpersistent_hosted_follows_the_flag (void **state)
{
  char dir[] = "/tmp/berth-test-iso-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *old = getenv ("XDG_STATE_HOME") ? strdup (getenv ("XDG_STATE_HOME")) : NULL;
  setenv ("XDG_STATE_HOME", dir, 1);
  char *yaml = NULL, *cmd = NULL;
  assert_true (asprintf (&yaml, "%s/np.yaml", dir) > 0);
  FILE *f = fopen (yaml, "w");
  assert_non_null (f);
  fputs ("terminal:\n  container_persistent: false\n", f);
  fclose (f);
  berth_ctx *ctx = NULL;
  berth_error *err = NULL;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  if (berth_ctx_load_config (ctx, yaml, &err) < 0)
    fail_msg ("config: %s", berth_error_message (err));
  assert_int_equal (berth_ctx_register (ctx, &hosted_shared, "test", NULL, false, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &hosted_isolated, "test", NULL, false, NULL), 0);
  assert_int_equal (berth_ctx_set_scope (ctx, "acme", "agent-a", NULL), 0);
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *e1 = NULL, *e2 = NULL;
  es.backend = "isobox";
  assert_int_equal (berth_env_open (ctx, &es, &e1, NULL), 0);
  assert_int_equal (berth_env_open (ctx, &es, &e2, NULL), 0);
  assert_null (berth_env_name (e1));
  assert_string_not_equal (berth_env_id (e1), berth_env_id (e2));
  berth_env_unref (e1);
  berth_env_unref (e2);
  es.backend = "sharedbox";
  if (berth_env_open (ctx, &es, &e1, &err) < 0)
    fail_msg ("open sharedbox: %s", berth_error_message (err));
  assert_non_null (berth_env_name (e1));
  assert_int_equal (strncmp (berth_env_name (e1), "h-", 2), 0);
  berth_env_unref (e1);
  berth_ctx_unref (ctx);
  if (old)
    setenv ("XDG_STATE_HOME", old, 1);
  else
    unsetenv ("XDG_STATE_HOME");
  free (old);
  assert_true (asprintf (&cmd, "rm -rf %s", dir) > 0);
  assert_int_equal (system (cmd), 0);
  free (cmd);
  free (yaml);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_plugin_cannot_take_a_reserved_name, setup, teardown),
    cmocka_unit_test_setup_teardown (test_duplicates_and_bad_names_are_rejected, setup, teardown),
    cmocka_unit_test_setup_teardown (test_malformed_builtin_is_refused, setup, teardown),
    cmocka_unit_test_setup_teardown (test_flags_are_data_and_fail_soft, setup, teardown),
    cmocka_unit_test_setup_teardown (test_dynamic_flag_reads_config, setup, teardown),
    cmocka_unit_test_setup_teardown (test_strip_union_and_passthrough, setup, teardown),
    cmocka_unit_test (test_shell_quote_round_trips),
    cmocka_unit_test (test_run_capture_times_out),
    cmocka_unit_test (test_error_keeps_the_first_cause),
    cmocka_unit_test (test_error_wrap_adds_context_and_keeps_the_code),
    cmocka_unit_test (test_error_codes_are_positive_inside),
    cmocka_unit_test_setup_teardown (test_spawn_failure_names_the_backend_and_the_cause, setup, teardown),
    cmocka_unit_test_setup_teardown (test_ctx_and_env_are_reference_counted, setup, teardown),
    cmocka_unit_test (test_small_allocations_abort_when_memory_runs_out),
    cmocka_unit_test (test_lifecycle_order_and_data_block),
    cmocka_unit_test (test_exec_holds_env_holds_ctx),
    cmocka_unit_test_setup_teardown (test_files_host_and_transport, setup, teardown),
    cmocka_unit_test (test_admit_wants_the_whole_hosted_interface),
    cmocka_unit_test (test_nonpersistent_hosted_follows_the_flag),
  };
  /* The environments of these tests live in a home of their own (the
     build may run in a jail whose real home is read-only).  */
  char home[] = "/tmp/berth-test-runtime-XXXXXX";
  if (mkdtemp (home) == NULL)
    return 1;
  setenv ("XDG_STATE_HOME", home, 1);
  setenv ("XDG_RUNTIME_DIR", home, 1);
  setenv ("XDG_CACHE_HOME", home, 1);
  int failed = cmocka_run_group_tests (tests, NULL, NULL);
  char *rm = NULL;
  if (asprintf (&rm, "rm -rf %s", home) > 0 && system (rm) != 0)
    failed++;
  free (rm);
  return failed;
}
