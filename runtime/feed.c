/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* feed.c: the stdin feeder execute and the stream bridge use: a
   command's stdin is copied from the caller's fd as the command takes
   it, through one bounded buffer, never read ahead into memory.  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "transport.h"

void
berth_feed_init (berth_feed *f, const void *pre, size_t pre_len, int fd)
{
  *f = (berth_feed){ .pre = pre, .pre_len = pre ? pre_len : 0, .fd = fd };
}

void
berth_feed_free (berth_feed *f)
{
  free (f->buf);
  f->buf = NULL;
  f->have = f->off = 0;
}

static const char *
feed_pending (const berth_feed *f, size_t *ret_len)
{
  if (f->pre_off < f->pre_len)
    {
      *ret_len = f->pre_len - f->pre_off;
      return f->pre + f->pre_off;
    }
  *ret_len = f->have - f->off;
  return f->buf + f->off;
}

/* Nothing more goes to the command (it closed its stdin, or it all went):
   the caller's fd is left alone, not read any further.  */
static void
feed_stop (berth_job *job, berth_feed *f)
{
  f->pre_off = f->pre_len;
  f->have = f->off = 0;
  f->fd = -1;
  berth_job_close_stdin (job);
}

/* Write what is pending without blocking; close the command's stdin once
   everything went.  A command that does not read its stdin (EPIPE) is
   no error: what it did not take is dropped.  */
static void
feed_write (berth_job *job, berth_feed *f)
{
  while (berth_job_stdin_open (job))
    {
      size_t len;
      const char *p = feed_pending (f, &len);
      if (len == 0)
        {
          if (f->fd < 0)
            berth_job_close_stdin (job);
          return;
        }
      ssize_t n = berth_job_write (job, p, len);
      if (n == -EAGAIN || n == -EWOULDBLOCK || n == -EINTR || n == 0)
        return;
      if (n < 0)
        {
          feed_stop (job, f);
          return;
        }
      if (f->pre_off < f->pre_len)
        f->pre_off += (size_t) n;
      else
        f->off += (size_t) n;
    }
  feed_stop (job, f);
}

/* One read of the caller's fd (it said it is readable).  */
static void
feed_read (berth_feed *f)
{
  if (f->buf == NULL)
    f->buf = xmalloc (BERTH_FEED_BUF);
  ssize_t n = read (f->fd, f->buf, BERTH_FEED_BUF);
  if (n > 0)
    {
      f->have = (size_t) n;
      f->off = 0;
    }
  else if (n == 0)
    f->fd = -1;
  else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    {
      f->read_error = errno;
      f->fd = -1;
    }
}

int
berth_job_pump_feed (berth_job *job, berth_feed *f, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink, void *userdata)
{
  if (f == NULL)
    return berth_job_pump (job, timeout_ms, extra_fd, extra_ready, sink, userdata);
  if (extra_ready)
    *extra_ready = false;
  feed_write (job, f);
  if (job->eof)
    return 0;
  size_t pending;
  feed_pending (f, &pending);
  bool open = berth_job_stdin_open (job);
  /* Negative fds are skipped by poll.  */
  struct pollfd p[4] = {
    { job->proc.fd, POLLIN, 0 },
    { extra_fd, POLLIN, 0 },
    { open && pending > 0 ? job->proc.stdin_fd : -1, POLLOUT, 0 },
    { open && pending == 0 ? f->fd : -1, POLLIN, 0 },
  };
  /* Bytes the transport holds already: no waiting for the fd.  */
  bool held = berth_transport_data_pending (job);
  if (poll (p, ARRAY_SIZE (p), held ? 0 : timeout_ms) < 0)
    return errno == EINTR ? 1 : -errno;
  if (extra_fd >= 0 && p[1].revents && extra_ready)
    *extra_ready = true;
  if (p[3].revents)
    feed_read (f);
  if (p[2].revents || p[3].revents)
    feed_write (job, f);
  return p[0].revents || held ? berth_job_pump_output (job, sink, userdata) : 1;
}
