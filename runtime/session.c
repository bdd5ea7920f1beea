/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* session.c: execute() -- the semantics of DESIGN 3.2, once for every
   backend: the wrapper script, stdin, the state channel, output cap,
   timeout/interrupt with the tree killed where it runs.  */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "job.h"
#include "output.h"
#include "snapshot.h"
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
  /* Hook for BERTH_TERMINATION_OOM / _LIMIT: set only by a backend that
     can tell (a cgroup's oom_kill count, a limit it enforced), never
     guessed from an exit status.  None can yet.  */
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
   processes, and passthrough values (sent fresh with every command).  */
static bool
snapshot_drops (void *userdata, const char *name)
{
  berth_env *env = userdata;
  size_t n = strlen (name);
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

static char *
resolve_cwd (berth_env *env, const char *cwd)
{
  if (cwd == NULL || *cwd == '\0')
    return env->cwd ? strdup (env->cwd) : NULL;
  if (cwd[0] == '/' || cwd[0] == '~' || env->cwd == NULL)
    return strdup (cwd);
  return berth_strdup_printf ("%s/%s", env->cwd, cwd);
}

static int
execute_locked (berth_env *env, const berth_exec_spec *spec, berth_result **ret, berth_error **reterr)
{
  const berth_config *cfg = env->ctx->config;
  uint64_t t0 = berth_now_usec ();
  /* 0 in the spec: the configured value; 0 there, or BERTH_TIMEOUT_NONE: none.  */
  double timeout = spec->timeout != 0 ? spec->timeout : berth_config_double (cfg, "terminal.timeout", 180);
  size_t max = BERTH_HAS_FIELD (spec, berth_exec_spec, max_bytes) && spec->max_bytes ? spec->max_bytes : (size_t) berth_config_int (cfg, "tool_output.max_bytes", 50000);
  int cancel_fd = BERTH_HAS_FIELD (spec, berth_exec_spec, cancel_fd) && spec->cancel_fd > 0 ? spec->cancel_fd : -1;
  _cleanup_strv_free_ char **prefix = NULL;
  _cleanup_free_ char *script = NULL, *cwd = NULL;
  _cleanup_close_ int script_fd = -1;
  char job_token[33];
  uint32_t flags = 0;
  berth_job job;
  exec_run run = { .spec = spec };
  berth_buf in = { 0 };
  berth_feed feed;
  int stdin_fd = spec->has_stdin && BERTH_HAS_FIELD (spec, berth_exec_spec, stdin_fd) && spec->stdin_stream ? spec->stdin_fd : -1;
  bool use_fd, finished = false, killed = false;
  uint64_t deadline, drain_end = 0;
  int r, status = -1, lost = 0;
  berth_error *terr = NULL, *kerr = NULL;

  if (spec->command == NULL)
    return berth_error_set (reterr, EINVAL, "no command given");
  if (env->cleaned)
    return berth_error_set (reterr, ESTALE, "environment %s was cleaned up", env->id);
  if (timeout == BERTH_TIMEOUT_NONE)
    timeout = 0;
  if (!(timeout >= 0 && timeout <= BERTH_TIMEOUT_MAX)) /* NaN too */
    return berth_error_set (reterr, EINVAL, "timeout must be a number of seconds from 0 (no timeout) to %.0f (got %g)", BERTH_TIMEOUT_MAX, timeout);
  if ((r = berth_random_hex (job_token, 16)) < 0)
    return berth_error_errno (reterr, -r, "no randomness");
  /* While it runs, the command names its berth: if this process is
     killed, `berth gc` kills what it left by the job token.  Best effort
     (a state that cannot be written fails the command's save).  */
  berth_env_record_owner (env, "running", job_token, NULL);

  /* Every backend call of this execute -- the transport's setup too --
     ends by the command's deadline.  */
  _cleanup_ (berth_env_deadline_endp) berth_env_bound bound
    = berth_env_deadline_begin (env, timeout > 0 ? t0 + (uint64_t) (timeout * 1e6) : 0);
  r = berth_job_transport (env, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "execute in %s on %s via %s, timeout %gs", env->id, env->provider->ops->name,
                 prefix ? "its exec prefix" : "its start callback", timeout);
  use_fd = (flags & BERTH_PREFIX_PASSES_FDS) != 0;
  cwd = resolve_cwd (env, spec->cwd);
  berth_script_spec ss = {
    .command = spec->command,
    .cwd = cwd,
    .cwd_strict = spec->cwd && *spec->cwd,
    .snapshot = env->snapshot,
    .job = job_token,
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
    berth_buf_append (&in, script, strlen (script) + 1); /* with its NUL */
  if (spec->has_stdin && spec->stdin_len)
    berth_buf_append (&in, spec->stdin_data, spec->stdin_len);

  const char *inner[] = { "bash", "-c", use_fd ? BERTH_BOOT_FD : BERTH_BOOT_STDIN, NULL };
  deadline = timeout > 0 ? t0 + (uint64_t) (timeout * 1e6) : UINT64_MAX;
  r = berth_job_start (env, prefix, inner, in.len > 0 || spec->has_stdin, script_fd, deadline == UINT64_MAX ? 0 : deadline, &job, reterr);
  if (r < 0)
    {
      berth_buf_free (&in);
      return r;
    }
  if (script_fd >= 0)
    {
      close (script_fd);
      script_fd = -1;
    }
  berth_output_init (&run.out, max, env->spill_dir);
  berth_feed_init (&feed, in.data, in.len, stdin_fd);

  for (;;)
    {
      uint64_t now = berth_now_usec ();
      bool cancel = false;
      if (run.state.have_ec && drain_end == 0)
        drain_end = now + DRAIN_USEC;
      if (drain_end && now >= drain_end)
        break;
      if (now >= deadline || run.cancelled)
        {
          killed = true;
          break;
        }
      uint64_t until = drain_end ? drain_end : deadline;
      uint64_t left_ms = (until - now) / 1000 + 1;
      int wait_ms = left_ms > 1000 ? 1000 : (int) left_ms;
      /* stdin (the script first without fd 3) as the command takes it */
      r = berth_job_pump_feed (&job, &feed, wait_ms, cancel_fd, &cancel, exec_sink, &run);
      if (cancel)
        {
          run.cancelled = true;
          continue;
        }
      if (r < 0)
        {
          lost = -r; /* the transport broke: handled below */
          break;
        }
      if (r == 0)
        {
          finished = true;
          break;
        }
    }
  if (feed.read_error)
    berth_ctx_log (env->ctx, BERTH_LOG_WARNING, "session", "reading the command's stdin failed: %s", strerror (feed.read_error));
  berth_feed_free (&feed);
  berth_buf_free (&in);
  /* Past the loop, the wrap-up (the exit status, a kill) gets a short
     bound of its own, however close the command came to its deadline.  */
  if (env->deadline_usec)
    env->deadline_usec = berth_now_usec () + (uint64_t) KILL_TIMEOUT_S * 1000000u;

  if (killed)
    {
      /* Our side of the transport goes, then the tree where it runs:
         a kill that cannot be delivered is reported below, never a clean
         timeout.  ESRCH: the environment itself is gone, and with it the
         command.  */
      _cleanup_free_ char *ks = berth_kill_script (job_token, run.state.have_pid ? run.state.pid : 0);
      int kst = -1;
      berth_job_finish (&job, BERTH_JOB_KILL);
      if (ks == NULL)
        berth_error_errno (&kerr, ENOMEM, "out of memory");
      else if (berth_job_run_script (env, ks, KILL_TIMEOUT_S, &kst, &kerr) < 0 && berth_error_code (kerr) == ESRCH)
        kerr = berth_error_free (kerr);
      else if (kerr == NULL && kst > 0)
        berth_error_set (&kerr, BERTH_E_BACKEND, "%s: the kill script exited %d", env->provider->ops->name, kst);
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "%s: killed the command's tree: %s", run.cancelled ? "interrupted" : "timed out",
                     kerr ? berth_error_message (kerr) : "done");
      status = run.cancelled ? 130 : 124;
    }
  else if (lost)
    berth_job_finish (&job, BERTH_JOB_KILL);
  else
    berth_job_end_status (&job, finished ? BERTH_JOB_WAIT : BERTH_JOB_DETACH, &status, &terr);
  berth_state_end (&run.state);

  /* Killed, but the kill did not reach the environment, or the command
     never reported that it started (the environment did not answer from
     the start): an error, never a timeout.  */
  if (killed && (kerr || (!run.state.have_pid && !run.cancelled)))
    {
      const char *name = env->provider->ops->name;
      char what[96];
      if (run.cancelled)
        snprintf (what, sizeof what, "was interrupted");
      else if (!run.state.have_pid)
        snprintf (what, sizeof what, "did not start within %gs", timeout);
      else
        snprintf (what, sizeof what, "timed out after %gs", timeout);
      berth_error_free (terr);
      if (kerr)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the command %s, and it may still %s there: could not kill it (%s)", name, what,
                             run.state.have_pid ? "be running" : "start", berth_error_message (kerr));
      else
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the environment did not answer: the command %s (nothing of it is left there)", name, what);
      berth_error_free (kerr);
      return fail_with_output (&run, r, reterr);
    }

  if (!killed && !run.state.have_pid)
    {
      /* The wrapper never started: the transport failed.  */
      const char *diag = run.state.diag.data ? run.state.diag.data : "";
      size_t n = strcspn (diag, "\n");
      _cleanup_free_ char *line = strndup (diag, n);
      berth_output_free (&run.out);
      berth_state_free (&run.state);
      if (terr)
        {
          r = berth_error_set (reterr, BERTH_E_BACKEND, "%s", berth_error_message (terr));
          berth_error_free (terr);
          return r;
        }
      if (lost)
        return berth_error_errno (reterr, lost, "%s: lost the command's output", env->provider->ops->name);
      return berth_error_set (reterr, BERTH_E_BACKEND, "%s: could not run the command (exit %d)%s%s", env->provider->ops->name, status, line && *line ? ": " : "", line ? line : "");
    }

  /* The cwd asked for cannot be entered: the command did not run.  */
  if (!killed && run.state.cwd_error)
    {
      const char *why = run.state.cwd_error;
      int code = strcmp (why, "no such directory") == 0 ? ENOENT : strcmp (why, "not a directory") == 0 ? ENOTDIR : strcmp (why, "permission denied") == 0 ? EACCES : EINVAL;
      r = berth_error_set (reterr, code, "cannot use working directory %s: %s", cwd, why);
      berth_error_free (terr);
      berth_output_free (&run.out);
      berth_state_free (&run.state);
      return r;
    }

  /* No exit record, and the transport cannot vouch for a status of its
     own (a local bash killed by a signal, `exec CMD`): the daemon,
     connection or jail died under the command.  An error, never a
     result; the tree is killed where it ran, and what it printed stays
     in the error.  */
  if (!killed && !run.state.have_ec && (lost || terr || status < 0))
    {
      _cleanup_free_ char *why = NULL, *ks = berth_kill_script (job_token, run.state.pid);
      if (terr)
        why = strdup (berth_error_message (terr));
      else if (lost)
        why = berth_strdup_printf ("%s: lost the command's output: %s", env->provider->ops->name, strerror (lost));
      else
        why = berth_strdup_printf ("%s: the command's transport ended before the command reported its exit status", env->provider->ops->name);
      berth_error_free (terr);
      if (ks && berth_job_run_script (env, ks, KILL_TIMEOUT_S, NULL, &kerr) < 0 && berth_error_code (kerr) == ESRCH)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; nothing of the command is left (its environment is gone)", why ? why : "the transport failed");
      else if (ks == NULL || kerr)
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; its processes may still be running there (could not kill them: %s)", why ? why : "the transport failed",
                             kerr ? berth_error_message (kerr) : "out of memory");
      else
        r = berth_error_set (reterr, BERTH_E_BACKEND, "%s; its processes were killed", why ? why : "the transport failed");
      berth_error_free (kerr);
      return fail_with_output (&run, r, reterr);
    }
  berth_error_free (terr);

  berth_result *res = calloc (1, sizeof *res);
  if (res == NULL)
    {
      berth_output_free (&run.out);
      berth_state_free (&run.state);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  /* The notes are inside the cap (output.h).  */
  char note[64] = "";
  if (killed && run.cancelled)
    snprintf (note, sizeof note, "\n[Command interrupted]");
  else if (killed)
    snprintf (note, sizeof note, "\n[Command timed out after %gs]", timeout);
  res->output = berth_output_finish_note (&run.out, note, &res->output_len);
  res->truncated = run.out.overflow;
  res->total_bytes = run.out.total_bytes;
  res->full_output_path = run.out.overflow && run.out.spill_path ? strdup (run.out.spill_path) : NULL;
  res->timed_out = killed && !run.cancelled;
  res->interrupted = killed && run.cancelled;
  if (killed)
    res->termination = run.cancelled ? BERTH_TERMINATION_INTERRUPTED : BERTH_TERMINATION_TIMEOUT;
  else if (run.state.have_ec && run.state.have_sig)
    {
      /* the exit record says the command's shell died of a signal */
      res->termination = BERTH_TERMINATION_SIGNALED;
      snprintf (res->signal, sizeof res->signal, "SIG%s", run.state.sig);
    }
  else
    res->termination = BERTH_TERMINATION_EXITED;
  res->transport = "exec";
  if (killed)
    res->exit_code = status;
  else if (run.state.have_ec)
    res->exit_code = run.state.ec;
  else
    res->exit_code = status < 0 ? 255 : status;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "exit %d after %llu ms (%s), %llu bytes of output", res->exit_code,
                 (unsigned long long) ((berth_now_usec () - t0) / 1000), run.state.have_ec ? "recorded" : killed ? "killed" : "transport status",
                 (unsigned long long) run.out.total_bytes);

  if (!killed && run.state.have_cwd)
    {
      res->cwd_changed = env->cwd == NULL || strcmp (env->cwd, run.state.cwd) != 0;
      free (env->cwd);
      env->cwd = strdup (run.state.cwd);
    }
  if (!killed && run.state.env)
    {
      _cleanup_free_ char *kept = berth_snapshot_filter (run.state.env, run.state.env_len, snapshot_drops, env);
      free (env->snapshot);
      env->snapshot = kept ? berth_strdup_printf ("%s%s", kept, run.state.fn ? run.state.fn : "") : NULL;
    }
  res->cwd = env->cwd ? strdup (env->cwd) : NULL;
  res->recreated = env->recreated;
  env->recreated = false;
  res->backend = strdup (env->provider->ops->name);
  res->env = strdup (env->name ? env->name : env->id);
  res->duration_ms = (berth_now_usec () - t0) / 1000;
  berth_output_free (&run.out);
  berth_state_free (&run.state);
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

BERTH_EXPORT int
berth_env_execute (berth_env *env, const berth_exec_spec *spec, berth_result **ret, berth_error **reterr)
{
  BERTH_LOG_SCOPE (env->ctx, env->provider->ops->name);
  int r = berth_env_lock (env, reterr);
  if (r < 0)
    return r;
  berth_env_refresh (env);
  r = execute_locked (env, spec, ret, reterr);
  berth_env_forget_owner (env, "running");
  berth_env_unlock (env);
  return r;
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
