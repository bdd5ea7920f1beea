/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* child.c: posix_spawn with pipes, a new session, no signal handlers.  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth-private.h"
#include "child.h"

extern char **environ;

int
berth_status_decode (int wstatus)
{
  if (WIFEXITED (wstatus))
    return WEXITSTATUS (wstatus);
  if (WIFSIGNALED (wstatus))
    return 128 + WTERMSIG (wstatus);
  return 255;
}

static void
close_pair (int p[2])
{
  if (p[0] >= 0)
    close (p[0]);
  if (p[1] >= 0)
    close (p[1]);
  p[0] = p[1] = -1;
}

/* Make fd SRC the child's TARGET (src == target: keep it across exec).  */
static int
child_dup (int src, int target)
{
  if (src == target)
    return fcntl (src, F_SETFD, 0);
  return dup2 (src, target) < 0 ? -1 : 0;
}

/* What the child of spawn_die_with_parent needs, and its exec error.  */
typedef struct pdeath_args
{
  const char *const *argv, *const *envp;
  int src[4];
  pid_t parent;
  /* Written by the vfork child, read by the parent: volatile, or the
     compiler, which cannot see the write on the parent's path, folds
     the read to the initial 0 and an exec failure reads as exit 127.  */
  volatile int err;
} pdeath_args;

/* In the vfork child: async-signal-safe calls only, nothing returns.  */
static void __attribute__ ((noreturn))
pdeath_child (pdeath_args *a)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigset_t none;
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != a->parent)
    {
      a->err = ESRCH; /* the parent is gone already */
      _exit (127);
    }
  setsid ();
  for (int sig = 1; sig < NSIG; sig++)
    sigaction (sig, &dfl, NULL);
  /* sources out of the way of the targets first (CLOEXEC copies) */
  for (int i = 0; i < 4; i++)
    if (a->src[i] >= 0 && a->src[i] != i && (a->src[i] = fcntl (a->src[i], F_DUPFD_CLOEXEC, 10)) < 0)
      goto fail;
  for (int i = 0; i < 4; i++)
    if (a->src[i] >= 0 && child_dup (a->src[i], i) < 0)
      goto fail;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  execvpe (a->argv[0], (char *const *) a->argv, (char *const *) a->envp);
fail:
  a->err = errno ? errno : ENOEXEC;
  _exit (127);
}

/* posix_spawn cannot set a parent-death signal: the same steps by hand,
   in a vfork child (no copy of the caller's memory, as posix_spawn):
   every signal blocked around it so no handler of ours runs in the
   child, the parent-death signal set and the parent checked (getppid)
   before anything else, a new session, default signals, the fds, exec.
   An exec failure comes back in A.err, like posix_spawn's.  */
static int
spawn_die_with_parent (const char *const *argv, const char *const *envp, int fd0, int fd1, int fd2, int fd3, pid_t *ret_pid)
{
  pdeath_args a = { .argv = argv, .envp = envp, .src = { fd0, fd1, fd2, fd3 }, .parent = getpid () };
  sigset_t all, old;
  pid_t pid;
  int err;

  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  pid = vfork ();
  if (pid == 0)
    pdeath_child (&a);
  err = pid < 0 ? errno : 0;
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (pid < 0)
    return err;
  if (a.err != 0)
    {
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      return a.err;
    }
  *ret_pid = pid;
  return 0;
}

int
berth_child_spawn (const char *const *argv, const char *const *envp, int extra_fd, unsigned flags, berth_child *ret)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t none, all;
  pid_t pid;
  int r;

  /* stdin is a socket: a write after the command exits gets EPIPE from
     send (MSG_NOSIGNAL) instead of a SIGPIPE in the caller's process.  */
  if ((flags & BERTH_SPAWN_STDIN) && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
    return -errno;
  if (pipe2 (out, O_CLOEXEC) < 0)
    {
      r = -errno;
      close_pair (in);
      return r;
    }
  if (!(flags & BERTH_SPAWN_MERGE_ERR) && pipe2 (err, O_CLOEXEC) < 0)
    {
      r = -errno;
      close_pair (in);
      close_pair (out);
      return r;
    }
  /* Bigger pipes: fewer wake-ups for commands that print a lot.  */
  fcntl (out[0], F_SETPIPE_SZ, 1 << 20);

  posix_spawn_file_actions_init (&fa);
  if (in[0] >= 0)
    posix_spawn_file_actions_adddup2 (&fa, in[0], 0);
  else
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, err[1] >= 0 ? err[1] : out[1], 2);
  if (extra_fd >= 0)
    posix_spawn_file_actions_adddup2 (&fa, extra_fd, 3);

  /* A new session: its process group is ours to kill, and it has no
     controlling terminal to read from.  Default signal dispositions and an
     empty mask, whatever the caller set.  */
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_USEVFORK);

  if (flags & BERTH_SPAWN_DIE_WITH_PARENT)
    {
      int null_fd = in[0] >= 0 ? -1 : open ("/dev/null", O_RDONLY | O_CLOEXEC);
      r = spawn_die_with_parent (argv, envp ? envp : (const char *const *) environ, in[0] >= 0 ? in[0] : null_fd, out[1], err[1] >= 0 ? err[1] : out[1],
                                 extra_fd, &pid);
      if (null_fd >= 0)
        close (null_fd);
    }
  else
    r = posix_spawnp (&pid, argv[0], &fa, &attr, (char *const *) argv, (char *const *) (envp ? envp : (const char *const *) environ));
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  berth_log_spawn (argv, r == 0 ? (long) pid : -1, r);
  if (in[0] >= 0)
    close (in[0]);
  close (out[1]);
  if (err[1] >= 0)
    close (err[1]);
  if (r != 0)
    {
      if (in[1] >= 0)
        close (in[1]);
      close (out[0]);
      if (err[0] >= 0)
        close (err[0]);
      return -r;
    }
  if (flags & BERTH_SPAWN_NONBLOCK)
    {
      int fds[] = { in[1], out[0], err[0] };
      for (size_t i = 0; i < ARRAY_SIZE (fds); i++)
        if (fds[i] >= 0)
          fcntl (fds[i], F_SETFL, fcntl (fds[i], F_GETFL) | O_NONBLOCK);
    }
  ret->pid = pid;
  ret->in_fd = in[1];
  ret->out_fd = out[0];
  ret->err_fd = err[0];
  return 0;
}

int
berth_child_finish (berth_child *c, bool kill_first)
{
  int st = 0;
  int *fds[] = { &c->in_fd, &c->out_fd, &c->err_fd };
  for (size_t i = 0; i < ARRAY_SIZE (fds); i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
  if (c->pid <= 0)
    return 0;
  if (kill_first)
    kill (c->pid, SIGKILL);
  while (waitpid (c->pid, &st, 0) < 0)
    if (errno != EINTR)
      return 255;
  c->pid = -1;
  return berth_status_decode (st);
}

/* Exported service: run a short host command and capture its output.  */
BERTH_EXPORT int
berth_run_capture (const char *const *argv, const char *const *envp, const char *stdin_data, double timeout, size_t max, char **ret_output, int *ret_status, berth_error **reterr)
{
  berth_child c = BERTH_CHILD_INIT;
  berth_buf out = { 0 };
  size_t in_off = 0, in_len = stdin_data ? strlen (stdin_data) : 0;
  uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
  int r, status;

  r = berth_child_spawn (argv, envp, -1, BERTH_SPAWN_MERGE_ERR | BERTH_SPAWN_NONBLOCK | (stdin_data ? BERTH_SPAWN_STDIN : 0), &c);
  if (r < 0)
    return berth_error_errno (reterr, -r, "cannot run %s", argv[0]);
  if (c.in_fd >= 0 && in_len == 0)
    {
      close (c.in_fd);
      c.in_fd = -1;
    }
  while (c.out_fd >= 0)
    {
      struct pollfd p[2] = { { c.out_fd, POLLIN, 0 }, { c.in_fd, POLLOUT, 0 } };
      uint64_t now = berth_now_usec ();
      if (now >= deadline)
        {
          kill (-c.pid, SIGKILL);
          berth_child_finish (&c, true);
          berth_buf_free (&out);
          return berth_error_set (reterr, ETIMEDOUT, "%s timed out after %.0fs", argv[0], timeout);
        }
      r = poll (p, c.in_fd >= 0 ? 2 : 1, (int) ((deadline - now) / 1000) + 1);
      if (r < 0 && errno != EINTR)
        break;
      if (c.in_fd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP)))
        {
          ssize_t n = send (c.in_fd, stdin_data + in_off, in_len - in_off, MSG_NOSIGNAL);
          if (n > 0)
            in_off += (size_t) n;
          if (n < 0 && errno != EAGAIN)
            in_off = in_len;
          if (in_off >= in_len)
            {
              close (c.in_fd);
              c.in_fd = -1;
            }
        }
      if (p[0].revents)
        {
          char buf[16384];
          ssize_t n = read (c.out_fd, buf, sizeof buf);
          if (n > 0 && out.len < max)
            berth_buf_append (&out, buf, (size_t) n < max - out.len ? (size_t) n : max - out.len);
          if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            {
              close (c.out_fd);
              c.out_fd = -1;
            }
        }
    }
  status = berth_child_finish (&c, false);
  *ret_output = berth_buf_steal (&out);
  *ret_status = status;
  return 0;
}
