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
  berth_provider_call_free_data (env);
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
  berth_strv_free (env->host_environ);
  berth_strv_free (env->passthrough);
  free (env);
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
  env->ctx = ctx;
  env->n_ref = 1;
  env->lock_fd = -1;
  if (name && !berth_env_name_is_valid (name))
    {
      free (env);
      return berth_error_set (reterr, BERTH_E_ENV, "invalid environment name '%s': use letters, digits, '.', '_' and '-' (at most 64)", name);
    }
  if ((r = berth_random_hex (hex, 6)) < 0)
    {
      free (env);
      return berth_error_errno (reterr, -r, "no randomness");
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
      berth_rm_rf (env->state_dir);
      berth_rm_rf (env->runtime_dir);
      berth_env_free (env);
      return r;
    }
  berth_ctx_log (ctx, BERTH_LOG_DEBUG, "session", "open %s environment %s on %s (%s)", existed ? "existing" : "new", env->name ? env->name : env->id,
                 berth_env_backend (env), env->provider->origin);
  r = berth_provider_call_create (env, reterr);
  if (r < 0)
    {
      /* Nothing of a failed creation is left behind (a throw-away
         environment, or a named one that did not exist): what the
         backend made goes through its cleanup, as `berth rm` would, then
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

BERTH_EXPORT int
berth_env_cleanup (berth_env *env, berth_error **reterr)
{
  int r = 0;
  if (env == NULL || env->cleaned)
    return 0;
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  env->cleaned = true;
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "session", "clean up %s environment %s", env->name ? "named" : "throw-away", env->name ? env->name : env->id);
  r = berth_provider_call_cleanup (env, env->name == NULL, reterr);
  if (env->name == NULL)
    {
      berth_rm_rf (env->state_dir);
      berth_rm_rf (env->runtime_dir);
    }
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
  int r = berth_provider_call_cleanup (env, true, reterr);
  env->cleaned = true;
  if (r >= 0 || forget_anyway)
    {
      berth_rm_rf (env->state_dir);
      berth_rm_rf (env->runtime_dir);
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
BERTH_EXPORT void berth_env_set_data (berth_env *env, void *data) { env->data = data; }
BERTH_EXPORT void *berth_env_get_data (const berth_env *env) { return env->data; }
BERTH_EXPORT void berth_env_mark_recreated (berth_env *env) { env->recreated = true; }
BERTH_EXPORT const char *const *berth_env_passthrough (berth_env *env) { return (const char *const *) env->passthrough; }
BERTH_EXPORT const char *const *berth_env_host_environ (berth_env *env) { return (const char *const *) env->host_environ; }
