/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stream.c: bridge local fds to a process inside an environment (what
   `berth exec-stream` offers backends whose exec_prefix needs berth);
   its stdin goes through the feeder of feed.c.  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "scope.h"
#include "transport.h"
#include "wrapper.h"

/* How long the kill script may take, the transport's setup included.  */
#define STREAM_KILL_TIMEOUT_S 5

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

/* ARGV runs as `bash -c BOOT bash ARGV...`: exported BERTH_JOB tags the
   tree for the kill script (the one execute uses), and a missing command
   is the shell's one line and 127 on every backend -- not whatever the
   transport makes of a failed exec (255 from the jail, 126 from the
   engine, 125 from a local spawn).  Words with a slash are left to
   exec, which says it the shell's way too.  */
static char *
stream_boot (const char *job)
{
  return xasprintf ("export BERTH_JOB=%s\n"
                              "case $1 in */*) ;; *)\n"
                              "  if ! command -v -- \"$1\" >/dev/null 2>&1; then\n"
                              "    printf '%%s: command not found\\n' \"$1\" >&2; exit 127\n"
                              "  fi ;;\n"
                              "esac\n"
                              "exec \"$@\"\n",
                              job);
}

/* Kill the job's tree where it runs, then let go of our side.  */
static int
stream_kill (berth_env *env, berth_job *job, const char *token, berth_error **reterr)
{
  berth_error *kerr = NULL;
  int kst = -1, r = 0;
  berth_job_finish (job, BERTH_JOB_KILL);
  if (berth_transport_kill (env, token, 0, STREAM_KILL_TIMEOUT_S, &kst, &kerr) < 0)
    {
      /* ESRCH: the environment is gone, and the command with it.  */
      if (berth_error_code (kerr) != ESRCH)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the command was stopped, but it may still be running there: could not kill it (%s)",
                             berth_env_backend (env), berth_error_message (kerr));
    }
  else if (kst > 0)
    r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the command was stopped, but it may still be running there: the kill script exited %d",
                         berth_env_backend (env), kst);
  berth_error_free (kerr);
  return r;
}

BERTH_EXPORT int
berth_env_stream_ex (berth_env *env, const berth_stream_spec *spec, berth_error **reterr)
{
  _cleanup_strv_free_ char **argv = NULL;
  _cleanup_free_ char *boot = NULL;
  _cleanup_ (berth_transport_call_free) berth_transport_call call = { 0 };
  berth_job job;
  berth_feed feed;
  char token[33];
  int in_fd = spec->in_fd;
  int cancel_fd = BERTH_HAS_FIELD (spec, berth_stream_spec, cancel_fd) && spec->cancel_fd >= 0 ? spec->cancel_fd : -1;
  bridge b = { spec->out_fd, spec->err_fd, 0 };
  bool cancelled = false, interrupted = false;
  int r;

  if (spec->argv == NULL || spec->argv[0] == NULL)
    return berth_error_set (reterr, EINVAL, "no command given");
  if ((r = berth_random_hex (token, 16)) < 0)
    return berth_error_errno (reterr, -r, "no randomness");
  boot = stream_boot (token);
  argv = berth_strv_new (NULL);
  if (boot == NULL || argv == NULL || berth_strv_push (&argv, "bash") < 0 || berth_strv_push (&argv, "-c") < 0 || berth_strv_push (&argv, boot) < 0
      || berth_strv_push (&argv, "bash") < 0)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  for (size_t i = 0; spec->argv[i]; i++)
    if (berth_strv_push (&argv, spec->argv[i]) < 0)
      return berth_error_errno (reterr, ENOMEM, "out of memory");

  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  /* A stream is one long-lived process with our stdio: it runs through
     the backend's own transport, not the agent's multiplexed stream (a
     signal to this berth while another berth shared the agent ended the
     stream with 255 and left its tree running -- make distcheck's
     contract run).  */
  const berth_transport_ops *t = berth_transport_fallback (env);
  r = berth_scope_check (env, reterr);
  if (r >= 0)
    r = t->prepare (env, &call, reterr);
  if (r < 0)
    return r;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "stream in %s on %s via %s", env->id, berth_env_backend (env), t->via);
  r = berth_transport_start_via (t, env, &call, (const char *const *) argv, 0, in_fd >= 0, -1, 0, &job, reterr);
  if (r < 0)
    return r;
  berth_feed_init (&feed, NULL, 0, in_fd);
  for (;;)
    {
      bool cancel = false;
      r = berth_job_pump_feed (&job, &feed, 1000, cancel_fd, &cancel, bridge_sink, &b);
      if (cancel || b.error == -EPIPE)
        {
          /* Interrupted, or our stdout's reader went away.  */
          cancelled = true;
          interrupted = cancel;
          break;
        }
      if (r <= 0)
        break;
    }
  berth_feed_free (&feed);
  if (cancelled)
    {
      r = stream_kill (env, &job, token, reterr);
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "stream %s: killed the command's tree: %s", interrupted ? "interrupted" : "output closed",
                     r < 0 ? "failed" : "done");
      if (r < 0)
        return r;
      return interrupted ? 130 : 128 + SIGPIPE;
    }
  int status = berth_job_finish (&job, r < 0 ? BERTH_JOB_KILL : BERTH_JOB_WAIT);
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "stream ended: status %d%s", status, r < 0 ? " (transport failed)" : "");
  if (r < 0)
    return berth_error_errno (reterr, -r, "%s: stream failed", berth_env_backend (env));
  return status < 0 ? 255 : status;
}

BERTH_EXPORT int
berth_env_stream (berth_env *env, const char *const *argv, int in_fd, int out_fd, int err_fd, berth_error **reterr)
{
  berth_stream_spec spec = BERTH_STREAM_SPEC_INIT;
  spec.argv = argv;
  spec.in_fd = in_fd;
  spec.out_fd = out_fd;
  spec.err_fd = err_fd;
  return berth_env_stream_ex (env, &spec, reterr);
}
