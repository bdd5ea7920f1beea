/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every public call on an environment, process or file handle checks the
   bound scope first (DESIGN 3.3): a handle made under local/a is refused
   (BERTH_E_SCOPE) under local/b and under no scope, whatever it cached --
   a final state, a closed stdin, a lost process, a cleaned environment.
   Public API only, the real local backend.  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <berth/berth.h>

static void
set_scope (berth_ctx *ctx, const char *tenant, const char *agent)
{
  assert_int_equal (berth_ctx_set_scope (ctx, tenant, agent, NULL), 0);
}

static void
refused (int r, berth_error *err, const char *what)
{
  if (r != -BERTH_E_SCOPE)
    fail_msg ("%s under another scope: %d (%s), not -BERTH_E_SCOPE", what, r, err ? berth_error_message (err) : "no error");
  berth_error_free (err);
}

#define REFUSED(call, what)         \
  do                                \
    {                               \
      berth_error *err_ = NULL;     \
      berth_error **reterr = &err_; \
      (void) reterr;                \
      int r_ = (int) (call);        \
      refused (r_, err_, what);     \
    }                               \
  while (0)

static void
list_nothing (void *userdata, const char *id, const char *command, int64_t started, int state, int exit_code, const char *how)
{
  (void) id, (void) command, (void) started, (void) state, (void) exit_code, (void) how;
  (*(int *) userdata)++;
}

static berth_process *
start (berth_env *env, const char *cmd, bool has_stdin)
{
  berth_process_spec ps = BERTH_PROCESS_SPEC_INIT;
  berth_process *p = NULL;
  berth_error *err = NULL;
  ps.command = cmd;
  ps.has_stdin = has_stdin;
  if (berth_env_start_process (env, &ps, &p, &err) < 0)
    fail_msg ("start %s: %s", cmd, berth_error_message (err));
  return p;
}

static void
wait_exited (berth_process *p)
{
  for (int i = 0; i < 200; i++)
    {
      int s = berth_process_poll (p, NULL, NULL, NULL);
      if (s == BERTH_PROCESS_EXITED)
        return;
      usleep (50000);
    }
  fail_msg ("process %s did not end", berth_process_id (p));
}

/* All the handle calls on ENV and P under the scope now bound: refused.  */
static void
all_refused (berth_env *env, berth_process *p, const char *under)
{
  char what[128];
  int n = 0;
#define W(s) (snprintf (what, sizeof what, "%s (%s)", s, under), what)
  REFUSED (berth_process_poll (p, NULL, NULL, reterr), W ("poll"));
  REFUSED (berth_process_stop (p, reterr), W ("stop"));
  REFUSED (berth_process_write (p, "x", 1, reterr), W ("write"));
  REFUSED (berth_process_close_stdin (p, reterr), W ("close_stdin"));
  {
    void *out = NULL;
    size_t len = 0;
    REFUSED (berth_process_output (p, &out, &len, reterr), W ("output"));
    free (out);
  }
  {
    char buf[16];
    REFUSED (berth_process_read (p, buf, sizeof buf, NULL, reterr), W ("read"));
  }
  REFUSED (berth_process_fd (p, reterr), W ("fd"));
  REFUSED (berth_env_list_processes (env, list_nothing, &n, reterr), W ("list_processes"));
  assert_int_equal (n, 0);
  REFUSED (berth_env_stop_idle (env, reterr), W ("stop_idle"));
  {
    berth_process *q = NULL;
    REFUSED (berth_env_attach_process (env, berth_process_id (p), &q, reterr), W ("attach_process"));
    assert_null (q);
    berth_process_spec ps = BERTH_PROCESS_SPEC_INIT;
    ps.command = "true";
    REFUSED (berth_env_start_process (env, &ps, &q, reterr), W ("start_process"));
    assert_null (q);
  }
  {
    void *data = NULL;
    size_t len = 0;
    char *s = NULL;
    REFUSED (berth_env_read_file (env, "/etc/hostname", 100, &data, &len, reterr), W ("read_file"));
    REFUSED (berth_env_fetch_file (env, "/etc/hostname", 100, &data, &len, reterr), W ("fetch_file"));
    REFUSED (berth_env_write_file (env, "/tmp/berth-scope-guard-never", "x", 1, 0600, reterr), W ("write_file"));
    REFUSED (berth_env_realpath (env, "/tmp", &s, reterr), W ("realpath"));
    REFUSED (berth_env_temp_dir (env, &s, reterr), W ("temp_dir"));
    free (data);
    free (s);
  }
  {
    berth_exec_spec es = BERTH_EXEC_SPEC_INIT;
    berth_exec *x = NULL;
    berth_result *res = NULL;
    es.command = "true";
    REFUSED (berth_env_exec_begin (env, &es, &x, reterr), W ("exec_begin"));
    REFUSED (berth_env_execute (env, &es, &res, reterr), W ("execute"));
    assert_null (x);
    assert_null (res);
  }
  {
    char **argv = NULL, *rc = NULL;
    const char *const words[] = { "true", NULL };
    REFUSED (berth_env_exec_prefix (env, NULL, false, &argv, reterr), W ("exec_prefix"));
    REFUSED (berth_env_terminal_prefix (env, NULL, &argv, reterr), W ("terminal_prefix"));
    REFUSED (berth_env_stream (env, words, -1, -1, -1, reterr), W ("stream"));
    REFUSED (berth_env_shell_rc (env, &rc, reterr), W ("shell_rc"));
    assert_null (argv);
    assert_null (rc);
  }
#undef W
}

static void
test_guards (void **state)
{
  (void) state;
  berth_ctx *ctx = NULL;
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  set_scope (ctx, "local", "a");
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  es.backend = "local";
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open local: %s", berth_error_message (err));

  /* final state cached, stdin closed */
  berth_process *done = start (env, "true", true);
  wait_exited (done);
  assert_int_equal (berth_process_close_stdin (done, NULL), 0);
  /* running, stdin open */
  berth_process *running = start (env, "sleep 30", true);
  assert_int_equal (berth_process_poll (running, NULL, NULL, NULL), BERTH_PROCESS_RUNNING);

  set_scope (ctx, "local", "b");
  all_refused (env, done, "local/b, exited");
  all_refused (env, running, "local/b, running");
  set_scope (ctx, NULL, NULL);
  all_refused (env, done, "no scope, exited");
  all_refused (env, running, "no scope, running");

  /* still running: nothing above reached it */
  set_scope (ctx, "local", "a");
  assert_int_equal (berth_process_poll (running, NULL, NULL, NULL), BERTH_PROCESS_RUNNING);

  /* lost: its directory gone under it */
  char *tmp = NULL;
  assert_int_equal (berth_env_temp_dir (env, &tmp, NULL), 0);
  char cmd[4096];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'/.berth-proc-%d/*/%s", tmp, (int) geteuid (), berth_process_id (done));
  free (tmp);
  assert_int_equal (system (cmd), 0);
  berth_process *lost = NULL;
  assert_int_equal (berth_env_attach_process (env, berth_process_id (done), &lost, NULL), 0);
  assert_int_equal (berth_process_poll (lost, NULL, NULL, NULL), BERTH_PROCESS_LOST);
  set_scope (ctx, "local", "b");
  all_refused (env, lost, "local/b, lost");

  /* a cleaned environment */
  set_scope (ctx, "local", "a");
  assert_int_equal (berth_process_stop (running, NULL), 0);
  berth_process *fresh = start (env, "sleep 30", false);
  assert_int_equal (berth_env_cleanup (env, NULL), 0);
  set_scope (ctx, "local", "b");
  REFUSED (berth_process_poll (fresh, NULL, NULL, reterr), "poll (cleaned)");
  REFUSED (berth_process_stop (fresh, reterr), "stop (cleaned)");
  {
    int n = 0;
    REFUSED (berth_env_list_processes (env, list_nothing, &n, reterr), "list (cleaned)");
  }
  REFUSED (berth_env_stop_idle (env, reterr), "stop_idle (cleaned)");
  set_scope (ctx, NULL, NULL);
  REFUSED (berth_process_poll (fresh, NULL, NULL, reterr), "poll (cleaned, no scope)");

  berth_process_unref (fresh);
  berth_process_unref (lost);
  berth_process_unref (running);
  berth_process_unref (done);
  set_scope (ctx, "local", "a");
  berth_env_unref (env);
  berth_ctx_unref (ctx);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_guards),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
