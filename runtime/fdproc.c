/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fdproc.c: a berth_proc over plain fds.  stdout and stderr are watched
   by one epoll fd, so a caller polls a single descriptor and pump
   delivers each stream separately.  Every job of the session layer is one
   of these unless a backend brings its own (docker's HTTP stream).  */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "berth-private.h"
#include "child.h"

typedef struct fdproc
{
  int in, out, err, ep;
  pid_t pid;
  int (*wait) (void *data, int *ret_status, berth_error **reterr);
  void (*free) (void *data);
  void *data;
  bool in_is_socket;
} fdproc;

static void
drop (fdproc *p, int *fd)
{
  if (*fd < 0)
    return;
  epoll_ctl (p->ep, EPOLL_CTL_DEL, *fd, NULL);
  close (*fd);
  *fd = -1;
}

static void
drain (fdproc *p, int *fd, int stream, berth_sink_fn sink, void *userdata)
{
  char buf[65536];
  /* Bounded per call so one busy stream cannot starve the other.  */
  for (int i = 0; *fd >= 0 && i < 16; i++)
    {
      ssize_t n = read (*fd, buf, sizeof buf);
      if (n > 0)
        {
          sink (userdata, stream, buf, (size_t) n);
          if ((size_t) n < sizeof buf)
            return;
          continue;
        }
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
      drop (p, fd);
    }
}

static int
fdproc_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  fdproc *p = proc;
  struct epoll_event ev[2];
  epoll_wait (p->ep, ev, 2, 0); /* consume readiness; we read both */
  drain (p, &p->out, BERTH_STREAM_OUT, sink, userdata);
  drain (p, &p->err, BERTH_STREAM_ERR, sink, userdata);
  return p->out >= 0 || p->err >= 0;
}

static ssize_t
fdproc_write_stdin (void *proc, const void *buf, size_t len)
{
  fdproc *p = proc;
  ssize_t n;
  if (p->in < 0)
    return -EPIPE;
  n = p->in_is_socket ? send (p->in, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) : write (p->in, buf, len);
  return n < 0 ? -errno : n;
}

static int
fdproc_close_stdin (void *proc)
{
  fdproc *p = proc;
  if (p->in >= 0)
    close (p->in);
  p->in = -1;
  return 0;
}

static int
fdproc_wait (void *proc, int *ret_status, berth_error **reterr)
{
  fdproc *p = proc;
  if (p->wait)
    return p->wait (p->data, ret_status, reterr);
  if (p->pid <= 0)
    {
      *ret_status = -1;
      return 0;
    }
  int st;
  while (waitpid (p->pid, &st, 0) < 0)
    if (errno != EINTR)
      return berth_error_errno (reterr, errno, "waitpid");
  p->pid = -1;
  *ret_status = berth_status_decode (st);
  return 0;
}

static void
fdproc_free (void *proc)
{
  fdproc *p = proc;
  if (p == NULL)
    return;
  drop (p, &p->out);
  drop (p, &p->err);
  fdproc_close_stdin (p);
  if (p->ep >= 0)
    close (p->ep);
  if (p->pid > 0)
    {
      /* Still running: only our client process goes (its background
         children are the command's business).  */
      int st;
      kill (p->pid, SIGKILL);
      while (waitpid (p->pid, &st, 0) < 0 && errno == EINTR)
        ;
    }
  if (p->free)
    p->free (p->data);
  free (p);
}

static const berth_proc_ops fdproc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = fdproc_pump,
  .write_stdin = fdproc_write_stdin,
  .close_stdin = fdproc_close_stdin,
  .wait = fdproc_wait,
  .free = fdproc_free,
};

static bool
is_socket (int fd)
{
  struct stat st;
  return fd >= 0 && fstat (fd, &st) == 0 && S_ISSOCK (st.st_mode);
}

BERTH_EXPORT int
berth_proc_from_fds (const berth_fdproc_spec *spec, berth_proc *ret, berth_error **reterr)
{
  fdproc *p = xcalloc (1, sizeof *p);
  int fds[] = { spec->in_fd, spec->out_fd, spec->err_fd };
  p->in = spec->in_fd;
  p->out = spec->out_fd;
  p->err = spec->err_fd;
  p->pid = spec->pid;
  p->wait = spec->wait;
  p->free = spec->free;
  p->data = spec->data;
  p->in_is_socket = is_socket (p->in);
  p->ep = epoll_create1 (EPOLL_CLOEXEC);
  if (p->ep < 0)
    {
      int r = -errno;
      p->pid = -1; /* not ours to kill on this error path */
      fdproc_free (p);
      return berth_error_errno (reterr, -r, "epoll_create1");
    }
  for (size_t i = 0; i < ARRAY_SIZE (fds); i++)
    if (fds[i] >= 0)
      fcntl (fds[i], F_SETFL, fcntl (fds[i], F_GETFL) | O_NONBLOCK);
  for (int *fd = &p->out; fd <= &p->err; fd++)
    if (*fd >= 0)
      {
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = *fd };
        epoll_ctl (p->ep, EPOLL_CTL_ADD, *fd, &ev);
      }
  *ret = (berth_proc){ .size = sizeof *ret, .fd = p->ep, .stdin_fd = p->in, .ops = &fdproc_ops, .proc = p };
  return 0;
}

int
berth_proc_spawn_fd (const char *const *argv, const char *const *envp, int extra_fd, unsigned flags, berth_proc *ret, berth_error **reterr)
{
  berth_child c = BERTH_CHILD_INIT;
  int r = berth_child_spawn (argv, envp, extra_fd, flags, &c);
  if (r < 0)
    return berth_error_errno (reterr, -r, "cannot run %s", argv[0]);
  berth_fdproc_spec spec = { .size = sizeof spec, .in_fd = c.in_fd, .out_fd = c.out_fd, .err_fd = c.err_fd, .pid = c.pid };
  return berth_proc_from_fds (&spec, ret, reterr);
}

BERTH_EXPORT int
berth_proc_spawn (const char *const *argv, const char *const *envp, bool has_stdin, berth_proc *ret, berth_error **reterr)
{
  return berth_proc_spawn_fd (argv, envp, -1, has_stdin ? BERTH_SPAWN_STDIN : 0, ret, reterr);
}
