/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <poll.h>
#include <string.h>

#include "child.h"
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
      *ret_flags = BERTH_HAS_FIELD (ops, berth_provider_ops, start_flags) ? ops->start_flags : 0;
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
berth_job_start (berth_env *env, char **prefix, const char *const *inner, bool has_stdin, int extra_fd, uint64_t deadline_usec, berth_job *job,
                 berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  *job = (berth_job){ .proc = { .size = sizeof job->proc, .fd = -1, .stdin_fd = -1 } };
  if (ops->start)
    {
      berth_start_req req = { .size = sizeof req, .argv = inner, .has_stdin = has_stdin, .extra_fd = extra_fd, .deadline_usec = deadline_usec, .flags = berth_strv_length (inner) == 3 && strcmp (inner[0], "bash") == 0 && strcmp (inner[1], "-c") == 0 ? BERTH_START_SHELL_SCRIPT : 0 };
      int r = ops->start (env, &req, &job->proc, reterr);
      if (r < 0)
        return r;
      if (job->proc.ops == NULL || job->proc.fd < 0)
        return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s started nothing", ops->name);
      return 0;
    }
  _cleanup_strv_free_ char **argv = berth_strv_copy ((const char *const *) prefix);
  for (size_t i = 0; argv && inner[i]; i++)
    if (berth_strv_push (&argv, inner[i]) < 0)
      return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (argv == NULL || argv[0] == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* The client (for local, the command's own shell) dies with this
     process: a berth killed with -9 does not leave it running.  */
  int r = berth_proc_spawn_fd ((const char *const *) argv, (const char *const *) env->host_environ, extra_fd,
                               (has_stdin ? BERTH_SPAWN_STDIN : 0) | BERTH_SPAWN_DIE_WITH_PARENT, &job->proc, reterr);
  if (r < 0)
    return berth_error_wrap (reterr, r, "%s", ops->name); /* "local: cannot run bash: <why>" */
  return 0;
}

int
berth_job_pump (berth_job *job, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink, void *userdata)
{
  struct pollfd p[2] = { { job->proc.fd, POLLIN, 0 }, { extra_fd, POLLIN, 0 } };
  if (extra_ready)
    *extra_ready = false;
  if (job->eof)
    return 0;
  if (poll (p, extra_fd >= 0 ? 2 : 1, timeout_ms) < 0)
    return errno == EINTR ? 1 : -errno;
  if (extra_fd >= 0 && p[1].revents && extra_ready)
    *extra_ready = true;
  if (p[0].revents)
    {
      int r = job->proc.ops->pump (job->proc.proc, sink, userdata);
      if (r < 0)
        return r;
      if (r == 0)
        job->eof = true;
    }
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

static void
discard (void *userdata, int stream, const char *data, size_t len)
{
}

int
berth_job_run_script (berth_env *env, const char *script, double timeout, int *ret_status, berth_error **reterr)
{
  _cleanup_strv_free_ char **prefix = NULL;
  uint32_t flags;
  berth_job job;
  const char *inner[] = { "bash", "-c", script, NULL };
  uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
  /* The script (a kill, after a command's deadline passed) has its own
     bound; the caller's comes back after it.  */
  _cleanup_ (berth_env_deadline_endp) berth_env_bound bound = berth_env_deadline_begin (env, deadline);
  int r = berth_job_transport (env, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  r = berth_job_start (env, prefix, inner, false, -1, deadline, &job, reterr);
  if (r < 0)
    return r;
  while ((r = berth_job_pump (&job, 100, -1, NULL, discard, NULL)) > 0)
    if (berth_now_usec () > deadline)
      {
        berth_job_finish (&job, BERTH_JOB_KILL);
        return berth_error_set (reterr, ETIMEDOUT, "%s: the environment did not answer within %gs; check it with berth doctor -b %s", env->provider->ops->name,
                               timeout, env->provider->ops->name);
      }
  return berth_job_end_status (&job, BERTH_JOB_WAIT, ret_status, reterr);
}

BERTH_EXPORT int
berth_env_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, berth_error **reterr)
{
  uint32_t flags = 0;
  BERTH_LOG_SCOPE (env->ctx, env->provider->ops->name);
  if (env->provider->ops->exec_prefix == NULL || !berth_provider_flag (env->provider, BERTH_FLAG_SUPPORTS_STREAMS))
    return berth_error_set (reterr, ENOTSUP, "backend %s cannot run long-lived processes", env->provider->ops->name);
  return env->provider->ops->exec_prefix (env, user, interactive, ret_argv, &flags, reterr);
}
