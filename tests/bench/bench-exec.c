/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-exec.c: per-command cost of berth_env_execute ("true") through
   libberth, against what a user would run instead, interleaved in one run
   (DESIGN §9): one named environment opened once, then N rounds of one
   execute and one spawn of the peer argv.  Only the public API, so the
   same file builds against an older libberth for a before/after table
   (tests/bench/bench-exec.sh).

   usage: bench-exec BACKEND N -- PEER-ARGV...
   prints: BACKEND berth_min berth_median berth_p90 peer_min peer_median
           peer_p90 ratio_median ratio_min  (microseconds; ratios are
           berth / peer)  */
#include <berth/berth.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"

extern char **environ;

static int
run_peer (char **argv)
{
  pid_t pid;
  int status = 0;
  if (posix_spawnp (&pid, argv[0], NULL, NULL, argv, environ) != 0)
    return -1;
  if (waitpid (pid, &status, 0) < 0)
    return -1;
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static int
run_berth (berth_env *env)
{
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  xs.command = "true";
  if (berth_env_execute (env, &xs, &res, &err) < 0)
    {
      fprintf (stderr, "bench-exec: %s\n", berth_error_message (err));
      berth_error_free (err);
      return -1;
    }
  int code = berth_result_exit_code (res);
  berth_result_free (res);
  return code;
}

static double
timed_peer (char **argv)
{
  double t0 = now_us ();
  return run_peer (argv) == 0 ? now_us () - t0 : -1;
}

static double
timed_berth (berth_env *env)
{
  double t0 = now_us ();
  return run_berth (env) == 0 ? now_us () - t0 : -1;
}

int
main (int argc, char **argv)
{
  return bench_main ("bench-exec", argc, argv, timed_berth, timed_peer);
}
