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

int
main (int argc, char **argv)
{
  if (argc < 5 || strcmp (argv[3], "--") != 0)
    {
      fprintf (stderr, "usage: bench-exec BACKEND N -- PEER-ARGV...\n");
      return 2;
    }
  const char *backend = argv[1];
  int n = atoi (argv[2]);
  char **peer = argv + 4;
  berth_ctx *ctx = NULL;
  berth_env *env = NULL;
  berth_error *err = NULL;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  char name[64];
  if (n < 3)
    n = 3;
  snprintf (name, sizeof name, "bench-exec-%d", (int) getpid ());
  es.backend = backend;
  es.name = name;
  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0 || berth_env_open (ctx, &es, &env, &err) < 0)
    {
      fprintf (stderr, "bench-exec: %s: %s\n", backend, berth_error_message (err));
      return 1;
    }
  double *b = calloc (n, sizeof *b), *p = calloc (n, sizeof *p);
  int status = 0;
  /* warm both paths once */
  if (run_berth (env) != 0 || run_peer (peer) != 0)
    {
      fprintf (stderr, "bench-exec: %s: the warm-up command failed\n", backend);
      status = 1;
    }
  for (int i = 0; status == 0 && i < n; i++)
    {
      double t0 = now_us ();
      if (run_berth (env) != 0)
        status = 1;
      double t1 = now_us ();
      if (run_peer (peer) != 0)
        status = 1;
      double t2 = now_us ();
      b[i] = t1 - t0;
      p[i] = t2 - t1;
    }
  berth_env_unref (env);
  berth_env_remove (ctx, name, NULL);
  berth_ctx_unref (ctx);
  if (status == 0)
    {
      qsort (b, n, sizeof *b, cmp);
      qsort (p, n, sizeof *p, cmp);
      printf ("%s %.0f %.0f %.0f %.0f %.0f %.0f %.3f %.3f\n", backend, b[0], at (b, n, 0.5), at (b, n, 0.9), p[0], at (p, n, 0.5),
              at (p, n, 0.9), at (b, n, 0.5) / at (p, n, 0.5), b[0] / p[0]);
    }
  free (b);
  free (p);
  return status;
}
