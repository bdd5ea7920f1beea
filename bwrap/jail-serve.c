/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-serve.c: the jail's init as a command server.
 *
 * The init binds STATE/jail.sock while it still sees the host (the state
 * directory is hidden from the jail afterwards), accepts requests from
 * berth and forks each command itself: no helper process per command.
 * The child reads the request, takes the client's stdin/stdout/stderr,
 * gives up every privilege exactly as `berth-jail exec` does, and execs.
 * The init reports its exit status on the connection.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "proto.h"

#define MAX_CONNS 1024

static struct
{
  pid_t pid;
  int fd;
} conns[MAX_CONNS];

int
jail_serve_bind (const char *state)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd;
  if (snprintf (sa.sun_path, sizeof sa.sun_path, "%s/" JAIL_SOCKET_FILE, state) >= (int) sizeof sa.sun_path)
    {
      /* A long state path: bind through /proc/self/fd of the directory.  */
      int dfd = open (state, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        die_errno (errno, "open %s", state);
      snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" JAIL_SOCKET_FILE, dfd);
    }
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    die_errno (errno, "socket");
  unlink (sa.sun_path);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0 || chmod (sa.sun_path, 0600) < 0 || listen (fd, 64) < 0)
    die_errno (errno, "cannot listen on %s", sa.sun_path);
  return fd;
}

/* In the child: fail with a reason the client shows.  */
static _Noreturn void
refuse (int conn, int code, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg - 2, fmt, ap);
  va_end (ap);
  strcat (msg, "\n");
  jail_send_all (conn, msg, strlen (msg));
  _exit (code);
}

static bool
read_full (int fd, char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t r = read (fd, buf, len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        return false;
      buf += r;
      len -= r;
    }
  return true;
}

static _Noreturn void
run_request (int conn, const struct jail_serve_ctx *ctx)
{
  struct jail_request req;
  char cbuf[CMSG_SPACE (4 * sizeof (int))];
  struct iovec iov = { .iov_base = &req, .iov_len = sizeof req };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
  struct cmsghdr *cm;
  struct timeval tv = { .tv_sec = 30 };
  int fds[4] = { -1, -1, -1, -1 }, flags;
  size_t nfds;
  char *body, **argv, **envp, *p, *end;
  const char *cwd;
  sigset_t none;
  ssize_t n;

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  jail_report_fd = conn; /* die() reaches the client */
  /* The client may stall; the child must not stay forever.  */
  setsockopt (conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  flags = fcntl (conn, F_GETFL);
  fcntl (conn, F_SETFL, flags & ~O_NONBLOCK);

  n = recvmsg (conn, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  if (n != (ssize_t) sizeof req)
    _exit (JAIL_EXIT_FAILURE);
  nfds = (req.flags & JAIL_REQ_FD3) ? 4 : 3;
  for (cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN (nfds * sizeof (int)))
      memcpy (fds, CMSG_DATA (cm), nfds * sizeof (int));
  if (req.magic != JAIL_PROTO_MAGIC || (req.flags & ~JAIL_REQ_FD3) != 0 || req.argc == 0 || req.argc > JAIL_PROTO_MAX_WORDS
      || req.envc > JAIL_PROTO_MAX_WORDS || req.body_len == 0 || req.body_len > JAIL_PROTO_MAX_BODY || fds[0] < 0
      || fds[1] < 0 || fds[2] < 0 || (nfds == 4 && fds[3] < 0) || (mh.msg_flags & MSG_CTRUNC))
    refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: malformed request");
  body = malloc (req.body_len + 1);
  argv = calloc (req.argc + 1, sizeof *argv);
  envp = calloc (req.envc + 1, sizeof *envp);
  if (body == NULL || argv == NULL || envp == NULL)
    refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: out of memory");
  if (!read_full (conn, body, req.body_len))
    _exit (JAIL_EXIT_FAILURE);
  body[req.body_len] = '\0';
  end = body + req.body_len;
  if (end[-1] != '\0')
    refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: malformed request body");
  p = body;
  cwd = p;
  p += strlen (p) + 1;
  for (uint32_t i = 0; i < req.argc + req.envc; i++)
    {
      if (p >= end)
        refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: malformed request body");
      if (i < req.argc)
        argv[i] = p;
      else
        envp[i - req.argc] = p;
      p += strlen (p) + 1;
    }

  /* Move the connection and the fds above the targets first, so no dup2
     clobbers them.  */
  if (conn < (int) nfds)
    {
      int high = fcntl (conn, F_DUPFD_CLOEXEC, 10);
      if (high < 0)
        _exit (JAIL_EXIT_FAILURE);
      close (conn);
      conn = jail_report_fd = high;
    }
  for (size_t i = 0; i < nfds; i++)
    if (fds[i] < (int) nfds && (fds[i] = fcntl (fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
      refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: dup: %s", strerror (errno));
  for (size_t i = 0; i < nfds; i++)
    if (dup2 (fds[i], (int) i) < 0)
      refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: dup2: %s", strerror (errno));
  for (size_t i = 0; i < nfds; i++)
    close (fds[i]);
  setsid ();
  if (chdir (cwd) < 0 && (ctx->workspace == NULL || chdir (ctx->workspace) < 0) && chdir ("/") < 0)
    refuse (conn, JAIL_EXIT_FAILURE, "berth-jail: chdir: %s", strerror (errno));
  jail_set_rlimits (ctx->memory_mb, ctx->cpu_seconds, ctx->max_procs);
  jail_drop_caps ();
  jail_set_no_new_privs ();
  jail_load_seccomp_prog (ctx->seccomp);
  environ = envp;
  unsetenv ("SSH_AUTH_SOCK");
  unsetenv ("GPG_AGENT_INFO");
  unsetenv ("DBUS_SESSION_BUS_ADDRESS");
  execvp (argv[0], argv);
  refuse (conn, errno == ENOENT ? 127 : 126, "berth-jail: cannot execute %s: %s", argv[0], strerror (errno));
}

void
jail_serve_accept (int lfd, const struct jail_serve_ctx *ctx)
{
  for (;;)
    {
      int conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      size_t slot;
      pid_t pid;
      if (conn < 0)
        return;
      for (slot = 0; slot < MAX_CONNS && conns[slot].pid > 0; slot++)
        ;
      if (slot == MAX_CONNS)
        {
          static const char busy[] = "berth-jail: too many commands at once\n";
          jail_send_all (conn, busy, sizeof busy - 1);
          close (conn);
          continue;
        }
      pid = fork ();
      if (pid < 0)
        {
          close (conn);
          continue;
        }
      if (pid == 0)
        {
          close (lfd);
          run_request (conn, ctx);
        }
      conns[slot].pid = pid;
      conns[slot].fd = conn;
    }
}

void
jail_serve_reap (void)
{
  pid_t pid;
  int status;
  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    for (size_t i = 0; i < MAX_CONNS; i++)
      if (conns[i].pid == pid)
        {
          char msg[32];
          int code = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
          int len = snprintf (msg, sizeof msg, "%cstatus=%d\n", '\0', code);
          jail_send_all (conns[i].fd, msg, len);
          close (conns[i].fd);
          conns[i].pid = 0;
          conns[i].fd = -1;
          break;
        }
}
