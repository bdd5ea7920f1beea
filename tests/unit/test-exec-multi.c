/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The non-blocking execute (issue 12.4), through the public API only:
   16 local environments, 16 commands, ONE thread and ONE poll loop over
   the 16 berth_exec_fd; one of them interrupted mid-run.  Then the fd's
   own timer (a timeout, the drain after the exit) with poll(-1), and
   the edges (EALREADY, EBUSY, a freed running exec).  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include <berth/berth.h>

#define N 16

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

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

static berth_env *
open_local (berth_ctx *ctx)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  es.backend = "local";
  int r = berth_env_open (ctx, &es, &env, &err);
  if (r < 0)
    fail_msg ("open local: %s", berth_error_message (err));
  return env;
}

static void
test_sixteen_in_one_thread (void **state)
{
  berth_env *env[N];
  berth_exec *x[N];
  berth_result *res[N] = { 0 };
  char cmd[N][64];
  const int victim = 5;
  bool interrupted = false;
  int left = N;

  for (int i = 0; i < N; i++)
    env[i] = open_local (*state);
  double t0 = now_s ();
  for (int i = 0; i < N; i++)
    {
      berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
      berth_error *err = NULL;
      snprintf (cmd[i], sizeof cmd[i], i == victim ? "echo start; sleep 30; echo %d" : "sleep 0.5; echo %d", i);
      spec.command = cmd[i];
      spec.timeout = 60;
      if (berth_env_exec_begin (env[i], &spec, &x[i], &err) < 0)
        fail_msg ("begin %d: %s", i, berth_error_message (err));
    }
  while (left > 0)
    {
      struct pollfd p[N];
      int map[N], n = 0;
      for (int i = 0; i < N; i++)
        if (x[i])
          {
            p[n] = (struct pollfd){ berth_exec_fd (x[i]), POLLIN, 0 };
            map[n++] = i;
          }
      assert_true (poll (p, (nfds_t) n, 10000) >= 0);
      if (!interrupted && now_s () - t0 > 0.25)
        {
          assert_int_equal (berth_exec_interrupt (x[victim]), 0);
          interrupted = true;
        }
      for (int k = 0; k < n; k++)
        {
          int i = map[k];
          berth_error *err = NULL;
          int r = berth_exec_step (x[i], &res[i], &err);
          if (r < 0)
            fail_msg ("step %d: %s", i, berth_error_message (err));
          if (r == 0)
            {
              /* after the end: EALREADY */
              assert_int_equal (berth_exec_step (x[i], &res[i], NULL), -EALREADY);
              x[i] = berth_exec_free (x[i]);
              left--;
            }
        }
    }
  double took = now_s () - t0;
  for (int i = 0; i < N; i++)
    {
      size_t len;
      const char *out = berth_result_output (res[i], &len);
      char want[16];
      if (i == victim)
        {
          assert_int_equal (berth_result_exit_code (res[i]), 130);
          assert_true (berth_result_interrupted (res[i]));
          assert_int_equal (berth_result_termination (res[i]), BERTH_TERMINATION_INTERRUPTED);
          assert_non_null (strstr (out, "start\n"));
          assert_non_null (strstr (out, "[Command interrupted]"));
        }
      else
        {
          snprintf (want, sizeof want, "%d\n", i);
          assert_string_equal (out, want);
          assert_int_equal (berth_result_exit_code (res[i]), 0);
          assert_int_equal (berth_result_termination (res[i]), BERTH_TERMINATION_EXITED);
        }
      berth_result_free (res[i]);
      berth_env_unref (env[i]);
    }
  fprintf (stderr, "# 16 executes of sleep 0.5 in one thread: %.3f s (sequential: >= %.1f s, ratio <= %.2f)\n", took, N * 0.5, took / (N * 0.5));
  assert_true (took < 2.5); /* well under 16 x 0.5 s */
}

/* Run X to its end with poll (-1): only the fd says when.  */
static int
run_on_fd (berth_exec *x, berth_result **res, berth_error **err)
{
  int r;
  while ((r = berth_exec_step (x, res, err)) > 0)
    {
      struct pollfd p = { berth_exec_fd (x), POLLIN, 0 };
      assert_true (poll (&p, 1, -1) > 0);
    }
  return r;
}

static void
test_fd_carries_the_deadlines (void **state)
{
  berth_env *env = open_local (*state);
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_exec *x = NULL;
  berth_result *res = NULL;

  /* the timeout: the fd wakes at the deadline */
  spec.command = "echo partial; sleep 30";
  spec.timeout = 0.4;
  double t0 = now_s ();
  assert_int_equal (berth_env_exec_begin (env, &spec, &x, NULL), 0);
  assert_int_equal (run_on_fd (x, &res, NULL), 0);
  assert_true (now_s () - t0 < 3);
  assert_int_equal (berth_result_exit_code (res), 124);
  assert_int_equal (berth_result_termination (res), BERTH_TERMINATION_TIMEOUT);
  res = berth_result_free (res);
  x = berth_exec_free (x);

  /* the drain: a background child holding the pipe does not hang it */
  spec.command = "sleep 30 & echo done";
  spec.timeout = 60;
  t0 = now_s ();
  assert_int_equal (berth_env_exec_begin (env, &spec, &x, NULL), 0);
  assert_int_equal (run_on_fd (x, &res, NULL), 0);
  assert_true (now_s () - t0 < 3);
  assert_int_equal (berth_result_exit_code (res), 0);
  assert_string_equal (berth_result_output (res, NULL), "done\n");
  res = berth_result_free (res);
  x = berth_exec_free (x);

  /* stdin through the fd (the feed's room and the caller's bytes) */
  static char big[300000];
  memset (big, 'a', sizeof big);
  spec.command = "wc -c";
  spec.has_stdin = true;
  spec.stdin_data = big;
  spec.stdin_len = sizeof big;
  assert_int_equal (berth_env_exec_begin (env, &spec, &x, NULL), 0);
  assert_int_equal (run_on_fd (x, &res, NULL), 0);
  assert_string_equal (berth_result_output (res, NULL), "300000\n");
  res = berth_result_free (res);
  x = berth_exec_free (x);
  berth_env_unref (env);
}

static void
test_one_exec_per_env_and_free_kills (void **state)
{
  berth_env *env = open_local (*state);
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_exec *x = NULL, *y = NULL;
  berth_error *err = NULL;
  berth_result *res = NULL;

  spec.command = "sleep 30";
  assert_int_equal (berth_env_exec_begin (env, &spec, &x, NULL), 0);
  assert_int_equal (berth_env_exec_begin (env, &spec, &y, &err), -EBUSY);
  err = berth_error_free (err);
  assert_int_equal (berth_env_execute (env, &spec, &res, &err), -EBUSY);
  err = berth_error_free (err);
  /* freed while running: killed where it runs, promptly */
  double t0 = now_s ();
  assert_int_equal (berth_exec_step (x, &res, NULL), 1);
  x = berth_exec_free (x);
  assert_true (now_s () - t0 < 3);
  spec.command = "echo again";
  assert_int_equal (berth_env_execute (env, &spec, &res, NULL), 0);
  assert_string_equal (berth_result_output (res, NULL), "again\n");
  berth_result_free (res);
  berth_env_unref (env);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_sixteen_in_one_thread, setup, teardown),
    cmocka_unit_test_setup_teardown (test_fd_carries_the_deadlines, setup, teardown),
    cmocka_unit_test_setup_teardown (test_one_exec_per_env_and_free_kills, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
