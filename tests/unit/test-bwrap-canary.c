/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-canary: one escape attempt per invocation, for the bwrap
   escape canary suite.  Exit 0 when the attempt SUCCEEDED (an escape),
   1 when it was refused (the errno is printed), 2 on misuse.  The serve-*
   verbs are the host side: listen, print "ready", accept forever.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/stat.h>

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static int
result (const char *what, long r)
{
  if (r < 0)
    {
      printf ("%s: refused: %s (errno %d)\n", what, strerror (errno), errno);
      return 1;
    }
  printf ("%s: SUCCEEDED\n", what);
  return 0;
}

static socklen_t
unix_addr (struct sockaddr_un *a, const char *path, bool abstract)
{
  memset (a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (abstract)
    {
      strncpy (a->sun_path + 1, path, sizeof a->sun_path - 2);
      return offsetof (struct sockaddr_un, sun_path) + 1 + strlen (path);
    }
  strncpy (a->sun_path, path, sizeof a->sun_path - 1);
  return sizeof *a;
}

static int
serve (int fd)
{
  if (listen (fd, 16) < 0)
    return perror ("listen"), 2;
  printf ("ready\n");
  fflush (stdout);
  for (;;)
    {
      int c = accept (fd, NULL, NULL);
      if (c >= 0)
        {
          if (write (c, "host\n", 5) < 0)
            {
            }
          close (c);
        }
    }
}

int
main (int argc, char **argv)
{
  const char *v = argc > 1 ? argv[1] : "";
  const char *a = argc > 2 ? argv[2] : "";
  if (strcmp (v, "tiocsti") == 0 || strcmp (v, "tiocsti-hi") == 0)
    {
      /* The high bits are ignored by the kernel: a filter comparing all
         64 bits would miss this one (CVE-2019-10063).  */
      unsigned long req = TIOCSTI | (strcmp (v, "tiocsti-hi") == 0 ? (1UL << 32) : 0);
      char c = '\n';
      return result (v, syscall (SYS_ioctl, 0, req, &c));
    }
  if (strcmp (v, "tioclinux") == 0)
    {
      char sub = 2; /* TIOCL_SETSEL */
      long r = syscall (SYS_ioctl, 0, (unsigned long) TIOCLINUX, &sub);
      if (r < 0 && errno != EPERM)
        {
          /* Not a virtual console: only EPERM proves the filter.  */
          printf ("tioclinux: refused: %s (errno %d)\n", strerror (errno), errno);
          return errno == EPERM ? 1 : 3;
        }
      return result (v, r);
    }
  if (strcmp (v, "ptrace") == 0)
    {
      pid_t pid = atoi (a);
      long r = ptrace (PTRACE_ATTACH, pid, NULL, NULL);
      if (r == 0)
        ptrace (PTRACE_DETACH, pid, NULL, NULL);
      return result (v, r);
    }
  if (strcmp (v, "signal") == 0)
    return result (v, kill (atoi (a), argc > 3 ? atoi (argv[3]) : 0));
  if (strcmp (v, "connect-unix") == 0 || strcmp (v, "connect-abstract") == 0)
    {
      struct sockaddr_un sa;
      socklen_t len = unix_addr (&sa, a, strcmp (v, "connect-abstract") == 0);
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      return result (v, connect (fd, (struct sockaddr *) &sa, len));
    }
  if (strcmp (v, "connect-tcp") == 0)
    {
      struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (atoi (a)) };
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      inet_pton (AF_INET, "127.0.0.1", &sin.sin_addr);
      return result (v, connect (fd, (struct sockaddr *) &sin, sizeof sin));
    }
  if (strcmp (v, "serve-unix") == 0 || strcmp (v, "serve-abstract") == 0)
    {
      struct sockaddr_un sa;
      socklen_t len = unix_addr (&sa, a, strcmp (v, "serve-abstract") == 0);
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      unlink (a);
      if (bind (fd, (struct sockaddr *) &sa, len) < 0)
        return perror ("bind"), 2;
      chmod (a, 0777);
      return serve (fd);
    }
  if (strcmp (v, "serve-tcp") == 0)
    {
      struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (atoi (a)) };
      int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
      setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      inet_pton (AF_INET, "127.0.0.1", &sin.sin_addr);
      if (bind (fd, (struct sockaddr *) &sin, sizeof sin) < 0)
        return perror ("bind"), 2;
      return serve (fd);
    }
  if (strcmp (v, "unshare-user") == 0)
    return result (v, unshare (CLONE_NEWUSER));
  if (strcmp (v, "clone-user") == 0)
    {
      long r = syscall (SYS_clone, (unsigned long) (CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);
      if (r == 0)
        _exit (0);
      if (r > 0)
        waitpid (r, NULL, 0);
      return result (v, r);
    }
  if (strcmp (v, "clone3-user") == 0)
    {
      struct
      {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
      } args = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
      long r = syscall (SYS_clone3, &args, sizeof args);
      if (r == 0)
        _exit (0);
      if (r > 0)
        waitpid (r, NULL, 0);
      return result (v, r);
    }
  if (strcmp (v, "mount") == 0)
    return result (v, mount ("none", a, "tmpfs", 0, NULL));
  if (strcmp (v, "remount-rw") == 0)
    return result (v, mount (NULL, a, NULL, MS_REMOUNT | MS_BIND, NULL));
  if (strcmp (v, "setattr-rw") == 0)
    {
      struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
      return result (v, mount_setattr (AT_FDCWD, a, AT_RECURSIVE, &attr, sizeof attr));
    }
  if (strcmp (v, "open") == 0)
    {
      int fd = open (a, O_RDONLY);
      char buf[64];
      if (fd >= 0 && read (fd, buf, sizeof buf) <= 0)
        {
          close (fd);
          printf ("open: empty\n");
          return 1;
        }
      return result (v, fd);
    }
  if (strcmp (v, "bad-request") == 0 && argc > 3)
    {
      /* A malformed request to the jail's command server (ARG: the socket,
         argv[3]: which).  Exit 0 when the server refused it cleanly (a
         reason and a non-zero status, or a closed connection).  */
      struct sockaddr_un sa;
      socklen_t len = unix_addr (&sa, a, false);
      int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), nul = open ("/dev/null", O_RDWR);
      uint32_t hdr[5] = { 0x314a5842u, 1, 0, 7, 0 }; /* "/" "true" */
      const char *kind = argv[3];
      char body[] = "/\0true";
      char reply[512] = "";
      ssize_t n, got = 0;
      int fds[3] = { nul, nul, nul };
      char cbuf[CMSG_SPACE (sizeof fds)];
      struct iovec iov = { .iov_base = hdr, .iov_len = sizeof hdr };
      struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
      struct cmsghdr *cm = CMSG_FIRSTHDR (&mh);
      memset (cbuf, 0, sizeof cbuf);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof fds);
      memcpy (CMSG_DATA (cm), fds, sizeof fds);
      if (connect (fd, (struct sockaddr *) &sa, len) < 0)
        return perror ("connect"), 2;
      if (strcmp (kind, "magic") == 0)
        hdr[0] = 0xdeadbeef;
      else if (strcmp (kind, "argc") == 0)
        hdr[1] = 0x7fffffff;
      else if (strcmp (kind, "body") == 0)
        hdr[3] = 0xffffffffu;
      else if (strcmp (kind, "no-fds") == 0)
        mh.msg_control = NULL, mh.msg_controllen = 0;
      else if (strcmp (kind, "unterminated") == 0)
        hdr[3] = sizeof body - 1;
      else if (strcmp (kind, "short") == 0)
        iov.iov_len = 7;
      else if (strcmp (kind, "words") == 0)
        hdr[1] = 5; /* more words than the body holds */
      if (sendmsg (fd, &mh, MSG_NOSIGNAL) < 0)
        return perror ("sendmsg"), 2;
      if (strcmp (kind, "short") != 0 && send (fd, body, hdr[3] < sizeof body ? hdr[3] : sizeof body, MSG_NOSIGNAL) < 0)
        {
        }
      shutdown (fd, SHUT_WR);
      while ((n = read (fd, reply + got, sizeof reply - 1 - got)) > 0)
        got += n;
      reply[got] = '\0';
      for (ssize_t i = 0; i < got; i++)
        if (reply[i] == '\0')
          reply[i] = '|';
      printf ("bad-request %s: %s\n", kind, got ? reply : "(closed)");
      return strstr (reply, "status=0\n") ? 1 : 0;
    }
  fprintf (stderr, "usage: test-bwrap-canary VERB [ARG]\n");
  return 2;
}
