/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-agent: per-command latency of `true` through libberth over the
   agent, over the fallback (exec-per-command), and of a peer command,
   interleaved in one run on one environment.  Prints ratios only (no
   bare times): agent/peer, exec/peer, agent/exec at min, median, p90.
 *
 *   bench-agent [-n N] [-c CONFIG] [-b BACKEND] [-B BUDGET] -e NAME -- PEER...
 *
 * NAME: a named environment (created by the first command if needed),
 * or "" for throw-away ones (one per transport);
 * PEER: argv run directly (no shell) for the comparison, e.g.
 * `docker exec <ctr> bash -c true`.  With -B, exits 1 when the median
 * agent/peer ratio is over BUDGET.  */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <berth/berth.h>

extern char **environ;

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static void
stats (double *v, int n, double out[3])
{
  qsort (v, (size_t) n, sizeof *v, cmp);
  out[0] = v[0];
  out[1] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  int i = (int) (0.9 * (n - 1) + 0.5);
  out[2] = v[i];
}

static int
one (berth_env *env, const char *want_transport)
{
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  spec.command = "true";
  int r = berth_env_execute (env, &spec, &res, &err);
  if (r < 0)
    {
      fprintf (stderr, "bench-agent: execute failed: %s\n", berth_error_message (err));
      berth_error_free (err);
      return -1;
    }
  int ok = berth_result_exit_code (res) == 0 && strcmp (berth_result_transport (res), want_transport) == 0;
  if (!ok)
    fprintf (stderr, "bench-agent: `true` gave exit %d over %s (wanted 0 over %s)\n", berth_result_exit_code (res), berth_result_transport (res),
             want_transport);
  berth_result_free (res);
  return ok ? 0 : -1;
}

static int
peer (char **argv)
{
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", 0, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", 1, 0);
  int r = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    {
      fprintf (stderr, "bench-agent: cannot run the peer %s: %s\n", argv[0], strerror (r));
      return -1;
    }
  int st;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (st) && WEXITSTATUS (st) == 0 ? 0 : -1;
}

static berth_env *
open_env (berth_ctx *ctx, const char *backend, const char *name)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  es.backend = backend;
  es.name = *name ? name : NULL; /* "": throw-away (one per handle) */
  if (berth_env_open (ctx, &es, &env, &err) < 0)
    {
      fprintf (stderr, "bench-agent: cannot open %s: %s\n", name, berth_error_message (err));
      exit (2);
    }
  return env;
}

int
main (int argc, char **argv)
{
  int n = 30, opt;
  const char *backend = NULL, *name = NULL;
  double budget = 0;
  while ((opt = getopt (argc, argv, "n:c:b:e:B:")) != -1)
    switch (opt)
      {
      case 'n':
        n = atoi (optarg);
        break;
      case 'c':
        setenv ("BERTH_CONFIG", optarg, 1);
        break;
      case 'b':
        backend = optarg;
        break;
      case 'e':
        name = optarg;
        break;
      case 'B':
        budget = atof (optarg);
        break;
      default:
        fprintf (stderr, "usage: bench-agent [-n N] [-c CONFIG] [-b BACKEND] [-B BUDGET] -e NAME -- PEER...\n");
        return 2;
      }
  if (name == NULL || optind >= argc || n < 3 || n > 100000)
    {
      fprintf (stderr, "usage: bench-agent [-n N] [-c CONFIG] [-b BACKEND] [-B BUDGET] -e NAME -- PEER...\n");
      return 2;
    }
  char **peer_argv = argv + optind;
  berth_ctx *ctx = NULL;
  berth_error *err = NULL;
  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0)
    {
      fprintf (stderr, "bench-agent: %s\n", berth_error_message (err));
      return 2;
    }
  /* Two handles on the one environment: the transport is chosen at a
     handle's first command.  */
  unsetenv ("BERTH_TRANSPORT");
  berth_env *ea = open_env (ctx, backend, name);
  if (one (ea, "agent") < 0)
    return 2;
  setenv ("BERTH_TRANSPORT", "exec", 1);
  berth_env *ex = open_env (ctx, backend, name);
  if (one (ex, "exec") < 0)
    return 2;
  unsetenv ("BERTH_TRANSPORT");
  if (peer (peer_argv) < 0)
    return 2;

  double *ta = calloc ((size_t) n, sizeof *ta), *te = calloc ((size_t) n, sizeof *te), *tp = calloc ((size_t) n, sizeof *tp);
  for (int i = 0; i < n; i++)
    {
      /* interleaved, the order rotating so none always goes first */
      for (int k = 0; k < 3; k++)
        {
          int which = (i + k) % 3;
          double t0 = now_s ();
          int r = which == 0 ? one (ea, "agent") : which == 1 ? one (ex, "exec") : peer (peer_argv);
          double dt = now_s () - t0;
          if (r < 0)
            return 2;
          (which == 0 ? ta : which == 1 ? te : tp)[i] = dt;
        }
    }
  double sa[3], se[3], sp[3];
  stats (ta, n, sa);
  stats (te, n, se);
  stats (tp, n, sp);
  const char *what[3] = { "min", "median", "p90" };
  printf ("bench-agent: %s, %d commands each, interleaved (ratios only)\n", backend ? backend : "default backend", n);
  for (int k = 0; k < 3; k++)
    printf ("  %-6s agent/peer %.3f  exec/peer %.3f  agent/exec %.3f\n", what[k], sa[k] / sp[k], se[k] / sp[k], sa[k] / se[k]);
  double ratio = sa[1] / sp[1];
  berth_env_unref (ea);
  berth_env_unref (ex);
  berth_ctx_unref (ctx);
  free (ta);
  free (te);
  free (tp);
  if (budget > 0)
    {
      printf ("bench-agent: median agent/peer %.3f (budget %.2f): %s\n", ratio, budget, ratio <= budget ? "ok" : "OVER BUDGET");
      return ratio <= budget ? 0 : 1;
    }
  return 0;
}
