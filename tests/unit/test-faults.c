/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The session layer under a transport that fails mid-command (issue 11,
   A.1): a fake backend runs the real wrapper in a local bash and its
   wait then says what the test tells it to.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "berth-private.h"

enum
{
  WAIT_REAL,    /* the local bash's own status */
  WAIT_ERROR,   /* the transport died: wait fails */
  WAIT_UNKNOWN, /* the transport cannot tell (-1) */
};
static int wait_mode;

/* What a start does (issue 11, A.2): run what it is given, or -- like a
   host that stopped answering -- accept it and never run it.  Start 1
   is the command, start 2 the kill script.  */
enum
{
  START_REAL,
  START_NEVER_RUNS, /* the command never starts; the kill works */
  START_KILL_HANGS, /* the kill is accepted and never runs */
  START_KILL_FAILS, /* the kill cannot be started */
};
static int start_mode, n_starts;

typedef struct flaky_proc
{
  berth_proc inner;
} flaky_proc;

static int
fp_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  flaky_proc *p = proc;
  return p->inner.ops->pump (p->inner.proc, sink, userdata);
}

static ssize_t
fp_write (void *proc, const void *buf, size_t len)
{
  flaky_proc *p = proc;
  return p->inner.ops->write_stdin (p->inner.proc, buf, len);
}

static int
fp_close (void *proc)
{
  flaky_proc *p = proc;
  return p->inner.ops->close_stdin (p->inner.proc);
}

static int
fp_wait (void *proc, int *ret_status, berth_error **reterr)
{
  flaky_proc *p = proc;
  int r = p->inner.ops->wait (p->inner.proc, ret_status, reterr);
  if (r < 0 || wait_mode == WAIT_REAL)
    return r;
  if (wait_mode == WAIT_UNKNOWN)
    {
      *ret_status = -1;
      return 0;
    }
  return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "flaky: the engine went away while the command ran");
}

static void
fp_free (void *proc)
{
  flaky_proc *p = proc;
  p->inner.ops->free (p->inner.proc);
  free (p);
}

static const berth_proc_ops fp_ops = {
  .size = sizeof (berth_proc_ops), .pump = fp_pump, .write_stdin = fp_write, .close_stdin = fp_close, .wait = fp_wait, .free = fp_free,
};

static int
flaky_ensure (berth_env *env, berth_error **reterr)
{
  return 0;
}

static int
flaky_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  static const char *const hang[] = { "sleep", "30", NULL };
  const char *const *argv = req->argv;
  n_starts++;
  if (start_mode == START_KILL_FAILS && n_starts > 1)
    return berth_error_set (reterr, BERTH_E_BACKEND, "flaky: the engine does not answer");
  if ((start_mode == START_NEVER_RUNS && n_starts == 1) || (start_mode == START_KILL_HANGS && n_starts > 1))
    argv = hang;
  flaky_proc *p = calloc (1, sizeof *p);
  assert_non_null (p);
  int r = berth_proc_spawn (argv, berth_env_host_environ (env), req->has_stdin, &p->inner, reterr);
  if (r < 0)
    {
      free (p);
      return r;
    }
  *ret = (berth_proc){ .size = sizeof *ret, .fd = p->inner.fd, .stdin_fd = p->inner.stdin_fd, .ops = &fp_ops, .proc = p };
  return 0;
}

static const berth_provider_ops flaky = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "flaky",
  .ensure = flaky_ensure,
  .start = flaky_start,
};

static char tmpdir[64];

static int
setup (void **state)
{
  berth_ctx *ctx = NULL;
  char path[256];
  strcpy (tmpdir, "/tmp/berth-test-faults.XXXXXX");
  assert_non_null (mkdtemp (tmpdir));
  snprintf (path, sizeof path, "%s/state", tmpdir);
  setenv ("XDG_STATE_HOME", path, 1);
  snprintf (path, sizeof path, "%s/run", tmpdir);
  setenv ("XDG_RUNTIME_DIR", path, 1);
  snprintf (path, sizeof path, "%s/cache", tmpdir);
  setenv ("XDG_CACHE_HOME", path, 1);
  assert_int_equal (berth_ctx_new (&ctx, NULL), 0);
  assert_int_equal (berth_ctx_register (ctx, &flaky, "builtin", NULL, false, NULL), 0);
  *state = ctx;
  return 0;
}

static int
teardown (void **state)
{
  berth_ctx_unref (*state);
  berth_remove_tree (tmpdir);
  return 0;
}

static int
run_timeout (berth_ctx *ctx, int mode, int smode, double timeout, const char *command, berth_result **ret, berth_error **err)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  berth_env *env = NULL;
  es.backend = "flaky";
  es.cwd = "/";
  assert_int_equal (berth_env_open (ctx, &es, &env, NULL), 0);
  wait_mode = mode;
  start_mode = smode;
  n_starts = 0;
  xs.command = command;
  xs.timeout = timeout;
  int r = berth_env_execute (env, &xs, ret, err);
  berth_env_unref (env);
  start_mode = START_REAL;
  return r;
}

static int
run (berth_ctx *ctx, int mode, const char *command, berth_result **ret, berth_error **err)
{
  return run_timeout (ctx, mode, START_REAL, 20, command, ret, err);
}

/* The command's bash killed by a signal: the transport vouches for 137.  */
static void
test_command_killed_is_a_result (void **state)
{
  berth_result *res = NULL;
  assert_int_equal (run (*state, WAIT_REAL, "echo part; kill -9 $$", &res, NULL), 0);
  assert_int_equal (berth_result_exit_code (res), 137);
  assert_string_equal (berth_result_output (res, NULL), "part\n");
  berth_result_free (res);
}

/* A transport whose wait fails after the stream ended without an exit
   record: an error with its reason, the partial output kept.  */
static void
test_transport_death_is_an_error (void **state)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  size_t len;
  assert_int_equal (run (*state, WAIT_ERROR, "echo part; kill -9 $$", &res, &err), -BERTH_E_BACKEND);
  assert_null (res);
  assert_int_equal (berth_error_code (err), BERTH_E_BACKEND);
  assert_non_null (strstr (berth_error_message (err), "flaky: the engine went away while the command ran"));
  assert_null (strchr (berth_error_message (err), '\n'));
  assert_string_equal (berth_error_output (err, &len), "part\n");
  assert_int_equal (len, 5);
  berth_error_free (err);
}

/* No exit record and no status either: the transport was lost.  */
static void
test_no_record_no_status_is_an_error (void **state)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  assert_int_equal (run (*state, WAIT_UNKNOWN, "echo part; kill -9 $$", &res, &err), -BERTH_E_BACKEND);
  assert_non_null (strstr (berth_error_message (err), "ended before the command reported its exit status"));
  assert_string_equal (berth_error_output (err, NULL), "part\n");
  berth_error_free (err);
}

/* With the exit record in, a failing wait changes nothing.  */
static void
test_exit_record_wins (void **state)
{
  berth_result *res = NULL;
  assert_int_equal (run (*state, WAIT_ERROR, "echo fine; exit 3", &res, NULL), 0);
  assert_int_equal (berth_result_exit_code (res), 3);
  berth_result_free (res);
}

/* A timeout whose kill is delivered: the result says 124.  */
static void
test_timeout_killed_is_a_result (void **state)
{
  berth_result *res = NULL;
  assert_int_equal (run_timeout (*state, WAIT_REAL, START_REAL, 1, "echo part; sleep 30", &res, NULL), 0);
  assert_int_equal (berth_result_exit_code (res), 124);
  assert_true (berth_result_timed_out (res));
  berth_result_free (res);
}

/* A timeout whose kill cannot be started: an error saying the command
   may still run, never a clean timeout; the output is kept.  */
static void
test_timeout_kill_fails_is_an_error (void **state)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  assert_int_equal (run_timeout (*state, WAIT_REAL, START_KILL_FAILS, 1, "echo part; sleep 30", &res, &err), -BERTH_E_BACKEND);
  assert_null (res);
  assert_non_null (strstr (berth_error_message (err), "timed out after 1s, and it may still be running there: could not kill it (flaky: the engine does not answer)"));
  assert_null (strchr (berth_error_message (err), '\n'));
  assert_string_equal (berth_error_output (err, NULL), "part\n");
  berth_error_free (err);
}

/* A kill that is accepted but never answered: an error within the kill
   budget, not a wait.  */
static void
test_timeout_kill_hangs_is_an_error (void **state)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  uint64_t t0 = berth_now_usec ();
  assert_int_equal (run_timeout (*state, WAIT_REAL, START_KILL_HANGS, 1, "echo part; sleep 30", &res, &err), -BERTH_E_BACKEND);
  assert_true (berth_now_usec () - t0 < 8000000u);
  assert_non_null (strstr (berth_error_message (err), "may still be running there: could not kill it (flaky: the environment did not answer within 5s"));
  berth_error_free (err);
}

/* The command never reported that it started (the environment took it
   and did not answer): an error, not "[Command timed out]".  */
static void
test_never_started_is_an_error (void **state)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  assert_int_equal (run_timeout (*state, WAIT_REAL, START_NEVER_RUNS, 1, "echo part", &res, &err), -BERTH_E_BACKEND);
  assert_null (res);
  assert_non_null (strstr (berth_error_message (err), "flaky: the environment did not answer: the command did not start within 1s"));
  berth_error_free (err);
}

int
main (void)
{
  /* These faults are the fake start transport's own: no agent over it
     (the agent's faults: tests/integration/agent-faults.sh).  */
  setenv ("BERTH_TRANSPORT", "exec", 1);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_command_killed_is_a_result, setup, teardown),
    cmocka_unit_test_setup_teardown (test_transport_death_is_an_error, setup, teardown),
    cmocka_unit_test_setup_teardown (test_no_record_no_status_is_an_error, setup, teardown),
    cmocka_unit_test_setup_teardown (test_exit_record_wins, setup, teardown),
    cmocka_unit_test_setup_teardown (test_timeout_killed_is_a_result, setup, teardown),
    cmocka_unit_test_setup_teardown (test_timeout_kill_fails_is_an_error, setup, teardown),
    cmocka_unit_test_setup_teardown (test_timeout_kill_hangs_is_an_error, setup, teardown),
    cmocka_unit_test_setup_teardown (test_never_started_is_an_error, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
