/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* start.c: the bwrap backend's start transport.  Execute asks the jail's
 * init (over STATE/jail.sock) to fork the command; no local process is
 * spawned per command.  Protocol: proto.h.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <berth/provider.h>
#include "bwrap-private.h"
#include "proto.h"

/* What the jail's init says on the connection: a reason when the command
   could not start, then "\0status=N\n" when it exits (bounded).  */
typedef struct bwrap_conn
{
  int fd;
  berth_env *env;
  int64_t cpu_seconds;
  char tail[1024];
  size_t tail_len;
} bwrap_conn;

static int
conn_wait (void *data, int *ret_status, berth_error **reterr)
{
  bwrap_conn *c = data;
  const char *nul;
  while (c->fd >= 0)
    {
      char buf[512];
      ssize_t n = read (c->fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd pf = { .fd = c->fd, .events = POLLIN };
          poll (&pf, 1, -1);
          continue;
        }
      if (n <= 0)
        break;
      size_t room = sizeof c->tail - 1 - c->tail_len;
      if ((size_t) n > room)
        n = (ssize_t) room;
      memcpy (c->tail + c->tail_len, buf, (size_t) n);
      c->tail_len += (size_t) n;
    }
  c->tail[c->tail_len] = '\0';
  nul = memchr (c->tail, '\0', c->tail_len);
  if (nul == NULL || strncmp (nul + 1, "status=", 7) != 0)
    return berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: the jail's init (berth-jail) died while the command ran%s%s",
                            c->tail_len ? ": " : "", c->tail);
  if (nul != c->tail)
    {
      /* The command could not be started: the reason precedes the status. */
      size_t n = (size_t) (nul - c->tail);
      while (n > 0 && c->tail[n - 1] == '\n')
        n--;
      return berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: %.*s", (int) n, c->tail);
    }
  *ret_status = atoi (nul + 8);
  berth_logf (c->env, BERTH_LOG_DEBUG, "the jail reports status %d", *ret_status);
  /* Only RLIMIT_CPU sends SIGXCPU: name the limit and its key.  */
  if (*ret_status == 128 + SIGXCPU && c->cpu_seconds > 0)
    berth_logf (c->env, BERTH_LOG_WARNING,
                "the command was stopped by the jail's CPU time limit (%lld s, terminal.bwrap_cpu_seconds; 0 disables it)",
                (long long) c->cpu_seconds);
  return 0;
}

static void
conn_free (void *data)
{
  bwrap_conn *c = data;
  if (c->fd >= 0)
    close (c->fd);
  free (c);
}

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
      /* ESRCH: nothing of the jail is left (its processes die with its
         init, the pid namespace's first process).  */
      r = berth_error_set (reterr, ESRCH, "bwrap: the environment's jail is not running (%s); nothing was run",
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

int
bwrap_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  const char *const *envp = berth_env_host_environ (env);
  struct jail_request hdr = { .magic = JAIL_PROTO_MAGIC };
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pi[2] = { -1, -1 }, r;
  int extra = BERTH_HAS_FIELD (req, berth_start_req, extra_fd) ? req->extra_fd : -1;
  char *body = NULL, cwd[4096];
  size_t len = 0, cap = 0;
  bwrap_conn *c = NULL;

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
  if (extra >= 0)
    hdr.flags |= JAIL_REQ_FD3;

  c = calloc (1, sizeof *c);
  if (c == NULL)
    {
      free (body);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  c->fd = -1;
  c->env = env;
  c->cpu_seconds = d->cpu_seconds;
  /* stdin is a socket: the runtime writes it with MSG_NOSIGNAL.  */
  if (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0
      || (req->has_stdin ? socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pi) : ((pi[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ? -1 : 0)) < 0)
    {
      r = berth_error_errno (reterr, errno, "bwrap: pipe");
      goto fail;
    }
  c->fd = connect_jail (d->state, reterr);
  if (c->fd < 0)
    {
      r = c->fd;
      c->fd = -1;
      goto fail;
    }
  {
    int fds[4] = { pi[0], po[1], pe[1], extra };
    size_t nfds = extra >= 0 ? 4 : 3;
    char cbuf[CMSG_SPACE (sizeof fds)];
    struct iovec iov = { .iov_base = &hdr, .iov_len = sizeof hdr };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = CMSG_SPACE (nfds * sizeof (int)) };
    struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
    memset (cbuf, 0, sizeof cbuf);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN (nfds * sizeof (int));
    memcpy (CMSG_DATA (cm), fds, nfds * sizeof (int));
    if (sendmsg (c->fd, &mh, MSG_NOSIGNAL) != (ssize_t) sizeof hdr || !jail_send_all (c->fd, body, len))
      {
        r = berth_error_errno (reterr, errno ? errno : EPIPE, "bwrap: cannot send the command to the jail");
        goto fail;
      }
  }
  free (body);
  body = NULL;
  berth_logf (env, BERTH_LOG_DEBUG, "attach to the jail in %s: sent %s (%u words)", d->state, req->argv[0], (unsigned) hdr.argc);
  /* The child ends now live in the jail.  */
  close (pi[0]);
  close (po[1]);
  close (pe[1]);
  berth_fdproc_spec spec = {
    .size = sizeof spec, .in_fd = req->has_stdin ? pi[1] : -1, .out_fd = po[0], .err_fd = pe[0], .pid = -1,
    .wait = conn_wait, .free = conn_free, .data = c,
  };
  if (!req->has_stdin && pi[1] >= 0)
    close (pi[1]);
  return berth_proc_from_fds (&spec, ret, reterr);

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
  conn_free (c);
  return r;
}
