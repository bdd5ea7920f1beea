/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conformance.c: the hosted-scope conformance checks (DESIGN 3.3, the
   provider guide's "Conformance"), written once against the public API
   and run against any backend: tests/conformance/run.sh NAME.

   A backend that does not serve hosted scopes must be refused before
   anything is made -- the correct result for local, bwrap, ssh, most
   plugins -- and the other checks are then not applicable.  One that does
   must pass them all:
     identity    A's calls address A's sandbox; A's sessions share it; B's
                 is another
     handles     a handle of A used under B, or under no scope: refused
     host        no file operation touches the host: a planted host file
                 and a symlink to it are not what A reads; the audit
                 library (audit.c, LD_PRELOAD) sees no host open/stat of
                 them
     processes   a process A started is invisible to B
     spill       an oversized result stays in the sandbox
     idle        running work keeps a sandbox; an idle one is suspended
                 under its owner's scope and resumes with its workspace
   Prints TAP.  */
#include <berth/berth.h>

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int n_test, n_failed;

/* Set while file operations run: audit.c (LD_PRELOAD) records what they
   open or stat on the host.  Absent without the library.  */
extern int berth_audit_active __attribute__ ((weak));
static void
audit (int on)
{
  if (&berth_audit_active)
    berth_audit_active = on;
}

static void
ok (bool cond, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  printf ("%sok %d - ", cond ? "" : "not ", ++n_test);
  vprintf (fmt, ap);
  putchar ('\n');
  va_end (ap);
  if (!cond)
    n_failed++;
  fflush (stdout);
}

static const char *backend, *image;
static berth_ctx *ctx;

static void
scope (const char *tenant, const char *agent)
{
  if (berth_ctx_set_scope (ctx, tenant, agent, NULL) < 0)
    {
      printf ("Bail out! cannot bind scope %s/%s\n", tenant, agent);
      exit (1);
    }
}

static berth_env *
open_env (const char *name, berth_error **err)
{
  berth_env_spec es = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  es.backend = backend;
  es.name = name;
  es.image = image;
  return berth_env_open (ctx, &es, &env, err) < 0 ? NULL : env;
}

/* Run COMMAND; its output (malloc'd) or NULL, *RET_CODE its error code
   (0 when it ran).  */
static char *
run (berth_env *env, const char *command, int *ret_code, berth_result **ret_result, size_t max)
{
  berth_exec_spec xs = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  xs.command = command;
  xs.max_bytes = max;
  *ret_code = 0;
  if (berth_env_execute (env, &xs, &res, &err) < 0)
    {
      *ret_code = berth_error_code (err);
      berth_error_free (err);
      return NULL;
    }
  char *out = strdup (berth_result_output (res, NULL));
  if (ret_result)
    *ret_result = res;
  else
    berth_result_free (res);
  return out;
}

/* How many environments the state directory records (berth's
   $XDG_STATE_HOME/berth/envs).  */
static void
envs_dir (char *dir, size_t size)
{
  const char *st = getenv ("XDG_STATE_HOME");
  if (st && *st)
    snprintf (dir, size, "%s/berth/envs", st);
  else
    snprintf (dir, size, "%s/.local/state/berth/envs", getenv ("HOME") ? getenv ("HOME") : "/");
}

static int
count_state_dirs (void)
{
  char dir[4096];
  envs_dir (dir, sizeof dir);
  DIR *d = opendir (dir);
  int n = 0;
  for (struct dirent *de; d && (de = readdir (d));)
    n += de->d_name[0] != '.';
  if (d)
    closedir (d);
  return n;
}

static void
count_one (void *userdata, const char *id, const char *command, int64_t started, int state, int exit_code, const char *how)
{
  (void) id, (void) command, (void) started, (void) state, (void) exit_code, (void) how;
  (*(int *) userdata)++;
}

/* the reaper's report: was A's sandbox (WANT[0]) suspended?  */
static void
reap_seen (void *userdata, const char *name, const char *action, const char *why)
{
  (void) why;
  const char **want = userdata;
  if (strcmp (name, want[0]) == 0 && strcmp (action, "suspended") == 0)
    want[1] = "suspended";
}

static void
info_suspended (void *userdata, const berth_env_info *info)
{
  const char **want = userdata;
  if (strcmp (info->name, want[0]) == 0 && info->suspended)
    want[2] = "recorded";
}

static void
gc_seen (void *userdata, const char *env, const char *be, const char *reason, const char *detail)
{
  (void) be, (void) detail;
  const char **want = userdata;
  if (strcmp (env, want[0]) == 0 && strcmp (reason, "orphaned_command") == 0)
    want[1] = "seen";
}

static bool
host_exists (const char *path)
{
  struct stat st;
  return lstat (path, &st) == 0;
}

int
main (int argc, char **argv)
{
  berth_error *err = NULL;
  if (argc < 2)
    {
      fprintf (stderr, "usage: conformance BACKEND [IMAGE]\n");
      return 2;
    }
  backend = argv[1];
  image = argc > 2 && argv[2][0] ? argv[2] : NULL;
  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0)
    {
      printf ("Bail out! %s\n", berth_error_message (err));
      return 1;
    }
  char tag[32], planted[128], link[128];
  snprintf (tag, sizeof tag, "%d", (int) getpid ());
  /* The host file no file operation may touch (audit.c watches it).  */
  snprintf (planted, sizeof planted, "/tmp/berth-conformance-planted-%s", tag);
  snprintf (link, sizeof link, "/tmp/berth-conformance-link-%s", tag);
  FILE *f = fopen (planted, "we");
  if (f == NULL || fputs ("HOST-SECRET\n", f) < 0 || fclose (f) != 0 || symlink (planted, link) < 0)
    {
      printf ("Bail out! cannot plant %s\n", planted);
      return 1;
    }

  /* ---- admission ---- */
  scope ("acme", "agent-a");
  int n_before = count_state_dirs ();
  berth_env *a = open_env (NULL, &err);
  if (a == NULL)
    {
      bool refused = berth_error_code (err) == BERTH_E_HOSTED;
      ok (refused, "%s: refused under a hosted scope, before anything is made (BERTH_E_HOSTED): %s", backend, berth_error_message (err));
      berth_error_free (err);
      err = NULL;
      int n_after = count_state_dirs ();
      ok (n_after == n_before, "%s: … and nothing was made for it (%d state directories before, %d after)", backend, n_before, n_after);
      scope (NULL, NULL);
      ok (!host_exists ("/nonexistent") , "%s: the other checks apply to backends that serve hosted scopes only", backend);
      unlink (planted);
      unlink (link);
      printf ("1..%d\n", n_test);
      berth_ctx_unref (ctx);
      return n_failed ? 1 : 0;
    }
  ok (true, "%s: admitted under a hosted scope", backend);
  const char *a_name = berth_env_name (a);
  ok (a_name && strncmp (a_name, "h-", 2) == 0, "identity: the sandbox is named by the scope, not the caller (%s)", a_name ? a_name : "(null)");
  ok (strcmp (berth_env_tenant (a), "acme") == 0 && strcmp (berth_env_agent (a), "agent-a") == 0, "identity: it records its tenant and agent");

  /* ---- identity ---- */
  int code;
  char *out = run (a, "echo a-was-here > a-file; cat a-file", &code, NULL, 0);
  ok (out && strcmp (out, "a-was-here\n") == 0, "identity: A runs in its sandbox");
  free (out);
  berth_env *a2 = open_env ("another-name", NULL);
  out = a2 ? run (a2, "cat a-file", &code, NULL, 0) : NULL;
  ok (out && strcmp (out, "a-was-here\n") == 0, "identity: A's sessions share one sandbox, whatever name they ask for");
  free (out);
  berth_env_unref (a2);
  scope ("acme", "agent-b");
  berth_env *b = open_env (a_name, NULL);
  ok (b && strcmp (berth_env_name (b), a_name) != 0, "identity: B asking for A's name gets its own sandbox");
  out = b ? run (b, "cat a-file 2>&1 || echo absent", &code, NULL, 0) : NULL;
  ok (out && strstr (out, "absent"), "identity: B does not see A's files");
  free (out);
  scope ("other-tenant", "agent-a");
  berth_env *c = open_env (NULL, NULL);
  ok (c && strcmp (berth_env_name (c), a_name) != 0, "identity: the same agent name in another tenant is another sandbox");
  berth_env_unref (c);

  /* ---- handles ---- */
  scope ("acme", "agent-b");
  out = run (a, "true", &code, NULL, 0);
  ok (out == NULL && code == BERTH_E_SCOPE, "handles: A's handle used under B is refused (BERTH_E_SCOPE)");
  free (out);
  void *data = NULL;
  size_t len = 0;
  ok (berth_env_read_file (a, "a-file", 0, &data, &len, &err) == -BERTH_E_SCOPE, "handles: … its files too");
  err = berth_error_free (err);
  scope (NULL, NULL);
  out = run (a, "true", &code, NULL, 0);
  ok (out == NULL && code == BERTH_E_SCOPE, "handles: … and under no scope");
  free (out);

  /* ---- host ---- */
  scope ("acme", "agent-a");
  audit (1);
  int r = berth_env_read_file (a, planted, 0, &data, &len, &err);
  ok (r < 0 || (data && strstr (data, "HOST-SECRET") == NULL), "host: a planted host file is not what the sandbox reads (%s)", r < 0 ? berth_error_message (err) : "read");
  free (data);
  data = NULL;
  err = berth_error_free (err);
  r = berth_env_read_file (a, link, 0, &data, &len, &err);
  ok (r < 0 || (data && strstr (data, "HOST-SECRET") == NULL), "host: nor a symlink to it");
  free (data);
  data = NULL;
  err = berth_error_free (err);
  char *rp = NULL;
  r = berth_env_realpath (a, link, &rp, &err);
  ok (r < 0 || strcmp (rp, planted) != 0, "host: realpath does not resolve the host's link");
  free (rp);
  err = berth_error_free (err);
  r = berth_env_write_file (a, planted, "X", 1, 0600, &err);
  audit (0);
  f = fopen (planted, "re");
  char line[64] = "";
  if (f)
    {
      if (fgets (line, sizeof line, f) == NULL)
        line[0] = '\0';
      fclose (f);
    }
  ok (strcmp (line, "HOST-SECRET\n") == 0, "host: a write to the planted path leaves the host file alone");
  err = berth_error_free (err);
  const char *log = getenv ("BERTH_AUDIT_LOG");
  if (&berth_audit_active && log)
    {
      struct stat st;
      bool clean = stat (log, &st) < 0; /* nothing recorded */
      audit (1);
      stat (planted, &st); /* the control: the audit sees a host stat */
      audit (0);
      bool seen = stat (log, &st) == 0 && st.st_size > 0;
      ok (clean && seen, "host: the audit library saw no host open/stat/readlink of the planted paths (and sees its control)");
    }
  else
    ok (false, "host: run through run.sh: the audit library (LD_PRELOAD) is not loaded");
  char *tmp = NULL;
  r = berth_env_temp_dir (a, &tmp, NULL);
  ok (r == 0 && tmp && tmp[0] == '/', "host: the temp dir is the sandbox's (%s)", tmp ? tmp : "?");
  free (tmp);

  /* ---- processes ---- */
  berth_process_spec ps = BERTH_PROCESS_SPEC_INIT;
  berth_process *pa = NULL;
  ps.command = "sleep 30";
  r = berth_env_start_process (a, &ps, &pa, &err);
  ok (r == 0, "processes: A starts one");
  err = berth_error_free (err);
  char pid[32] = "";
  if (pa)
    snprintf (pid, sizeof pid, "%s", berth_process_id (pa));
  scope ("acme", "agent-b");
  berth_process *pb = NULL;
  r = b ? berth_env_attach_process (b, pid, &pb, &err) : -1;
  ok (r == -ENOENT, "processes: B attaching A's process id finds nothing, as for a missing one");
  err = berth_error_free (err);
  ok (pa && berth_process_poll (pa, NULL, NULL, &err) == -BERTH_E_SCOPE, "processes: A's process handle is refused to B");
  err = berth_error_free (err);
  /* whatever the handle cached: an ended process (its final state known),
     its stdin closed */
  scope ("acme", "agent-a");
  berth_process *done = NULL;
  ps.command = "true";
  ps.has_stdin = true;
  r = berth_env_start_process (a, &ps, &done, NULL);
  ps.has_stdin = false;
  for (int i = 0; done && i < 200 && berth_process_poll (done, NULL, NULL, NULL) == BERTH_PROCESS_RUNNING; i++)
    usleep (50000);
  ok (done && berth_process_poll (done, NULL, NULL, NULL) == BERTH_PROCESS_EXITED && berth_process_close_stdin (done, NULL) == 0,
      "processes: A's short process ended, its stdin closed");
  const char *other[2][2] = { { "acme", "agent-b" }, { NULL, NULL } };
  for (int i = 0; i < 2; i++)
    {
      const char *under = other[i][0] ? "under B" : "under no scope";
      scope (other[i][0], other[i][1]);
      int nl = 0;
      ok (done && berth_process_poll (done, NULL, NULL, NULL) == -BERTH_E_SCOPE, "handles: poll of A's ended process %s: BERTH_E_SCOPE", under);
      ok (done && berth_process_stop (done, NULL) == -BERTH_E_SCOPE, "handles: … stop %s", under);
      ok (done && berth_process_write (done, "x", 1, NULL) == -BERTH_E_SCOPE, "handles: … write %s", under);
      ok (done && berth_process_close_stdin (done, NULL) == -BERTH_E_SCOPE, "handles: … close_stdin %s", under);
      ok (berth_env_list_processes (a, count_one, &nl, NULL) == -BERTH_E_SCOPE && nl == 0, "handles: … list_processes %s", under);
      ok (berth_env_stop_idle (a, NULL) == -BERTH_E_SCOPE, "handles: … stop_idle %s", under);
    }
  berth_process_unref (done);
  scope ("acme", "agent-b");

  /* ---- idle ---- */
  scope (NULL, NULL);
  int n = berth_reap_idle (ctx, 0, NULL, NULL, &err);
  err = berth_error_free (err);
  scope ("acme", "agent-a");
  ok (pa && berth_process_poll (pa, NULL, NULL, NULL) == BERTH_PROCESS_RUNNING, "idle: running work keeps the sandbox alive (the reaper suspended %d others)", n);
  if (pa)
    berth_process_stop (pa, NULL);
  berth_process_unref (pa);
  scope (NULL, NULL);
  const char *reaped[3] = { a_name, NULL, NULL };
  n = berth_reap_idle (ctx, 0, reap_seen, reaped, &err);
  err = berth_error_free (err);
  berth_env_list_info (ctx, info_suspended, reaped, NULL);
  ok (n >= 1 && reaped[1] && reaped[2], "idle: with its work done the reaper suspends A's sandbox, under its owner's scope (%d suspended; A's %s, %s)", n,
      reaped[1] ? "reported suspended" : "not reported", reaped[2] ? "recorded suspended" : "not recorded suspended");
  scope ("acme", "agent-a");
  berth_result *res = NULL;
  out = run (a, "cat a-file", &code, &res, 0);
  ok (out && strcmp (out, "a-was-here\n") == 0 && !berth_result_environment_recreated (res),
      "idle: the next call resumes it with its workspace, not recreated (error %d%s)", code,
      res && berth_result_environment_recreated (res) ? ", recreated" : "");
  free (out);
  berth_result_free (res);

  /* ---- secrets: host variables stay on the host, but for the allow-listed ---- */
  {
    char yaml[128];
    snprintf (yaml, sizeof yaml, "/tmp/berth-conformance-pt-%s.yaml", tag);
    FILE *yf = fopen (yaml, "we");
    if (yf)
      {
        fputs ("terminal:\n  env_passthrough: [BERTH_CONF_ALLOWED]\n", yf);
        fclose (yf);
      }
    setenv ("BERTH_CONF_API_KEY", "s3cret", 1);
    setenv ("BERTH_CONF_ALLOWED", "allowed-value", 1);
    berth_ctx *pt = NULL;
    berth_env *e = NULL;
    if (berth_ctx_new (&pt, NULL) == 0 && berth_ctx_load_config (pt, yaml, NULL) == 0 && berth_ctx_set_scope (pt, "acme", "agent-a", NULL) == 0)
      {
        berth_env_spec es = BERTH_ENV_SPEC_INIT;
        es.backend = backend;
        es.image = image;
        berth_env_open (pt, &es, &e, NULL);
      }
    out = e ? run (e, "echo \"${BERTH_CONF_API_KEY:-unset} ${BERTH_CONF_ALLOWED:-unset}\"; env | grep -c s3cret", &code, NULL, 0) : NULL;
    ok (out && strncmp (out, "unset ", 6) == 0 && strstr (out, "\n0\n"), "secrets: a host variable (BERTH_CONF_API_KEY) is not visible in the sandbox (%s)",
        out ? out : "not opened");
    ok (out && strstr (out, " allowed-value\n"), "secrets: … an allow-listed one (terminal.env_passthrough) is");
    free (out);
    berth_env_unref (e);
    berth_ctx_unref (pt);
    unsetenv ("BERTH_CONF_API_KEY");
    unsetenv ("BERTH_CONF_ALLOWED");
    unlink (yaml);
  }

  /* ---- gc: a command of A's whose berth was killed ---- */
  {
    /* the record a killed berth leaves: a pid that no longer runs */
    char ed[4096], rec[4200];
    envs_dir (ed, sizeof ed);
    snprintf (rec, sizeof rec, "%s/%s/running", ed, a_name);
    FILE *rf = fopen (rec, "we");
    if (rf)
      {
        fputs ("pid=999999999\nstart=1\nbackend=docker\njob=00000000000000000000000000000000\n", rf);
        fclose (rf);
      }
    const char *want[2] = { a_name, NULL };
    scope (NULL, NULL);
    berth_gc_envs (ctx, false, gc_seen, want, &err);
    err = berth_error_free (err);
    ok (rf && want[1] && !host_exists (rec), "gc: an orphaned command of A's sandbox is handled under its owner's scope (the reaper has none)");
    unlink (rec);
    scope ("acme", "agent-a");
  }

  /* ---- spill ---- */
  res = NULL;
  struct stat lst;
  off_t log_before = log && stat (log, &lst) == 0 ? lst.st_size : 0;
  audit (1);
  out = run (a, "head -c 300000 /dev/zero | tr '\\0' x", &code, &res, 1000);
  audit (0);
  off_t log_after = log && stat (log, &lst) == 0 ? lst.st_size : 0;
  ok (&berth_audit_active && log && log_after == log_before, "spill: the oversized result never opens a host file (the audit saw %lld bytes of accesses)",
      (long long) (log_after - log_before));
  const char *full = res ? berth_result_full_output_path (res) : NULL;
  ok (res && berth_result_truncated (res) && full, "spill: an oversized result is truncated and kept (%s)", full ? full : "no path");
  ok (full && !host_exists (full), "spill: … not on the host");
  r = full ? berth_env_read_file (a, full, 0, &data, &len, &err) : -1;
  ok (r == 0 && len == 300000, "spill: … but in the sandbox, whole (%zu bytes)", len);
  free (data);
  err = berth_error_free (err);
  free (out);
  berth_result_free (res);

  /* ---- sessions: non-persistent sandboxes of a backend resumed by name ---- */
  berth_provider *bp = berth_ctx_find_provider (ctx, backend);
  if (bp && berth_provider_flag (bp, BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT))
    {
      char yaml[128];
      snprintf (yaml, sizeof yaml, "/tmp/berth-conformance-np-%s.yaml", tag);
      FILE *yf = fopen (yaml, "we");
      berth_ctx *np = NULL;
      berth_env *e1 = NULL, *e2 = NULL;
      if (yf)
        {
          fputs ("terminal:\n  container_persistent: false\n", yf);
          fclose (yf);
        }
      if (berth_ctx_new (&np, NULL) == 0 && berth_ctx_load_config (np, yaml, NULL) == 0 && berth_ctx_set_scope (np, "acme", "agent-a", NULL) == 0)
        {
          berth_env_spec es = BERTH_ENV_SPEC_INIT;
          es.backend = backend;
          es.image = image;
          berth_env_open (np, &es, &e1, NULL);
          berth_env_open (np, &es, &e2, NULL);
        }
      out = e1 ? run (e1, "echo one > session-file; cat session-file", &code, NULL, 0) : NULL;
      char *out2 = e2 ? run (e2, "cat session-file 2>/dev/null || echo absent; cat a-file 2>/dev/null || echo no-a-file", &code, NULL, 0) : NULL;
      ok (e1 && e2 && berth_env_name (e1) == NULL && berth_env_name (e2) == NULL && out && strcmp (out, "one\n") == 0 && out2
            && strcmp (out2, "absent\nno-a-file\n") == 0,
          "sessions: with container_persistent false two ephemeral runs of A never attach one sandbox (nor the persistent one) (%s)",
          out2 ? out2 : "not opened");
      free (out);
      free (out2);
      berth_env_unref (e1);
      berth_env_unref (e2);
      berth_ctx_unref (np);
      unlink (yaml);
    }

  /* clean up: each sandbox under its own scope */
  berth_env_unref (a);
  berth_env_unref (b);
  const char *tenants[3] = { "acme", "acme", "other-tenant" }, *agents[3] = { "agent-a", "agent-b", "agent-a" };
  for (int i = 0; i < 3; i++)
    {
      scope (tenants[i], agents[i]);
      berth_env_remove (ctx, NULL, NULL);
    }
  unlink (planted);
  unlink (link);
  printf ("1..%d\n", n_test);
  berth_ctx_unref (ctx);
  return n_failed ? 1 : 0;
}
