/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-mux.c: the control-socket liveness check (see ssh-mux.h).
 *
 * Every message is a uint32 length followed by that many bytes, all
 * integers big-endian.  Both sides first send HELLO (type 1, version 4,
 * optional extensions); then the client sends ALIVE_CHECK (0x10000004,
 * request id) and the master answers ALIVE (0x80000005, request id,
 * pid).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <berth/provider-util.h>
#include "ssh-mux.h"

#define MUX_MSG_HELLO 0x00000001u
#define MUX_C_ALIVE_CHECK 0x10000004u
#define MUX_C_TERMINATE 0x10000005u
#define MUX_S_OK 0x80000001u
#define MUX_S_PERMISSION_DENIED 0x80000002u
#define MUX_S_ALIVE 0x80000005u
#define MUX_VERSION 4u
#define MUX_MAX_MSG (64u * 1024u) /* a hello with extensions is tiny */

static void
put_u32 (unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char) (v >> 24);
  p[1] = (unsigned char) (v >> 16);
  p[2] = (unsigned char) (v >> 8);
  p[3] = (unsigned char) v;
}

static uint32_t
get_u32 (const unsigned char *p)
{
  return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static int64_t
now_ms (void)
{
  return (int64_t) (berth_monotonic_usec () / 1000);
}

static int
wait_fd (int fd, short events, int64_t deadline)
{
  for (;;)
    {
      int64_t left = deadline - now_ms ();
      struct pollfd p = { .fd = fd, .events = events };
      int r;
      if (left <= 0)
        return -ETIMEDOUT;
      r = poll (&p, 1, (int) left);
      if (r > 0)
        return 0;
      if (r == 0)
        return -ETIMEDOUT;
      if (errno != EINTR)
        return -errno;
    }
}

static int
write_all (int fd, const unsigned char *buf, size_t len, int64_t deadline)
{
  while (len > 0)
    {
      ssize_t n = send (fd, buf, len, MSG_NOSIGNAL);
      if (n < 0)
        {
          int r;
          if (errno == EINTR)
            continue;
          if (errno != EAGAIN)
            return -errno;
          if ((r = wait_fd (fd, POLLOUT, deadline)) < 0)
            return r;
          continue;
        }
      buf += n;
      len -= (size_t) n;
    }
  return 0;
}

static int
read_all (int fd, unsigned char *buf, size_t len, int64_t deadline)
{
  while (len > 0)
    {
      ssize_t n = recv (fd, buf, len, 0);
      if (n == 0)
        return -EPROTO; /* closed mid-conversation */
      if (n < 0)
        {
          int r;
          if (errno == EINTR)
            continue;
          if (errno != EAGAIN)
            return -errno;
          if ((r = wait_fd (fd, POLLIN, deadline)) < 0)
            return r;
          continue;
        }
      buf += n;
      len -= (size_t) n;
    }
  return 0;
}

/* Read one message; keep its first KEEP bytes in BUF, skip the rest.  */
static int
read_msg (int fd, unsigned char *buf, size_t keep, size_t *ret_len, int64_t deadline)
{
  unsigned char hdr[4];
  uint32_t len;
  int r;

  if ((r = read_all (fd, hdr, 4, deadline)) < 0)
    return r;
  len = get_u32 (hdr);
  if (len < 4 || len > MUX_MAX_MSG)
    return -EPROTO;
  if ((r = read_all (fd, buf, len < keep ? len : keep, deadline)) < 0)
    return r;
  for (uint32_t skipped = (uint32_t) keep; skipped < len;)
    {
      unsigned char junk[256];
      size_t n = len - skipped < sizeof junk ? len - skipped : sizeof junk;
      if ((r = read_all (fd, junk, n, deadline)) < 0)
        return r;
      skipped += (uint32_t) n;
    }
  *ret_len = len;
  return 0;
}

/* Connect and send hello + one request (TYPE, request id); read the
   master's hello.  Returns the fd, SSH_MUX_ABSENT, or -errno.  */
static int
mux_request (const char *path, uint32_t type, uint32_t reqid, int64_t deadline)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  unsigned char out[24], in[8];
  size_t len;
  int fd, r;

  if (strlen (path) >= sizeof sa.sun_path)
    return -ENAMETOOLONG;
  strcpy (sa.sun_path, path);

  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -errno;
  if (connect (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      r = -errno;
      if (r == -EAGAIN || r == -EINPROGRESS)
        {
          /* backlog full: a master that stopped accepting */
          r = wait_fd (fd, POLLOUT, deadline);
          if (r == 0)
            {
              int err = 0;
              socklen_t sl = sizeof err;
              getsockopt (fd, SOL_SOCKET, SO_ERROR, &err, &sl);
              r = -err;
            }
        }
      if (r < 0)
        {
          close (fd);
          if (r == -ENOENT || r == -ECONNREFUSED || r == -ENOTSOCK)
            return SSH_MUX_ABSENT;
          return r;
        }
    }

  /* hello, then the request, in one write */
  put_u32 (out, 8);
  put_u32 (out + 4, MUX_MSG_HELLO);
  put_u32 (out + 8, MUX_VERSION);
  put_u32 (out + 12, 8);
  put_u32 (out + 16, type);
  put_u32 (out + 20, reqid);
  if ((r = write_all (fd, out, sizeof out, deadline)) < 0)
    goto fail;
  if ((r = read_msg (fd, in, 8, &len, deadline)) < 0)
    goto fail;
  if (len < 8 || get_u32 (in) != MUX_MSG_HELLO || get_u32 (in + 4) != MUX_VERSION)
    {
      r = -EPROTO;
      goto fail;
    }
  return fd;
fail:
  close (fd);
  if (r == -EPIPE || r == -ECONNRESET)
    return SSH_MUX_ABSENT; /* a master going away */
  return r;
}

int
ssh_mux_check (const char *path, int timeout_ms, pid_t *ret_pid)
{
  int64_t deadline = now_ms () + (timeout_ms > 0 ? timeout_ms : 1);
  uint32_t reqid = (uint32_t) getpid ();
  unsigned char in[12];
  size_t len;
  int fd, r;

  fd = mux_request (path, MUX_C_ALIVE_CHECK, reqid, deadline);
  if (fd <= 0)
    return fd;
  r = read_msg (fd, in, 12, &len, deadline);
  if (r == 0 && (len < 12 || get_u32 (in) != MUX_S_ALIVE || get_u32 (in + 4) != reqid))
    r = -EPROTO;
  if (r == 0)
    {
      if (ret_pid)
        *ret_pid = (pid_t) get_u32 (in + 8);
      r = SSH_MUX_ALIVE;
    }
  else if (r == -EPIPE || r == -ECONNRESET)
    r = SSH_MUX_ABSENT;
  close (fd);
  return r;
}

int
ssh_mux_terminate (const char *path, int timeout_ms)
{
  int64_t deadline = now_ms () + (timeout_ms > 0 ? timeout_ms : 1);
  uint32_t reqid = (uint32_t) getpid () ^ 0x5a5a5a5au;
  unsigned char in[8];
  size_t len;
  int fd, r;

  fd = mux_request (path, MUX_C_TERMINATE, reqid, deadline);
  if (fd <= 0)
    return fd;
  r = read_msg (fd, in, 8, &len, deadline);
  if (r == 0)
    {
      if (len >= 8 && get_u32 (in) == MUX_S_OK && get_u32 (in + 4) == reqid)
        r = 0;
      else if (len >= 8 && get_u32 (in) == MUX_S_PERMISSION_DENIED)
        r = -EPERM;
      else
        r = -EPROTO;
    }
  else if (r == -EPROTO || r == -EPIPE || r == -ECONNRESET)
    r = 0; /* it went away while answering */
  close (fd);
  return r;
}
