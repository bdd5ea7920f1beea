/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dial.c: ssh:// engines through `ssh HOST docker system dial-stdio` (see
   dial.h).  How the bytes get to libcurl: the simplest would be a
   socketpair returned by CURLOPT_OPENSOCKETFUNCTION as "already
   connected", but libcurl 7.88 (Debian 12) connect()s it anyway and
   fails.  So the client listens on a UNIX socket in a private directory
   and points libcurl at it (CURLOPT_UNIX_SOCKET_PATH; an abstract one
   would do, but 7.88 never reuses such a connection); each time libcurl
   opens a connection (the request lane, each exec stream: the open-socket
   callback), an ssh child is started that accepts exactly one connection
   -- checked to come from this process (SO_PEERCRED) -- and execs ssh
   with it as stdin and stdout.  No proxy thread copies bytes, and the
   exec stream (hijack.c) polls and half-closes it
   like any UNIX socket.  ssh's ControlMaster, when the user configures
   it, makes the children cheap.  */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <berth/provider-util.h>

#include "dial.h"

void
docker_ssh_target_clear (docker_ssh_target *t)
{
  free (t->user);
  free (t->host);
  free (t->port);
  memset (t, 0, sizeof *t);
}

static bool
word_ok (const char *s, size_t n, const char *extra)
{
  if (n == 0 || s[0] == '-')
    return false;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr (extra, c)))
        return false;
    }
  return true;
}

int
docker_ssh_parse (const char *url, docker_ssh_target *ret, berth_error **reterr)
{
  memset (ret, 0, sizeof *ret);
  if (strncmp (url, "ssh://", 6) != 0)
    return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: expected ssh://[USER@]HOST[:PORT]", url);
  const char *p = url + 6, *end = p + strcspn (p, "/?#");
  if (*end && !(end[0] == '/' && end[1] == '\0'))
    return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: a path after the host is not supported: use ssh://[USER@]HOST[:PORT]", url);
  const char *at = memchr (p, '@', (size_t)(end - p));
  if (at)
    {
      if (!word_ok (p, (size_t)(at - p), "._-+"))
        return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: invalid user name", url);
      ret->user = strndup (p, (size_t)(at - p));
      p = at + 1;
    }
  const char *hend, *port = NULL;
  if (*p == '[')
    {
      hend = memchr (p, ']', (size_t)(end - p));
      if (!hend || !word_ok (p + 1, (size_t)(hend - p - 1), ":.%"))
        {
          docker_ssh_target_clear (ret);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: invalid IPv6 address", url);
        }
      ret->host = strndup (p + 1, (size_t)(hend - p - 1));
      if (hend + 1 < end && hend[1] == ':')
        port = hend + 2;
      else if (hend + 1 != end)
        {
          docker_ssh_target_clear (ret);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: expected ssh://[USER@]HOST[:PORT]", url);
        }
    }
  else
    {
      hend = memchr (p, ':', (size_t)(end - p));
      if (!hend)
        hend = end;
      if (!word_ok (p, (size_t)(hend - p), ".-_"))
        {
          docker_ssh_target_clear (ret);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: invalid host name", url);
        }
      ret->host = strndup (p, (size_t)(hend - p));
      if (hend != end)
        port = hend + 1;
    }
  if (port)
    {
      size_t n = (size_t)(end - port);
      long v = 0;
      for (size_t i = 0; i < n && v <= 65535; i++)
        v = port[i] >= '0' && port[i] <= '9' ? v * 10 + (port[i] - '0') : 70000;
      if (n == 0 || v < 1 || v > 65535)
        {
          docker_ssh_target_clear (ret);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s: the port must be 1-65535", url);
        }
      ret->port = strndup (port, n);
    }
  if (!ret->host || (at && !ret->user) || (port && !ret->port))
    {
      docker_ssh_target_clear (ret);
      return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  return 0;
}

char *
docker_ssh_control_path (void)
{
  /* only a directory that is ours alone: a control socket another user
     could plant would get our connections */
  const char *base = getenv ("XDG_RUNTIME_DIR");
  struct stat st;
  char *dir = NULL, *path = NULL;
  if (!base || base[0] != '/' || strlen (base) > 50 || stat (base, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != getuid ()
      || (st.st_mode & 077) != 0)
    return NULL;
  if (asprintf (&dir, "%s/berth", base) < 0)
    return NULL;
  if (berth_private_dir (dir, NULL) < 0 || asprintf (&path, "%s/dssh-%%C", dir) < 0)
    path = NULL;
  free (dir);
  return path;
}

char **
docker_ssh_argv (const docker_ssh_target *t, const char *ssh, const char *control)
{
  /* BatchMode: a library has no one to type a password; ssh fails at
     once with its reason instead of waiting on the terminal.  */
  char **v = berth_strv_new (ssh ? ssh : "ssh", "-o", "ConnectTimeout=30", "-o", "BatchMode=yes", NULL);
  int r = v ? 0 : -ENOMEM;
  if (r >= 0 && control)
    {
      /* one master per engine, shared by every connection to it (the
         request lane, each exec stream) for 60 s after the last: the
         handshake is paid once, not per command */
      char *cp = NULL;
      if (asprintf (&cp, "ControlPath=%s", control) < 0)
        r = -ENOMEM;
      static const char *const mux[] = { "-o", "ControlMaster=auto", "-o", NULL, "-o", "ControlPersist=60" };
      for (size_t i = 0; r >= 0 && i < sizeof mux / sizeof mux[0]; i++)
        r = berth_strv_push (&v, mux[i] ? mux[i] : cp);
      free (cp);
    }
  if (r >= 0)
    r = berth_strv_push (&v, "-T");
  if (r >= 0 && t->user)
    {
      r = berth_strv_push (&v, "-l");
      if (r >= 0)
        r = berth_strv_push (&v, t->user);
    }
  if (r >= 0 && t->port)
    {
      r = berth_strv_push (&v, "-p");
      if (r >= 0)
        r = berth_strv_push (&v, t->port);
    }
  static const char *const tail[] = { "--", NULL, "docker", "system", "dial-stdio" };
  for (size_t i = 0; r >= 0 && i < sizeof tail / sizeof tail[0]; i++)
    r = berth_strv_push (&v, tail[i] ? tail[i] : t->host);
  if (r < 0)
    return berth_strv_free (v);
  return v;
}

int
docker_dial_listen (char path[128], int *ret_fd)
{
  /* in a directory of our own (0700): only this user (and root) can
     connect at all, and the child checks that it is this process */
  const char *base = getenv ("XDG_RUNTIME_DIR");
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (!base || !*base || base[0] != '/' || strlen (base) > 60 || access (base, W_OK) < 0)
    base = "/tmp";
  snprintf (path, 128, "%s/berth-docker-ssh.XXXXXX", base);
  if (!mkdtemp (path))
    return -errno;
  size_t n = strlen (path);
  snprintf (path + n, 128 - n, "/s");
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      int e = errno;
      path[n] = '\0';
      rmdir (path);
      return -e;
    }
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", path);
  if (bind (fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen (fd, 16) < 0)
    {
      int e = errno;
      close (fd);
      docker_dial_unlisten (path);
      return -e;
    }
  *ret_fd = fd;
  return 0;
}

void
docker_dial_unlisten (const char *path)
{
  if (!path || !*path)
    return;
  unlink (path);
  char *dir = strdup (path);
  char *slash = dir ? strrchr (dir, '/') : NULL;
  if (slash)
    {
      *slash = '\0';
      rmdir (dir);
    }
  free (dir);
}

int
docker_dial_spawn (const docker_ssh_target *t, const char *control, int listen_fd, docker_dial *ret)
{
  char *ssh = berth_find_program ("ssh");
  if (!ssh)
    return -ENOENT;
  char **argv = docker_ssh_argv (t, ssh, control);
  free (ssh);
  if (!argv)
    return -ENOMEM;
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    {
      int e = errno;
      berth_strv_free (argv);
      return -e;
    }
  int errfd = memfd_create ("berth-docker-ssh-stderr", MFD_CLOEXEC);
  int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t parent = getpid ();
  pid_t pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (fd);
      if (errfd >= 0)
        close (errfd);
      if (nul >= 0)
        close (nul);
      berth_strv_free (argv);
      return -e;
    }
  if (pid == 0)
    {
      setpgid (0, 0);
      signal (SIGPIPE, SIG_DFL);
      signal (SIGALRM, SIG_DFL);
      /* the connection libcurl is about to make; a stranger's is refused */
      alarm (60);
      int conn;
      for (;;)
        {
          conn = accept (listen_fd, NULL, NULL);
          if (conn < 0 && errno == EINTR)
            continue;
          if (conn < 0)
            _exit (126);
          struct ucred cr;
          socklen_t len = sizeof cr;
          if (getsockopt (conn, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.pid == parent)
            break;
          close (conn);
        }
      alarm (0);
      if (dup2 (conn, 0) < 0 || dup2 (conn, 1) < 0 || dup2 (errfd >= 0 ? errfd : nul, 2) < 0)
        _exit (127);
#ifdef SYS_close_range
      if (syscall (SYS_close_range, 3U, ~0U, 0U) < 0)
#endif
        for (int i = 3; i < 1024; i++)
          close (i);
      execvp (argv[0], argv);
      _exit (127);
    }
  if (nul >= 0)
    close (nul);
  berth_strv_free (argv);
  ret->fd = fd;
  ret->pid = pid;
  ret->errfd = errfd;
  ret->status = 0;
  return 0;
}

void
docker_dial_close (docker_dial *d)
{
  if (d->fd >= 0)
    close (d->fd);
  d->fd = -1;
}

bool
docker_dial_reap (docker_dial *d, long wait_ms)
{
  if (d->pid <= 0)
    return true;
  uint64_t deadline = berth_monotonic_usec () / 1000 + (wait_ms < 0 ? 1000 : (uint64_t)wait_ms);
  for (;;)
    {
      int st = 0;
      pid_t r = waitpid (d->pid, &st, WNOHANG);
      if (r == d->pid || (r < 0 && errno == ECHILD))
        {
          d->status = r == d->pid ? st : 0;
          d->pid = 0;
          return true;
        }
      if (berth_monotonic_usec () / 1000 >= deadline)
        break;
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  if (wait_ms >= 0)
    return false;
  kill (d->pid, SIGKILL);
  (void)waitpid (d->pid, &d->status, 0);
  d->pid = 0;
  return true;
}

char *
docker_dial_stderr (const docker_dial *d)
{
  char buf[4096];
  if (d->errfd < 0)
    return NULL;
  off_t size = lseek (d->errfd, 0, SEEK_END);
  if (size <= 0)
    return NULL;
  off_t off = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
  ssize_t n = pread (d->errfd, buf, sizeof buf - 1, off);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  /* the last non-empty line, without ssh's "\r" */
  char *line = NULL;
  for (char *s = strtok (buf, "\r\n"); s; s = strtok (NULL, "\r\n"))
    if (*s)
      line = s;
  return line ? strdup (line) : NULL;
}

void
docker_dial_free (docker_dial *d)
{
  docker_dial_close (d);
  docker_dial_reap (d, -1);
  if (d->errfd >= 0)
    close (d->errfd);
  d->errfd = -1;
}
