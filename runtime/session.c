/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* session.c: execute() -- the semantics of DESIGN 3.2, once for every
   backend: the wrapper script, stdin, the state channel, output cap,
   timeout/interrupt with the tree killed where it runs.  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport.h"
#include "output.h"
#include "snapshot.h"
#include "scope.h"
#include "state.h"
#include "agent-client.h"
#include "wrapper.h"

/* After the command reported its exit, output still in flight is read
   for at most this long: a background child holding the pipe must not
   hang execute.  */
#define DRAIN_USEC 300000u
/* How long the kill script may take after the deadline, the transport's
   setup included (an ssh master re-established first): an environment
   that does not answer within it is reported, never waited for.  */
#define KILL_TIMEOUT_S 5

struct berth_result
{
  char *output;
  size_t output_len;
  int exit_code;
  char *cwd;
  bool cwd_changed, timed_out, interrupted, truncated, recreated;
  uint64_t total_bytes, duration_ms;
  char *full_output_path;
  char *backend, *env;
  berth_termination termination;
  char signal[20];         /* "SIGSEGV" when signaled, else "" */
  const char *transport;   /* "exec": a spawn of the exec prefix or the provider's start */
  /* BERTH_TERMINATION_OOM / _LIMIT: set only when the transport can tell
     (berth_proc_ops.termination: the agent's cgroup oom_kill count, a
     limit's signal), never guessed from an exit status.  */
};

typedef struct exec_run
{
  berth_output out;
  berth_state state;
  const berth_exec_spec *spec;
  bool cancelled;
} exec_run;

static void
exec_sink (void *userdata, int stream, const char *data, size_t len)
{
  exec_run *run = userdata;
  if (stream == BERTH_STREAM_ERR)
    {
      berth_state_feed (&run->state, data, len);
      return;
    }
  berth_output_add (&run->out, data, len);
  if (run->spec->on_output && run->spec->on_output (run->spec->userdata, data, len) < 0)
    run->cancelled = true;
}

/* The script on fd 3 needs a file bash can open by path: a memfd.  */
static int
script_memfd (const char *script)
{
  int fd = memfd_create ("berth-script", MFD_CLOEXEC);
  size_t len = strlen (script), off = 0;
  if (fd < 0)
    return -errno;
  while (off < len)
    {
      ssize_t n = write (fd, script + off, len - off);
      if (n < 0)
        {
          int r = -errno;
          close (fd);
          return r;
        }
      off += (size_t) n;
    }
  lseek (fd, 0, SEEK_SET);
  return fd;
}

/* Names a snapshot never keeps: whatever is stripped from spawned
   processes, passthrough values (sent fresh with every command), and the
   marks of one command's processes (its job token, the agent's process
   mark): restored into a later command they would make a kill of this
   one take that one's processes too.  */
static bool
snapshot_drops (void *userdata, const char *name)
{
  berth_env *env = userdata;
  size_t n = strlen (name);
  if (strcmp (name, "BERTH_JOB") == 0 || strcmp (name, "BERTH_AGENT_PROC") == 0)
    return true;
  for (size_t i = 0; env->passthrough && env->passthrough[i]; i++)
    if (strncmp (env->passthrough[i], name, n) == 0 && env->passthrough[i][n] == '=')
      return true;
  return berth_ctx_env_is_stripped (env->ctx, name);
}

/* Fail with R (the error set already), keeping what the command printed
   in the error for --json callers.  */
static int
fail_with_output (exec_run *run, int r, berth_error **reterr)
{
  size_t len;
  char *text = berth_output_finish (&run->out, &len);
  if (reterr && *reterr)
    berth_error_take_output (*reterr, text, len);
  else
    free (text);
  berth_output_free (&run->out);
  berth_state_free (&run->state);
  return r;
}


/* Under a hosted scope an oversized result is the sandbox's: the spill
   (a memfd, never a host path: see berth_output's spill_memory) is
   written into its temp directory and the result names that path.
   Returns the path to report, or NULL when it could not be written
   (then nothing of it is kept).  */
static char *
spill_into_sandbox (berth_env *env, int fd, const char *base)
{
  _cleanup_free_ char *tmp = NULL;
  berth_buf data = { 0 };
  char *in_sandbox = NULL;
  berth_error *err = NULL;
  char chunk[65536];
  ssize_t n;
  bool read_ok = fd >= 0 && lseek (fd, 0, SEEK_SET) == 0;
  while (read_ok && (n = read (fd, chunk, sizeof chunk)) != 0)
    {
      if (n < 0)
        read_ok = errno == EINTR;
      else
        berth_buf_append (&data, chunk, (size_t) n);
    }
  if (read_ok && berth_env_temp_dir (env, &tmp, &err) >= 0)
    {
      in_sandbox = xasprintf ("%s/berth-output/%s", tmp, base);
      if (berth_env_write_file (env, in_sandbox, data.data ? data.data : "", data.len, 0600, &err) < 0)
        {
          free (in_sandbox);
          in_sandbox = NULL;
        }
    }
  if (in_sandbox == NULL)
    berth_ctx_log (env->ctx, BERTH_LOG_WARNING, "session", "the full output could not be kept in the sandbox: %s",
                   err ? berth_error_message (err) : "cannot read the spill");
  berth_error_free (err);
  berth_buf_free (&data);
  return in_sandbox;
}

/* One execute in progress (berth_env_exec_begin .. berth_exec_free).
   The loop of DESIGN 4 lives in exec_step; berth_env_execute is that
   loop run to the end.  */
struct berth_exec
{
  berth_env *env;
  berth_exec_spec spec; /* the caller's, copied (size kept); its
                           pointers are only read in begin, but for
                           on_output/userdata */
  bool done, locked;
  uint64_t t0, deadline, drain_end, bound;
  double timeout;
  int cancel_fd;
  char job_token[33];
  char *cwd;
  berth_job job;
  exec_run run;
  berth_buf in;
  berth_feed feed;
  bool started, finished, killed;
  int lost;
  berth_termination end_how; /* the transport's word (berth_proc_ops.termination) */
  int end_sig;
  int epfd, timerfd;
  int reg_stdin, reg_feed; /* fds registered in epfd for the stdin feed, or -1 */
};

static int
begin_locked (berth_exec *x, const berth_exec_spec *spec, berth_error **reterr)
{
  berth_env *env = x->env;
  const berth_config *cfg = env->ctx->config;
  uint64_t t0 = berth_now_usec ();
  /* 0 in the spec: the configured value; 0 there, or BERTH_TIMEOUT_NONE: none.  */
  double timeout = spec->timeout != 0 ? spec->timeout : berth_config_double (cfg, "terminal.timeout", 180);
  size_t max = BERTH_HAS_FIELD (spec, berth_exec_spec, max_bytes) && spec->max_bytes ? spec->max_bytes : (size_t) berth_config_int (cfg, "tool_output.max_bytes", 50000);
  _cleanup_ (berth_transport_call_free) berth_transport_call call = { 0 };
  _cleanup_free_ char *script = NULL;
  _cleanup_close_ int script_fd = -1;
  uint32_t flags = 0;
  int stdin_fd = spec->has_stdin && BERTH_HAS_FIELD (spec, berth_exec_spec, stdin_fd) && spec->stdin_stream ? spec->stdin_fd : -1;
  bool use_fd;
  int r;

  x->cancel_fd = BERTH_HAS_FIELD (spec, berth_exec_spec, cancel_fd) && spec->cancel_fd > 0 ? spec->cancel_fd : -1;
  x->t0 = t0;
  if (spec->command == NULL)
    return berth_error_set (reterr, EINVAL, "no command given");
  if (env->cleaned)
    return berth_error_set (reterr, ESTALE, "environment %s was cleaned up", env->id);
  if (timeout == BERTH_TIMEOUT_NONE)
    timeout = 0;
  if (!(timeout >= 0 && timeout <= BERTH_TIMEOUT_MAX)) /* NaN too */
    return berth_error_set (reterr, EINVAL, "timeout must be a number of seconds from 0 (no timeout) to %.0f (got %g)", BERTH_TIMEOUT_MAX, timeout);
  x->timeout = timeout;
  if ((r = berth_random_hex (x->job_token, 16)) < 0)
    return berth_error_errno (reterr, -r, "no randomness");
  /* While it runs, the command names its berth: if this process is
     killed, `berth gc` kills what it left by the job token.  Best effort
     (a state that cannot be written fails the command's save).  */
  berth_env_record_owner (env, "running", x->job_token, NULL);

  /* Every backend call of this execute -- the transport's setup too --
     ends by the command's deadline (set by the caller around each call).  */
  x->bound = timeout > 0 ? t0 + (uint64_t) (timeout * 1e6) : 0;
  env->deadline_usec = x->bound;
  if ((r = berth_env_resume (env, reterr)) < 0)
    return r;
  r = berth_transport_prepare (env, &call, reterr);
  if (r < 0)
    return r;
  flags = call.flags;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "execute in %s on %s via %s, timeout %gs", env->id, berth_env_backend (env),
                 berth_transport_get (env)->via, timeout);
  use_fd = (flags & BERTH_PREFIX_PASSES_FDS) != 0;
  x->cwd = berth_env_resolve_cwd (env, spec->cwd);
  /* what the snapshot would only set again is left out (bash takes
     microseconds per variable it sets) */
  _cleanup_free_ char *snapshot = call.start_environ && env->snapshot ? berth_snapshot_minus_environ (env->snapshot, call.start_environ) : NULL;
  berth_script_spec ss = {
    .command = spec->command,
    .cwd = x->cwd,
    .cwd_strict = spec->cwd && *spec->cwd,
    .snapshot = snapshot ? snapshot : env->snapshot,
    .job = x->job_token,
    .exports = (flags & BERTH_PREFIX_PASSES_ENV) ? NULL : (const char *const *) env->passthrough,
  };
  script = berth_script_build (&ss);
  if (script == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (use_fd)
    {
      script_fd = script_memfd (script);
      if (script_fd < 0)
        return berth_error_errno (reterr, -script_fd, "memfd_create");
    }
  else
    berth_buf_append (&x->in, script, strlen (script) + 1); /* with its NUL */
  if (spec->has_stdin && spec->stdin_len)
    berth_buf_append (&x->in, spec->stdin_data, spec->stdin_len);

  const char *inner[] = { "bash", "-c", use_fd ? BERTH_BOOT_FD : BERTH_BOOT_STDIN, NULL };
  x->deadline = timeout > 0 ? t0 + (uint64_t) (timeout * 1e6) : UINT64_MAX;
  r = berth_transport_start (env, &call, inner, BERTH_START_SHELL_SCRIPT, x->in.len > 0 || spec->has_stdin, script_fd, x->deadline == UINT64_MAX ? 0 : x->deadline, &x->job, reterr);
  if (r < 0)
    return r;
  x->started = true;
  berth_output_init (&x->run.out, max, env->spill_dir);
  x->run.out.spill_memory = berth_env_is_hosted (env);
  berth_feed_init (&x->feed, x->in.data, x->in.len, stdin_fd);

  /* One fd for the caller to poll: the transport's output, the cancel
     fd, the stdin feed while it has work, and a timer at the deadlines.  */
  x->epfd = epoll_create1 (EPOLL_CLOEXEC);
  x->timerfd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (x->epfd < 0 || x->timerfd < 0)
    r = -errno;
  else
    {
      struct epoll_event ev = { .events = EPOLLIN };
      if (epoll_ctl (x->epfd, EPOLL_CTL_ADD, x->job.proc.fd, &ev) < 0 || epoll_ctl (x->epfd, EPOLL_CTL_ADD, x->timerfd, &ev) < 0
          || (x->cancel_fd >= 0 && epoll_ctl (x->epfd, EPOLL_CTL_ADD, x->cancel_fd, &ev) < 0))
        r = -errno;
    }
  if (r < 0)
    {
      berth_error_errno (reterr, -r, "cannot watch the command's streams");
      /* started: killed where it runs by the caller's wrap-up */
      return r;
    }
  return 0;
}

static void
arm_timer (berth_exec *x, uint64_t when)
{
  struct itimerspec its = { 0 };
  if (when != UINT64_MAX)
    {
      if (when == 0)
        when = 1;
      its.it_value.tv_sec = (time_t) (when / 1000000u);
      its.it_value.tv_nsec = (long) (when % 1000000u) * 1000;
    }
  timerfd_settime (x->timerfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* The stdin feed's fds in the epoll set, as berth_job_pump_feed would
   poll them: taken out before each round (while they are surely open;
   the round may close the command's stdin), put back after it.  */
static void
feed_unwatch (berth_exec *x)
{
  if (x->reg_stdin >= 0 && x->reg_stdin == x->job.proc.fd)
    {
      /* one socket both ways (docker's hijacked stream): output only */
      struct epoll_event in = { .events = EPOLLIN };
      epoll_ctl (x->epfd, EPOLL_CTL_MOD, x->reg_stdin, &in);
    }
  else if (x->reg_stdin >= 0)
    epoll_ctl (x->epfd, EPOLL_CTL_DEL, x->reg_stdin, NULL);
  if (x->reg_feed >= 0)
    epoll_ctl (x->epfd, EPOLL_CTL_DEL, x->reg_feed, NULL);
  x->reg_stdin = x->reg_feed = -1;
}

static int
feed_watch (berth_exec *x)
{
  size_t pending = 0;
  bool open = berth_job_stdin_open (&x->job);
  berth_feed *f = &x->feed;
  if (f->pre_off < f->pre_len)
    pending = f->pre_len - f->pre_off;
  else
    pending = f->have - f->off;
  struct epoll_event out = { .events = EPOLLOUT }, in = { .events = EPOLLIN };
  if (open && pending > 0 && x->job.proc.stdin_fd == x->job.proc.fd)
    {
      out.events |= EPOLLIN;
      if (epoll_ctl (x->epfd, EPOLL_CTL_MOD, x->job.proc.stdin_fd, &out) < 0)
        return -errno;
      x->reg_stdin = x->job.proc.stdin_fd;
    }
  else if (open && pending > 0)
    {
      if (epoll_ctl (x->epfd, EPOLL_CTL_ADD, x->job.proc.stdin_fd, &out) < 0)
        return -errno;
      x->reg_stdin = x->job.proc.stdin_fd;
    }
  else if (open && f->fd >= 0 && f->fd != x->cancel_fd)
    {
      if (epoll_ctl (x->epfd, EPOLL_CTL_ADD, f->fd, &in) < 0)
        return errno == EPERM ? 0 : -errno; /* a regular file: always ready, read by the round */
      x->reg_feed = f->fd;
    }
  return 0;
}

static int exec_finish (berth_exec *x, berth_result **ret, berth_error **reterr);

/* The rounds that are ready; 1 while the command runs, else the
   wrap-up's return.  Called with ENV's deadline set.  */
static int
exec_round (berth_exec *x, berth_result **ret, berth_error **reterr)
{
  uint64_t tick;
  if (read (x->timerfd, &tick, sizeof tick) < 0)
    {
      /* not expired: nothing to clear */
    }
  feed_unwatch (x);
  for (;;)
    {
      uint64_t now = berth_now_usec ();
      bool cancel = false;
      int r;
      if (x->run.state.have_ec && x->drain_end == 0)
        x->drain_end = now + DRAIN_USEC;
      if (x->drain_end && now >= x->drain_end)
        break;
      if (now >= x->deadline || x->run.cancelled)
        {
          x->killed = true;
          break;
        }
      /* stdin (the script first without fd 3) as the command takes it */
      r = berth_job_pump_feed (&x->job, &x->feed, 0, x->cancel_fd, &cancel, exec_sink, &x->run);
      if (cancel)
        {
          x->run.cancelled = true;
          continue;
        }
      if (r < 0)
        {
          x->lost = -r; /* the transport broke: handled in the wrap-up */
          break;
        }
      if (r == 0)
        {
          x->finished = true;
          break;
        }
      if (x->run.cancelled || (x->run.state.have_ec && x->drain_end == 0))
        continue;
      /* A file given as stdin is always ready: another round now.  */
      if ((r = feed_watch (x)) < 0)
        {
          x->lost = -r;
          break;
        }
      if (x->reg_stdin < 0 && x->reg_feed < 0 && x->feed.fd >= 0 && berth_job_stdin_open (&x->job) && x->feed.have == x->feed.off
          && x->feed.pre_off >= x->feed.pre_len && x->feed.fd != x->cancel_fd)
        arm_timer (x, 0);
      else
        arm_timer (x, x->drain_end ? (x->drain_end < x->deadline ? x->drain_end : x->deadline) : x->deadline);
      return 1;
    }
  return exec_finish (x, ret, reterr);
}

/* After the loop: the exit status or the kill, the state kept, the
   result -- or the error rules of DESIGN 3.2.  */
static int
exec_finish (berth_exec *x, berth_result **ret, berth_error **reterr)
{
  berth_env *env = x->env;
  int r, status = -1;
  berth_error *terr = NULL, *kerr = NULL;
  x->done = true;
  feed_unwatch (x);
  if (x->feed.read_error)
    berth_ctx_log (env->ctx, BERTH_LOG_WARNING, "session", "reading the command's stdin failed: %s", strerror (x->feed.read_error));
  berth_feed_free (&x->feed);
  berth_buf_free (&x->in);
  /* Past the loop, the wrap-up (the exit status, a kill) gets a short
     bound of its own, however close the command came to its deadline.  */
  if (env->deadline_usec)
    env->deadline_usec = berth_now_usec () + (uint64_t) KILL_TIMEOUT_S * 1000000u;

  if (x->killed)
    {
      /* Our side of the transport goes, then the tree where it runs:
         a kill that cannot be delivered is reported below, never a clean
         timeout.  ESRCH: the environment itself is gone, and with it the
         command.  */
      int kst = -1;
      if (berth_transport_kill_job (env, &x->job, x->job_token, x->run.state.have_pid ? x->run.state.pid : 0, KILL_TIMEOUT_S, &kst, &kerr) < 0
          && berth_error_code (kerr) == ESRCH)
        kerr = berth_error_free (kerr);
      else if (kerr == NULL && kst > 0)
        berth_error_set (&kerr, BERTH_E_BACKEND, "%s: the kill script exited %d", berth_env_backend (env), kst);
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "%s: killed the command's tree: %s", x->run.cancelled ? "interrupted" : "timed out",
                     kerr ? berth_error_message (kerr) : "done");
      status = x->run.cancelled ? 130 : 124;
    }
  else if (x->lost)
    berth_job_finish (&x->job, BERTH_JOB_KILL);
  else
    {
      /* What the transport knows beyond the status (an OOM kill, a
         limit), asked before the job is let go.  */
      const berth_proc_ops *ops = x->job.proc.ops;
      if (x->finished && ops && BERTH_HAS_FIELD (ops, berth_proc_ops, termination) && ops->termination)
        x->end_how = ops->termination (x->job.proc.proc, &x->end_sig);
      berth_job_end_status (&x->job, x->finished ? BERTH_JOB_WAIT : BERTH_JOB_DETACH, &status, &terr);
    }
  berth_state_end (&x->run.state);

  /* Killed, but the kill did not reach the environment, or the command
     never reported that it started (the environment did not answer from
     the start): an error, never a timeout.  */
  if (x->killed && (kerr || (!x->run.state.have_pid && !x->run.cancelled)))
    {
      const char *name = berth_env_backend (env);
      char what[96];
      if (x->run.cancelled)
        snprintf (what, sizeof what, "was interrupted");
      else if (!x->run.state.have_pid)
        snprintf (what, sizeof what, "did not start within %gs", x->timeout);
      else
        snprintf (what, sizeof what, "timed out after %gs", x->timeout);
      berth_error_free (terr);
      if (kerr)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the command %s, and it may still %s there: could not kill it (%s)", name, what,
                             x->run.state.have_pid ? "be running" : "start", berth_error_message (kerr));
      else
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the environment did not answer: the command %s (nothing of it is left there)", name, what);
      berth_error_free (kerr);
      return fail_with_output (&x->run, r, reterr);
    }

  if (!x->killed && !x->run.state.have_pid)
    {
      /* The wrapper never started: the transport failed.  */
      const char *diag = x->run.state.diag.data ? x->run.state.diag.data : "";
      size_t n = strcspn (diag, "\n");
      _cleanup_free_ char *line = strndup (diag, n);
      berth_output_free (&x->run.out);
      berth_state_free (&x->run.state);
      if (terr)
        {
          r = berth_error_set (reterr, BERTH_E_BACKEND, "%s", berth_error_message (terr));
          berth_error_free (terr);
          return r;
        }
      if (x->lost)
        return berth_error_errno (reterr, x->lost, "%s: lost the command's output", berth_env_backend (env));
      /* 126/127: bash itself may be missing there (an image without it) */
      if ((status == 126 || status == 127) && berth_env_lacks_bash (env))
        return berth_no_bash_error (env, reterr);
      return berth_error_set (reterr, BERTH_E_BACKEND, "%s: could not run the command (exit %d)%s%s", berth_env_backend (env), status, line && *line ? ": " : "", line ? line : "");
    }

  /* The cwd asked for cannot be entered: the command did not x->run.  */
  if (!x->killed && x->run.state.cwd_error)
    {
      const char *why = x->run.state.cwd_error;
      int code = strcmp (why, "no such directory") == 0 ? ENOENT : strcmp (why, "not a directory") == 0 ? ENOTDIR : strcmp (why, "permission denied") == 0 ? EACCES : EINVAL;
      r = berth_error_set (reterr, code, "cannot use working directory %s: %s", x->cwd, why);
      berth_error_free (terr);
      berth_output_free (&x->run.out);
      berth_state_free (&x->run.state);
      return r;
    }

  /* No exit record, and the transport cannot vouch for a status of its
     own (a local bash x->killed by a signal, `exec CMD`): the daemon,
     connection or jail died under the command.  An error, never a
     result; the tree is x->killed where it ran, and what it printed stays
     in the error.  */
  if (!x->killed && !x->run.state.have_ec && (x->lost || terr || status < 0))
    {
      _cleanup_free_ char *why = NULL;
      if (terr)
        why = strdup (berth_error_message (terr));
      else if (x->lost)
        why = berth_strdup_printf ("%s: lost the command's output: %s", berth_env_backend (env), strerror (x->lost));
      else
        why = berth_strdup_printf ("%s: the command's transport ended before the command reported its exit status", berth_env_backend (env));
      berth_error_free (terr);
      if (berth_transport_kill (env, x->job_token, x->run.state.pid, KILL_TIMEOUT_S, NULL, &kerr) < 0 && berth_error_code (kerr) == ESRCH)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; nothing of the command is left (its environment is gone)", why ? why : "the transport failed");
      else if (kerr)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; its processes may still be running there (could not kill them: %s)", why ? why : "the transport failed",
                             kerr ? berth_error_message (kerr) : "out of memory");
      else
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; its processes were killed", why ? why : "the transport failed");
      berth_error_free (kerr);
      return fail_with_output (&x->run, r, reterr);
    }
  berth_error_free (terr);

  berth_result *res = calloc (1, sizeof *res);
  if (res == NULL)
    {
      berth_output_free (&x->run.out);
      berth_state_free (&x->run.state);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  /* The notes are inside the cap (output.h).  */
  char note[64] = "";
  if (x->killed && x->run.cancelled)
    snprintf (note, sizeof note, "\n[Command interrupted]");
  else if (x->killed)
    snprintf (note, sizeof note, "\n[Command timed out after %gs]", x->timeout);
  res->output = berth_output_finish_note (&x->run.out, note, &res->output_len);
  res->truncated = x->run.out.overflow;
  res->total_bytes = x->run.out.total_bytes;
  res->full_output_path = x->run.out.overflow && x->run.out.spill_path ? strdup (x->run.out.spill_path) : NULL;
  if (res->full_output_path && x->run.out.spill_memory)
    {
      char *name = res->full_output_path;
      res->full_output_path = spill_into_sandbox (env, x->run.out.spill_fd, name);
      free (name);
    }
  res->timed_out = x->killed && !x->run.cancelled;
  res->interrupted = x->killed && x->run.cancelled;
  if (x->killed)
    res->termination = x->run.cancelled ? BERTH_TERMINATION_INTERRUPTED : BERTH_TERMINATION_TIMEOUT;
  else if (x->end_how == BERTH_TERMINATION_OOM || x->end_how == BERTH_TERMINATION_LIMIT)
    {
      /* the transport saw it: the OOM killer, a limit's signal */
      res->termination = x->end_how;
      const char *n = x->end_sig > 0 ? sigabbrev_np (x->end_sig) : NULL;
      if (n)
        snprintf (res->signal, sizeof res->signal, "SIG%s", n);
    }
  else if (x->run.state.have_ec && x->run.state.have_sig)
    {
      /* the exit record says the command's shell died of a signal */
      res->termination = BERTH_TERMINATION_SIGNALED;
      snprintf (res->signal, sizeof res->signal, "SIG%s", x->run.state.sig);
    }
  else
    res->termination = BERTH_TERMINATION_EXITED;
  res->transport = berth_transport_get (env)->name;
  if (x->killed)
    res->exit_code = status;
  else if (x->run.state.have_ec)
    res->exit_code = x->run.state.ec;
  else
    res->exit_code = status < 0 ? 255 : status;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "exit %d after %llu ms (%s), %llu bytes of output", res->exit_code,
                 (unsigned long long) ((berth_now_usec () - x->t0) / 1000), x->run.state.have_ec ? "recorded" : x->killed ? "killed" : "transport status",
                 (unsigned long long) x->run.out.total_bytes);

  if (!x->killed && x->run.state.have_cwd)
    {
      res->cwd_changed = env->cwd == NULL || strcmp (env->cwd, x->run.state.cwd) != 0;
      free (env->cwd);
      env->cwd = strdup (x->run.state.cwd);
    }
  if (!x->killed && x->run.state.env)
    {
      _cleanup_free_ char *kept = berth_snapshot_filter (x->run.state.env, x->run.state.env_len, snapshot_drops, env);
      free (env->snapshot);
      env->snapshot = kept ? berth_strdup_printf ("%s%s", kept, x->run.state.fn ? x->run.state.fn : "") : NULL;
    }
  res->cwd = env->cwd ? strdup (env->cwd) : NULL;
  res->recreated = env->recreated;
  env->recreated = false;
  res->backend = strdup (berth_env_backend (env));
  res->env = strdup (env->name ? env->name : env->id);
  res->duration_ms = (berth_now_usec () - x->t0) / 1000;
  berth_output_free (&x->run.out);
  berth_state_free (&x->run.state);
  berth_error *serr = NULL;
  if (env->name && (r = berth_env_save (env, &serr)) < 0)
    {
      /* The command ran, but its cwd and exports are not kept: an error,
         with its output.  */
      r = berth_error_set (reterr, r, "%s (the command ran; its cwd and exported variables are not kept)", berth_error_message (serr));
      berth_error_free (serr);
      if (reterr)
        {
          berth_error_take_output (*reterr, res->output, res->output_len);
          res->output = NULL;
        }
      berth_result_free (res);
      return r;
    }
  *ret = res;
  return 0;
}

/* The end of an execute: the lock goes, the running record too.  */
static void
exec_release (berth_exec *x)
{
  if (x->locked)
    {
      berth_env_forget_owner (x->env, "running");
      berth_env_unlock (x->env);
      x->env->executing = false;
      x->locked = false;
    }
}

BERTH_EXPORT int
berth_env_exec_begin (berth_env *env, const berth_exec_spec *spec, berth_exec **ret, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if (spec == NULL || spec->size < offsetof (berth_exec_spec, cancel_fd))
    return berth_error_set (reterr, EINVAL, "no command given");
  if (env->executing)
    return berth_error_set (reterr, EBUSY, "environment %s runs a command already", env->name ? env->name : env->id);
  berth_exec *x = calloc (1, sizeof *x);
  if (x == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* A running exec holds its environment: the caller may drop theirs.  */
  *x = (berth_exec){ .env = berth_env_ref (env), .epfd = -1, .timerfd = -1, .reg_stdin = -1, .reg_feed = -1, .lost = 0 };
  memcpy (&x->spec, spec, spec->size < sizeof x->spec ? spec->size : sizeof x->spec);
  x->run.spec = &x->spec;
  int r = berth_env_lock (env, reterr);
  if (r < 0)
    {
      berth_env_unref (env);
      free (x);
      return r;
    }
  x->locked = true;
  env->executing = true;
  berth_env_refresh (env);
  uint64_t saved = env->deadline_usec;
  r = begin_locked (x, spec, reterr);
  if (r < 0 && x->started)
    {
      /* started, but it cannot be watched: killed where it runs */
      berth_result *res = NULL;
      x->killed = true;
      exec_finish (x, &res, NULL);
      berth_result_free (res);
    }
  env->deadline_usec = saved;
  if (r < 0)
    {
      x->done = true;
      berth_exec_free (x);
      return r;
    }
  *ret = x;
  return 0;
}

BERTH_EXPORT int
berth_exec_fd (const berth_exec *x)
{
  return x->epfd;
}

BERTH_EXPORT int
berth_exec_step (berth_exec *x, berth_result **ret, berth_error **reterr)
{
  if (x->done)
    return berth_error_set (reterr, EALREADY, "the command has ended already");
  BERTH_LOG_SCOPE (x->env->ctx, berth_env_backend (x->env));
  uint64_t saved = x->env->deadline_usec;
  x->env->deadline_usec = x->bound;
  berth_result *res = NULL;
  int r = exec_round (x, &res, reterr);
  x->env->deadline_usec = saved;
  if (r <= 0)
    exec_release (x);
  if (r == 0)
    *ret = res;
  return r;
}

BERTH_EXPORT int
berth_exec_interrupt (berth_exec *x)
{
  if (x->done)
    return 0;
  x->run.cancelled = true;
  arm_timer (x, 0); /* the fd is ready: the next step kills */
  return 0;
}

BERTH_EXPORT berth_exec *
berth_exec_free (berth_exec *x)
{
  if (x == NULL)
    return NULL;
  if (!x->done)
    {
      /* Let go of a running command: killed where it runs, like an
         interrupt, with no result.  */
      berth_result *res = NULL;
      BERTH_LOG_SCOPE (x->env->ctx, berth_env_backend (x->env));
      uint64_t saved = x->env->deadline_usec;
      x->env->deadline_usec = x->bound;
      x->run.cancelled = x->killed = true;
      exec_finish (x, &res, NULL);
      x->env->deadline_usec = saved;
      berth_result_free (res);
    }
  exec_release (x);
  if (x->epfd >= 0)
    close (x->epfd);
  if (x->timerfd >= 0)
    close (x->timerfd);
  berth_feed_free (&x->feed);
  berth_buf_free (&x->in);
  free (x->cwd);
  berth_env_unref (x->env);
  free (x);
  return NULL;
}

BERTH_EXPORT int
berth_env_execute (berth_env *env, const berth_exec_spec *spec, berth_result **ret, berth_error **reterr)
{
  berth_exec *x = NULL;
  int r = berth_env_exec_begin (env, spec, &x, reterr);
  if (r < 0)
    return r;
  /* curl's easy_transfer over multi: poll the one fd, step.  The fd's
     timer covers the deadlines; the 1 s cap is a safety net only.  */
  while ((r = berth_exec_step (x, ret, reterr)) > 0)
    {
      struct pollfd p = { berth_exec_fd (x), POLLIN, 0 };
      if (poll (&p, 1, 1000) < 0 && errno != EINTR)
        {
          r = berth_error_errno (reterr, errno, "poll");
          break;
        }
    }
  berth_exec_free (x);
  return r < 0 ? r : 0;
}

BERTH_EXPORT berth_result *
berth_result_free (berth_result *r)
{
  if (r)
    {
      free (r->output);
      free (r->cwd);
      free (r->full_output_path);
      free (r->backend);
      free (r->env);
      free (r);
    }
  return NULL;
}

BERTH_EXPORT const char *
berth_result_output (const berth_result *r, size_t *ret_len)
{
  if (ret_len)
    *ret_len = r->output_len;
  return r->output;
}

BERTH_EXPORT int berth_result_exit_code (const berth_result *r) { return r->exit_code; }
BERTH_EXPORT const char *berth_result_cwd (const berth_result *r) { return r->cwd; }
BERTH_EXPORT bool berth_result_cwd_changed (const berth_result *r) { return r->cwd_changed; }
BERTH_EXPORT bool berth_result_timed_out (const berth_result *r) { return r->timed_out; }
BERTH_EXPORT bool berth_result_interrupted (const berth_result *r) { return r->interrupted; }
BERTH_EXPORT bool berth_result_truncated (const berth_result *r) { return r->truncated; }
BERTH_EXPORT bool berth_result_environment_recreated (const berth_result *r) { return r->recreated; }
BERTH_EXPORT uint64_t berth_result_total_bytes (const berth_result *r) { return r->total_bytes; }
BERTH_EXPORT const char *berth_result_full_output_path (const berth_result *r) { return r->full_output_path; }
BERTH_EXPORT const char *berth_result_backend (const berth_result *r) { return r->backend; }
BERTH_EXPORT const char *berth_result_env (const berth_result *r) { return r->env; }
BERTH_EXPORT uint64_t berth_result_duration_ms (const berth_result *r) { return r->duration_ms; }
BERTH_EXPORT berth_termination berth_result_termination (const berth_result *r) { return r->termination; }
BERTH_EXPORT const char *berth_result_signal (const berth_result *r) { return r->signal[0] ? r->signal : NULL; }
BERTH_EXPORT const char *berth_result_transport (const berth_result *r) { return r->transport; }

BERTH_EXPORT const char *
berth_termination_name (berth_termination t)
{
  static const char *const names[] = {
    [BERTH_TERMINATION_EXITED] = "exited",
    [BERTH_TERMINATION_SIGNALED] = "signaled",
    [BERTH_TERMINATION_TIMEOUT] = "timeout",
    [BERTH_TERMINATION_INTERRUPTED] = "interrupted",
    [BERTH_TERMINATION_OOM] = "oom",
    [BERTH_TERMINATION_LIMIT] = "limit",
  };
  return (unsigned) t < ARRAY_SIZE (names) ? names[t] : NULL;
}
