/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* process.c: background processes in an environment (DESIGN 3.3).

   A process is the runtime's own wrapper script (wrapper.c: the
   environment's cwd, exported state and passthrough, the job token) run
   detached inside the environment, in a session of its own, with its
   files in a directory of the environment's temp dir:

     <tmp>/.berth-proc/<env id>/<process id>/
       run.sh   the wrapper          out    merged output
       state    its state channel    exit   its exit status, once it ended
       pid      the session leader   token  the job token (the kill script's)
       cmd      the command          started  start time (epoch seconds)
       in       stdin fifo, kept open by the pid in "holder" until close_stdin
       stopped  present once berth_process_stop killed it

   Everything goes through the environment's transport, so a process in a
   jail or a container stays there, and any berth process can attach to
   it again, list it, read its output (replayed from at most the last
   1 MiB) or stop it: the directory is the record.  Stop is the runtime's
   kill script (the whole tree, setsid escapees included).  The
   environment's host state keeps a record of each (processes/<id>: its
   command and start time), so that when the directory is gone with the
   environment's filesystem (a container restarted over a tmpfs /tmp,
   recreated, its jail gone) the process is reported lost, never waited
   for nor mistaken for one that never existed.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "berth-private.h"
#include "job.h"
#include "scope.h"
#include "state.h"
#include "transport.h"
#include "wrapper.h"

/* alive PID: it runs (a zombie does not: an init that does not reap
   leaves the session leader's behind).  The scripts here use bash's
   builtins where they can ($EUID, printf %(%s)T, read): each fork is a
   millisecond of a process's start.  */
#define ALIVE_FN                                                                                                      \
  "alive () { [ -n \"$1\" ] && kill -0 \"$1\" 2>/dev/null || return 1; local s; IFS= read -r s 2>/dev/null </proc/$1/stat || return 0;" \
  " case ${s##*) } in Z*) return 1 ;; esac; }\n"
/* A process on a pty runs its wrapper through `berth-agent --pty-run`
   (agent/pty-run.c): the agent placed in the environment, which is the
   parent of every script it runs; where the transport is exec there is
   none, and the start script says so with PTY_NO_AGENT.  */
#define PTY_NO_AGENT 5
#define PTY_FIND_AGENT                                                                                                \
  "pty=$(readlink /proc/$PPID/exe 2>/dev/null)\n"                                                                      \
  "case $pty in */berth-agent) ;; *) exit 5 ;; esac\n"
#define PROCESS_REPLAY_MAX (1u << 20)
#define PROCESS_CALL_TIMEOUT_S 30.0
#define PROCESS_KILL_TIMEOUT_S 10.0
#define PROCESS_LIST_MAX (2u << 20) /* a listing, or the output replayed */

struct berth_process
{
  unsigned n_ref;
  berth_env *env; /* a reference */
  char id[16];    /* "p" + 12 hex */
  char *dir;      /* in the environment */
  char *token;
  long pid;
  berth_job follower; /* streams "out" while the process runs (fallback) */
  bool following, output_ended, stdin_closed;
  berth_buf pending; /* read from the follower, not yet given out */
  int state;         /* BERTH_PROCESS_* once known to be final, else 0 */
  int exit_code;
  const char *termination;
  bool removed; /* lost with its environment's removal (a tombstone says so) */
};

static bool
valid_id (const char *id)
{
  if (id == NULL || id[0] != 'p' || strlen (id) != 13)
    return false;
  for (const char *c = id + 1; *c; c++)
    if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
      return false;
  return true;
}

/* The environment's process directory as a shell word (malloc'd), or
   NULL with *reterr: per user (a temp dir may be shared), per
   environment.  */
static char *
proc_root (berth_env *env, berth_error **reterr)
{
  _cleanup_free_ char *tmp = NULL;
  if (berth_env_temp_dir (env, &tmp, reterr) < 0)
    return NULL;
  /* the incarnation: a process of an environment removed and made again
     under the same name is not this one's (a node's /tmp outlives it) */
  _cleanup_free_ char *qtmp = berth_shell_quote (tmp), *qid = berth_shell_quote (env->id);
  return xasprintf ("%s/.berth-proc-\"$EUID\"/%s-%s", qtmp, qid, env->incarnation);
}

/* Run BODY through the transport, with r set to ROOT and d to DIR (shell
   words; DIR may be NULL), ROOT made ours (0700, not a link, owned by us)
   first; its stdout in *OUT (may be NULL).  Returns the script's exit
   status, or < 0.  */
static int
proc_script (berth_env *env, const char *dir, const char *body, const void *in, size_t in_len, bool has_in, berth_buf *out, berth_error **reterr)
{
  _cleanup_free_ char *script = xasprintf ("d=%s\n"
                                           "r=${d%%/*}; r=${r%%/*}\n"
                                           "umask 077; [ -d \"$r\" ] || mkdir -p \"$r\" 2>/dev/null\n"
                                           "[ -d \"$r\" ] && [ ! -L \"$r\" ] && [ -O \"$r\" ] || { echo \"berth: $r is not this user's\" >&2; exit 4; }\n"
                                           ALIVE_FN "%s",
                                           dir, body);
  berth_buf err = { 0 };
  int status = -1;
  berth_script_io io = { .in = in, .in_len = in_len, .has_in = has_in, .out = out, .out_max = PROCESS_LIST_MAX, .err = &err, .err_max = 2048 };
  int r = berth_job_run_script_io (env, script, PROCESS_CALL_TIMEOUT_S, &io, &status, reterr);
  if (r >= 0 && status < 0)
    r = berth_error_set (reterr, BERTH_E_BACKEND, "%s: the transport could not tell how the process script ended", berth_env_backend (env));
  if (r < 0)
    {
      berth_buf_free (&err);
      return r;
    }
  if (status != 0 && err.len)
    berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "process", "script exited %d: %.*s", status, (int) err.len, err.data);
  berth_buf_free (&err);
  return status;
}

/* ---- the host-side records ---- */

static char *
record_path (const berth_env *env, const char *id)
{
  return xasprintf ("%s/processes/%s", env->state_dir, id ? id : "");
}

static void
record_write (berth_env *env, const char *id, const char *command)
{
  _cleanup_free_ char *dir = record_path (env, NULL), *path = record_path (env, id);
  _cleanup_free_ char *text = xasprintf ("%lld\t%s", (long long) time (NULL), command);
  if (berth_mkdir_parents (dir, 0700) < 0 || berth_write_file_atomic (path, text, strlen (text), 0600) < 0)
    berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "process", "cannot record process %s in %s", id, dir);
}

/* The record of ID: *RET_STARTED and *RET_COMMAND (malloc'd).  */
static bool
record_read (const berth_env *env, const char *id, int64_t *ret_started, char **ret_command)
{
  _cleanup_free_ char *path = record_path (env, id), *text = NULL;
  if (berth_read_file (path, 1 << 16, &text, NULL) < 0)
    return false;
  char *tab = strchr (text, '\t');
  if (ret_started)
    *ret_started = strtoll (text, NULL, 10);
  if (ret_command)
    *ret_command = xstrdup (tab ? tab + 1 : "");
  return true;
}

/* ---- tombstones: the processes of removed environments ---- */

#define TOMBSTONE_KEEP_S (7 * 24 * 3600)
#define TOMBSTONE_MAX 256 /* ids kept per environment name */

static char *
tombstone_path (berth_ctx *ctx, const char *name)
{
  return xasprintf ("%s/removed%s%s", ctx->state_dir, name ? "/" : "", name ? name : "");
}

void
berth_env_tombstone_processes (berth_env *env)
{
  if (env->name == NULL)
    return;
  _cleanup_free_ char *path = tombstone_path (env->ctx, env->name), *dir = tombstone_path (env->ctx, NULL);
  _cleanup_free_ char *old = NULL, *rdir = record_path (env, NULL);
  berth_buf b = { 0 };
  int64_t now = (int64_t) time (NULL);
  size_t n = 0;
  DIR *d = opendir (rdir);
  for (struct dirent *de; d && (de = readdir (d));)
    if (valid_id (de->d_name) && n < TOMBSTONE_MAX)
      {
        char line[64];
        int len = snprintf (line, sizeof line, "%s\t%lld\n", de->d_name, (long long) now);
        berth_buf_append (&b, line, (size_t) len);
        n++;
      }
  if (d)
    closedir (d);
  if (n == 0)
    return;
  /* the earlier ones, newest first, while young enough and room is left */
  if (berth_read_file (path, 1 << 16, &old, NULL) == 0)
    {
      char *save = NULL;
      for (char *line = strtok_r (old, "\n", &save); line && n < TOMBSTONE_MAX; line = strtok_r (NULL, "\n", &save))
        {
          char *tab = strchr (line, '\t');
          if (tab == NULL || now - strtoll (tab + 1, NULL, 10) > TOMBSTONE_KEEP_S)
            continue;
          *tab = '\0';
          if (!valid_id (line))
            continue;
          *tab = '\t';
          berth_buf_append (&b, line, strlen (line));
          berth_buf_append (&b, "\n", 1);
          n++;
        }
    }
  if (berth_mkdir_parents (dir, 0700) < 0 || berth_write_file_atomic (path, b.data, b.len, 0600) < 0)
    berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "process", "cannot record the processes of %s as removed in %s", env->name, dir);
  berth_buf_free (&b);
}

/* ID was among the processes of an environment of this name removed
   (recently).  */
static bool
tombstoned (const berth_env *env, const char *id)
{
  if (env->name == NULL)
    return false;
  _cleanup_free_ char *path = tombstone_path (env->ctx, env->name), *text = NULL;
  if (berth_read_file (path, 1 << 16, &text, NULL) < 0)
    return false;
  size_t n = strlen (id);
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    if (strncmp (l, id, n) == 0 && l[n] == '\t')
      return (int64_t) time (NULL) - strtoll (l + n + 1, NULL, 10) <= TOMBSTONE_KEEP_S;
  return false;
}

void
berth_tombstones_prune (berth_ctx *ctx)
{
  _cleanup_free_ char *dir = tombstone_path (ctx, NULL);
  DIR *d = opendir (dir);
  time_t now = time (NULL);
  for (struct dirent *de; d && (de = readdir (d));)
    {
      struct stat st;
      if (de->d_name[0] == '.' || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISREG (st.st_mode) && now - st.st_mtime > TOMBSTONE_KEEP_S)
        unlinkat (dirfd (d), de->d_name, 0);
    }
  if (d)
    closedir (d);
}

static berth_process *
process_new (berth_env *env, const char *root, const char *id)
{
  berth_process *p = xcalloc (1, sizeof *p);
  p->n_ref = 1;
  p->env = berth_env_ref (env);
  snprintf (p->id, sizeof p->id, "%s", id);
  p->dir = xasprintf ("%s/%s", root, id); /* shell words: the id needs no quotes */
  p->follower = (berth_job){ .proc = { .fd = -1, .stdin_fd = -1 } };
  return p;
}

BERTH_EXPORT int
berth_env_start_process (berth_env *env, const berth_process_spec *spec, berth_process **ret, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  *ret = NULL;
  if (spec == NULL || spec->command == NULL)
    return berth_error_set (reterr, EINVAL, "no command given");
  if (env->cleaned)
    return berth_error_set (reterr, ESTALE, "environment %s was cleaned up", env->id);
  if (berth_env_resume (env, reterr) < 0)
    return -BERTH_E_BACKEND;
  _cleanup_free_ char *root = proc_root (env, reterr);
  if (root == NULL)
    return -BERTH_E_BACKEND;
  char hex[13], token[33];
  if (berth_random_hex (hex, 6) < 0 || berth_random_hex (token, 16) < 0)
    return berth_error_errno (reterr, EIO, "no randomness");
  _cleanup_free_ char *id = xasprintf ("p%s", hex);
  berth_transport_call call;
  int r = berth_transport_prepare (env, &call, reterr);
  if (r < 0)
    return r;
  uint32_t flags = call.flags;
  berth_transport_call_free (&call);
  _cleanup_free_ char *cwd = berth_env_resolve_cwd (env, spec->cwd);
  berth_script_spec ss = {
    .command = spec->command,
    .cwd = cwd,
    .cwd_strict = spec->cwd && *spec->cwd,
    .snapshot = env->snapshot,
    .job = token,
    .exports = (flags & BERTH_PREFIX_PASSES_ENV) ? NULL : (const char *const *) env->passthrough,
  };
  _cleanup_free_ char *wrapper = berth_script_build (&ss);
  _cleanup_free_ char *qcmd = berth_shell_quote (spec->command);
  bool pty = spec->size >= offsetof (berth_process_spec, pty) + sizeof spec->pty && spec->pty;
  if (wrapper == NULL || qcmd == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* Everything the detached parts hold is redirected: the start script's
     streams end with it.  Each part is a session of its own, so neither
     the end of the transport's session (ssh) nor its process group takes
     it along.  */
  _cleanup_free_ char *body = xasprintf ("%s"
                                         "umask 077\n"
                                         "mkdir -p \"$d\" || exit 2\n"
                                         "cat > \"$d/run.sh\" || exit 2\n"
                                         "printf '%%s' %s > \"$d/cmd\"\n"
                                         "printf '%%s\\n' %s > \"$d/token\"\n"
                                         "printf '%%(%%s)T\\n' -1 > \"$d/started\"\n"
                                         ": > \"$d/out\"; : > \"$d/state\"\n"
                                         "%s"
                                         "setsid bash -c '${3:+\"$3\" --pty-run --} bash \"$1/run.sh\" <\"$2\" >\"$1/out\" 2>\"$1/state\"; echo $? >\"$1/exit.tmp\"; mv \"$1/exit.tmp\" \"$1/exit\"; [ -f \"$1/holder\" ] && kill \"$(cat \"$1/holder\")\" 2>/dev/null' "
                                         "berth-process \"$d\" %s \"$pty\" </dev/null >/dev/null 2>&1 &\n"
                                         "echo $! > \"$d/pid\"\n"
                                         "echo $!\n",
                                         pty ? PTY_FIND_AGENT : "pty=\n", qcmd, token,
                                         spec->has_stdin ? "mkfifo \"$d/in\" || exit 2\n"
                                                           "setsid sleep 2147483647 >\"$d/in\" </dev/null 2>/dev/null &\n"
                                                           "echo $! > \"$d/holder\"\n"
                                                         : "",
                                         spec->has_stdin ? "\"$d/in\"" : "/dev/null");
  _cleanup_free_ char *dir = xasprintf ("%s/%s", root, id);
  berth_buf out = { 0 };
  r = proc_script (env, dir, body, wrapper, strlen (wrapper), true, &out, reterr);
  long pid = out.data ? strtol (out.data, NULL, 10) : 0;
  berth_buf_free (&out);
  if (r < 0)
    return r;
  if (pty && r == PTY_NO_AGENT)
    return berth_error_set (reterr, ENOTSUP, "%s: a process on a pty needs berth-agent in the environment, and commands run here without it (BERTH_DEBUG=agent says why)",
                            berth_env_backend (env));
  if (r != 0 || pid <= 0)
    return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the process could not be started in the environment (exit %d)", berth_env_backend (env), r);
  record_write (env, id, spec->command);
  berth_process *p = process_new (env, root, id);
  p->token = xstrdup (token);
  p->pid = pid;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "process", "started %s (pid %ld there) in %s", p->id, pid, env->id);
  *ret = p;
  return 0;
}

BERTH_EXPORT int
berth_env_attach_process (berth_env *env, const char *id, berth_process **ret, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  *ret = NULL;
  if (!valid_id (id))
    return berth_error_set (reterr, ENOENT, "no process %.32s in environment %s", id ? id : "(null)", env->name ? env->name : env->id);
  if (env->cleaned)
    return berth_error_set (reterr, ESTALE, "environment %s was cleaned up: its processes are lost", env->id);
  if (berth_env_resume (env, reterr) < 0)
    return -BERTH_E_BACKEND;
  _cleanup_free_ char *root = proc_root (env, reterr);
  if (root == NULL)
    return -BERTH_E_BACKEND;
  berth_process *p = process_new (env, root, id);
  berth_buf out = { 0 };
  int r = proc_script (env, p->dir, "[ -d \"$d\" ] || exit 3\ncat \"$d/token\" \"$d/pid\"\n", NULL, 0, false, &out, reterr);
  if (r == 0 && out.data)
    {
      char *nl = strchr (out.data, '\n');
      if (nl)
        {
          *nl = '\0';
          p->token = xstrdup (out.data);
          p->pid = strtol (nl + 1, NULL, 10);
        }
    }
  berth_buf_free (&out);
  bool removed = r == 3 && tombstoned (env, id);
  if (r == 3 && (removed || record_read (env, id, NULL, NULL)))
    {
      /* recorded here, gone there: its environment lost it (or it went
         with an environment of this name that was removed) */
      p->removed = removed;
      p->state = BERTH_PROCESS_LOST;
      p->exit_code = -1;
      p->termination = "lost";
      p->output_ended = true;
      *ret = p;
      return 0;
    }
  if (r < 0 || r != 0 || p->token == NULL || p->pid <= 0)
    {
      berth_process_unref (p);
      if (r < 0)
        return r;
      return berth_error_set (reterr, ENOENT, "no process %s in environment %s (it was never there, or the environment was removed since)", id,
                              env->name ? env->name : env->id);
    }
  *ret = p;
  return 0;
}

BERTH_EXPORT const char *
berth_process_id (const berth_process *p)
{
  return p->id;
}

BERTH_EXPORT berth_process *
berth_process_ref (berth_process *p)
{
  if (p)
    p->n_ref++;
  return p;
}

BERTH_EXPORT berth_process *
berth_process_unref (berth_process *p)
{
  if (p == NULL || --p->n_ref > 0)
    return NULL;
  if (p->following)
    berth_job_finish (&p->follower, BERTH_JOB_KILL);
  berth_buf_free (&p->pending);
  free (p->dir);
  free (p->token);
  berth_env_unref (p->env);
  free (p);
  return NULL;
}

/* ---- output ---- */

/* The follower: the output from the start (the last 1 MiB of it, with a
   marker when more was dropped), then as it comes, until the process
   ended and everything was sent.  */
static int
follow (berth_process *p, berth_error **reterr)
{
  if (p->following || p->output_ended)
    return 0;
  _cleanup_free_ char *script = xasprintf (
    "d=%s\n"
    "[ -d \"$d\" ] || exit 3\n"
    "off=-1; pid=; IFS= read -r pid <\"$d/pid\" 2>/dev/null\n"
    /* short naps first: a process just started prints within milliseconds */
    "w=0.005; nap () { sleep $w 2>/dev/null || sleep 1; case $w in 0.005) w=0.01 ;; 0.01) w=0.02 ;; 0.02) w=0.05 ;; *) w=0.1 ;; esac; }\n" ALIVE_FN
    "while :; do\n"
    "  done=0; [ -f \"$d/exit\" ] && done=1\n"
    "  [ $done = 0 ] && ! alive \"$pid\" && done=1\n"
    "  n=$(wc -c < \"$d/out\" 2>/dev/null) || n=$off\n"
    /* the first round: the replay starts at most 1 MiB before the end */
    "  if [ \"$off\" -lt 0 ]; then\n"
    "    off=0; if [ \"$n\" -gt %u ]; then off=$((n - %u)); printf '[berth: %%s earlier bytes of output dropped]\\n' \"$off\"; fi\n"
    "  fi\n"
    "  if [ \"$n\" -gt \"$off\" ]; then tail -c +$((off + 1)) \"$d/out\" | head -c $((n - off)); off=$n; fi\n"
    "  [ $done = 1 ] && exit 0\n"
    "  nap\n"
    "done\n",
    p->dir, PROCESS_REPLAY_MAX, PROCESS_REPLAY_MAX);
  const char *inner[] = { "bash", "-c", script, NULL };
  berth_transport_call call;
  int r = berth_transport_prepare (p->env, &call, reterr);
  if (r < 0)
    return r;
  r = berth_transport_start (p->env, &call, inner, BERTH_START_SHELL_SCRIPT, false, -1, 0, &p->follower, reterr);
  berth_transport_call_free (&call);
  if (r < 0)
    return r;
  p->following = true;
  return 0;
}

BERTH_EXPORT int
berth_process_fd (berth_process *p, berth_error **reterr)
{
  int r = berth_scope_check (p->env, reterr);
  if (r < 0)
    return r;
  r = follow (p, reterr);
  if (r < 0)
    return r;
  return p->following ? p->follower.proc.fd : -1;
}

static void
keep_output (void *userdata, int stream, const char *data, size_t len)
{
  berth_process *p = userdata;
  if (stream == BERTH_STREAM_OUT)
    berth_buf_append (&p->pending, data, len);
}

BERTH_EXPORT ssize_t
berth_process_read (berth_process *p, void *buf, size_t len, int *ret_stream, berth_error **reterr)
{
  if (ret_stream)
    *ret_stream = BERTH_PROCESS_OUTPUT;
  int r = berth_scope_check (p->env, reterr);
  if (r < 0)
    return r;
  r = follow (p, reterr);
  if (r < 0)
    return r;
  if (p->pending.len == 0 && p->following)
    {
      r = berth_job_pump (&p->follower, 0, -1, NULL, keep_output, p);
      if (r < 0)
        return berth_error_errno (reterr, -r, "%s: lost the output of process %s", berth_env_backend (p->env), p->id);
      if (r == 0)
        {
          berth_job_finish (&p->follower, BERTH_JOB_WAIT);
          p->following = false;
          p->output_ended = true;
        }
    }
  if (p->pending.len == 0)
    return p->output_ended ? 0 : -EAGAIN;
  size_t n = p->pending.len < len ? p->pending.len : len;
  memcpy (buf, p->pending.data, n);
  memmove (p->pending.data, p->pending.data + n, p->pending.len - n);
  p->pending.len -= n;
  return (ssize_t) n;
}

BERTH_EXPORT int
berth_process_output (berth_process *p, void **ret, size_t *ret_len, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (p->env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  berth_buf out = { 0 };
  *ret = NULL;
  *ret_len = 0;
  if (p->state == BERTH_PROCESS_LOST && p->removed)
    return berth_error_set (reterr, ENOENT, "process %s was lost: environment %s was removed", p->id, p->env->name ? p->env->name : p->env->id);
  if (p->state == BERTH_PROCESS_LOST)
    return berth_error_set (reterr, ENOENT, "process %s is lost: its environment no longer has it (restarted, recreated or removed), nor its output",
                            p->id);
  _cleanup_free_ char *body = xasprintf ("[ -d \"$d\" ] || exit 3\n"
                                         "n=$(wc -c < \"$d/out\")\n"
                                         "if [ \"$n\" -gt %u ]; then printf '[berth: %%s earlier bytes of output dropped]\\n' $((n - %u)); "
                                         "tail -c %u \"$d/out\"; else cat \"$d/out\"; fi\n",
                                         PROCESS_REPLAY_MAX, PROCESS_REPLAY_MAX, PROCESS_REPLAY_MAX);
  int r = proc_script (p->env, p->dir, body, NULL, 0, false, &out, reterr);
  if (r < 0 || r != 0)
    {
      berth_buf_free (&out);
      return r < 0 ? r : berth_error_set (reterr, ENOENT, "process %s: its output is gone (the environment was removed or recreated)", p->id);
    }
  *ret_len = out.len;
  *ret = out.data ? berth_buf_steal (&out) : xstrdup ("");
  return 0;
}

/* ---- stdin ---- */

BERTH_EXPORT int
berth_process_write (berth_process *p, const void *data, size_t len, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (p->env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  if (p->stdin_closed)
    return berth_error_set (reterr, EPIPE, "process %s: its stdin is closed", p->id);
  int r = proc_script (p->env, p->dir, "[ -p \"$d/in\" ] || exit 3\nexec cat >> \"$d/in\"\n", data, len, true, NULL, reterr);
  if (r < 0)
    return r;
  if (r == 3)
    return berth_error_set (reterr, EPIPE, "process %s was started without stdin (or is gone)", p->id);
  return r == 0 ? 0 : berth_error_set (reterr, EPIPE, "process %s: its stdin cannot be written (it ended?)", p->id);
}

BERTH_EXPORT int
berth_process_close_stdin (berth_process *p, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (p->env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  if (p->stdin_closed)
    return 0;
  int r = proc_script (p->env, p->dir, "[ -f \"$d/holder\" ] && kill \"$(cat \"$d/holder\")\" 2>/dev/null; rm -f \"$d/holder\"\n", NULL, 0, false, NULL, reterr);
  if (r < 0)
    return r;
  p->stdin_closed = true;
  return 0;
}

/* ---- state ---- */

BERTH_EXPORT int
berth_process_poll (berth_process *p, int *ret_exit_code, const char **ret_termination, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (p->env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  if (p->state == 0 && p->env->cleaned)
    {
      p->state = BERTH_PROCESS_LOST;
      p->termination = "lost";
    }
  if (p->state == 0)
    {
      berth_buf out = { 0 };
      int r = proc_script (p->env, p->dir,
                           "[ -d \"$d\" ] || { echo gone; exit 0; }\n"
                           "[ -f \"$d/stopped\" ] && { echo stopped; exit 0; }\n"
                           "[ -f \"$d/exit\" ] && { echo \"exit $(cat \"$d/exit\")\"; exit 0; }\n"
                           "alive \"$(cat \"$d/pid\")\" && { echo running; exit 0; }\n"
                           "[ -f \"$d/exit\" ] && { echo \"exit $(cat \"$d/exit\")\"; exit 0; }\n"
                           "echo gone\n",
                           NULL, 0, false, &out, reterr);
      if (r < 0)
        {
          berth_buf_free (&out);
          return r;
        }
      const char *s = out.data ? out.data : "";
      int ec;
      if (strncmp (s, "running", 7) == 0)
        {
          berth_buf_free (&out);
          if (ret_exit_code)
            *ret_exit_code = -1;
          if (ret_termination)
            *ret_termination = NULL;
          return BERTH_PROCESS_RUNNING;
        }
      if (sscanf (s, "exit %d", &ec) == 1)
        {
          p->state = BERTH_PROCESS_EXITED;
          p->exit_code = ec;
          /* the shell's 128+N: it died of signal N (an exit of its own
             above 128 reads the same; the agent tells them apart) */
          p->termination = ec > 128 && ec < 128 + 65 ? "signaled" : "exited";
        }
      else if (strncmp (s, "stopped", 7) == 0)
        {
          p->state = BERTH_PROCESS_EXITED;
          p->exit_code = 128 + 9;
          p->termination = "stopped";
        }
      else
        {
          p->state = BERTH_PROCESS_LOST;
          p->exit_code = -1;
          p->termination = "lost";
        }
      berth_buf_free (&out);
    }
  if (ret_exit_code)
    *ret_exit_code = p->state == BERTH_PROCESS_EXITED ? p->exit_code : -1;
  if (ret_termination)
    *ret_termination = p->termination;
  return p->state;
}

BERTH_EXPORT int
berth_process_stop (berth_process *p, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (p->env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  BERTH_LOG_SCOPE (p->env->ctx, berth_env_backend (p->env));
  if (berth_process_poll (p, NULL, NULL, reterr) != BERTH_PROCESS_RUNNING)
    return 0;
  int r = berth_transport_kill (p->env, p->token, p->pid, PROCESS_KILL_TIMEOUT_S, NULL, reterr);
  if (r < 0)
    return r;
  /* Recorded for the other berth processes: stopped, not lost.  */
  proc_script (p->env, p->dir, "[ -d \"$d\" ] && : > \"$d/stopped\"; [ -f \"$d/holder\" ] && kill \"$(cat \"$d/holder\")\" 2>/dev/null\n", NULL, 0, false,
               NULL, NULL);
  p->state = BERTH_PROCESS_EXITED;
  p->exit_code = 128 + 9;
  p->termination = "stopped";
  return 0;
}

BERTH_EXPORT int
berth_env_list_processes (berth_env *env, berth_process_list_fn fn, void *userdata, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if (env->cleaned)
    return 0;
  if (berth_env_resume (env, reterr) < 0)
    return -BERTH_E_BACKEND;
  _cleanup_free_ char *root = proc_root (env, reterr);
  if (root == NULL)
    return -BERTH_E_BACKEND;
  berth_buf out = { 0 };
  /* one record per process: id, start time, state, the command's first line */
  _cleanup_free_ char *any = xasprintf ("%s/-", root);
  int r = proc_script (env, any,
                       "d=${d%/*}\n"
                       "[ -d \"$d\" ] || exit 0\n"
                       "for p in \"$d\"/p*; do [ -f \"$p/pid\" ] || continue\n"
                       "  s=running\n"
                       "  if [ -f \"$p/stopped\" ]; then s=stopped; elif [ -f \"$p/exit\" ]; then s=\"exit:$(cat \"$p/exit\")\";\n"
                       "  elif ! alive \"$(cat \"$p/pid\")\"; then s=gone; [ -f \"$p/exit\" ] && s=\"exit:$(cat \"$p/exit\")\"; fi\n"
                       "  printf '%s\\t%s\\t%s\\t' \"${p##*/}\" \"$(cat \"$p/started\" 2>/dev/null || echo 0)\" \"$s\"; head -n 1 \"$p/cmd\"; echo\n"
                       "done\n",
                       NULL, 0, false, &out, reterr);
  if (r < 0)
    {
      berth_buf_free (&out);
      return r;
    }
  _cleanup_strv_free_ char **seen = NULL;
  char *save = NULL;
  for (char *line = out.data ? strtok_r (out.data, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      char *f[4] = { line, NULL, NULL, NULL };
      for (int i = 1; i < 4 && f[i - 1]; i++)
        if ((f[i] = strchr (f[i - 1], '\t')))
          *f[i]++ = '\0';
      if (f[3] == NULL || !valid_id (f[0]))
        continue;
      int state = strcmp (f[2], "running") == 0 ? BERTH_PROCESS_RUNNING : strcmp (f[2], "gone") == 0 ? BERTH_PROCESS_LOST : BERTH_PROCESS_EXITED;
      int ec = strncmp (f[2], "exit:", 5) == 0 ? atoi (f[2] + 5) : state == BERTH_PROCESS_EXITED ? 128 + 9 : -1;
      const char *how = state == BERTH_PROCESS_RUNNING ? NULL
                        : state == BERTH_PROCESS_LOST  ? "lost"
                        : strcmp (f[2], "stopped") == 0 ? "stopped"
                        : ec > 128 && ec < 128 + 65     ? "signaled"
                                                        : "exited";
      fn (userdata, f[0], f[3], strtoll (f[1], NULL, 10), state, ec, how);
      berth_strv_push (&seen, f[0]);
    }
  berth_buf_free (&out);
  /* recorded here, no longer there: lost */
  _cleanup_free_ char *rdir = record_path (env, NULL);
  DIR *d = opendir (rdir);
  for (struct dirent *de; d && (de = readdir (d));)
    {
      int64_t started = 0;
      _cleanup_free_ char *command = NULL;
      bool known = false;
      for (size_t i = 0; seen && seen[i]; i++)
        known = known || strcmp (seen[i], de->d_name) == 0;
      if (!known && valid_id (de->d_name) && record_read (env, de->d_name, &started, &command))
        fn (userdata, de->d_name, command, started, BERTH_PROCESS_LOST, -1, "lost");
    }
  if (d)
    closedir (d);
  return 0;
}

/* ---- at removal ---- */

bool
berth_env_has_process_records (const berth_env *env)
{
  _cleanup_free_ char *rdir = record_path (env, NULL);
  DIR *d = opendir (rdir);
  bool any = false;
  for (struct dirent *de; d && !any && (de = readdir (d));)
    any = valid_id (de->d_name);
  if (d)
    closedir (d);
  return any;
}

int
berth_env_stop_processes (berth_env *env, berth_error **reterr)
{
  _cleanup_free_ char *root = proc_root (env, reterr);
  if (root == NULL)
    return -BERTH_E_BACKEND;
  _cleanup_free_ char *any = xasprintf ("%s/-", root);
  berth_buf out = { 0 };
  /* the running ones: "token pid" per line */
  int r = proc_script (env, any,
                       "d=${d%/*}\n"
                       "for p in \"$d\"/p*; do [ -f \"$p/pid\" ] && [ ! -f \"$p/exit\" ] && alive \"$(cat \"$p/pid\")\" || continue\n"
                       "  echo \"$(cat \"$p/token\") $(cat \"$p/pid\")\"; : > \"$p/stopped\"\n"
                       "  [ -f \"$p/holder\" ] && kill \"$(cat \"$p/holder\")\" 2>/dev/null\n"
                       "done\n"
                       "exit 0\n",
                       NULL, 0, false, &out, reterr);
  char *save = NULL;
  for (char *line = r == 0 && out.data ? strtok_r (out.data, "\n", &save) : NULL; line; line = strtok_r (NULL, "\n", &save))
    {
      char token[64];
      long pid = 0;
      if (sscanf (line, "%63s %ld", token, &pid) == 2 && berth_transport_kill (env, token, pid, PROCESS_KILL_TIMEOUT_S, NULL, reterr) < 0)
        r = -BERTH_E_BACKEND;
    }
  berth_buf_free (&out);
  return r < 0 ? r : 0;
}
