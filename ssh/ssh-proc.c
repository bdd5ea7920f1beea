/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-proc.c: a local ssh client as a berth_proc (see ssh-proc.h).
 *
 * stdout and stderr are two pipes watched by one epoll fd, so libberth
 * polls a single descriptor and pump() delivers each stream separately.
 * stdin is a socket so writes never raise SIGPIPE (MSG_NOSIGNAL).  The
 * client runs in its own session with default signal dispositions.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ssh-proc.h"

extern char **environ;

typedef struct ssh_proc
{
  pid_t pid;
  int in_fd;
  int out_fd;
  int err_fd;
  int ep;
  int status;
  bool reaped;
} ssh_proc;

static int
decode (int st)
{
  if (WIFEXITED (st))
    return WEXITSTATUS (st);
  if (WIFSIGNALED (st))
    return 128 + WTERMSIG (st);
  return 255;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* Read what is there from *FD; -1 it at end of stream.  */
static int
drain (ssh_proc *p, int *fd, int stream, berth_sink_fn sink, void *userdata)
{
  char buf[65536];
  for (int i = 0; i < 16 && *fd >= 0; i++)
    {
      ssize_t n = read (*fd, buf, sizeof buf);
      if (n > 0)
        {
          sink (userdata, stream, buf, (size_t) n);
          if ((size_t) n < sizeof buf)
            break;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        break;
      /* end of stream, or a broken pipe: either way this stream is done */
      epoll_ctl (p->ep, EPOLL_CTL_DEL, *fd, NULL);
      close_fd (fd);
    }
  return 0;
}

static int
proc_pump (void *data, berth_sink_fn sink, void *userdata)
{
  ssh_proc *p = data;
  drain (p, &p->out_fd, BERTH_STREAM_OUT, sink, userdata);
  drain (p, &p->err_fd, BERTH_STREAM_ERR, sink, userdata);
  return p->out_fd >= 0 || p->err_fd >= 0;
}

static ssize_t
proc_write_stdin (void *data, const void *buf, size_t len)
{
  ssh_proc *p = data;
  ssize_t n;
  if (p->in_fd < 0)
    return -EPIPE;
  n = send (p->in_fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0)
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
  return n;
}

static int
proc_close_stdin (void *data)
{
  ssh_proc *p = data;
  close_fd (&p->in_fd);
  return 0;
}

/* Reap within TIMEOUT_MS, else SIGKILL our client (only it: the remote
   side is killed by libberth's kill script).  */
static void
reap (ssh_proc *p, int timeout_ms)
{
  struct timespec ts = { 0, 1000000 };
  int st, waited = 0;
  if (p->reaped || p->pid <= 0)
    return;
  for (;;)
    {
      pid_t r = waitpid (p->pid, &st, WNOHANG);
      if (r == p->pid)
        break;
      if (r < 0 && errno != EINTR)
        {
          st = 255 << 8;
          break;
        }
      if (waited >= timeout_ms)
        {
          kill (p->pid, SIGKILL);
          while (waitpid (p->pid, &st, 0) < 0 && errno == EINTR)
            ;
          break;
        }
      nanosleep (&ts, NULL);
      waited++;
      if (ts.tv_nsec < 10000000)
        ts.tv_nsec += 1000000;
    }
  p->status = decode (st);
  p->reaped = true;
}

static int
proc_wait (void *data, int *ret_status, berth_error **reterr)
{
  ssh_proc *p = data;
  reap (p, 5000);
  *ret_status = p->status;
  return 0;
}

static void
proc_free (void *data)
{
  ssh_proc *p = data;
  if (p == NULL)
    return;
  reap (p, 0);
  close_fd (&p->in_fd);
  close_fd (&p->out_fd);
  close_fd (&p->err_fd);
  close_fd (&p->ep);
  free (p);
}

static const berth_proc_ops ssh_proc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = proc_pump,
  .write_stdin = proc_write_stdin,
  .close_stdin = proc_close_stdin,
  .wait = proc_wait,
  .free = proc_free,
};

int
berth_ssh_proc_spawn (const char *const *argv, const char *const *envp, bool has_stdin, berth_proc *ret, berth_error **reterr)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t none, all;
  ssh_proc *p;
  int r;

  p = calloc (1, sizeof *p);
  if (p == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  p->pid = -1;
  p->in_fd = p->out_fd = p->err_fd = p->ep = -1;

  if ((has_stdin && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0) || pipe2 (out, O_CLOEXEC) < 0
      || pipe2 (err, O_CLOEXEC) < 0 || (p->ep = epoll_create1 (EPOLL_CLOEXEC)) < 0)
    {
      r = berth_error_errno (reterr, errno, "ssh: cannot create pipes");
      goto fail;
    }
  if (has_stdin)
    shutdown (in[0], SHUT_WR); /* the client never writes back on its stdin */

  posix_spawn_file_actions_init (&fa);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&all);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &all);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (has_stdin)
    posix_spawn_file_actions_adddup2 (&fa, in[0], 0);
  else
    posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, err[1], 2);
  r = posix_spawn (&p->pid, argv[0], &fa, &attr, (char *const *) argv, (char *const *) (envp ? envp : (const char *const *) environ));
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  if (r != 0)
    {
      p->pid = -1;
      r = berth_error_errno (reterr, r, "ssh: cannot run %s", argv[0]);
      goto fail;
    }
  close_fd (&in[0]);
  close_fd (&out[1]);
  close_fd (&err[1]);
  p->in_fd = in[1];
  p->out_fd = out[0];
  p->err_fd = err[0];
  in[1] = out[0] = err[0] = -1;
  fcntl (p->out_fd, F_SETFL, O_NONBLOCK);
  fcntl (p->err_fd, F_SETFL, O_NONBLOCK);
  if (p->in_fd >= 0)
    fcntl (p->in_fd, F_SETFL, O_NONBLOCK);
  {
    struct epoll_event eo = { .events = EPOLLIN, .data.fd = p->out_fd };
    struct epoll_event ee = { .events = EPOLLIN, .data.fd = p->err_fd };
    if (epoll_ctl (p->ep, EPOLL_CTL_ADD, p->out_fd, &eo) < 0 || epoll_ctl (p->ep, EPOLL_CTL_ADD, p->err_fd, &ee) < 0)
      {
        r = berth_error_errno (reterr, errno, "ssh: epoll");
        goto fail;
      }
  }
  ret->fd = p->ep;
  ret->stdin_fd = p->in_fd;
  ret->ops = &ssh_proc_ops;
  ret->proc = p;
  return 0;

fail:
  for (int i = 0; i < 2; i++)
    {
      close_fd (&in[i]);
      close_fd (&out[i]);
      close_fd (&err[i]);
    }
  proc_free (p);
  return r;
}
