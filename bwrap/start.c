/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* start.c: the bwrap backend's start transport.  Execute asks the jail's
 * init (over STATE/jail.sock) to fork the command; no local process is
 * spawned per command.  Protocol: proto.h.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <berth/provider.h>
#include "bwrap-private.h"
#include "proto.h"

typedef struct bwrap_proc
{
  int conn, out, err, in, ep;
  char tail[1024]; /* what the server said: a reason, then "\0status=N\n" */
  size_t tail_len;
  bool conn_eof;
} bwrap_proc;

static void
drop (bwrap_proc *p, int *fd)
{
  if (*fd >= 0)
    {
      epoll_ctl (p->ep, EPOLL_CTL_DEL, *fd, NULL);
      close (*fd);
      *fd = -1;
    }
}

static void
read_conn (bwrap_proc *p)
{
  while (p->conn >= 0)
    {
      char buf[512];
      ssize_t n = read (p->conn, buf, sizeof buf);
      if (n > 0)
        {
          size_t room = sizeof p->tail - 1 - p->tail_len;
          if ((size_t) n > room)
            n = room; /* bounded: the status comes last and is short */
          memcpy (p->tail + p->tail_len, buf, n);
          p->tail_len += n;
          continue;
        }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      p->conn_eof = true;
      drop (p, &p->conn);
    }
}

static void
drain (bwrap_proc *p, int *fd, int stream, berth_sink_fn sink, void *userdata)
{
  char buf[65536];
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
proc_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  bwrap_proc *p = proc;
  struct epoll_event ev[4];
  epoll_wait (p->ep, ev, 4, 0); /* consume readiness; we read everything */
  drain (p, &p->out, BERTH_STREAM_OUT, sink, userdata);
  drain (p, &p->err, BERTH_STREAM_ERR, sink, userdata);
  read_conn (p);
  return p->out >= 0 || p->err >= 0;
}

static ssize_t
proc_write_stdin (void *proc, const void *buf, size_t len)
{
  bwrap_proc *p = proc;
  ssize_t n;
  if (p->in < 0)
    return -EPIPE;
  n = write (p->in, buf, len);
  return n < 0 ? -errno : n;
}

static int
proc_close_stdin (void *proc)
{
  bwrap_proc *p = proc;
  if (p->in >= 0)
    close (p->in);
  p->in = -1;
  return 0;
}

static int
proc_wait (void *proc, int *ret_status, berth_error **reterr)
{
  bwrap_proc *p = proc;
  const char *nul;
  /* The status follows the command's exit; wait for it.  */
  while (!p->conn_eof && p->conn >= 0)
    {
      struct pollfd pf = { .fd = p->conn, .events = POLLIN };
      if (poll (&pf, 1, -1) < 0 && errno != EINTR)
        break;
      read_conn (p);
    }
  p->tail[p->tail_len] = '\0';
  nul = memchr (p->tail, '\0', p->tail_len);
  if (nul == NULL || strncmp (nul + 1, "status=", 7) != 0)
    return berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: the jail ended before the command reported its status%s%s",
                            p->tail_len ? ": " : "", p->tail);
  if (nul != p->tail)
    {
      /* The command could not be started: the reason precedes the status. */
      size_t n = nul - p->tail;
      while (n > 0 && p->tail[n - 1] == '\n')
        n--;
      return berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: %.*s", (int) n, p->tail);
    }
  *ret_status = atoi (nul + 8);
  return 0;
}

static void
proc_free (void *proc)
{
  bwrap_proc *p = proc;
  if (p == NULL)
    return;
  drop (p, &p->out);
  drop (p, &p->err);
  drop (p, &p->conn);
  if (p->in >= 0)
    close (p->in);
  if (p->ep >= 0)
    close (p->ep);
  free (p);
}

static const berth_proc_ops bwrap_proc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = proc_pump,
  .write_stdin = proc_write_stdin,
  .close_stdin = proc_close_stdin,
  .wait = proc_wait,
  .free = proc_free,
};

static int
connect_jail (const char *state, berth_error **reterr)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd, dfd = -1, r;
  if (snprintf (sa.sun_path, sizeof sa.sun_path, "%s/" JAIL_SOCKET_FILE, state) >= (int) sizeof sa.sun_path)
    {
      dfd = open (state, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        return berth_error_errno (reterr, errno, "bwrap: %s", state);
      snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" JAIL_SOCKET_FILE, dfd);
    }
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    r = berth_error_errno (reterr, errno, "bwrap: socket");
  else if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      r = berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: the environment's jail is not running (%s); nothing was run",
                           strerror (errno));
      close (fd);
    }
  else
    r = fd;
  if (dfd >= 0)
    close (dfd);
  return r;
}

static int
append (char **buf, size_t *len, size_t *cap, const char *s)
{
  size_t n = strlen (s) + 1;
  if (*len + n > JAIL_PROTO_MAX_BODY)
    return -E2BIG;
  if (*len + n > *cap)
    {
      size_t c = (*cap ? *cap * 2 : 4096);
      char *b;
      while (c < *len + n)
        c *= 2;
      b = realloc (*buf, c);
      if (b == NULL)
        return -ENOMEM;
      *buf = b;
      *cap = c;
    }
  memcpy (*buf + *len, s, n);
  *len += n;
  return 0;
}

static bool
send_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t w = send (fd, buf, len, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return false;
      buf += w;
      len -= w;
    }
  return true;
}

int
bwrap_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  const char *const *envp = berth_env_host_environ (env);
  struct jail_request hdr = { .magic = JAIL_PROTO_MAGIC };
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pi[2] = { -1, -1 }, r;
  char *body = NULL, cwd[4096];
  size_t len = 0, cap = 0;
  bwrap_proc *p = NULL;

  if (req->user && *req->user)
    return berth_error_set (reterr, ENOTSUP, "bwrap: running as another user (%s) is not supported", req->user);
  if (d == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "bwrap: the jail was not created");
  if (getcwd (cwd, sizeof cwd) == NULL)
    strcpy (cwd, "/");
  r = append (&body, &len, &cap, cwd);
  for (size_t i = 0; r == 0 && req->argv[i]; i++, hdr.argc++)
    r = append (&body, &len, &cap, req->argv[i]);
  for (size_t i = 0; r == 0 && envp && envp[i]; i++, hdr.envc++)
    r = append (&body, &len, &cap, envp[i]);
  if (r < 0)
    {
      free (body);
      return berth_error_errno (reterr, -r, "bwrap: the command and its environment are too large");
    }
  hdr.body_len = (uint32_t) len;

  p = calloc (1, sizeof *p);
  if (p == NULL)
    {
      free (body);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  p->conn = p->out = p->err = p->in = p->ep = -1;
  if (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0
      || (req->has_stdin ? pipe2 (pi, O_CLOEXEC) : ((pi[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ? -1 : 0)) < 0)
    {
      r = berth_error_errno (reterr, errno, "bwrap: pipe");
      goto fail;
    }
  p->conn = connect_jail (d->state, reterr);
  if (p->conn < 0)
    {
      r = p->conn;
      p->conn = -1;
      goto fail;
    }
  {
    int fds[3] = { pi[0], po[1], pe[1] };
    char cbuf[CMSG_SPACE (sizeof fds)];
    struct iovec iov = { .iov_base = &hdr, .iov_len = sizeof hdr };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
    struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
    memset (cbuf, 0, sizeof cbuf);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN (sizeof fds);
    memcpy (CMSG_DATA (cm), fds, sizeof fds);
    if (sendmsg (p->conn, &mh, MSG_NOSIGNAL) != (ssize_t) sizeof hdr || !send_all (p->conn, body, len))
      {
        r = berth_error_errno (reterr, errno ? errno : EPIPE, "bwrap: cannot send the command to the jail");
        goto fail;
      }
  }
  free (body);
  body = NULL;
  /* The child ends now live in the jail.  */
  close (pi[0]);
  close (po[1]);
  close (pe[1]);
  pi[0] = po[1] = pe[1] = -1;
  p->out = po[0];
  p->err = pe[0];
  p->in = pi[1];
  po[0] = pe[0] = pi[1] = -1;
  fcntl (p->out, F_SETFL, O_NONBLOCK);
  fcntl (p->err, F_SETFL, O_NONBLOCK);
  fcntl (p->conn, F_SETFL, O_NONBLOCK);
  if (p->in >= 0)
    fcntl (p->in, F_SETFL, O_NONBLOCK);
  p->ep = epoll_create1 (EPOLL_CLOEXEC);
  if (p->ep < 0)
    {
      r = berth_error_errno (reterr, errno, "bwrap: epoll");
      goto fail;
    }
  {
    int fds[3] = { p->out, p->err, p->conn };
    for (int i = 0; i < 3; i++)
      {
        struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
        if (epoll_ctl (p->ep, EPOLL_CTL_ADD, fds[i], &ev) < 0)
          {
            r = berth_error_errno (reterr, errno, "bwrap: epoll");
            goto fail;
          }
      }
  }
  ret->fd = p->ep;
  ret->stdin_fd = p->in;
  ret->ops = &bwrap_proc_ops;
  ret->proc = p;
  return 0;

fail:
  free (body);
  for (int i = 0; i < 2; i++)
    {
      if (po[i] >= 0)
        close (po[i]);
      if (pe[i] >= 0)
        close (pe[i]);
      if (pi[i] >= 0)
        close (pi[i]);
    }
  proc_free (p);
  return r;
}
