/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* stream.c: bridge local fds to a process inside an environment (what
   `berth exec-stream` offers backends whose exec_prefix needs berth), and
   the stdin feeder both it and execute use: a command's stdin is copied
   from the caller's fd as the command takes it, through one bounded
   buffer, never read ahead into memory.  */
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
  if (f->buf == NULL && (f->buf = malloc (BERTH_FEED_BUF)) == NULL)
    {
      f->read_error = ENOMEM;
      f->fd = -1;
      return;
    }
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
  return berth_strdup_printf ("export BERTH_JOB=%s\n"
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

BERTH_EXPORT int
berth_env_shell_rc (berth_env *env, char **ret, berth_error **reterr)
{
  *ret = NULL;
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  berth_env_refresh (env);
  _cleanup_free_ char *qcwd = env->cwd ? berth_quote_cwd (env->cwd) : NULL;
  berth_buf b = { 0 };
  /* what the last command left: exports, functions, aliases */
  berth_buf_puts (&b, "shopt -s expand_aliases\n");
  if (env->snapshot && *env->snapshot)
    {
      berth_buf_puts (&b, "{\n");
      berth_buf_puts (&b, env->snapshot);
      berth_buf_puts (&b, "\n} >/dev/null 2>&1\n");
    }
  if (qcwd)
    berth_buf_printf (&b, "cd %s 2>/dev/null || echo \"berth: the environment's cwd is gone; staying in $PWD\" >&2\n", qcwd);
  *ret = b.data ? berth_buf_steal (&b) : xstrdup ("");
  return 0;
}
