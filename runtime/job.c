/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <poll.h>
#include <string.h>

#include "provider-call.h"
#include "transport.h"

int
berth_job_pump (berth_job *job, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink, void *userdata)
{
  struct pollfd p[2] = { { job->proc.fd, POLLIN, 0 }, { extra_fd, POLLIN, 0 } };
  if (extra_ready)
    *extra_ready = false;
  if (job->eof)
    return 0;
  /* Bytes the transport holds already: no waiting for the fd.  */
  bool pending = berth_transport_data_pending (job);
  if (poll (p, extra_fd >= 0 ? 2 : 1, pending ? 0 : timeout_ms) < 0)
    return errno == EINTR ? 1 : -errno;
  if (extra_fd >= 0 && p[1].revents && extra_ready)
    *extra_ready = true;
  return p[0].revents || pending ? berth_job_pump_output (job, sink, userdata) : 1;
}

int
berth_job_pump_output (berth_job *job, berth_sink_fn sink, void *userdata)
{
  int r = job->proc.ops->pump (job->proc.proc, sink, userdata);
  if (r < 0)
    return r;
  if (r == 0)
    job->eof = true;
  return !job->eof;
}

ssize_t
berth_job_write (berth_job *job, const void *data, size_t len)
{
  if (job->proc.stdin_fd < 0 || job->proc.ops->write_stdin == NULL)
    return -EPIPE;
  return job->proc.ops->write_stdin (job->proc.proc, data, len);
}

bool
berth_job_stdin_open (const berth_job *job)
{
  return job->proc.stdin_fd >= 0;
}

void
berth_job_close_stdin (berth_job *job)
{
  if (job->proc.stdin_fd >= 0 && job->proc.ops->close_stdin)
    job->proc.ops->close_stdin (job->proc.proc);
  job->proc.stdin_fd = -1;
}

int
berth_job_end_status (berth_job *job, berth_job_end how, int *ret_status, berth_error **reterr)
{
  int status = -1, r = 0;
  if (job->proc.ops == NULL)
    {
      if (ret_status)
        *ret_status = -1;
      return 0;
    }
  if (how == BERTH_JOB_WAIT && job->proc.ops->wait)
    {
      berth_error *err = NULL;
      r = job->proc.ops->wait (job->proc.proc, &status, &err);
      if (r < 0)
        {
          /* The transport could not say how the command ended: it died
             (a daemon, connection or jail gone).  Its reason is the
             message, the kind is always a backend failure.  */
          status = -1;
          r = berth_error_set (reterr, BERTH_E_BACKEND, "%s", err ? berth_error_message (err) : "the transport failed");
        }
      berth_error_free (err);
    }
  if (job->proc.ops->free)
    job->proc.ops->free (job->proc.proc);
  job->proc.ops = NULL;
  if (ret_status)
    *ret_status = status;
  return r;
}

int
berth_job_finish (berth_job *job, berth_job_end how)
{
  int status;
  berth_job_end_status (job, how, &status, NULL);
  return status;
}

/* Where a script's streams go (berth_job_run_script_io).  */
typedef struct script_sink
{
  const berth_script_io *io;
  bool overflow;
} script_sink;

static void
keep (berth_buf *b, size_t max, bool *overflow, const char *data, size_t len)
{
  if (b == NULL)
    return;
  size_t room = b->len < max ? max - b->len : 0;
  if (len > room)
    *overflow = true;
  berth_buf_append (b, data, len < room ? len : room);
}

static void
script_collect (void *userdata, int stream, const char *data, size_t len)
{
  script_sink *s = userdata;
  if (s->io == NULL)
    return;
  if (stream == BERTH_STREAM_OUT)
    keep (s->io->out, s->io->out_max, &s->overflow, data, len);
  else
    {
      bool ignored;
      keep (s->io->err, s->io->err_max, &ignored, data, len);
    }
}

int
berth_job_run_script_io (berth_env *env, const char *script, double timeout, const berth_script_io *io, int *ret_status, berth_error **reterr)
{
  berth_transport_call call;
  berth_job job;
  berth_feed feed;
  script_sink sink = { .io = io };
  const char *inner[] = { "bash", "-c", script, NULL };
  bool has_in = io && io->has_in;
  uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
  /* The script (a kill, after a command's deadline passed) has its own
     bound; the caller's comes back after it.  */
  _cleanup_ (berth_env_deadline_endp) berth_env_bound bound = berth_env_deadline_begin (env, deadline);
  int r = berth_transport_prepare (env, &call, reterr);
  if (r < 0)
    return r;
  r = berth_transport_start (env, &call, inner, BERTH_START_SHELL_SCRIPT, has_in, -1, deadline, &job, reterr);
  berth_transport_call_free (&call);
  if (r < 0)
    return r;
  if (has_in)
    berth_feed_init (&feed, io->in, io->in_len, -1);
  while ((r = berth_job_pump_feed (&job, has_in ? &feed : NULL, 100, -1, NULL, script_collect, &sink)) > 0)
    if (berth_now_usec () > deadline)
      {
        if (has_in)
          berth_feed_free (&feed);
        berth_job_finish (&job, BERTH_JOB_KILL);
        return berth_error_set (reterr, ETIMEDOUT, "%s: the environment did not answer within %gs; check it with berth doctor -b %s", berth_env_backend (env),
                               timeout, berth_env_backend (env));
      }
  if (has_in)
    berth_feed_free (&feed);
  if (r < 0)
    {
      berth_job_finish (&job, BERTH_JOB_KILL);
      return berth_error_errno (reterr, -r, "%s: lost the script's output", berth_env_backend (env));
    }
  if (io && io->ret_overflow)
    *io->ret_overflow = sink.overflow;
  return berth_job_end_status (&job, BERTH_JOB_WAIT, ret_status, reterr);
}

int
berth_job_run_script (berth_env *env, const char *script, double timeout, int *ret_status, berth_error **reterr)
{
  return berth_job_run_script_io (env, script, timeout, NULL, ret_status, reterr);
}

BERTH_EXPORT int
berth_env_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, berth_error **reterr)
{
  uint32_t flags = 0;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if (!berth_provider_call_has_exec_prefix (env->provider) || !berth_provider_flag (env->provider, BERTH_FLAG_SUPPORTS_STREAMS))
    return berth_error_set (reterr, ENOTSUP, "backend %s cannot run long-lived processes", berth_env_backend (env));
  return berth_provider_call_exec_prefix (env, user, interactive, ret_argv, &flags, reterr);
}

BERTH_EXPORT int
berth_env_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr)
{
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if (!berth_provider_call_has_exec_prefix (env->provider) || !berth_provider_flag (env->provider, BERTH_FLAG_SUPPORTS_STREAMS))
    return berth_error_set (reterr, ENOTSUP, "backend %s cannot run long-lived processes", berth_env_backend (env));
  return berth_provider_call_terminal_prefix (env, user, ret_argv, reterr);
}
