/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwrap.c: the bwrap backend -- commands run on this host inside a
 * persistent, fail-closed jail built natively by the berth-jail helper
 * (namespaces, mounts, capabilities, seccomp; no dependency on the bwrap
 * binary).  The name is the Python agent's.
 *
 * One jail per environment: create starts it (`berth-jail create`); every
 * execute asks the jail's init to fork the command (start.c: no process
 * per command on this side), and long-lived streams join it through
 * exec_prefix (`berth-jail exec --state DIR --`),
 * so /tmp, background processes and exported state persist between the
 * commands of an environment and two environments never see each other.
 * Throw-away jails die with the berth process that made them; named ones
 * keep running until `berth rm`, and are re-created (reported in the
 * result) if they died.  */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <berth/provider.h>
#include <berth/provider-util.h>
#include "bwrap-private.h"
#include "system-trees.h"

#define PROFILES "restricted, workspace or network"
#define WORKSPACE_FILE "bwrap-workspace"

static bool
valid_profile (const char *p)
{
  return strcmp (p, "restricted") == 0 || strcmp (p, "workspace") == 0 || strcmp (p, "network") == 0;
}

/* The default has no network: a jail that can reach the host's loopback
   services and abstract sockets (X11, D-Bus, dev servers, sshd) is not
   much of a jail.  */
#define DEFAULT_PROFILE "workspace"

static const char *
profile_of (const berth_config *cfg)
{
  return berth_config_string (cfg, "terminal.bwrap_profile", DEFAULT_PROFILE);
}

/* What a profile means, for doctor.  */
static const char *
profile_meaning (const char *p)
{
  if (strcmp (p, "restricted") == 0)
    return "read-only workspace, no network (only lo)";
  if (strcmp (p, "workspace") == 0)
    return "writable workspace, no network (only lo)";
  if (strcmp (p, "network") == 0)
    return "writable workspace, the host's network (loopback services and abstract sockets included)";
  return "unknown";
}

/* Refuse a writable host directory that is or lies in a system tree
   (system-trees.c).  WHAT names it in the message.  */
static int
check_writable (const char *path, const char *what, berth_error **reterr)
{
  char real[4096], home[4096];
  const char *h = getenv ("HOME"), *tree;
  const char *p = realpath (path, real) ? real : path;
  tree = jail_system_tree (p, h && realpath (h, home) ? home : NULL);
  if (tree == NULL)
    return 0;
  return berth_error_set (reterr, BERTH_E_ENV,
                          "bwrap: %s %s %s %s, which cannot be writable in the jail; run from a project directory "
                          "(berth exec -C DIR) or set terminal.bwrap_profile: restricted for a read-only view",
                          what, p, strcmp (tree, p) == 0 ? "is the system directory" : "lies in the system directory", tree);
}

/* A limit: a non-negative integer, 0 disables it.  */
static int
read_limit (const berth_config *cfg, const char *key, int64_t def, int64_t *ret, berth_error **reterr)
{
  const char *s = berth_config_string (cfg, key, NULL);
  char *end;
  long long v;
  if (s == NULL)
    {
      *ret = def;
      return 0;
    }
  errno = 0;
  v = strtoll (s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno != 0 || v < 0)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: '%s' is not a non-negative integer (0 disables the limit)", key, s);
  *ret = v;
  return 0;
}

static int
push (char ***argv, const char *s)
{
  return berth_strv_push (argv, s);
}

static int
push_int (char ***argv, int64_t v)
{
  char buf[32];
  snprintf (buf, sizeof buf, "%lld", (long long) v);
  return push (argv, buf);
}

static char *
expand_home (const char *p)
{
  const char *home = getenv ("HOME");
  char *r;
  if (p && p[0] == '~' && (p[1] == '\0' || p[1] == '/') && home)
    {
      if (asprintf (&r, "%s%s", home, p + 1) < 0)
        return NULL;
      return r;
    }
  return p ? strdup (p) : NULL;
}

/* terminal.bwrap_binds: a list of {src, dest, readonly} (dest defaults to
   src, readonly to true) or of "SRC[:DEST[:ro|rw]]" strings.  */
static int
add_binds (const berth_config *cfg, char ***argv, berth_error **reterr)
{
  const berth_config *node = berth_config_lookup (cfg, "terminal.bwrap_binds");
  size_t n;
  if (node == NULL)
    return 0;
  if (berth_config_kind (node) != BERTH_CONFIG_SEQUENCE)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: terminal.bwrap_binds must be a list of {src, dest, readonly}", berth_config_where (node));
  n = berth_config_count (node);
  for (size_t i = 0; i < n; i++)
    {
      const berth_config *item = berth_config_item (node, i);
      char *src = NULL, *dest = NULL;
      bool ro = true;
      int r;
      if (berth_config_kind (item) == BERTH_CONFIG_SCALAR)
        {
          char *spec = strdup (berth_config_scalar (item)), *c1, *c2 = NULL;
          if (spec == NULL)
            return berth_error_errno (reterr, ENOMEM, "out of memory");
          c1 = strchr (spec, ':');
          if (c1)
            {
              *c1++ = '\0';
              c2 = strchr (c1, ':');
              if (c2)
                *c2++ = '\0';
            }
          if (c2 && strcmp (c2, "rw") == 0)
            ro = false;
          else if (c2 && strcmp (c2, "ro") != 0)
            {
              free (spec);
              return berth_error_set (reterr, BERTH_E_CONFIG, "%s: bind mode must be ro or rw", berth_config_where (item));
            }
          src = expand_home (spec);
          dest = expand_home (c1 && *c1 ? c1 : spec);
          free (spec);
        }
      else if (berth_config_kind (item) == BERTH_CONFIG_MAPPING)
        {
          const char *s = berth_config_string (item, "src", NULL);
          const char *d = berth_config_string (item, "dest", NULL);
          if (s == NULL || *s == '\0')
            return berth_error_set (reterr, BERTH_E_CONFIG, "%s: a bind needs src", berth_config_where (item));
          ro = berth_config_bool (item, "readonly", true);
          src = expand_home (s);
          dest = expand_home (d && *d ? d : s);
        }
      else
        return berth_error_set (reterr, BERTH_E_CONFIG, "%s: a bind is {src, dest, readonly} or \"src:dest:ro\"", berth_config_where (item));
      if (src == NULL || dest == NULL)
        r = -ENOMEM;
      else if (src[0] != '/' || dest[0] != '/')
        {
          r = berth_error_set (reterr, BERTH_E_CONFIG, "%s: bind paths must be absolute (%s -> %s)", berth_config_where (item), src, dest);
          free (src);
          free (dest);
          return r;
        }
      else if (!ro && (r = check_writable (src, "the writable bind source", reterr)) < 0)
        {
          free (src);
          free (dest);
          return r;
        }
      else
        r = (push (argv, ro ? "--ro-bind-to" : "--bind-to") < 0 || push (argv, src) < 0 || push (argv, dest) < 0) ? -ENOMEM : 0;
      free (src);
      free (dest);
      if (r < 0)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  return 0;
}

static char *
parent_dir (const char *p)
{
  char *c = strdup (p), *r;
  if (c == NULL)
    return NULL;
  r = strdup (dirname (c));
  free (c);
  return r;
}

/* What the workspace is: recorded on first creation, so a re-created jail
   of a named environment keeps its workspace whatever the cwd became.  */
static char *
workspace_for (berth_env *env)
{
  char *rec = NULL;
  const char *cwd;
  char here[4096];
  if (berth_env_state_read (env, WORKSPACE_FILE, &rec) > 0 && rec[0] == '/')
    {
      rec[strcspn (rec, "\n")] = '\0';
      return rec;
    }
  free (rec);
  cwd = berth_env_cwd (env);
  if (cwd == NULL || *cwd == '\0')
    cwd = berth_config_string (berth_env_config (env), "terminal.cwd", NULL);
  if (cwd == NULL || *cwd == '\0' || strcmp (cwd, ".") == 0)
    cwd = getcwd (here, sizeof here);
  return expand_home (cwd);
}

/* Recorded once: a workspace already on record stays.  */
static void
record_workspace (berth_env *env, const char *ws)
{
  char *line = NULL;
  if (berth_env_state_read (env, WORKSPACE_FILE, NULL) != -ENOENT || asprintf (&line, "%s\n", ws) < 0)
    return;
  (void) berth_env_state_write (env, WORKSPACE_FILE, line, strlen (line));
  free (line);
}

/* A one-line reason from the helper's output.  */
static const char *
helper_reason (char *out)
{
  char *p = out ? out : (char *) "";
  size_t n;
  if (strncmp (p, "berth-jail: ", 12) == 0)
    p += 12;
  n = strlen (p);
  while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == ' '))
    p[--n] = '\0';
  return *p ? p : "berth-jail failed without a message";
}

/* The jail's init gets a minimal environment: nothing secret in it.  */
static char **
helper_environ (void)
{
  static const char *const keep[] = { "HOME", "PATH", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "LANG", NULL };
  char **envp = berth_strv_new (NULL);
  for (size_t i = 0; envp && keep[i]; i++)
    {
      const char *v = getenv (keep[i]);
      char *kv;
      if (v == NULL || asprintf (&kv, "%s=%s", keep[i], v) < 0)
        continue;
      berth_strv_push (&envp, kv);
      free (kv);
    }
  return envp;
}

/* The helper's liveness check without spawning it: STATE/jail names a
   pid whose start time and user namespace still match, and which is not a
   zombie.  A wrong "alive" only makes execute fail (closed).  The jail's
   init, or 0.  */
static pid_t
jail_init_pid (const char *state)
{
  char path[4200], buf[8192];
  long long pid = 0, v;
  unsigned long long starttime = 0, userns = 0, st = 0;
  struct stat sb;
  FILE *f;
  snprintf (path, sizeof path, "%s/jail", state);
  f = fopen (path, "re");
  if (f == NULL)
    return false;
  while (fgets (buf, sizeof buf, f))
    {
      if (sscanf (buf, "pid=%lld", &v) == 1)
        pid = v;
      else if (sscanf (buf, "starttime=%llu", &st) == 1)
        starttime = st;
      else if (sscanf (buf, "userns=%llu", &st) == 1)
        userns = st;
    }
  fclose (f);
  if (pid <= 1 || pid > INT_MAX || starttime == 0 || userns == 0)
    return 0;
  if (berth_proc_start_time ((pid_t) pid) != starttime)
    return 0;
  snprintf (path, sizeof path, "/proc/%lld/ns/user", pid);
  if (stat (path, &sb) < 0 || (unsigned long long) sb.st_ino != userns)
    return 0;
  snprintf (path, sizeof path, "%s/jail.sock", state);
  return stat (path, &sb) == 0 && S_ISSOCK (sb.st_mode) ? (pid_t) pid : 0;
}

static bool
jail_alive (const char *state)
{
  return jail_init_pid (state) > 0;
}

/* Whether PID is on its way out (PF_EXITING): a jail's init killed stays
   so while the kernel kills the rest of its pid namespace.  */
static bool
proc_exiting (pid_t pid)
{
  char path[64], buf[1024], *p;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return true;
  buf[n] = '\0';
  p = strrchr (buf, ')');
  /* fields after ')': 3 (state) ... 9 (flags) */
  for (int field = 2; field < 9 && p; field++)
    if ((p = strchr (p + 1, ' ')) == NULL)
      return true;
  return p == NULL || (strtoul (p + 1, NULL, 10) & 0x4) != 0;
}

/* The agent's socket as the jail's init sees it (its root is the jail's).  */
static int
bwrap_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  pid_t pid = d && d->state ? jail_init_pid (d->state) : 0;
  if (pid <= 0 || proc_exiting (pid))
    return berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: the jail's init (berth-jail) died while the command ran");
  return asprintf (ret_path, "/proc/%d/root%s", (int) pid, path) < 0 ? -ENOMEM : 0;
}

/* Attach: the jail lives in the environment's state directory.  */
static int
bwrap_attach (berth_env *env, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  d->state = berth_env_state_dir (env);
  if (d->state == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "bwrap: the environment has no state directory");
  return 0;
}

static int
bwrap_ensure (berth_env *env, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  const char *profile = profile_of (cfg);
  bwrap_data *d = berth_env_get_data (env);
  const char *state = d->state;
  int64_t mem, cpu, procs;
  _cleanup_strv_free_ char **argv = NULL, **envp = NULL, **hides = NULL;
  _cleanup_free_ char *helper = NULL, *ws = NULL, *out = NULL, *envs_dir = NULL, *run_dir = NULL;
  int r, status = 0;

  /* Everything is validated before anything is created.  */
  if (!valid_profile (profile))
    return berth_error_set (reterr, BERTH_E_CONFIG, "terminal.bwrap_profile: unknown profile '%s' (expected " PROFILES ")", profile);
  /* No address-space or CPU-time limit by default: RLIMIT_AS breaks
     programs that reserve address space (ASan, JVMs, Go) long before
     memory runs out, and a CPU-seconds limit kills long builds and dev
     servers that the timeout already bounds in wall-clock time.  The
     process limit stays as a fork-bomb guard (the kernel counts it per
     user, across the host), large enough for make -j.  */
  if ((r = read_limit (cfg, "terminal.bwrap_memory_mb", 0, &mem, reterr)) < 0
      || (r = read_limit (cfg, "terminal.bwrap_cpu_seconds", 0, &cpu, reterr)) < 0
      || (r = read_limit (cfg, "terminal.bwrap_max_procs", 4096, &procs, reterr)) < 0)
    return r;
  if (state == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "bwrap: the environment has no state directory");

  ws = workspace_for (env);
  if (ws == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (ws[0] != '/')
    return berth_error_set (reterr, BERTH_E_ENV, "bwrap: the working directory %s is not an absolute path", ws);
  if (strcmp (profile, "restricted") != 0 && (r = check_writable (ws, "the workspace", reterr)) < 0)
    return r;

  /* A named environment's jail usually still runs: no helper needed.  */
  if (jail_alive (state))
    {
      berth_logf (env, BERTH_LOG_DEBUG, "jail in %s is running: attach to it", state);
      d->cpu_seconds = cpu;
      d->running = true;
      return 0;
    }
  berth_logf (env, BERTH_LOG_DEBUG, "create a jail in %s (profile %s)", state, profile);

  helper = berth_helper_path ("berth-jail");
  envs_dir = parent_dir (state);
  run_dir = berth_env_runtime_dir (env) ? parent_dir (berth_env_runtime_dir (env)) : NULL;
  argv = berth_strv_new (helper, "create", "--state", state, "--profile", profile, NULL);
  if (helper == NULL || envs_dir == NULL || argv == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (push (&argv, "--workspace") < 0 || push (&argv, ws) < 0 || push (&argv, "--memory-mb") < 0 || push_int (&argv, mem) < 0
      || push (&argv, "--cpu-seconds") < 0 || push_int (&argv, cpu) < 0 || push (&argv, "--max-procs") < 0
      || push_int (&argv, procs) < 0
      /* Every environment's state (snapshots) and runtime sockets.  */
      || push (&argv, "--hide") < 0 || push (&argv, envs_dir) < 0
      || (run_dir && (push (&argv, "--hide") < 0 || push (&argv, run_dir) < 0)))
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* berth's own configuration may carry secrets (docker_env...); its
     default place, ~/.config/berth, is in the helper's table.  */
  if (getenv ("XDG_CONFIG_HOME") && getenv ("XDG_CONFIG_HOME")[0] == '/')
    {
      char *conf = NULL;
      if (asprintf (&conf, "%s/berth", getenv ("XDG_CONFIG_HOME")) < 0)
        conf = NULL;
      r = conf == NULL || push (&argv, "--hide") < 0 || push (&argv, conf) < 0 ? -ENOMEM : 0;
      free (conf);
      if (r < 0)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  if ((r = add_binds (cfg, &argv, reterr)) < 0)
    return r;
  hides = berth_config_strv (cfg, "terminal.bwrap_hide");
  for (size_t i = 0; hides && hides[i]; i++)
    {
      char *h = expand_home (hides[i]);
      if (h == NULL || h[0] != '/')
        {
          r = berth_error_set (reterr, BERTH_E_CONFIG, "terminal.bwrap_hide: %s is not an absolute path", hides[i]);
          free (h);
          return r;
        }
      r = push (&argv, "--hide") < 0 || push (&argv, h) < 0 ? -ENOMEM : 0;
      free (h);
      if (r < 0)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  /* A throw-away jail dies with this process.  */
  if (!berth_env_is_persistent (env) && (push (&argv, "--owner-pid") < 0 || push_int (&argv, getpid ()) < 0))
    return berth_error_errno (reterr, ENOMEM, "out of memory");

  envp = helper_environ ();
  r = berth_run_capture ((const char *const *) argv, (const char *const *) envp, NULL, berth_env_time_left (env, 30.0), 16384, &out, &status, reterr);
  berth_logf (env, BERTH_LOG_DEBUG, "jail create: %s (status %d)", r < 0 ? "cannot run the helper" : status == 0 ? "up" : "refused", status);
  if (r < 0)
    return r;
  if (status != 0)
    return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "bwrap: cannot confine commands, refusing to run them: %s", helper_reason (out));
  record_workspace (env, ws);
  if (out && strncmp (out, "recreated", 9) == 0)
    berth_env_mark_recreated (env);

  d->cpu_seconds = cpu;
  d->running = true;
  return 0;
}

static int
bwrap_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  char *helper;
  char **argv;
  if (user && *user)
    return berth_error_set (reterr, ENOTSUP, "bwrap: running as another user (%s) is not supported", user);
  if (!d->running)
    return berth_error_set (reterr, BERTH_E_ENV, "bwrap: the jail was not created");
  helper = berth_helper_path ("berth-jail");
  if (helper == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* Interactive runs keep the session for job control; TIOCSTI and
     TIOCLINUX stay blocked by the seccomp filter either way.  */
  argv = interactive ? berth_strv_new (helper, "exec", "--state", d->state, "--keep-session", "--", NULL)
                     : berth_strv_new (helper, "exec", "--state", d->state, "--", NULL);
  free (helper);
  if (argv == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  *ret_argv = argv;
  *ret_flags = BERTH_PREFIX_PASSES_ENV | BERTH_PREFIX_PASSES_FDS;
  return 0;
}

static int
run_helper (const char *verb, const char *state, double timeout, berth_error **reterr)
{
  char *helper = berth_helper_path ("berth-jail"), *out = NULL;
  const char *argv[] = { helper, verb, "--state", state, NULL };
  int status = 0, r;
  if (helper == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  r = berth_run_capture (argv, NULL, NULL, timeout, 8192, &out, &status, reterr);
  if (r >= 0 && status != 0)
    r = berth_error_set (reterr, BERTH_E_BACKEND, "bwrap: berth-jail %s: %s", verb, helper_reason (out));
  free (helper);
  free (out);
  return r;
}

/* For good (a named environment keeps its jail, its /tmp and background
   processes between invocations until then).  No stop: a jail at rest
   costs nothing to keep.  */
static int
bwrap_remove (berth_env *env, berth_error **reterr)
{
  bwrap_data *d = berth_env_get_data (env);
  berth_logf (env, BERTH_LOG_DEBUG, "destroy the jail in %s", d->state);
  d->running = false;
  return run_helper ("destroy", d->state, berth_env_time_left (env, 30.0), reterr);
}

static int run_probe (const berth_config *cfg, bool full, double timeout, char **ret_reason);

static int
bwrap_probe (const berth_config *cfg, char **ret_reason)
{
  /* Quick: one namespaced child checks every step, no jail is built.  */
  return run_probe (cfg, false, 2.0, ret_reason);
}

static int
run_probe (const berth_config *cfg, bool full, double timeout, char **ret_reason)
{
  const char *profile = profile_of (cfg);
  char *helper, *out = NULL;
  int status = 0, r;
  if (!valid_profile (profile))
    {
      if (asprintf (ret_reason, "terminal.bwrap_profile: unknown profile '%s' (expected " PROFILES ")", profile) < 0)
        *ret_reason = NULL;
      return BERTH_PROBE_NEEDS_SETUP;
    }
  helper = berth_helper_path ("berth-jail");
  if (helper == NULL)
    return BERTH_PROBE_UNAVAILABLE;
  if (access (helper, X_OK) < 0)
    {
      if (asprintf (ret_reason, "the berth-jail helper is missing (%s): reinstall berth", helper) < 0)
        *ret_reason = NULL;
      free (helper);
      return BERTH_PROBE_UNAVAILABLE;
    }
  {
    const char *argv[5] = { helper, "probe", NULL, NULL, NULL };
    size_t n = 2;
    if (strcmp (profile, "network") == 0)
      argv[n++] = "--network";
    if (full)
      argv[n++] = "--full";
    r = berth_run_capture (argv, NULL, NULL, timeout, 8192, &out, &status, NULL);
  }
  free (helper);
  if (r < 0)
    {
      if (asprintf (ret_reason, "berth-jail probe did not finish within %.0f s", timeout) < 0)
        *ret_reason = NULL;
      free (out);
      return BERTH_PROBE_UNAVAILABLE;
    }
  if (status != 0)
    {
      *ret_reason = strdup (helper_reason (out));
      free (out);
      return BERTH_PROBE_UNAVAILABLE;
    }
  free (out);
  return BERTH_PROBE_READY;
}

static int
bwrap_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  char *reason = NULL, *helper = berth_helper_path ("berth-jail");
  int p;
  fn (userdata, "berth-jail helper", helper && access (helper, X_OK) == 0, helper, "reinstall berth (the helper lives in its libexec directory)");
  {
    char *what = NULL;
    const char *profile = profile_of (cfg);
    if (asprintf (&what, "%s: %s", profile, profile_meaning (profile)) < 0)
      what = NULL;
    fn (userdata, "terminal.bwrap_profile", valid_profile (profile), what ? what : profile, "use " PROFILES);
    free (what);
  }
  p = run_probe (cfg, true, 15.0, &reason);
  fn (userdata, "trial jail (namespaces, mounts, seccomp)", p == BERTH_PROBE_READY, reason ? reason : "a jail was built, ran a command and was torn down",
      "see the reason; on Ubuntu 24.04+ allow user namespaces for berth-jail with an AppArmor profile");
  free (reason);
  free (helper);
  return 0;
}

static const berth_key_spec bwrap_config_keys[] = {
  { "bwrap_profile", BERTH_KEY_STRING, .expect = "one of " PROFILES },
  { "bwrap_binds", BERTH_KEY_BINDS },
  { "bwrap_hide", BERTH_KEY_STRV },
  { "bwrap_memory_mb", BERTH_KEY_INT, 0, INT64_MAX, "an integer >= 0" },
  { "bwrap_cpu_seconds", BERTH_KEY_INT, 0, INT64_MAX, "an integer >= 0" },
  { "bwrap_max_procs", BERTH_KEY_INT, 0, INT64_MAX, "an integer >= 0" },
  { NULL },
};

const berth_provider_ops berth_bwrap_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "bwrap",
  .display_name = "Host jail (bwrap)",
  .description = "commands run on this host in a persistent jail: read-only host, writable workspace, private /tmp, no credentials",
  .env_description = "Commands run on the user's machine inside a sandbox: the host filesystem is read-only except the "
                     "working directory, /tmp is private, credential stores are hidden and (unless the profile is "
                     "network) there is no network.  File tools must go through the terminal.",
  .flags = BERTH_FLAG_SUPPORTS_STREAMS | BERTH_FLAG_CLEANUP_STOPS_PROCESSES,
  .probe = bwrap_probe,
  .doctor = bwrap_doctor,
  .setup_instructions = "The bwrap backend needs unprivileged user namespaces: sysctl -w user.max_user_namespaces=15000 "
                        "(Debian: also kernel.unprivileged_userns_clone=1; Ubuntu 24.04+: an AppArmor profile granting "
                        "`userns,` to berth-jail, or kernel.apparmor_restrict_unprivileged_userns=0).  Inside a container "
                        "it needs --security-opt seccomp=unconfined and an unmasked /proc.",
  .config_keys = bwrap_config_keys,
  .env_data_size = sizeof (bwrap_data),
  .attach = bwrap_attach,
  .ensure = bwrap_ensure,
  .remove = bwrap_remove,
  .exec_prefix = bwrap_exec_prefix,
  .start = bwrap_start,
  .agent_socket = bwrap_agent_socket,
  /* The jail's init runs commands with our environment and fd 3.  */
  .start_flags = BERTH_PREFIX_PASSES_ENV | BERTH_PREFIX_PASSES_FDS,
};

BERTH_PROVIDER_EXPORT (berth_bwrap_provider)
