/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Loader tests: every bad plugin or module gives a one-line reason and
   never a crash, the other backends keep working, a plugin's
   strip_env_keys join the union, unknown trailing fields are ignored.
   Lazy loading: a command maps only the library of the backend it uses,
   so an enabled plugin whose constructor aborts (crashy) breaks nothing
   that does not use it.

   The fixture libraries are built from tests/fixtures/plugins/fixture.c
   (check_LTLIBRARIES, sdk/Makemodule.am); this test assembles an
   $XDG_DATA_HOME/berth/plugins tree from them and drives the public API. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <berth/berth.h>
#include <berth/plugins.h>

#ifndef FIXTURE_SRCDIR
#error "FIXTURE_SRCDIR must name tests/fixtures/plugins in the source tree"
#endif
#ifndef FIXTURE_LIBDIR
#error "FIXTURE_LIBDIR must name the .libs directory of the fixture plugins"
#endif

static char root[] = "/tmp/berth-test-loader-XXXXXX";
static char plugins[4096], modules[4096], config_file[4096];

/* plugin directory, library file (relative to it), fixture .so (or NULL) */
static const struct
{
  const char *dir;
  const char *lib;
  const char *so;
  bool enabled;
} layout[] = {
  { "goodplug", "lib/goodplug.so", "goodplug.so", true },
  { "bigplug", "bigplug.so", "bigplug.so", true },
  { "bad_abi", "bad_abi.so", "bad_abi.so", true },
  { "wrong_size", "wrong_size.so", "wrong_size.so", true },
  { "docker", "docker.so", "docker.so", true },
  { "dupe", "dupe.so", "dupe.so", true },
  { "no_entry", "no_entry.so", "no_entry.so", true },
  { "unresolved", "unresolved.so", "unresolved.so", true },
  { "missing_lib", NULL, NULL, true },
  { "malformed", "malformed.so", "goodplug.so", true },
  { "wrong_kind", "wrong_kind.so", "goodplug.so", true },
  { "too_new", "too_new.so", "goodplug.so", true },
  { "mismatch", "goodplug.so", "goodplug.so", true },
  { "escape", NULL, NULL, true },
  { "idle", "idle.so", "goodplug.so", false },
  { "greedy", "greedy.so", "greedy.so", true },
  { "greedy_yaml", "greedy_yaml.so", "goodplug.so", true },
  /* Enabled only by test_crashing_plugin_unused (it aborts when loaded). */
  { "crashy", "crashy.so", "crashy.so", false },
  { "abi1", "abi1.so", "abi1.so", true },
};

/* Each rejected plugin and a piece of its reason.  */
static const struct
{
  const char *name;
  const char *reason;
} rejected[] = {
  { "bad_abi", "ABI 999" },
  { "wrong_size", "size 16 " },
  { "docker", "reserved" },
  { "dupe", "already registered" },
  { "no_entry", "berth_provider_entry_v2" },
  { "abi1", "built for provider ABI 1 (berth 0.1): rebuild it against berth >= 0.2" },
  { "unresolved", "berth_fixture_symbol_nobody_defines" },
  { "missing_lib", "not found" },
  { "malformed", "malformed plugin.yaml" },
  { "no_yaml", "no plugin.yaml" },
  { "wrong_kind", "kind 'frontend'" },
  { "too_new", "requires berth >= 99.0" },
  { "mismatch", "must match" },
  { "escape", "inside the plugin directory" },
  { "ghost", "not installed" },
  { "greedy", "narrow glob" },
  { "greedy_yaml", "plugin.yaml: strip_env_keys entry 'A*'" },
};

static void
write_file (const char *path, const char *data)
{
  FILE *f = fopen (path, "we");
  assert_non_null (f);
  assert_true (fputs (data, f) >= 0);
  assert_int_equal (fclose (f), 0);
}

static void
copy_file (const char *from, const char *to)
{
  char buf[8192];
  FILE *in = fopen (from, "re");
  assert_non_null (in);
  size_t n = fread (buf, 1, sizeof buf - 1, in);
  fclose (in);
  buf[n] = '\0';
  write_file (to, buf);
}

static char *
path_join (const char *a, const char *b)
{
  char *s = NULL;
  assert_true (asprintf (&s, "%s/%s", a, b) > 0);
  return s;
}

static void
mkdir_ok (const char *p)
{
  assert_true (mkdir (p, 0700) == 0 || errno == EEXIST);
}

static void
write_config (const char *enabled)
{
  char *yaml = NULL;
  assert_true (asprintf (&yaml, "# test configuration\nplugins:\n  enabled: %s\n", enabled) > 0);
  write_file (config_file, yaml);
  free (yaml);
}

static const char default_enabled[] =
  "[goodplug, bigplug, bad_abi, wrong_size, docker, dupe, no_entry, unresolved, missing_lib,"
  " malformed, no_yaml, wrong_kind, too_new, mismatch, escape, ghost, greedy, greedy_yaml, abi1]";

static int
group_setup (void **state)
{
  assert_non_null (mkdtemp (root));
  char *d;

  const char *xdg[][2] = { { "XDG_DATA_HOME", "data" }, { "XDG_CONFIG_HOME", "config" },
                           { "XDG_STATE_HOME", "state" }, { "XDG_RUNTIME_DIR", "run" },
                           { "HOME", "home" } };
  for (size_t i = 0; i < sizeof xdg / sizeof xdg[0]; i++)
    {
      d = path_join (root, xdg[i][1]);
      mkdir_ok (d);
      setenv (xdg[i][0], d, 1);
      free (d);
    }
  unsetenv ("BERTH_CONFIG");

  snprintf (plugins, sizeof plugins, "%s/data/berth", root);
  mkdir_ok (plugins);
  strcat (plugins, "/plugins");
  mkdir_ok (plugins);
  snprintf (config_file, sizeof config_file, "%s/config/berth", root);
  mkdir_ok (config_file);
  strcat (config_file, "/config.yaml");

  for (size_t i = 0; i < sizeof layout / sizeof layout[0]; i++)
    {
      char *dir = path_join (plugins, layout[i].dir);
      char *src = path_join (FIXTURE_SRCDIR, layout[i].dir);
      char *from = path_join (src, "plugin.yaml");
      char *to = path_join (dir, "plugin.yaml");
      mkdir_ok (dir);
      copy_file (from, to);
      if (layout[i].so)
        {
          char *lib = path_join (dir, layout[i].lib);
          char *so = path_join (FIXTURE_LIBDIR, layout[i].so);
          if (strchr (layout[i].lib, '/'))
            {
              char *sub = path_join (dir, "lib");
              mkdir_ok (sub);
              free (sub);
            }
          assert_int_equal (symlink (so, lib), 0);
          free (lib);
          free (so);
        }
      free (dir);
      free (src);
      free (from);
      free (to);
    }
  d = path_join (plugins, "no_yaml");
  mkdir_ok (d);
  free (d);

  /* Modules: a good third-party one (dupe), and two broken ones.  */
  snprintf (modules, sizeof modules, "%s/modules", root);
  mkdir_ok (modules);
  d = path_join (modules, "dupe.so");
  assert_int_equal (symlink (FIXTURE_LIBDIR "/dupe.so", d), 0);
  free (d);
  d = path_join (modules, "badmod.so");
  assert_int_equal (symlink (FIXTURE_LIBDIR "/bad_abi.so", d), 0);
  free (d);
  /* A module file not named after its backend (it provides "dupe").  */
  d = path_join (modules, "renamed.so");
  assert_int_equal (symlink (FIXTURE_LIBDIR "/dupe.so", d), 0);
  free (d);
  d = path_join (modules, "README");
  write_file (d, "not a module\n");
  free (d);
  /* A relative entry is ignored; the absolute one is used.  */
  char *list = NULL;
  assert_true (asprintf (&list, "relative/modules:%s", modules) > 0);
  setenv ("BERTH_MODULEDIR", list, 1);
  free (list);

  write_config (default_enabled);
  return 0;
}

static int
group_teardown (void **state)
{
  char *cmd = NULL;
  if (asprintf (&cmd, "rm -rf '%s'", root) > 0)
    {
      if (system (cmd) != 0)
        fprintf (stderr, "cannot remove %s\n", root);
      free (cmd);
    }
  return 0;
}

/* A context as a command gets it: nothing loaded until used.  */
static berth_ctx *
lazy_ctx (const char *extra)
{
  berth_ctx *ctx = NULL;
  berth_error *err = NULL;
  int r = berth_ctx_new (&ctx, &err);
  if (r < 0)
    fail_msg ("berth_ctx_new: %s", berth_error_message (err));
  r = berth_ctx_load_config (ctx, extra, &err);
  if (r < 0)
    fail_msg ("berth_ctx_load_config: %s", berth_error_message (err));
  return ctx;
}

/* A context as a listing gets it: every module and plugin loaded.  */
static berth_ctx *
load_ctx (const char *extra)
{
  berth_ctx *ctx = lazy_ctx (extra);
  berth_ctx_load_providers (ctx);
  return ctx;
}

/* Whether the fixture library SO (e.g. "goodplug.so") is mapped here.  */
static bool
mapped (const char *so)
{
  char line[8192], want[4096];
  bool found = false;
  snprintf (want, sizeof want, "%s/%s\n", FIXTURE_LIBDIR, so);
  FILE *f = fopen ("/proc/self/maps", "re");
  assert_non_null (f);
  while (!found && fgets (line, sizeof line, f))
    {
      size_t n = strlen (line), w = strlen (want);
      found = n >= w && strcmp (line + n - w, want) == 0;
    }
  fclose (f);
  return found;
}

static const berth_plugin_info *
find_info (berth_ctx *ctx, const char *name, bool module)
{
  size_t cursor = 0;
  const berth_plugin_info *p;
  while ((p = berth_ctx_next_plugin (ctx, &cursor)))
    if (strcmp (berth_plugin_name (p), name) == 0 && berth_plugin_is_module (p) == module)
      return p;
  return NULL;
}

static void
test_each_rejection_has_one_line_reason (void **state)
{
  berth_ctx *ctx = load_ctx (NULL);
  for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++)
    {
      const berth_plugin_info *p = find_info (ctx, rejected[i].name, false);
      if (p == NULL)
        fail_msg ("no record for plugin %s", rejected[i].name);
      const char *status = berth_plugin_status (p);
      if (strstr (status, rejected[i].reason) == NULL)
        fail_msg ("plugin %s: reason '%s' lacks '%s'", rejected[i].name, status, rejected[i].reason);
      assert_null (strchr (status, '\n'));
      assert_true (strlen (status) > 10 && strlen (status) <= 400);
      assert_false (berth_plugin_loaded (p));
      assert_true (berth_plugin_enabled (p));
    }
  /* None of them registered (dupe is the module's, not the plugin's).  */
  assert_null (berth_ctx_find_provider (ctx, "bad_abi"));
  assert_null (berth_ctx_find_provider (ctx, "wrong_size"));
  assert_null (berth_ctx_find_provider (ctx, "no_entry"));
  assert_null (berth_ctx_find_provider (ctx, "unresolved"));
  assert_null (berth_ctx_find_provider (ctx, "someone_else"));
  /* The reserved name stays the built-in's (or absent), never the plugin's. */
  berth_provider *docker = berth_ctx_find_provider (ctx, "docker");
  if (docker)
    assert_null (strstr (berth_provider_origin (docker), "/plugins/"));
  berth_ctx_unref (ctx);
}

static void
test_reserved_names_the_plugin (void **state)
{
  berth_ctx *ctx = load_ctx (NULL);
  const berth_plugin_info *p = find_info (ctx, "docker", false);
  assert_non_null (p);
  assert_non_null (strstr (berth_plugin_status (p), "plugin 'docker'"));
  berth_ctx_unref (ctx);
}

static void
test_good_plugins_load (void **state)
{
  berth_ctx *ctx = load_ctx (NULL);
  const berth_plugin_info *p = find_info (ctx, "goodplug", false);
  assert_non_null (p);
  assert_true (berth_plugin_loaded (p));
  assert_string_equal (berth_plugin_status (p), "loaded");
  assert_string_equal (berth_plugin_version (p), "1.2.3");
  assert_string_equal (berth_plugin_description (p), "a working test plugin");

  berth_provider *prov = berth_ctx_find_provider (ctx, "goodplug");
  assert_non_null (prov);
  assert_non_null (strstr (berth_provider_origin (prov), "/plugins/goodplug/lib/goodplug.so"));
  assert_true (berth_provider_flag (prov, BERTH_FLAG_SUPPORTS_STREAMS));
  assert_true (berth_provider_flag (prov, BERTH_FLAG_USES_HOST_FILESYSTEM));
  assert_false (berth_provider_flag (prov, BERTH_FLAG_IS_REMOTE));
  /* Its flag callback fails for this one: fail-soft keeps guards on.  */
  assert_false (berth_provider_flag (prov, BERTH_FLAG_SKIP_CONTAINER_GUARDS));

  /* Built with a larger struct (unknown trailing members): accepted.  */
  p = find_info (ctx, "bigplug", false);
  assert_non_null (p);
  assert_true (berth_plugin_loaded (p));
  assert_non_null (berth_ctx_find_provider (ctx, "bigplug"));

  /* Installed but not enabled: listed, not loaded.  */
  p = find_info (ctx, "idle", false);
  assert_non_null (p);
  assert_false (berth_plugin_enabled (p));
  assert_false (berth_plugin_loaded (p));
  assert_string_equal (berth_plugin_status (p), "disabled");
  assert_null (berth_ctx_find_provider (ctx, "idle"));

  /* Lookup by name, for "unknown backend" errors.  */
  assert_ptr_equal (berth_ctx_find_plugin (ctx, "idle"), p);
  assert_null (berth_ctx_find_plugin (ctx, "nonexistent"));
  p = berth_ctx_find_plugin (ctx, "dupe"); /* the module loaded, not the plugin */
  assert_true (berth_plugin_loaded (p) && berth_plugin_is_module (p));
  p = berth_ctx_find_plugin (ctx, "bad_abi"); /* the plugin record over the module's */
  assert_false (berth_plugin_is_module (p));

  /* The provider list names the plugins like built-ins.  */
  const char *names = berth_ctx_provider_names (ctx);
  assert_non_null (strstr (names, "goodplug"));
  assert_null (strstr (names, "bad_abi"));
  berth_ctx_unref (ctx);
}

static void
test_modules (void **state)
{
  berth_ctx *ctx = load_ctx (NULL);
  const berth_plugin_info *m = find_info (ctx, "dupe", true);
  assert_non_null (m);
  assert_true (berth_plugin_loaded (m));
  assert_true (berth_plugin_enabled (m));
  berth_provider *prov = berth_ctx_find_provider (ctx, "dupe");
  assert_non_null (prov);
  assert_non_null (strstr (berth_provider_origin (prov), "/modules/dupe.so"));

  m = find_info (ctx, "badmod", true);
  assert_non_null (m);
  assert_false (berth_plugin_loaded (m));
  assert_non_null (strstr (berth_plugin_status (m), "ABI 999"));
  assert_null (find_info (ctx, "README", true));
  m = find_info (ctx, "renamed", true);
  assert_non_null (m);
  assert_false (berth_plugin_loaded (m));
  assert_non_null (strstr (berth_plugin_status (m), "provides 'dupe' but its file is renamed.so"));
  assert_null (berth_ctx_find_provider (ctx, "renamed"));
  berth_ctx_unref (ctx);
}

static void
test_strip_env_keys_union (void **state)
{
  /* Declared in plugin.yaml: stripped while goodplug is not loaded.  */
  berth_ctx *ctx = lazy_ctx (NULL);
  assert_true (berth_ctx_env_is_stripped (ctx, "GOODPLUG_LICENSE"));
  assert_true (berth_ctx_env_is_stripped (ctx, "FIXTURE_GLOB_ANYTHING"));
  assert_false (berth_ctx_env_is_stripped (ctx, "FIXTURE_PLUGIN_UNRELATED"));
  assert_false (mapped ("goodplug.so"));
  berth_ctx_unref (ctx);

  ctx = load_ctx (NULL);
  assert_true (berth_ctx_env_is_stripped (ctx, "GOODPLUG_LICENSE"));
  assert_false (berth_ctx_env_is_stripped (ctx, "FIXTURE_PLUGIN_UNRELATED"));
  /* Globs of names work too.  */
  assert_true (berth_ctx_env_is_stripped (ctx, "FIXTURE_GLOB_ANYTHING"));
  berth_ctx_unref (ctx);

  /* Not loaded (disabled, via an extra config file): not stripped.  */
  char *extra = path_join (root, "no-plugins.yaml");
  write_file (extra, "plugins:\n  enabled: []\n");
  ctx = load_ctx (extra);
  assert_null (berth_ctx_find_provider (ctx, "goodplug"));
  assert_false (berth_ctx_env_is_stripped (ctx, "GOODPLUG_LICENSE"));
  berth_ctx_unref (ctx);
  free (extra);
}

static char *
run (berth_ctx *ctx, const char *backend, const char *command, int *ret_exit)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_exec_spec ex = BERTH_EXEC_SPEC_INIT;
  berth_env *env = NULL;
  berth_result *res = NULL;
  berth_error *err = NULL;
  spec.backend = backend;
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    fail_msg ("%s: open: %s", backend, berth_error_message (err));
  ex.command = command;
  ex.timeout = 30;
  if (berth_env_execute (env, &ex, &res, &err) < 0)
    fail_msg ("%s: execute: %s", backend, berth_error_message (err));
  size_t len;
  char *out = strndup (berth_result_output (res, &len), 4096);
  *ret_exit = berth_result_exit_code (res);
  assert_string_equal (berth_result_backend (res), backend);
  berth_result_free (res);
  berth_env_unref (env);
  return out;
}

static void
test_others_keep_working (void **state)
{
  /* With all the broken plugins around, the built-in and the good
     plugins run commands, and the plugin's strip key never reaches a
     process of any backend.  */
  setenv ("GOODPLUG_LICENSE", "s3cret-value", 1);
  setenv ("FIXTURE_PLUGIN_UNRELATED", "visible", 1);
  berth_ctx *ctx = lazy_ctx (NULL); /* local runs first, goodplug unloaded */
  const char *cmd = "echo \"hi ${GOODPLUG_LICENSE-unset} ${FIXTURE_PLUGIN_UNRELATED-unset}\"";
  const char *backends[] = { "local", "goodplug", "bigplug", "dupe" };
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
    {
      int code = -1;
      char *out = run (ctx, backends[i], cmd, &code);
      if (strcmp (out, "hi unset visible\n") != 0)
        fail_msg ("%s printed '%s'", backends[i], out);
      assert_int_equal (code, 0);
      free (out);
    }
  /* The plugin transport runs in its environment's own directory.  */
  int code = -1;
  char *out = run (ctx, "goodplug", "cd /tmp; pwd; exit 3", &code);
  assert_string_equal (out, "/tmp\n");
  assert_int_equal (code, 3);
  free (out);
  berth_ctx_unref (ctx);
  unsetenv ("GOODPLUG_LICENSE");
  unsetenv ("FIXTURE_PLUGIN_UNRELATED");
}

typedef struct
{
  int checks, failed;
  bool saw_goodplug_ok, saw_bad_abi_failed, saw_idle_ok;
} doctor_state;

static void
doctor_cb (void *userdata, const char *name, bool ok, const char *detail, const char *fix)
{
  doctor_state *s = userdata;
  s->checks++;
  assert_non_null (name);
  assert_non_null (detail);
  assert_null (strchr (detail, '\n'));
  if (!ok)
    {
      s->failed++;
      assert_non_null (fix);
    }
  if (strcmp (name, "plugin goodplug") == 0 && ok)
    s->saw_goodplug_ok = true;
  if (strcmp (name, "plugin bad_abi") == 0 && !ok)
    s->saw_bad_abi_failed = true;
  if (strcmp (name, "plugin idle") == 0 && ok)
    s->saw_idle_ok = true;
}

static void
test_doctor (void **state)
{
  berth_ctx *ctx = load_ctx (NULL);
  doctor_state s = { 0 };
  int failed = berth_plugins_doctor (ctx, doctor_cb, &s);
  assert_int_equal (failed, s.failed);
  /* Every rejected plugin, and the broken modules.  */
  assert_int_equal (s.failed, (int) (sizeof rejected / sizeof rejected[0]) + 2);
  assert_true (s.saw_goodplug_ok);
  assert_true (s.saw_bad_abi_failed);
  assert_true (s.saw_idle_ok);
  berth_ctx_unref (ctx);
}

static void
test_enable_disable (void **state)
{
  berth_error *err = NULL;
  berth_ctx *ctx = load_ctx (NULL);

  /* Not installed, reserved, invalid: refused with a reason.  */
  assert_true (berth_plugins_set_enabled (ctx, "nosuchplugin", true, &err) < 0);
  assert_non_null (strstr (berth_error_message (err), "not installed"));
  err = berth_error_free (err);
  assert_true (berth_plugins_set_enabled (ctx, "local", true, &err) < 0);
  err = berth_error_free (err);
  assert_true (berth_plugins_set_enabled (ctx, "../evil", true, &err) < 0);
  err = berth_error_free (err);

  /* Already enabled: nothing to do.  */
  assert_int_equal (berth_plugins_set_enabled (ctx, "goodplug", true, NULL), 0);
  assert_int_equal (berth_plugins_set_enabled (ctx, "idle", false, NULL), 0);

  if (berth_plugins_set_enabled (ctx, "idle", true, &err) != 1)
    fail_msg ("enable idle: %s", err ? berth_error_message (err) : "no change");
  berth_ctx_unref (ctx);

  ctx = load_ctx (NULL);
  const berth_plugin_info *p = find_info (ctx, "idle", false);
  assert_non_null (p);
  assert_true (berth_plugin_enabled (p));
  /* Its library is goodplug's: provides 'goodplug', not 'idle'.  */
  assert_false (berth_plugin_loaded (p));
  assert_true (berth_plugin_loaded (find_info (ctx, "goodplug", false)));

  if (berth_plugins_set_enabled (ctx, "goodplug", false, &err) != 1)
    fail_msg ("disable goodplug: %s", err ? berth_error_message (err) : "no change");
  berth_ctx_unref (ctx);

  ctx = load_ctx (NULL);
  p = find_info (ctx, "goodplug", false);
  assert_false (berth_plugin_enabled (p));
  assert_null (berth_ctx_find_provider (ctx, "goodplug"));
  assert_true (berth_plugin_enabled (find_info (ctx, "idle", false)));
  assert_true (berth_plugin_enabled (find_info (ctx, "bad_abi", false)));
  berth_ctx_unref (ctx);

  /* The file keeps its comment.  */
  FILE *f = fopen (config_file, "re");
  char buf[4096];
  size_t n = fread (buf, 1, sizeof buf - 1, f);
  fclose (f);
  buf[n] = '\0';
  assert_non_null (strstr (buf, "# test configuration"));

  write_config (default_enabled);
}

static void
test_no_plugin_dir (void **state)
{
  /* No plugins directory and no module directory: nothing, no error.  */
  char *data = path_join (root, "empty-data");
  char *saved = strdup (getenv ("XDG_DATA_HOME"));
  char *saved_mod = strdup (getenv ("BERTH_MODULEDIR"));
  setenv ("XDG_DATA_HOME", data, 1);
  setenv ("BERTH_MODULEDIR", "/nonexistent/berth/modules", 1);
  berth_ctx *ctx = load_ctx (NULL);
  /* Only the enabled-but-absent records.  */
  size_t cursor = 0;
  const berth_plugin_info *p;
  while ((p = berth_ctx_next_plugin (ctx, &cursor)))
    {
      assert_false (berth_plugin_loaded (p));
      assert_non_null (strstr (berth_plugin_status (p), "not installed"));
    }
  assert_non_null (berth_ctx_find_provider (ctx, "local"));
  berth_ctx_unref (ctx);
  setenv ("XDG_DATA_HOME", saved, 1);
  setenv ("BERTH_MODULEDIR", saved_mod, 1);
  free (saved);
  free (saved_mod);
  free (data);
}

static void
test_lazy (void **state)
{
  /* Runs first: nothing of the fixtures is mapped yet.  */
  berth_ctx *ctx = lazy_ctx (NULL);
  assert_non_null (berth_ctx_find_provider (ctx, "local"));
  int code = -1;
  char *out = run (ctx, "local", "echo lazy", &code);
  assert_string_equal (out, "lazy\n");
  free (out);
  const char *libs[] = { "goodplug.so", "bigplug.so", "dupe.so", "bad_abi.so", "wrong_size.so", "greedy.so" };
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
    if (mapped (libs[i]))
      fail_msg ("a local command mapped %s", libs[i]);

  /* Known by name before loading, listed as not loaded yet.  */
  const berth_plugin_info *p = find_info (ctx, "goodplug", false);
  assert_non_null (p);
  assert_true (berth_plugin_enabled (p));
  assert_false (berth_plugin_loaded (p));
  assert_string_equal (berth_plugin_status (p), "not loaded yet");
  assert_string_equal (berth_plugin_version (p), "1.2.3");
  const char *names = berth_ctx_provider_names (ctx);
  assert_non_null (strstr (names, "goodplug"));
  assert_non_null (strstr (names, "bigplug"));
  assert_false (mapped ("goodplug.so") || mapped ("bigplug.so"));
  /* Already rejected by the scan (bad plugin.yaml): never listed.  */
  assert_null (strstr (names, "malformed"));

  /* Using a backend loads its library, and only it.  */
  berth_provider *prov = berth_ctx_find_provider (ctx, "goodplug");
  assert_non_null (prov);
  assert_true (mapped ("goodplug.so"));
  assert_false (mapped ("bigplug.so"));
  assert_true (berth_plugin_loaded (p));
  assert_string_equal (berth_plugin_status (p), "loaded");
  assert_ptr_equal (berth_ctx_find_provider (ctx, "goodplug"), prov);

  /* The module of a name wins over the plugin of that name.  */
  prov = berth_ctx_find_provider (ctx, "dupe");
  assert_non_null (prov);
  assert_non_null (strstr (berth_provider_origin (prov), "/modules/dupe.so"));
  assert_string_equal (berth_plugin_status (find_info (ctx, "dupe", false)), "not loaded yet");

  /* A broken one fails on use with its reason, for the error message.  */
  assert_null (berth_ctx_find_provider (ctx, "bad_abi"));
  p = berth_ctx_find_plugin (ctx, "bad_abi");
  assert_non_null (strstr (berth_plugin_status (p), "ABI 999"));
  assert_null (strstr (berth_ctx_provider_names (ctx), "bad_abi"));
  assert_false (mapped ("bigplug.so"));

  /* Listing loads the rest; every rejection and the broken module count. */
  int failed = berth_ctx_load_providers (ctx);
  assert_int_equal (failed, (int) (sizeof rejected / sizeof rejected[0]) + 2);
  assert_true (mapped ("bigplug.so"));
  assert_string_equal (berth_plugin_status (find_info (ctx, "bigplug", false)), "loaded");
  assert_non_null (strstr (berth_plugin_status (find_info (ctx, "dupe", false)), "already registered"));
  assert_int_equal (berth_ctx_load_providers (ctx), failed); /* idempotent */
  berth_ctx_unref (ctx);
}

static void
test_crashing_plugin_unused (void **state)
{
  /* crashy aborts in its constructor: enabled, it must not be loaded by
     anything but a use of its backend or a listing.  */
  char *extra = path_join (root, "crashy.yaml");
  write_file (extra, "plugins:\n  enabled: [goodplug, crashy]\n");
  berth_ctx *ctx = lazy_ctx (extra);
  int code = -1;
  char *out = run (ctx, "local", "echo alive", &code);
  assert_string_equal (out, "alive\n");
  free (out);
  out = run (ctx, "goodplug", "echo alive", &code);
  assert_string_equal (out, "alive\n");
  free (out);
  assert_true (berth_ctx_env_is_stripped (ctx, "GOODPLUG_LICENSE"));
  assert_non_null (strstr (berth_ctx_provider_names (ctx), "crashy"));
  const berth_plugin_info *p = berth_ctx_find_plugin (ctx, "crashy");
  assert_non_null (p);
  assert_true (berth_plugin_enabled (p));
  assert_string_equal (berth_plugin_status (p), "not loaded yet");
  assert_false (mapped ("crashy.so"));
  /* Disabling it loads nothing.  */
  assert_int_equal (berth_plugins_set_enabled (ctx, "crashy", false, NULL), 1);
  assert_false (mapped ("crashy.so"));
  berth_ctx_unref (ctx);
  free (extra);
  write_config (default_enabled);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_lazy), /* first: checks what is mapped */
    cmocka_unit_test (test_crashing_plugin_unused),
    cmocka_unit_test (test_each_rejection_has_one_line_reason),
    cmocka_unit_test (test_reserved_names_the_plugin),
    cmocka_unit_test (test_good_plugins_load),
    cmocka_unit_test (test_modules),
    cmocka_unit_test (test_strip_env_keys_union),
    cmocka_unit_test (test_others_keep_working),
    cmocka_unit_test (test_doctor),
    cmocka_unit_test (test_enable_disable),
    cmocka_unit_test (test_no_plugin_dir),
  };
  return cmocka_run_group_tests_name ("loader", tests, group_setup, group_teardown);
}
