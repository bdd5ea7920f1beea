/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "job.h"

int
berth_job_transport (berth_env *env, char ***ret_prefix, uint32_t *ret_flags, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  char **prefix = NULL;
  uint32_t flags = 0;
  int r;
  if (ops->start)
    {
      *ret_prefix = NULL;
      *ret_flags = 0;
      return 0;
    }
  if (ops->exec_prefix == NULL)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s has no transport", ops->name);
  r = ops->exec_prefix (env, NULL, true, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  *ret_prefix = prefix;
  *ret_flags = flags;
  return 0;
}

int
berth_job_start (berth_env *env, char **prefix, const char *const *inner, bool has_stdin, int extra_fd, berth_job *job, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  *job = (berth_job){ .child = BERTH_CHILD_INIT, .proc = { .fd = -1, .stdin_fd = -1 } };
  if (ops->start)
    {
      berth_start_req req = { .size = sizeof req, .argv = inner, .has_stdin = has_stdin };
      job->proc.size = sizeof job->proc;
      int r = ops->start (env, &req, &job->proc, reterr);
      if (r < 0)
        return r;
      if (job->proc.ops == NULL || job->proc.fd < 0)
        return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s started nothing", ops->name);
      job->is_child = false;
      return 0;
    }
  _cleanup_strv_free_ char **argv = berth_strv_copy ((const char *const *) prefix);
  for (size_t i = 0; argv && inner[i]; i++)
    if (berth_strv_push (&argv, inner[i]) < 0)
      return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (argv == NULL || argv[0] == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  int r = berth_child_spawn ((const char *const *) argv, (const char *const *) env->host_environ, extra_fd,
                             BERTH_SPAWN_NONBLOCK | (has_stdin ? BERTH_SPAWN_STDIN : 0), &job->child);
  if (r < 0)
    return berth_error_errno (reterr, -r, "%s: cannot run %s", ops->name, argv[0]);
  job->is_child = true;
  return 0;
}

static int
read_fd (int *fd, bool *eof, int stream, berth_sink_fn sink, void *userdata)
{
  char buf[65536];
  for (int i = 0; i < 16; i++)
    {
      ssize_t n = read (*fd, buf, sizeof buf);
      if (n > 0)
        {
          sink (userdata, stream, buf, (size_t) n);
          if ((size_t) n < sizeof buf)
            return 0;
          continue;
        }
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
      close (*fd);
      *fd = -1;
      *eof = true;
      return 0;
    }
  return 0;
}

int
berth_job_pump (berth_job *job, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink, void *userdata)
{
  struct pollfd p[4];
  int n = 0, i_out = -1, i_err = -1, i_extra = -1;
  if (job->is_child)
    {
      if (job->child.out_fd >= 0)
        p[i_out = n++] = (struct pollfd){ job->child.out_fd, POLLIN, 0 };
      if (job->child.err_fd >= 0)
        p[i_err = n++] = (struct pollfd){ job->child.err_fd, POLLIN, 0 };
    }
  else if (!job->out_eof)
    p[i_out = n++] = (struct pollfd){ job->proc.fd, POLLIN, 0 };
  if (extra_fd >= 0)
    p[i_extra = n++] = (struct pollfd){ extra_fd, POLLIN, 0 };
  if (extra_ready)
    *extra_ready = false;
  if (i_out < 0 && i_err < 0)
    {
      job->out_eof = job->err_eof = true;
      return 0;
    }
  if (poll (p, (nfds_t) n, timeout_ms) < 0)
    return errno == EINTR ? 1 : -errno;
  if (i_extra >= 0 && p[i_extra].revents)
    *extra_ready = true;
  if (job->is_child)
    {
      if (i_out >= 0 && p[i_out].revents)
        read_fd (&job->child.out_fd, &job->out_eof, BERTH_STREAM_OUT, sink, userdata);
      if (i_err >= 0 && p[i_err].revents)
        read_fd (&job->child.err_fd, &job->err_eof, BERTH_STREAM_ERR, sink, userdata);
      return job->child.out_fd >= 0 || job->child.err_fd >= 0;
    }
  if (i_out >= 0 && p[i_out].revents)
    {
      int r = job->proc.ops->pump (job->proc.proc, sink, userdata);
      if (r < 0)
        return r;
      if (r == 0)
        job->out_eof = job->err_eof = true;
    }
  return !job->out_eof;
}

ssize_t
berth_job_write (berth_job *job, const void *data, size_t len)
{
  if (job->is_child)
    {
      if (job->child.in_fd < 0)
        return -EPIPE;
      ssize_t n = write (job->child.in_fd, data, len);
      return n < 0 ? -errno : n;
    }
  if (job->proc.ops->write_stdin == NULL)
    return -EPIPE;
  return job->proc.ops->write_stdin (job->proc.proc, data, len);
}

bool
berth_job_stdin_open (const berth_job *job)
{
  return job->is_child ? job->child.in_fd >= 0 : job->proc.stdin_fd >= 0;
}

void
berth_job_close_stdin (berth_job *job)
{
  if (job->is_child)
    {
      if (job->child.in_fd >= 0)
        close (job->child.in_fd);
      job->child.in_fd = -1;
      return;
    }
  if (job->proc.stdin_fd >= 0 && job->proc.ops->close_stdin)
    job->proc.ops->close_stdin (job->proc.proc);
  job->proc.stdin_fd = -1;
}

int
berth_job_finish (berth_job *job, berth_job_end how, uint64_t grace_usec)
{
  int status = -1;
  if (job->is_child)
    {
      if (how == BERTH_JOB_KILL && job->child.pid > 0)
        kill (-job->child.pid, SIGKILL);
      if (how != BERTH_JOB_KILL && berth_child_wait_timeout (&job->child, grace_usec, &status) == 0)
        {
          berth_child_finish (&job->child, false);
          return status;
        }
      /* Only our client process: the command's own background children
         keep running (they are not ours to stop).  */
      status = berth_child_finish (&job->child, true);
      return how == BERTH_JOB_WAIT ? status : -1;
    }
  if (job->proc.ops)
    {
      if (how == BERTH_JOB_WAIT && job->proc.ops->wait)
        {
          berth_error *err = NULL;
          if (job->proc.ops->wait (job->proc.proc, &status, &err) < 0)
            status = -1;
          berth_error_free (err);
        }
      if (job->proc.ops->free)
        job->proc.ops->free (job->proc.proc);
      job->proc.ops = NULL;
    }
  return status;
}

static void
discard (void *userdata, int stream, const char *data, size_t len)
{
}

int
berth_job_run_script (berth_env *env, const char *script, double timeout, berth_error **reterr)
{
  _cleanup_strv_free_ char **prefix = NULL;
  uint32_t flags;
  berth_job job;
  const char *inner[] = { "bash", "-c", script, NULL };
  uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
  int r = berth_job_transport (env, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  r = berth_job_start (env, prefix, inner, false, -1, &job, reterr);
  if (r < 0)
    return r;
  while ((r = berth_job_pump (&job, 100, -1, NULL, discard, NULL)) > 0)
    if (berth_now_usec () > deadline)
      {
        berth_job_finish (&job, BERTH_JOB_KILL, 0);
        return berth_error_set (reterr, ETIMEDOUT, "%s: script timed out", env->provider->ops->name);
      }
  return berth_job_finish (&job, BERTH_JOB_WAIT, 2000000);
}
