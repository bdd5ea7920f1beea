/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-process.c: the latency of a background process through libberth,
   berth_env_start_process ("echo x") until its first output byte, against
   what a user would run instead (PEER-ARGV, timed until the first byte
   on its stdout), interleaved in one run: one named environment opened
   once, then N rounds of one start and one peer.  The stop of each
   process and the end of each peer are not timed.
   usage: bench-process BACKEND N -- PEER-ARGV...
   prints: BACKEND berth_min berth_median berth_p90 peer_min peer_median
           peer_p90 ratio_median ratio_min  (microseconds; ratios are
           berth / peer), as bench-exec does (tests/bench/bench-exec.sh
           WHAT=process runs it).  */
#include <berth/berth.h>

#include <errno.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

extern char **environ;

/* Microseconds until ARGV's first byte on stdout, or < 0.  */
static double
peer_first_byte (char **argv)
{
  int fds[2];
  pid_t pid;
  char c;
  posix_spawn_file_actions_t fa;
  if (pipe (fds) < 0)
    return -1;
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose (&fa, fds[0]);
  double t0 = now_us ();
  int r = posix_spawnp (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  close (fds[1]);
  double t = r == 0 && read (fds[0], &c, 1) == 1 ? now_us () - t0 : -1;
  close (fds[0]);
  if (r == 0)
    waitpid (pid, NULL, 0);
  return t;
}

/* Microseconds until the first byte of a started `echo x`, or < 0.  */
static double
berth_first_byte (berth_env *env)
{
  berth_process_spec ps = BERTH_PROCESS_SPEC_INIT;
  berth_process *p = NULL;
  berth_error *err = NULL;
  char buf[64];
  ssize_t n = 0;
  int stream;
  ps.command = "echo x";
  double t0 = now_us (), t = -1;
  if (berth_env_start_process (env, &ps, &p, &err) < 0)
    goto fail;
  for (;;)
    {
      int fd = berth_process_fd (p, &err);
      if (fd < 0)
        goto fail;
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      if (poll (&pfd, 1, 30000) <= 0)
        {
          fprintf (stderr, "bench-process: no output within 30 s\n");
          break;
        }
      n = berth_process_read (p, buf, sizeof buf, &stream, &err);
      if (n == -EAGAIN)
        {
          err = berth_error_free (err);
          continue;
        }
      if (n <= 0)
        {
          fprintf (stderr, "bench-process: %s\n", n == 0 ? "it ended without output" : berth_error_message (err));
          break;
        }
      t = now_us () - t0;
      break;
    }
  berth_process_stop (p, NULL);
  berth_process_unref (p);
  return t;
fail:
  fprintf (stderr, "bench-process: %s\n", berth_error_message (err));
  berth_error_free (err);
  berth_process_unref (p);
  return -1;
}

int
main (int argc, char **argv)
{
  return bench_main ("bench-process", argc, argv, berth_first_byte, peer_first_byte);
}
