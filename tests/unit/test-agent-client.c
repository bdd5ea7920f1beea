/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The agent transport through the public API on the real local backend
   and the real berth-agent (BERTH_LIBEXECDIR): an execute and a stream
   in flight at once on one environment (one agent stream), stdin and
   output larger than the flow-control window, a timeout that kills the
   whole tree (setsid escapees too), and the switch to exec-per-command.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <berth/berth.h>

static int
setup (void **state)
{
  berth_ctx *ctx = NULL;
  unsetenv ("BERTH_TRANSPORT");
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
open_local (berth_ctx *ctx, const char *name)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  es.backend = "local";
  es.name = name;
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    fail_msg ("open local: %s", berth_error_message (err));
  return env;
}

static berth_result *
run (berth_env *env, berth_exec_spec *spec)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  if (berth_env_execute (env, spec, &res, &err) < 0)
    fail_msg ("execute %s: %s", spec->command, berth_error_message (err));
  return res;
}

/* An execute in flight and a stream started meanwhile on the same
   environment, each with its own output: the execute through the agent,
   the stream through the backend's own transport.  */
static void
test_two_channels_one_stream (void **state)
{
  berth_env *env = open_local (*state, NULL);
  berth_exec *x = NULL;
  berth_result *res = NULL;
  berth_error *err = NULL;
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  spec.command = "sleep 0.5; echo first $PPID";
  spec.timeout = 60;
  if (berth_env_exec_begin (env, &spec, &x, &err) < 0)
    fail_msg ("begin: %s", berth_error_message (err));
  int p[2];
  assert_int_equal (pipe (p), 0);
  const char *argv[] = { "sh", "-c", "echo second $PPID", NULL };
  if (berth_env_stream (env, argv, -1, p[1], 2, &err) != 0)
    fail_msg ("stream: %s", err ? berth_error_message (err) : "non-zero status");
  close (p[1]);
  char sbuf[128] = "";
  ssize_t n = read (p[0], sbuf, sizeof sbuf - 1);
  close (p[0]);
  assert_true (n > 0);
  sbuf[n] = '\0';
  int r;
  while ((r = berth_exec_step (x, &res, &err)) > 0)
    poll (&(struct pollfd){ berth_exec_fd (x), POLLIN, 0 }, 1, 10000);
  if (r < 0)
    fail_msg ("step: %s", berth_error_message (err));
  x = berth_exec_free (x);
  long a1 = 0, a2 = 0;
  assert_int_equal (sscanf (berth_result_output (res, NULL), "first %ld", &a1), 1);
  assert_int_equal (sscanf (sbuf, "second %ld", &a2), 1);
  assert_string_equal (berth_result_transport (res), "agent");
  assert_true (a1 > 1);
  /* the execute rides the agent; a stream runs through the backend's
     own transport (a process of its own, not a channel of the agent) */
  assert_true (a1 != a2);
  berth_result_free (res);
  berth_env_unref (env);
}

/* More stdin and output than one window (1 MiB) of the agent's flow
   control, whole and in order.  */
static void
test_beyond_the_window (void **state)
{
  berth_env *env = open_local (*state, NULL);
  size_t len = 5u << 20;
  char *in = malloc (len);
  assert_non_null (in);
  for (size_t i = 0; i < len; i++)
    in[i] = (char) ('a' + i % 26);
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  spec.command = "sha256sum | cut -c1-16";
  spec.has_stdin = true;
  spec.stdin_data = in;
  spec.stdin_len = len;
  berth_result *res = run (env, &spec);
  assert_string_equal (berth_result_transport (res), "agent");
  /* the same digest computed here through the fallback's own path */
  berth_exec_spec local = BERTH_EXEC_SPEC_INIT;
  local.command = "awk 'BEGIN { for (i = 0; i < 5 * 1048576; i++) printf \"%c\", 97 + i % 26 }' | sha256sum | cut -c1-16";
  berth_result *want = run (env, &local);
  assert_string_equal (berth_result_output (res, NULL), berth_result_output (want, NULL));
  berth_result_free (res);
  berth_result_free (want);
  free (in);

  berth_exec_spec out = BERTH_EXEC_SPEC_INIT;
  out.command = "head -c 3000000 /dev/zero | tr '\\0' x";
  res = run (env, &out);
  assert_int_equal (berth_result_exit_code (res), 0);
  assert_true (berth_result_total_bytes (res) == 3000000);
  berth_result_free (res);
  berth_env_unref (env);
}

static int
count_marker (const char *marker)
{
  DIR *d = opendir ("/proc");
  struct dirent *de;
  int n = 0;
  while (d && (de = readdir (d)))
    {
      char p[300], buf[256] = "";
      snprintf (p, sizeof p, "/proc/%s/cmdline", de->d_name);
      FILE *f = fopen (p, "re");
      if (f == NULL)
        continue;
      size_t got = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      for (size_t i = 0; i < got; i++)
        if (buf[i] == '\0')
          buf[i] = ' ';
      if (strstr (buf, marker))
        n++;
    }
  if (d)
    closedir (d);
  return n;
}

/* A timeout kills the command's whole tree where it runs, a setsid
   escapee included.  */
static void
test_timeout_kills_the_tree (void **state)
{
  berth_env *env = open_local (*state, NULL);
  char cmd[256], marker[32];
  snprintf (marker, sizeof marker, "sleep 40.%ld", (long) getpid ());
  snprintf (cmd, sizeof cmd, "%s & setsid %s & %s; echo never", marker, marker, marker);
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  spec.command = cmd;
  spec.timeout = 1;
  berth_result *res = run (env, &spec);
  assert_true (berth_result_timed_out (res));
  assert_string_equal (berth_result_transport (res), "agent");
  berth_result_free (res);
  int n = -1;
  for (int i = 0; i < 20 && (n = count_marker (marker)) > 0; i++)
    usleep (100 * 1000);
  assert_int_equal (n, 0);
  berth_env_unref (env);
}

/* BERTH_TRANSPORT=exec: the fallback, and the result says so.  */
static void
test_switch_off (void **state)
{
  setenv ("BERTH_TRANSPORT", "exec", 1);
  berth_env *env = open_local (*state, NULL);
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  spec.command = "echo via exec";
  berth_result *res = run (env, &spec);
  assert_string_equal (berth_result_output (res, NULL), "via exec\n");
  assert_string_equal (berth_result_transport (res), "exec");
  berth_result_free (res);
  berth_env_unref (env);
  unsetenv ("BERTH_TRANSPORT");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_two_channels_one_stream, setup, teardown),
    cmocka_unit_test_setup_teardown (test_beyond_the_window, setup, teardown),
    cmocka_unit_test_setup_teardown (test_timeout_kills_the_tree, setup, teardown),
    cmocka_unit_test_setup_teardown (test_switch_off, setup, teardown),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
