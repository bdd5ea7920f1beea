/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* env.c: the lifecycle of an environment handle (build, open, cleanup,
   remove, free), the provider-wide gc, and the accessors providers use to
   see their environment.  What a named environment keeps on disk, its
   lock and the gc of leftovers are state.c.  */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent-client.h"
#include "provider-call.h"
#include "scope.h"
#include "state.h"

extern char **environ;

static char **
scrubbed_environ (berth_ctx *ctx)
{
  char **v = calloc (1, sizeof (char *));
  for (char **e = environ; v && e && *e; e++)
    {
      _cleanup_free_ char *name = strndup (*e, strcspn (*e, "="));
      if (name && !berth_ctx_env_is_stripped (ctx, name))
        berth_strv_push (&v, *e);
    }
  return v;
}

static char **
passthrough_environ (berth_ctx *ctx)
{
  _cleanup_strv_free_ char **names = berth_config_strv (ctx->config, "terminal.env_passthrough");
  char **v = calloc (1, sizeof (char *));
  for (size_t i = 0; v && names && names[i]; i++)
    {
      const char *val = getenv (names[i]);
      if (val && strncmp (names[i], "BERTH_JOB", 9) != 0)
        {
          _cleanup_free_ char *kv = berth_strdup_printf ("%s=%s", names[i], val);
          if (kv)
            berth_strv_push (&v, kv);
        }
    }
  return v;
}

static const char *
default_cwd (berth_env *env, char *buf, size_t size)
{
  const char *cwd = berth_config_string (env->ctx->config, "terminal.cwd", NULL);
  if (cwd && *cwd && strcmp (cwd, ".") != 0)
    return cwd;
  if (berth_provider_default_cwd (env->provider))
    return berth_provider_default_cwd (env->provider);
  return getcwd (buf, size);
}

void
berth_env_free (berth_env *env)
{
  berth_agent_env_free (env); /* its stream may ride the provider's data */
  berth_provider_call_release (env);
  if (env->lock_fd >= 0)
    close (env->lock_fd);
  free (env->name);
  free (env->id);
  free (env->image);
  free (env->task_id);
  free (env->cwd);
  free (env->snapshot);
  free (env->state_dir);
  free (env->runtime_dir);
  free (env->spill_dir);
  free (env->temp_dir);
  free (env->owner_tenant);
  free (env->owner_agent);
  berth_strv_free (env->host_environ);
  berth_strv_free (env->passthrough);
  berth_ctx *ctx = env->ctx;
  free (env);
  berth_ctx_unref (ctx);
}

/* Build the handle and its directories; no backend call yet.  */
int
berth_env_new (berth_ctx *ctx, const berth_env_spec *spec, bool for_remove, const char *attach_id, berth_env **ret, berth_error **reterr)
{
  berth_env *env = calloc (1, sizeof *env);
  const char *name = spec->name;
  const char *backend = spec->backend;
  _cleanup_free_ char *meta = NULL, *saved_backend = NULL, *edir = berth_envs_dir (ctx);
  _cleanup_free_ char *cache = berth_xdg_dir ("XDG_CACHE_HOME", ".cache");
  char hex[13], cwdbuf[PATH_MAX];
  int r;

  if (env == NULL || edir == NULL)
    {
      free (env);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  env->ctx = berth_ctx_ref (ctx); /* the context outlives its environments */
  env->n_ref = 1;
  env->lock_fd = -1;
  /* Under a hosted scope the sandbox is the agent's, whatever name was
     asked for: one per (tenant, agent), or one per session where
     non-persistent containers are configured on a backend that declares
     session_isolated_when_nonpersistent (one resumed by name: two
     ephemeral runs would attach one sandbox otherwise); a backend without
     the flag keeps the agent's.  berth rm names it.  */
  _cleanup_free_ char *sandbox = berth_ctx_is_hosted (ctx) ? berth_scope_sandbox_name (ctx->scope_tenant, ctx->scope_agent) : NULL;
  if (sandbox && !(for_remove && name))
    {
      bool per_session = !for_remove && !berth_config_bool (ctx->config, "terminal.container_persistent", true);
      if (per_session)
        {
          berth_provider *bp = berth_ctx_find_provider (ctx, backend ? backend : berth_config_string (ctx->config, "terminal.backend", "local"));
          per_session = bp == NULL || berth_provider_flag (bp, BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT);
        }
      name = per_session ? NULL : sandbox;
    }
  env->owner_tenant = xstrdup (ctx->scope_tenant);
  env->owner_agent = xstrdup (ctx->scope_agent);
  if (name && !berth_env_name_is_valid (name))
    {
      berth_env_free (env);
      return berth_error_set (reterr, BERTH_E_ENV, "invalid environment name '%s': use letters, digits, '.', '_' and '-' (at most 64)", name);
    }
  if ((r = berth_random_hex (hex, 6)) < 0)
    {
      berth_env_free (env);
      return berth_error_errno (reterr, -r, "no randomness");
    }
  if (berth_random_hex (env->incarnation, 8) < 0)
    {
      berth_env_free (env);
      return berth_error_errno (reterr, EIO, "no randomness");
    }
  env->name = name ? strdup (name) : NULL;
  env->id = strdup (name ? name : attach_id ? attach_id : hex);
  env->state_dir = berth_strdup_printf ("%s/%s", edir, env->id);
  env->runtime_dir = berth_strdup_printf ("%s/%s", ctx->runtime_dir, env->id);
  env->spill_dir = cache ? berth_strdup_printf ("%s/berth/output", cache) : NULL;

  if (name)
    {
      _cleanup_free_ char *mp = berth_strdup_printf ("%s/meta", env->state_dir);
      if (mp && berth_read_file (mp, 1 << 20, &meta, NULL) == 0)
        {
          berth_env_load_state (env, &saved_backend);
          env->image = berth_meta_get (meta, "image");
          env->task_id = berth_meta_get (meta, "task");
          /* the scope that created it, not the one asking */
          free (env->owner_tenant);
          free (env->owner_agent);
          env->owner_tenant = berth_meta_get (meta, "tenant");
          env->owner_agent = berth_meta_get (meta, "agent");
          _cleanup_free_ char *inc = berth_meta_get (meta, "incarnation");
          if (inc && strlen (inc) == 16)
            memcpy (env->incarnation, inc, 17);
          if ((r = berth_scope_check (env, reterr)) < 0)
            {
              berth_env_free (env);
              return r;
            }
        }
      else if (for_remove)
        {
          berth_env_free (env);
          return berth_error_set (reterr, -ENOENT, "no environment named '%s' (see berth ls)", name);
        }
      if (saved_backend && backend && strcmp (saved_backend, backend) != 0)
        {
          berth_error_set (reterr, BERTH_E_ENV, "environment '%s' uses backend %s, not %s: run `berth rm %s` first", name, saved_backend, backend, name);
          berth_env_free (env);
          return -BERTH_E_ENV;
        }
      if (saved_backend)
        backend = saved_backend;
    }
  if (backend == NULL)
    backend = berth_config_string (ctx->config, "terminal.backend", "local");
  env->provider = berth_ctx_find_provider (ctx, backend);
  if (env->provider == NULL)
    {
      const berth_plugin_info *pi = berth_ctx_find_plugin (ctx, backend);
      if (pi && !berth_plugin_loaded (pi))
        berth_error_set (reterr, BERTH_E_NO_PROVIDER, "backend '%s' is a plugin that is not loaded (%s): %s", backend, berth_plugin_status (pi),
                         berth_plugin_enabled (pi) ? "reinstall it or see berth doctor" : "berth plugins enable it first");
      else
        berth_error_set (reterr, BERTH_E_NO_PROVIDER, "unknown backend '%s' (available: %s)", backend, berth_ctx_provider_names (ctx));
      berth_env_free (env);
      return -BERTH_E_NO_PROVIDER;
    }
  /* Its keys are checked once it is used (`berth rm` works whatever the
     configuration says); a hosted scope admits it or not before anything
     is made.  */
  int rc = for_remove ? 0 : berth_provider_check_config (env->provider, reterr);
  if (rc >= 0 && !for_remove)
    rc = berth_scope_admit (env, reterr);
  if (rc < 0)
    {
      berth_env_free (env);
      return rc;
    }
  if (spec->image && BERTH_HAS_FIELD (spec, berth_env_spec, image))
    {
      /* An environment keeps the image it was made with: another one is
         refused before anything changes, on every backend (a backend
         that knows its default image refuses a change of it itself).  */
      if (meta && env->image && strcmp (env->image, spec->image) != 0 && !for_remove)
        {
          berth_error_set (reterr, BERTH_E_ENV, "environment %s uses image %s; `berth rm %s` to use %s", name, env->image, name, spec->image);
          berth_env_free (env);
          return -BERTH_E_ENV;
        }
      env->image_unrecorded = meta && env->image == NULL;
      free (env->image);
      env->image = strdup (spec->image);
    }
  if (spec->task_id && BERTH_HAS_FIELD (spec, berth_env_spec, task_id))
    {
      free (env->task_id);
      env->task_id = strdup (spec->task_id);
    }
  if (env->cwd == NULL)
    {
      const char *c = spec->cwd ? spec->cwd : default_cwd (env, cwdbuf, sizeof cwdbuf);
      env->cwd = c ? strdup (c) : NULL;
    }
  env->host_environ = scrubbed_environ (ctx);
  env->passthrough = passthrough_environ (ctx);
  if (env->state_dir == NULL || env->runtime_dir == NULL || env->host_environ == NULL || env->passthrough == NULL)
    {
      berth_env_free (env);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  /* berth's own roots must be private (another user's 0777 /tmp/berth-UID
     could swap the sockets in it); below them every level is ours.  */
  if ((r = berth_private_dir (ctx->state_dir, reterr)) < 0 || (r = berth_private_dir (ctx->runtime_dir, reterr)) < 0)
    {
      berth_env_free (env);
      return r;
    }
  if ((r = berth_mkdir_p (env->state_dir, 0700)) < 0)
    berth_error_errno (reterr, -r, "cannot create %s", env->state_dir);
  else if ((r = berth_mkdir_p (env->runtime_dir, 0700)) < 0)
    berth_error_errno (reterr, -r, "cannot create %s", env->runtime_dir);
  if (r < 0)
    {
      berth_env_free (env);
      return r;
    }
  *ret = env;
  return 0;
}

BERTH_EXPORT int
berth_env_open (berth_ctx *ctx, const berth_env_spec *spec, berth_env **ret, berth_error **reterr)
{
  berth_env *env = NULL;
  int r = berth_env_new (ctx, spec, false, NULL, &env, reterr);
  if (r < 0)
    return r;
  BERTH_LOG_SCOPE (ctx, berth_env_backend (env));
  /* The setup bound holds until open returns (error paths free ENV).  */
  double setup = BERTH_HAS_FIELD (spec, berth_env_spec, setup_timeout) ? spec->setup_timeout : 0;
  env->deadline_usec = setup > 0 && setup <= BERTH_TIMEOUT_MAX ? berth_now_usec () + (uint64_t) (setup * 1e6) : 0;
  if ((r = berth_env_lock (env, reterr)) < 0)
    {
      berth_env_free (env);
      return r;
    }
  berth_env_refresh (env);
  _cleanup_free_ char *meta_path = env->name ? berth_strdup_printf ("%s/meta", env->state_dir) : NULL;
  bool existed = meta_path && access (meta_path, F_OK) == 0;
  /* A throw-away environment names its owner (this process), so `berth
     gc` can tell one whose berth was killed from one in use.  */
  if (env->name == NULL && (r = berth_env_record_owner (env, "owner", NULL, reterr)) < 0)
    {
      berth_remove_tree (env->state_dir);
      berth_remove_tree (env->runtime_dir);
      berth_env_free (env);
      return r;
    }
  berth_ctx_log (ctx, BERTH_LOG_DEBUG, "session", "open %s environment %s on %s (%s)", existed ? "existing" : "new", env->name ? env->name : env->id,
                 berth_env_backend (env), env->provider->origin);
  r = berth_provider_call_ensure (env, reterr);
  if (r < 0)
    {
      /* Nothing of a failed creation is left behind (a throw-away
         environment, or a named one that did not exist): what the
         backend made goes through its remove, as `berth rm` would, then
         the state and runtime directories with the lock.  */
      if (env->name == NULL || !existed)
        {
          /* past the setup bound, the cleanup still gets a short one */
          env->deadline_usec = berth_now_usec () + 2000000;
          berth_env_discard (env, true, NULL);
        }
      berth_env_unlock (env);
      berth_env_free (env);
      return r;
    }
  /* The image of an environment recorded without one is its backend's
     default: the backend had the say, the record does not change.  */
  if (env->image_unrecorded)
    {
      free (env->image);
      env->image = NULL;
    }
  env->created = true;
  /* A known environment is recorded again by each execute; here only
     what is new (and a state that cannot be written then fails the
     command that has something to record, with its output).  */
  if (env->name && (!existed || berth_env_meta_differs (env, meta_path)) && (r = berth_env_save (env, reterr)) < 0)
    {
      /* Not recorded: nobody could find it again.  A new one goes.  */
      if (!existed)
        berth_env_discard (env, true, NULL);
      berth_env_unlock (env);
      berth_env_free (env);
      return r;
    }
  berth_env_unlock (env);
  env->deadline_usec = 0;
  *ret = env;
  return 0;
}

/* A backend that declares cleanup_stops_processes keeps its word whatever
   escapes its own cleanup (a setsid child a node's process tracking
   lost): the recorded processes are stopped where they run first.  */
static void
stop_recorded_processes (berth_env *env)
{
  berth_error *err = NULL;
  if (!berth_provider_flag (env->provider, BERTH_FLAG_CLEANUP_STOPS_PROCESSES) || !berth_env_has_process_records (env))
    return;
  if (berth_provider_call_ensure (env, &err) < 0 || berth_env_stop_processes (env, &err) < 0)
    berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "process", "could not stop the processes of %s before its removal: %s", env->id,
                   berth_error_message (err));
  berth_error_free (err);
}

BERTH_EXPORT int
berth_env_cleanup (berth_env *env, berth_error **reterr)
{
  int r = 0;
  if (env == NULL || env->cleaned)
    return 0;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  env->cleaned = true;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "clean up %s environment %s", env->name ? "named" : "throw-away", env->name ? env->name : env->id);
  /* A named environment stays as it is (running) for the next
     invocation; a throw-away one goes for good.  */
  if (env->name == NULL)
    {
      stop_recorded_processes (env);
      r = berth_provider_call_remove (env, reterr);
      berth_remove_tree (env->state_dir);
      berth_remove_tree (env->runtime_dir);
    }
  return r;
}

char *
berth_env_resolve_cwd (berth_env *env, const char *cwd)
{
  if (cwd == NULL || *cwd == '\0')
    return env->cwd ? xstrdup (env->cwd) : NULL;
  if (cwd[0] == '/' || cwd[0] == '~' || env->cwd == NULL)
    return xstrdup (cwd);
  return xasprintf ("%s/%s", env->cwd, cwd);
}

BERTH_EXPORT int
berth_env_stop_idle (berth_env *env, berth_error **reterr)
{
  int guard_r_ = berth_scope_check (env, reterr);
  if (guard_r_ < 0)
    return guard_r_;
  if (env->cleaned)
    return berth_error_set (reterr, ESTALE, "environment %s was cleaned up", env->id);
  if (env->executing)
    return berth_error_set (reterr, EBUSY, "environment %s runs a command", env->name ? env->name : env->id);
  if (env->suspended || !berth_provider_call_has_stop (env->provider))
    return 0;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "suspend idle environment %s", env->name ? env->name : env->id);
  int r = berth_provider_call_stop (env, reterr);
  if (r >= 0)
    {
      env->suspended = true;
      /* `berth ls`, the reaper and the next berth see it suspended */
      if (env->name && berth_env_lock (env, NULL) >= 0)
        {
          berth_env_save (env, NULL);
          berth_env_unlock (env);
        }
    }
  return r;
}

int
berth_env_resume (berth_env *env, berth_error **reterr)
{
  if (!env->suspended)
    return 0;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "resume environment %s", env->name ? env->name : env->id);
  int r = berth_provider_call_ensure (env, reterr);
  if (r >= 0)
    env->suspended = false;
  return r;
}

BERTH_EXPORT berth_env *
berth_env_ref (berth_env *env)
{
  if (env)
    env->n_ref++;
  return env;
}

BERTH_EXPORT berth_env *
berth_env_unref (berth_env *env)
{
  if (env == NULL || --env->n_ref > 0)
    return NULL;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  berth_env_cleanup (env, NULL);
  berth_env_free (env);
  return NULL;
}

BERTH_EXPORT int
berth_env_remove (berth_ctx *ctx, const char *name, berth_error **reterr)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  int r;
  spec.name = name;
  r = berth_env_new (ctx, &spec, true, NULL, &env, reterr);
  if (r < 0)
    return r;
  BERTH_LOG_SCOPE (ctx, berth_env_backend (env));
  berth_ctx_log (ctx, BERTH_LOG_DEBUG, "session", "remove environment %s on %s", name, berth_env_backend (env));
  if ((r = berth_env_lock (env, reterr)) >= 0)
    r = berth_env_discard (env, false, reterr);
  env->cleaned = true;
  berth_env_free (env);
  return r;
}

int
berth_env_discard (berth_env *env, bool forget_anyway, berth_error **reterr)
{
  stop_recorded_processes (env);
  berth_env_tombstone_processes (env);
  berth_agent_quit (env); /* a named environment's serving agent (local, ssh: nothing else ends it) */
  int r = berth_provider_call_remove (env, reterr);
  env->cleaned = true;
  if (r >= 0 || forget_anyway)
    {
      berth_remove_tree (env->state_dir);
      berth_remove_tree (env->runtime_dir);
    }
  return r;
}

BERTH_EXPORT int
berth_gc (berth_ctx *ctx, berth_error **reterr)
{
  int64_t lifetime = berth_config_int (ctx->config, "terminal.lifetime_seconds", 300);
  int total = 0;
  berth_ctx_load_providers (ctx); /* leftovers of every backend */
  for (size_t i = 0; i < ctx->n_providers; i++)
    {
      const berth_provider *p = ctx->providers[i];
      berth_error *err = NULL;
      if (!berth_provider_call_has_gc (p))
        continue;
      BERTH_LOG_SCOPE (ctx, berth_provider_name (p));
      int r = berth_provider_call_gc (p, lifetime, &err);
      if (r > 0)
        total += r;
      if (r < 0)
        berth_ctx_log (ctx, BERTH_LOG_WARNING, "gc", "%s: %s", berth_provider_name (p), berth_error_message (err));
      berth_error_free (err);
    }
  return total;
}

BERTH_EXPORT int
berth_pull (berth_ctx *ctx, const char *backend, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  if (!image || !*image)
    return berth_error_set (reterr, BERTH_E_CONFIG, "berth pull: no image given");
  if (!backend || !*backend)
    backend = berth_config_string (ctx->config, "terminal.backend", "local");
  berth_provider *p = berth_ctx_find_provider (ctx, backend);
  if (!p)
    return berth_error_set (reterr, BERTH_E_NO_PROVIDER, "no backend named '%s' (see berth backends)", backend);
  BERTH_LOG_SCOPE (ctx, berth_provider_name (p));
  return berth_provider_call_pull (p, image, fn, userdata, reterr);
}

BERTH_EXPORT const char *berth_env_name (const berth_env *env) { return env->name; }
BERTH_EXPORT const char *berth_env_backend (const berth_env *env) { return env->provider->ops->name; }
BERTH_EXPORT const char *berth_env_cwd (const berth_env *env) { return env->cwd; }
BERTH_EXPORT const berth_config *berth_env_config (const berth_env *env) { return env->ctx->config; }
BERTH_EXPORT bool berth_env_is_persistent (const berth_env *env) { return env->name != NULL; }
BERTH_EXPORT const char *berth_env_image (const berth_env *env) { return env->image; }
BERTH_EXPORT const char *berth_env_task_id (const berth_env *env) { return env->task_id; }
BERTH_EXPORT const char *berth_env_id (const berth_env *env) { return env->id; }
BERTH_EXPORT const char *berth_env_state_dir (const berth_env *env) { return env->state_dir; }
BERTH_EXPORT uint64_t berth_env_deadline_usec (const berth_env *env) { return env->deadline_usec; }
BERTH_EXPORT const char *berth_env_runtime_dir (const berth_env *env) { return env->runtime_dir; }
BERTH_EXPORT void *berth_env_get_data (const berth_env *env) { return env->data; }
BERTH_EXPORT void berth_env_mark_recreated (berth_env *env) { env->recreated = true; }
BERTH_EXPORT const char *const *berth_env_passthrough (berth_env *env) { return (const char *const *) env->passthrough; }
BERTH_EXPORT const char *const *berth_env_host_environ (berth_env *env) { return (const char *const *) env->host_environ; }
