/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-util.h: the clock and the order statistics of the C benches.  */
#ifndef BERTH_BENCH_UTIL_H
#define BERTH_BENCH_UTIL_H

#include <time.h>

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

#endif
