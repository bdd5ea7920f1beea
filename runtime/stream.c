/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stream.c: bridge local fds to a process inside an environment (what
   `berth exec-stream` offers backends whose exec_prefix needs berth).  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include "job.h"

typedef struct bridge
{
  int out_fd, err_fd;
  int error;
} bridge;

static void
write_all (bridge *b, int fd, const char *data, size_t len)
{
  while (len > 0 && b->error == 0)
    {
      ssize_t n = write (fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd p = { fd, POLLOUT, 0 };
          poll (&p, 1, 1000);
          continue;
        }
      if (n < 0)
        {
          b->error = -errno;
          return;
        }
      data += n;
      len -= (size_t) n;
    }
}

static void
bridge_sink (void *userdata, int stream, const char *data, size_t len)
{
  bridge *b = userdata;
  write_all (b, stream == BERTH_STREAM_ERR ? b->err_fd : b->out_fd, data, len);
}

BERTH_EXPORT int
berth_env_stream (berth_env *env, const char *const *argv, int in_fd, int out_fd, int err_fd, berth_error **reterr)
{
  _cleanup_strv_free_ char **prefix = NULL;
  uint32_t flags;
  berth_job job;
  bridge b = { out_fd, err_fd, 0 };
  char buf[65536];
  size_t have = 0, off = 0;
  bool in_eof = in_fd < 0;
  int r = berth_job_transport (env, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  r = berth_job_start (env, prefix, argv, in_fd >= 0, -1, &job, reterr);
  if (r < 0)
    return r;
  for (;;)
    {
      bool in_ready = false;
      if (!in_eof && off < have)
        {
          ssize_t n = berth_job_write (&job, buf + off, have - off);
          if (n > 0)
            off += (size_t) n;
          else if (n != -EAGAIN && n != -EINTR)
            in_eof = true;
        }
      if (in_eof && berth_job_stdin_open (&job))
        berth_job_close_stdin (&job);
      r = berth_job_pump (&job, off < have ? 5 : 1000, (!in_eof && off >= have) ? in_fd : -1, &in_ready, bridge_sink, &b);
      if (r <= 0)
        break;
      if (in_ready)
        {
          ssize_t n = read (in_fd, buf, sizeof buf);
          if (n > 0)
            have = (size_t) n, off = 0;
          else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            in_eof = true;
        }
    }
  int status = berth_job_finish (&job, r < 0 ? BERTH_JOB_KILL : BERTH_JOB_WAIT);
  if (r < 0)
    return berth_error_errno (reterr, -r, "%s: stream failed", env->provider->ops->name);
  return status < 0 ? 255 : status;
}
