/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* throughput: bulk output through libberth against the same transport
   piped into cat (DESIGN 9: "output ... >= 1x docker/ssh, < 32 MiB RSS
   for any size").
 *
 *   throughput BACKEND NAME BYTES ROUNDS -- PEER-ARGV...
 *
 * In the named environment NAME (opened once, as harnesses do):
 * berth_env_execute of `head -c BYTES /dev/zero` (its output streamed to
 * a callback that drops it, the result capped as always), interleaved
 * with PEER-ARGV run as `PEER-ARGV | cat >/dev/null` (PEER-ARGV prints
 * BYTES bytes the way a user would get them: docker exec CTR sh -c
 * 'head -c ...', ssh -S MASTER host 'head -c ...').  Prints per round
 * and the medians: seconds, MiB/s, the ratio peer time / berth time
 * (>= 1: berth is as fast as the peer), the transport, and this
 * process's peak RSS.  */
#include <berth/berth.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmpd (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
count_output (void *userdata, const char *data, size_t len)
{
  (void) data;
  *(uint64_t *) userdata += len;
  return 0;
}

static double
run_berth (berth_env *env, const char *command, uint64_t want, const char **transport)
{
  berth_exec_spec x = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  uint64_t got = 0;
  x.command = command;
  x.timeout = 600;
  x.on_output = count_output;
  x.userdata = &got;
  double t = now_s ();
  if (berth_env_execute (env, &x, &res, &err) < 0)
    {
      fprintf (stderr, "throughput: %s\n", berth_error_message (err));
      berth_error_free (err);
      return -1;
    }
  t = now_s () - t;
  uint64_t total = berth_result_total_bytes (res);
  int ec = berth_result_exit_code (res);
  *transport = berth_result_transport (res) && strcmp (berth_result_transport (res), "agent") == 0 ? "agent" : "exec";
  berth_result_free (res);
  if (ec != 0 || total != want)
    {
      fprintf (stderr, "throughput: berth: exit %d, %llu bytes (wanted %llu)\n", ec, (unsigned long long) total, (unsigned long long) want);
      return -1;
    }
  return t;
}

static double
run_peer (char **argv)
{
  double t = now_s ();
  pid_t pid = fork ();
  if (pid == 0)
    {
      /* sh -c '"$@" | cat >/dev/null' sh PEER-ARGV... */
      size_t n = 0;
      while (argv[n])
        n++;
      char **a = calloc (n + 5, sizeof *a); /* sh -c SCRIPT sh ARGV... NULL */
      a[0] = (char *) "sh", a[1] = (char *) "-c", a[2] = (char *) "\"$@\" | cat >/dev/null", a[3] = (char *) "sh";
      memcpy (a + 4, argv, n * sizeof *a);
      execvp ("sh", a);
      fprintf (stderr, "throughput: cannot run sh: %s\n", strerror (errno));
      _exit (127);
    }
  int st = 0;
  pid_t w = pid < 0 ? -1 : waitpid (pid, &st, 0);
  if (w < 0 || !WIFEXITED (st) || WEXITSTATUS (st) != 0)
    {
      fprintf (stderr, "throughput: the peer failed (%s %d)\n", w < 0 ? strerror (errno) : WIFEXITED (st) ? "exit" : "signal",
               w < 0 ? 0 : WIFEXITED (st) ? WEXITSTATUS (st) : WTERMSIG (st));
      return -1;
    }
  return now_s () - t;
}

int
main (int argc, char **argv)
{
  if (argc < 7 || strcmp (argv[5], "--") != 0)
    {
      fprintf (stderr, "usage: throughput BACKEND NAME BYTES ROUNDS -- PEER-ARGV...\n");
      return 2;
    }
  const char *backend = argv[1], *name = argv[2];
  uint64_t bytes = strtoull (argv[3], NULL, 10);
  int rounds = atoi (argv[4]);
  char **peer = argv + 6;
  if (rounds < 1)
    rounds = 1;
  char command[64];
  snprintf (command, sizeof command, "head -c %llu /dev/zero", (unsigned long long) bytes);
  berth_ctx *ctx = NULL;
  berth_env *env = NULL;
  berth_error *err = NULL;
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  es.backend = backend;
  es.name = name;
  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0 || berth_env_open (ctx, &es, &env, &err) < 0)
    {
      fprintf (stderr, "throughput: %s: %s\n", backend, berth_error_message (err));
      return 1;
    }
  double *b = calloc ((size_t) rounds, sizeof *b), *p = calloc ((size_t) rounds, sizeof *p), *r = calloc ((size_t) rounds, sizeof *r);
  const char *transport = "?";
  int status = 0;
  double mib = bytes / 1048576.0;
  printf ("throughput: %s, %.0f MiB of output, %d rounds, interleaved (ratio: peer time / berth time, >= 1 is good)\n", backend, mib, rounds);
  for (int i = 0; i < rounds && status == 0; i++)
    {
      b[i] = run_berth (env, command, bytes, &transport);
      p[i] = run_peer (peer);
      if (b[i] < 0 || p[i] < 0)
        {
          status = 1;
          break;
        }
      r[i] = p[i] / b[i];
      printf ("  round %d: berth %.2f s (%.0f MiB/s, %s)  peer %.2f s (%.0f MiB/s)  ratio %.2f\n", i + 1, b[i], mib / b[i], transport, p[i], mib / p[i], r[i]);
      fflush (stdout);
    }
  berth_env_unref (env);
  berth_ctx_unref (ctx);
  if (status == 0)
    {
      struct rusage ru;
      getrusage (RUSAGE_SELF, &ru);
      double mb = median (b, rounds), mp = median (p, rounds), mr = median (r, rounds);
      printf ("throughput: %s median: berth %.2f s (%.0f MiB/s, transport %s)  peer %.2f s (%.0f MiB/s)  ratio %.2f  berth max RSS %.1f MiB\n", backend, mb,
              mib / mb, transport, mp, mib / mp, mr, ru.ru_maxrss / 1024.0);
    }
  free (b);
  free (p);
  free (r);
  return status;
}
