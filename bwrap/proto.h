/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.h: the request berth sends the jail's init to run a command
 * (the bwrap backend's start transport), shared by bwrap/start.c and
 * bwrap/jail-serve.c.
 *
 * A SOCK_STREAM connection to STATE/jail.sock (0700 state directory,
 * hidden from the jail).  The client sends one header, with stdin, stdout
 * and stderr (and fd 3 with JAIL_REQ_FD3) as SCM_RIGHTS, then BODY_LEN bytes: cwd, the ARGC argv words
 * and the ENVC "KEY=VALUE" strings, each NUL-terminated.  The server runs
 * the command as a child of the jail's init and, when it exits, writes
 * "\0status=N\n" (N: exit code, or 128 + signal), preceded by a one-line
 * reason when it could not be started.  */
#ifndef BERTH_BWRAP_PROTO_H
#define BERTH_BWRAP_PROTO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define JAIL_SOCKET_FILE "jail.sock"
#define JAIL_PROTO_MAGIC 0x314a5842u /* "BXJ1" */
#define JAIL_PROTO_MAX_BODY (8u << 20)
#define JAIL_PROTO_MAX_WORDS 65536u

struct jail_request
{
  uint32_t magic;
  uint32_t argc;
  uint32_t envc;
  uint32_t body_len;
  uint32_t flags; /* JAIL_REQ_*; unknown bits are refused */
};

/* A fourth fd follows stdin/stdout/stderr and becomes the command's fd 3
   (the runtime's script, read by `bash -c '. /dev/fd/3'`).  */
#define JAIL_REQ_FD3 1u

/* Send all of BUF on a connection (never raises SIGPIPE).  */
static inline bool
jail_send_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t w = send (fd, p, len, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return false;
      p += w;
      len -= (size_t) w;
    }
  return true;
}

#endif
