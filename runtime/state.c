/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.c: a named environment on disk.  Its state directory holds meta
   (backend, cwd, image, task, last use: "key=value" lines), snapshot.sh
   (the exported variables), lock (one command at a time) and the owner
   and running records (pid and start time of the berth that made a
   throw-away environment or runs a command); also the gc of what a
   killed berth left (orphaned commands, throw-away environments, failed
   creations).  The handle's lifecycle is env.c.  */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "provider-call.h"
#include "transport.h"
#include "state.h"
#include "wrapper.h"

/* How long gc's kill of an orphaned command may take, its transport's
   setup included.  */
#define GC_KILL_TIMEOUT_S 10

bool
berth_env_name_is_valid (const char *name)
{
  size_t n = strlen (name);
  if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
    return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '.'))
      return false;
  return true;
}

char *
berth_envs_dir (berth_ctx *ctx)
{
  return berth_strdup_printf ("%s/envs", ctx->state_dir);
}

/* meta: one "key=value" per line; values escape \n and \\.  */
static void
meta_put (berth_buf *b, const char *key, const char *value)
{
  if (value == NULL)
    return;
  berth_buf_printf (b, "%s=", key);
  for (const char *p = value; *p; p++)
    {
      if (*p == '\n')
        berth_buf_puts (b, "\\n");
      else if (*p == '\\')
        berth_buf_puts (b, "\\\\");
      else
        berth_buf_append (b, p, 1);
    }
  berth_buf_puts (b, "\n");
}

char *
berth_meta_get (const char *meta, const char *key)
{
  size_t klen = strlen (key);
  for (const char *line = meta; line && *line;)
    {
      const char *end = strchr (line, '\n');
      if (end == NULL)
        end = line + strlen (line);
      if ((size_t) (end - line) > klen && strncmp (line, key, klen) == 0 && line[klen] == '=')
        {
          berth_buf b = { 0 };
          for (const char *p = line + klen + 1; p < end; p++)
            {
              if (*p == '\\' && p + 1 < end)
                {
                  p++;
                  berth_buf_append (&b, *p == 'n' ? "\n" : p, 1);
                }
              else
                berth_buf_append (&b, p, 1);
            }
          return berth_buf_steal (&b);
        }
      line = *end ? end + 1 : end;
    }
  return NULL;
}

int
berth_env_save (berth_env *env, berth_error **reterr)
{
  _cleanup_free_ char *meta_path = berth_strdup_printf ("%s/meta", env->state_dir);
  _cleanup_free_ char *snap_path = berth_strdup_printf ("%s/snapshot.sh", env->state_dir);
  berth_buf b = { 0 };
  int r;
  if (meta_path == NULL || snap_path == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  meta_put (&b, "backend", berth_env_backend (env));
  meta_put (&b, "cwd", env->cwd);
  meta_put (&b, "image", env->image);
  meta_put (&b, "task", env->task_id);
  meta_put (&b, "incarnation", env->incarnation);
  meta_put (&b, "tenant", env->owner_tenant);
  meta_put (&b, "agent", env->owner_agent);
  if (env->suspended)
    meta_put (&b, "suspended", "1");
  /* recreated by a call that runs no command (ps, cp, open): the next
     execute, in whichever berth, reports it */
  if (env->recreated)
    meta_put (&b, "recreated", "1");
  /* When it was last used is the meta file's mtime: the file itself
     changes only with the state it records.  */
  r = berth_write_file_changed (meta_path, b.data ? b.data : "", b.len, 0600);
  berth_buf_free (&b);
  if (r == 0 && utimensat (AT_FDCWD, meta_path, NULL, 0) < 0)
    r = -errno;
  if (r < 0)
    return berth_error_errno (reterr, -r, "cannot record the state of environment %s in %s", env->id, meta_path);
  if (env->snapshot)
    {
      r = berth_write_file_changed (snap_path, env->snapshot, strlen (env->snapshot), 0600);
      if (r < 0)
        return berth_error_errno (reterr, -r, "cannot record the exported variables of environment %s in %s", env->id, snap_path);
    }
  return 0;
}

int
berth_env_record_owner (berth_env *env, const char *file, const char *job, berth_error **reterr)
{
  _cleanup_free_ char *path = berth_strdup_printf ("%s/%s", env->state_dir, file);
  char pid[32], start[32];
  berth_buf b = { 0 };
  int r;
  if (path == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  snprintf (pid, sizeof pid, "%d", (int) getpid ());
  snprintf (start, sizeof start, "%llu", berth_proc_start_time (getpid ()));
  meta_put (&b, "pid", pid);
  meta_put (&b, "start", start);
  meta_put (&b, "backend", berth_env_backend (env));
  meta_put (&b, "job", job);
  r = berth_write_file_atomic (path, b.data ? b.data : "", b.len, 0600);
  berth_buf_free (&b);
  if (r < 0)
    return berth_error_errno (reterr, -r, "cannot record the owner of environment %s in %s", env->id, path);
  return 0;
}

void
berth_env_forget_owner (berth_env *env, const char *file)
{
  _cleanup_free_ char *path = berth_strdup_printf ("%s/%s", env->state_dir, file);
  if (path)
    unlink (path);
}

/* The process an owner record names still runs (and is that process).  */
static bool
owner_alive (const char *record, pid_t *ret_pid)
{
  _cleanup_free_ char *pid = berth_meta_get (record, "pid"), *start = berth_meta_get (record, "start");
  long p = pid ? strtol (pid, NULL, 10) : 0;
  unsigned long long want = start ? strtoull (start, NULL, 10) : 0, now;
  *ret_pid = (pid_t) p;
  if (p <= 0)
    return false;
  now = berth_proc_start_time ((pid_t) p);
  return now != 0 && (want == 0 || now == want);
}

/* Commands of one named environment run one at a time: the lock is held
   while the environment is created and around each execute, not while a
   handle merely exists (a long exec-stream must not block commands).  */
int
berth_env_lock (berth_env *env, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  if (env->name == NULL)
    return 0;
  for (;;)
    {
      struct stat st;
      if (env->lock_fd < 0)
        {
          int r;
          free (path);
          path = berth_strdup_printf ("%s/lock", env->state_dir);
          if (path == NULL)
            return berth_error_errno (reterr, ENOMEM, "out of memory");
          if ((r = berth_mkdir_p (env->state_dir, 0700)) < 0)
            return berth_error_errno (reterr, -r, "cannot create %s", env->state_dir);
          env->lock_fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
          if (env->lock_fd < 0)
            return berth_error_errno (reterr, errno, "cannot open %s", path);
        }
      while (flock (env->lock_fd, LOCK_EX) < 0)
        if (errno != EINTR)
          return berth_error_errno (reterr, errno, "cannot lock the state of environment %s", env->name);
      /* A creation that failed while we waited removed the environment,
         its lock file with it: start over on a new one.  */
      if (fstat (env->lock_fd, &st) == 0 && st.st_nlink > 0)
        return 0;
      close (env->lock_fd);
      env->lock_fd = -1;
      /* the runtime directory went with it */
      int r = env->runtime_dir ? berth_mkdir_p (env->runtime_dir, 0700) : 0;
      if (r < 0)
        return berth_error_errno (reterr, -r, "cannot create %s", env->runtime_dir);
    }
}

void
berth_env_unlock (berth_env *env)
{
  if (env->lock_fd >= 0)
    flock (env->lock_fd, LOCK_UN);
}

/* The image or task of ENV is not the one recorded in META_PATH.  */
bool
berth_env_meta_differs (berth_env *env, const char *meta_path)
{
  _cleanup_free_ char *meta = NULL, *image = NULL, *task = NULL;
  if (berth_read_file (meta_path, 1 << 20, &meta, NULL) < 0)
    return true;
  image = berth_meta_get (meta, "image");
  task = berth_meta_get (meta, "task");
  _cleanup_free_ char *suspended = berth_meta_get (meta, "suspended"), *inc = berth_meta_get (meta, "incarnation");
  _cleanup_free_ char *recreated = berth_meta_get (meta, "recreated");
  if ((suspended != NULL) != env->suspended || (recreated != NULL) != env->recreated || inc == NULL || strcmp (inc, env->incarnation) != 0)
    return true;
  if ((image == NULL) != (env->image == NULL) || (image && strcmp (image, env->image) != 0))
    return true;
  return (task == NULL) != (env->task_id == NULL) || (task && strcmp (task, env->task_id) != 0);
}

/* Another process may have run commands since we read the state.  */
void
berth_env_load_state (berth_env *env, char **ret_backend)
{
  _cleanup_free_ char *mp = berth_strdup_printf ("%s/meta", env->state_dir);
  _cleanup_free_ char *sp = berth_strdup_printf ("%s/snapshot.sh", env->state_dir);
  _cleanup_free_ char *meta = NULL;
  char *snap = NULL;
  if (mp == NULL || berth_read_file (mp, 1 << 20, &meta, NULL) < 0)
    return;
  /* suspended by another handle (the reaper): this one resumes it first */
  _cleanup_free_ char *suspended = berth_meta_get (meta, "suspended"), *recreated = berth_meta_get (meta, "recreated");
  if (suspended)
    env->suspended = true;
  if (recreated)
    env->recreated = true;
  char *cwd = berth_meta_get (meta, "cwd");
  if (cwd)
    {
      free (env->cwd);
      env->cwd = cwd;
    }
  if (sp && berth_read_file (sp, BERTH_STATE_MAX, &snap, NULL) == 0)
    {
      free (env->snapshot);
      env->snapshot = snap;
    }
  if (ret_backend)
    *ret_backend = berth_meta_get (meta, "backend");
}

int
berth_env_refresh (berth_env *env)
{
  if (env->name)
    berth_env_load_state (env, NULL);
  return 0;
}

BERTH_EXPORT int
berth_env_list_info (berth_ctx *ctx, berth_env_info_fn fn, void *userdata, berth_error **reterr)
{
  _cleanup_free_ char *dir = berth_envs_dir (ctx);
  DIR *d = dir ? opendir (dir) : NULL;
  struct dirent *de;
  int n = 0;
  if (d == NULL)
    return 0;
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *mp = berth_strdup_printf ("%s/%s/meta", dir, de->d_name);
      _cleanup_free_ char *meta = NULL, *backend = NULL, *cwd = NULL, *used = NULL, *tenant = NULL, *agent = NULL, *suspended = NULL;
      _cleanup_close_ int fd = -1;
      struct stat st;
      if (de->d_name[0] == '.' || mp == NULL || (fd = open (mp, O_RDONLY | O_CLOEXEC)) < 0 || fstat (fd, &st) < 0
          || berth_read_fd (fd, 1 << 20, &meta, NULL) < 0)
        continue;
      backend = berth_meta_get (meta, "backend");
      cwd = berth_meta_get (meta, "cwd");
      used = berth_meta_get (meta, "last_used");
      tenant = berth_meta_get (meta, "tenant");
      agent = berth_meta_get (meta, "agent");
      suspended = berth_meta_get (meta, "suspended");
      berth_env_info info = { .size = sizeof info, .name = de->d_name, .backend = backend ? backend : "?", .cwd = cwd ? cwd : "",
                              .last_used = used ? strtoll (used, NULL, 10) : (int64_t) st.st_mtime, /* a field: older berths */ .tenant = tenant, .agent = agent, .suspended = suspended != NULL };
      fn (userdata, &info);
      n++;
    }
  closedir (d);
  return n;
}

typedef struct list_compat
{
  berth_env_list_fn fn;
  void *userdata;
} list_compat;

static void
list_compat_one (void *userdata, const berth_env_info *info)
{
  list_compat *c = userdata;
  c->fn (c->userdata, info->name, info->backend, info->cwd, info->last_used);
}

BERTH_EXPORT int
berth_env_list (berth_ctx *ctx, berth_env_list_fn fn, void *userdata, berth_error **reterr)
{
  list_compat c = { fn, userdata };
  return berth_env_list_info (ctx, list_compat_one, &c, reterr);
}

/* ---- reaping idle environments ---- */

typedef struct reap_candidate
{
  char **names, **tenants, **agents; /* parallel; "" for none */
  double idle;
  int64_t now;
} reap_candidate;

static void
reap_collect (void *userdata, const berth_env_info *info)
{
  reap_candidate *c = userdata;
  if (info->suspended || (double) (c->now - info->last_used) < c->idle)
    return;
  berth_strv_push (&c->names, info->name);
  berth_strv_push (&c->tenants, info->tenant ? info->tenant : "");
  berth_strv_push (&c->agents, info->agent ? info->agent : "");
}

static void
count_running (void *userdata, const char *id, const char *command, int64_t started, int state, int exit_code, const char *how)
{
  if (state == BERTH_PROCESS_RUNNING)
    ++*(int *) userdata;
}

/* Suspend NAME under its own scope, unless it has running work.  */
static int
reap_one (berth_ctx *ctx, const char *name, berth_error **reterr)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  spec.name = name;
  int r = berth_env_new (ctx, &spec, true, NULL, &env, reterr);
  if (r < 0)
    return r;
  BERTH_LOG_SCOPE (ctx, berth_env_backend (env));
  if (!berth_provider_call_has_stop (env->provider))
    {
      berth_env_free (env);
      return 0; /* nothing to suspend: it stays as it is */
    }
  if ((r = berth_env_lock (env, reterr)) < 0)
    {
      berth_env_free (env);
      return r;
    }
  /* Its processes are asked through its transport: ensure first (a
     check for one that runs, as every environment not suspended should).  */
  int running = 0;
  r = berth_provider_call_ensure (env, reterr);
  if (r >= 0)
    r = berth_env_list_processes (env, count_running, &running, reterr);
  if (r >= 0 && running > 0)
    r = 1; /* running work keeps it alive */
  else if (r >= 0 && (r = berth_provider_call_stop (env, reterr)) >= 0)
    {
      env->suspended = true;
      r = berth_env_save (env, reterr) < 0 ? -BERTH_E_BACKEND : 2;
    }
  berth_env_unlock (env);
  env->cleaned = true; /* nothing of it ends with this handle */
  berth_env_free (env);
  return r;
}

BERTH_EXPORT int
berth_reap_idle (berth_ctx *ctx, double idle, berth_reap_fn fn, void *userdata, berth_error **reterr)
{
  reap_candidate c = { .idle = idle, .now = (int64_t) time (NULL) };
  int suspended = 0;
  /* The reaper runs under no scope of its own: each environment under the
     one that created it, the caller's restored after.  */
  _cleanup_free_ char *tenant = xstrdup (ctx->scope_tenant), *agent = xstrdup (ctx->scope_agent);
  berth_env_list_info (ctx, reap_collect, &c, reterr);
  for (size_t i = 0; c.names && c.names[i]; i++)
    {
      berth_error *err = NULL;
      berth_ctx_set_scope (ctx, c.tenants[i][0] ? c.tenants[i] : NULL, c.agents[i][0] ? c.agents[i] : NULL, NULL);
      int r = reap_one (ctx, c.names[i], &err);
      if (r == 2)
        suspended++;
      if (fn && r != 0)
        fn (userdata, c.names[i], r == 2 ? "suspended" : r == 1 ? "busy" : "failed", r < 0 ? berth_error_message (err) : NULL);
      berth_error_free (err);
    }
  berth_ctx_set_scope (ctx, tenant, agent, NULL);
  berth_strv_free (c.names);
  berth_strv_free (c.tenants);
  berth_strv_free (c.agents);
  return suspended;
}

/* Someone holds the lock of state directory SD (a creation or a command
   in progress).  */
static bool
state_locked (const char *sd)
{
  _cleanup_free_ char *path = berth_strdup_printf ("%s/lock", sd);
  int fd = path ? open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) : -1;
  bool locked;
  if (fd < 0)
    return false;
  locked = flock (fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  close (fd);
  return locked;
}

static bool
older_than (const char *path, int64_t seconds)
{
  struct stat st;
  return lstat (path, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid == geteuid () && time (NULL) - st.st_mtime >= seconds;
}

/* Kill what runs in ENV under job token JOB (the runtime's kill script,
   through the environment's own transport).  */
static int
kill_job (berth_env *env, const char *job, berth_error **reterr)
{
  return berth_transport_kill (env, job, 0, GC_KILL_TIMEOUT_S, NULL, reterr);
}

/* A throw-away environment whose berth is gone: what runs in it where it
   outlives the environment (the host, a remote) is killed first, then
   the backend's cleanup removes it (container, jail, master) and its
   directories go.  */
static int
gc_throwaway (berth_ctx *ctx, const char *id, const char *backend, const char *running, berth_error **reterr)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  _cleanup_free_ char *job = running ? berth_meta_get (running, "job") : NULL;
  int r;
  spec.backend = backend;
  if ((r = berth_env_new (ctx, &spec, false, id, &env, reterr)) < 0)
    return r;
  BERTH_LOG_SCOPE (ctx, berth_env_backend (env));
  if (job && (berth_provider_flag (env->provider, BERTH_FLAG_USES_HOST_FILESYSTEM) || berth_provider_flag (env->provider, BERTH_FLAG_IS_REMOTE)))
    {
      berth_error *kerr = NULL;
      if (berth_provider_call_ensure (env, &kerr) < 0 || kill_job (env, job, &kerr) < 0)
        berth_ctx_log (ctx, BERTH_LOG_WARNING, "gc", "%s: could not kill the orphaned command of %s: %s", backend, id, berth_error_message (kerr));
      berth_error_free (kerr);
    }
  r = berth_env_discard (env, false, reterr);
  berth_env_free (env);
  return r;
}

/* The orphaned command of named environment NAME: killed where it runs,
   the environment kept.  Under the scope that created it (META's, as the
   reaper does), the caller's restored after; the handle is made as for
   a removal (the name kept, whatever the scope would call its sandbox)
   and ensured.  */
static int gc_orphan_kill (berth_env *env, const char *job, berth_error **reterr);

static int
gc_orphan (berth_ctx *ctx, const char *name, const char *meta, const char *job, berth_error **reterr)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  int r;
  _cleanup_free_ char *tenant = xstrdup (ctx->scope_tenant), *agent = xstrdup (ctx->scope_agent);
  _cleanup_free_ char *owner_tenant = berth_meta_get (meta, "tenant"), *owner_agent = berth_meta_get (meta, "agent");
  berth_ctx_set_scope (ctx, owner_tenant, owner_agent, NULL);
  spec.name = name;
  r = berth_env_new (ctx, &spec, true, NULL, &env, reterr);
  if (r >= 0)
    r = gc_orphan_kill (env, job, reterr);
  berth_ctx_set_scope (ctx, tenant, agent, NULL);
  return r;
}

static int
gc_orphan_kill (berth_env *env, const char *job, berth_error **reterr)
{
  int r;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if ((r = berth_env_lock (env, reterr)) >= 0)
    {
      _cleanup_free_ char *mp = berth_strdup_printf ("%s/running", env->state_dir);
      _cleanup_free_ char *again = NULL, *job2 = NULL;
      pid_t pid;
      /* under the lock, the record is still that of a dead owner */
      if (mp && berth_read_file (mp, 1 << 16, &again, NULL) == 0 && !owner_alive (again, &pid) && (job2 = berth_meta_get (again, "job"))
          && strcmp (job2, job) == 0)
        {
          r = berth_provider_call_ensure (env, reterr);
          if (r >= 0)
            r = kill_job (env, job, reterr);
          if (r >= 0)
            unlink (mp);
        }
      berth_env_unlock (env);
    }
  env->cleaned = true; /* nothing of it ends with this handle */
  berth_env_free (env);
  return r;
}

BERTH_EXPORT int
berth_gc_envs (berth_ctx *ctx, bool dry_run, berth_gc_env_fn fn, void *userdata, berth_error **reterr)
{
  int64_t lifetime = berth_config_int (ctx->config, "terminal.lifetime_seconds", 300);
  _cleanup_free_ char *dir = berth_envs_dir (ctx);
  struct dirent *de;
  DIR *d;
  int n = 0;

  if (dir == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  if ((d = opendir (dir)) != NULL)
    {
      while ((de = readdir (d)))
        {
          _cleanup_free_ char *sd = berth_strdup_printf ("%s/%s", dir, de->d_name);
          _cleanup_free_ char *mp = berth_strdup_printf ("%s/meta", sd);
          _cleanup_free_ char *rp = berth_strdup_printf ("%s/running", sd);
          _cleanup_free_ char *op = berth_strdup_printf ("%s/owner", sd);
          _cleanup_free_ char *meta = NULL, *running = NULL, *owner = NULL, *backend = NULL, *job = NULL, *detail = NULL;
          berth_error *err = NULL;
          pid_t pid = 0;
          int r = 0;
          if (de->d_name[0] == '.' || !berth_env_name_is_valid (de->d_name) || sd == NULL || mp == NULL || rp == NULL || op == NULL)
            continue;
          if (berth_read_file (rp, 1 << 16, &running, NULL) < 0)
            running = NULL;
          if (berth_read_file (mp, 1 << 20, &meta, NULL) == 0)
            {
              /* a named environment: its command whose berth was killed */
              if (running == NULL || owner_alive (running, &pid) || (job = berth_meta_get (running, "job")) == NULL || state_locked (sd))
                continue;
              backend = berth_meta_get (meta, "backend");
              detail = berth_strdup_printf ("its berth (pid %d) is gone: its command (job %s) is killed where it runs", (int) pid, job);
              if (!dry_run && (r = gc_orphan (ctx, de->d_name, meta, job, &err)) < 0)
                berth_ctx_log (ctx, BERTH_LOG_WARNING, "gc", "environment %s: %s", de->d_name, berth_error_message (err));
              else if (fn)
                fn (userdata, de->d_name, backend ? backend : "?", "orphaned_command", detail);
            }
          else if (berth_read_file (op, 1 << 16, &owner, NULL) == 0)
            {
              /* a throw-away environment: its berth is gone */
              if (owner_alive (owner, &pid))
                continue;
              backend = berth_meta_get (owner, "backend");
              detail = berth_strdup_printf ("a throw-away environment whose berth (pid %d) is gone", (int) pid);
              if (backend && !dry_run && (r = gc_throwaway (ctx, de->d_name, backend, running, &err)) < 0)
                berth_ctx_log (ctx, BERTH_LOG_WARNING, "gc", "environment %s: %s", de->d_name, berth_error_message (err));
              else
                {
                  if (backend == NULL && !dry_run)
                    berth_remove_tree (sd);
                  if (fn)
                    fn (userdata, de->d_name, backend ? backend : "?", "owner_gone", detail);
                }
            }
          else
            {
              /* no record at all: a creation that failed (before 0.2) or
                 is under way (it holds the lock, or is young) */
              if (!older_than (sd, lifetime) || state_locked (sd))
                continue;
              _cleanup_free_ char *rd = berth_strdup_printf ("%s/%s", ctx->runtime_dir, de->d_name);
              if (!dry_run)
                {
                  berth_remove_tree (sd);
                  if (rd)
                    berth_remove_tree (rd);
                }
              if (fn)
                fn (userdata, de->d_name, "?", "incomplete", "a state directory without a record (a failed creation)");
            }
          berth_error_free (err);
          if (r >= 0)
            n++;
        }
      closedir (d);
    }
  berth_tombstones_prune (ctx);
  /* runtime directories of environments that have no state */
  if ((d = opendir (ctx->runtime_dir)) != NULL)
    {
      while ((de = readdir (d)))
        {
          _cleanup_free_ char *rd = berth_strdup_printf ("%s/%s", ctx->runtime_dir, de->d_name);
          _cleanup_free_ char *sd = berth_strdup_printf ("%s/%s", dir, de->d_name);
          if (de->d_name[0] == '.' || !berth_env_name_is_valid (de->d_name) || rd == NULL || sd == NULL || access (sd, F_OK) == 0 || !older_than (rd, lifetime))
            continue;
          if (!dry_run)
            berth_remove_tree (rd);
          if (fn)
            fn (userdata, de->d_name, "?", "incomplete", "a runtime directory without state (a failed creation)");
          n++;
        }
      closedir (d);
    }
  return n;
}
