/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-util.h: the clock and the order statistics of the C benches.  */
#ifndef BERTH_BENCH_UTIL_H
#define BERTH_BENCH_UTIL_H

#include <berth/berth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int
cmp (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The Q quantile of the sorted V[N].  */
static inline double
at (double *v, int n, double q)
{
  int i = (int) (q * (n - 1) + 0.5);
  return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* One side of a round: microseconds, < 0 when it failed.  */
typedef double (*bench_berth_fn) (berth_env *env);
typedef double (*bench_peer_fn) (char **argv);

/* The bench PROG with ARGV "BACKEND N -- PEER-ARGV...": a named
   environment opened once, both sides warmed once, then N rounds of
   BERTH and PEER interleaved; prints BACKEND berth_min berth_median
   berth_p90 peer_min peer_median peer_p90 ratio_median ratio_min.  */
static inline int
bench_main (const char *prog, int argc, char **argv, bench_berth_fn berth, bench_peer_fn peer_fn)
{
  if (argc < 5 || strcmp (argv[3], "--") != 0)
    {
      fprintf (stderr, "usage: %s BACKEND N -- PEER-ARGV...\n", prog);
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
  snprintf (name, sizeof name, "%s-%d", prog, (int) getpid ());
  es.backend = backend;
  es.name = name;
  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0 || berth_env_open (ctx, &es, &env, &err) < 0)
    {
      fprintf (stderr, "%s: %s: %s\n", prog, backend, berth_error_message (err));
      return 1;
    }
  double *b = calloc (n, sizeof *b), *p = calloc (n, sizeof *p);
  int status = 0;
  if (berth (env) < 0 || peer_fn (peer) < 0)
    {
      fprintf (stderr, "%s: %s: the warm-up failed\n", prog, backend);
      status = 1;
    }
  for (int i = 0; status == 0 && i < n; i++)
    {
      b[i] = berth (env);
      p[i] = peer_fn (peer);
      if (b[i] < 0 || p[i] < 0)
        status = 1;
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

#endif
