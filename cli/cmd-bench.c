/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-bench.c: per-command round-trip latency of execute, against the
   command a user would otherwise run, interleaved in one run (these
   machines are noisy: the ratio is the figure, not the times).  */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <wordexp.h>

#include "cli.h"

extern char **environ;

static double
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

typedef struct stats
{
  double min, median, p90;
} stats;

static stats
summarize (double *v, size_t n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return (stats){ v[0], n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1] };
}

static int
run_peer (char *const *argv)
{
  pid_t pid;
  int st;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", 0, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", 1, 0);
  int r = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    return -r;
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -errno;
  return WIFEXITED (st) ? WEXITSTATUS (st) : 128;
}

static void
print_stats_json (const char *key, stats s)
{
  printf ("\"%s\":{\"min_ms\":%.3f,\"median_ms\":%.3f,\"p90_ms\":%.3f}", key, s.min, s.median, s.p90);
}

int
cmd_bench (const cli_opts *o, int argc, char **argv)
{
  const char *backend = NULL, *name = NULL, *peer = NULL;
  long n = 20;
  bool json = false;
  int c, opt_exit = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "bench") };
  while ((c = cli_next_option (&g, argc, argv, &opt_exit)) >= 0)
    switch (c)
      {
      case 'b': backend = g.arg; break;
      case 'e': name = g.arg; break;
      case 'n':
        {
          char *end;
          errno = 0;
          n = strtol (g.arg, &end, 10);
          if (errno || end == g.arg || *end || n < 1 || n > 100000)
            return cli_fail ("bench: -n must be between 1 and 100000 (got '%s')", g.arg);
          break;
        }
      case CLI_OPT_PEER: peer = g.arg; break;
      case CLI_OPT_JSON: json = cli_json = true; break;
      default: abort ();
      }
  if (c == -2)
    return opt_exit;
  const char *command = g.ind < argc ? argv[g.ind] : "true";
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  spec.backend = backend;
  spec.name = name;
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    {
      berth_ctx_unref (ctx);
      return cli_fail_err (err);
    }
  if (peer == NULL && strcmp (berth_env_backend (env), "local") == 0)
    peer = "bash -c true";
  wordexp_t we = { 0 };
  bool have_peer = false;
  if (peer)
    {
      if (wordexp (peer, &we, WRDE_NOCMD | WRDE_UNDEF) != 0 || we.we_wordc == 0)
        {
          berth_env_unref (env);
          berth_ctx_unref (ctx);
          return cli_fail ("bench: cannot parse --peer '%s'", peer);
        }
      have_peer = true;
    }
  double *ours = calloc ((size_t) n, sizeof (double)), *theirs = calloc ((size_t) n, sizeof (double));
  int exit_code = 0;
  char transport[16] = "?"; /* of the last command: agent or exec */
  /* One warm-up of each, then interleave.  */
  for (long i = -1; i < n && exit_code == 0; i++)
    {
      berth_exec_spec es = BERTH_EXEC_SPEC_INIT;
      berth_result *res = NULL;
      es.command = command;
      double t = now_ms ();
      if (berth_env_execute (env, &es, &res, &err) < 0)
        {
          exit_code = cli_fail_err (err);
          break;
        }
      double dt = now_ms () - t;
      if (berth_result_exit_code (res) != 0)
        exit_code = cli_fail ("bench: '%s' exited %d", command, berth_result_exit_code (res));
      if (berth_result_transport (res))
        snprintf (transport, sizeof transport, "%s", berth_result_transport (res));
      berth_result_free (res);
      if (i >= 0)
        ours[i] = dt;
      if (have_peer)
        {
          t = now_ms ();
          int pr = run_peer (we.we_wordv);
          dt = now_ms () - t;
          if (pr != 0)
            exit_code = cli_fail ("bench: peer '%s' failed (%d)", peer, pr);
          if (i >= 0)
            theirs[i] = dt;
        }
    }
  if (exit_code == 0)
    {
      stats s = summarize (ours, (size_t) n), p = { 0 };
      if (have_peer)
        p = summarize (theirs, (size_t) n);
      if (json)
        {
          printf ("{\"schema_version\":%d,\"backend\":", CLI_SCHEMA_VERSION);
          json_string (stdout, berth_env_backend (env));
          printf (",\"n\":%ld,\"transport\":", n);
          json_string (stdout, transport);
          printf (",\"command\":");
          json_string (stdout, command);
          printf (",");
          print_stats_json ("berth", s);
          if (have_peer)
            {
              printf (",\"peer_command\":");
              json_string (stdout, peer);
              printf (",");
              print_stats_json ("peer", p);
              printf (",\"ratio_median\":%.3f", s.median / p.median);
            }
          printf ("}\n");
          cli_json = false;
        }
      else
        {
          printf ("backend %s, transport %s, %ld runs of '%s'\n", berth_env_backend (env), transport, n, command);
          printf ("  berth execute   min %.2f ms  median %.2f ms  p90 %.2f ms\n", s.min, s.median, s.p90);
          if (have_peer)
            {
              printf ("  peer (%s)  min %.2f ms  median %.2f ms  p90 %.2f ms\n", peer, p.min, p.median, p.p90);
              printf ("  ratio (median): %.2fx (transport %s)\n", s.median / p.median, transport);
            }
        }
    }
  if (have_peer)
    wordfree (&we);
  free (ours);
  free (theirs);
  berth_env_cleanup (env, NULL);
  berth_env_unref (env);
  berth_ctx_unref (ctx);
  return exit_code;
}
