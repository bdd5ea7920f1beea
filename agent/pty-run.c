/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pty-run.c: `berth-agent --pty-run -- ARGV...`, ARGV on a terminal of
   its own.  A background process asked for with a pty (berth start
   --pty) runs its wrapper through this: the wrapper's stdin and stdout
   become the slave side of a new pseudo-terminal (its controlling
   terminal, in a session of its own), while its stderr -- the runtime's
   state channel -- stays where it was, so the state records never pass
   through the terminal's line discipline.  This program copies its own
   stdin to the terminal and the terminal's output to its own stdout (the
   process's output file), and exits as ARGV did (128+N for a signal).
   It is part of the agent because the agent is the one program berth
   places in every environment it can: where the agent cannot run, a pty
   is refused (process.c).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "pty-run.h"

#define PTY_ROWS 24
#define PTY_COLS 80

static int
write_all (int fd, const char *p, size_t n)
{
  while (n > 0)
    {
      ssize_t w = write (fd, p, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return -1;
      p += w;
      n -= (size_t) w;
    }
  return 0;
}

/* A new pseudo-terminal: *MASTER and *SLAVE (both O_CLOEXEC, the slave
   O_NOCTTY), or -errno.  */
int
agent_open_pty (int *master, int *slave)
{
  int m = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0)
    return -errno;
  char name[128];
  if (grantpt (m) < 0 || unlockpt (m) < 0 || ptsname_r (m, name, sizeof name) != 0)
    {
      int r = -errno;
      close (m);
      return r;
    }
  int s = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0)
    {
      int r = -errno;
      close (m);
      return r;
    }
  *master = m;
  *slave = s;
  return 0;
}

/* The child's side: a session of its own whose controlling terminal is
   SLAVE, on stdin and stdout.  Does not return.  */
static void
child (int slave, char **argv)
{
  if (setsid () < 0 || ioctl (slave, TIOCSCTTY, 0) < 0)
    _exit (126);
  struct winsize ws = { .ws_row = PTY_ROWS, .ws_col = PTY_COLS };
  (void) ioctl (slave, TIOCSWINSZ, &ws);
  if (dup2 (slave, 0) < 0 || dup2 (slave, 1) < 0)
    _exit (126);
  signal (SIGPIPE, SIG_DFL);
  execvp (argv[0], argv);
  fprintf (stderr, "berth-agent: cannot run %s: %s\n", argv[0], strerror (errno));
  _exit (127);
}

int
agent_pty_run (char **argv)
{
  if (argv == NULL || argv[0] == NULL)
    {
      fprintf (stderr, "usage: berth-agent --pty-run -- COMMAND [ARG...]\n");
      return 2;
    }
  int m, s, r = agent_open_pty (&m, &s);
  if (r < 0)
    {
      fprintf (stderr, "berth-agent: no pseudo-terminal here: %s\n", strerror (-r));
      return 126;
    }
  signal (SIGPIPE, SIG_IGN);
  pid_t pid = fork ();
  if (pid < 0)
    {
      fprintf (stderr, "berth-agent: fork: %s\n", strerror (errno));
      return 126;
    }
  if (pid == 0)
    child (s, argv);
  close (s);

  /* Copy stdin -> terminal, terminal -> stdout until the terminal has no
     writer left (EIO on Linux once every slave fd is closed).  */
  bool in_open = true;
  char buf[65536];
  for (;;)
    {
      struct pollfd pfd[2] = { { .fd = m, .events = POLLIN }, { .fd = in_open ? 0 : -1, .events = POLLIN } };
      if (poll (pfd, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (pfd[0].revents)
        {
          ssize_t n = read (m, buf, sizeof buf);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            break;
          if (write_all (1, buf, (size_t) n) < 0)
            break;
        }
      if (in_open && pfd[1].revents)
        {
          ssize_t n = read (0, buf, sizeof buf);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            {
              /* The end of stdin is the terminal's end of file: ^D at
                 the start of a line (the line discipline's VEOF).  */
              struct termios t;
              char eof = tcgetattr (m, &t) == 0 ? (char) t.c_cc[VEOF] : 4;
              (void) write_all (m, &eof, 1);
              in_open = false;
            }
          else if (write_all (m, buf, (size_t) n) < 0)
            in_open = false;
        }
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return 126;
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return WEXITSTATUS (status);
}
