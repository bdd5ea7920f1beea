/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ctx.c: the context: its directories, the built-in backends registered
   at creation (registry.c), the layered configuration (system, user,
   BERTH_CONFIG, --config), the user file's path, and the library's
   version.  Modules and plugins are not loaded here (loader.c, lazily).  */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <dlfcn.h>

#include "berth-private.h"

static char *
runtime_dir (void)
{
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if (xdg && xdg[0] == '/' && access (xdg, W_OK) == 0)
    return xasprintf ("%s/berth", xdg);
  return xasprintf ("/tmp/berth-%u", (unsigned) getuid ());
}

BERTH_EXPORT int
berth_ctx_new (berth_ctx **ret, berth_error **reterr)
{
  berth_ctx *ctx = xcalloc (1, sizeof *ctx);
  ctx->n_ref = 1;
  ctx->config = berth_config_new ();
  _cleanup_free_ char *state = berth_xdg_dir ("XDG_STATE_HOME", ".local/state");
  ctx->state_dir = xasprintf ("%s/berth", state);
  ctx->runtime_dir = runtime_dir ();
  for (size_t i = 0; berth_builtin_providers[i]; i++)
    {
      int r = berth_ctx_register (ctx, berth_builtin_providers[i], "builtin", NULL, false, reterr);
      if (r < 0)
        {
          berth_ctx_unref (ctx);
          return r;
        }
    }
  *ret = ctx;
  return 0;
}

BERTH_EXPORT berth_ctx *
berth_ctx_ref (berth_ctx *ctx)
{
  if (ctx)
    ctx->n_ref++;
  return ctx;
}

BERTH_EXPORT berth_ctx *
berth_ctx_unref (berth_ctx *ctx)
{
  if (ctx == NULL || --ctx->n_ref > 0)
    return NULL;
  for (size_t i = 0; i < ctx->n_providers; i++)
    {
      free (ctx->providers[i]->origin);
      if (ctx->providers[i]->dl)
        dlclose (ctx->providers[i]->dl);
      free (ctx->providers[i]);
    }
  for (size_t i = 0; i < ctx->n_plugins; i++)
    berth_plugin_info_clear (&ctx->plugins[i]);
  free (ctx->plugins);
  free (ctx->providers);
  free (ctx->names);
  berth_strv_free (ctx->config_deferred);
  free (ctx->scope_tenant);
  free (ctx->scope_agent);
  free (ctx->state_dir);
  free (ctx->runtime_dir);
  berth_config_free (ctx->config);
  free (ctx);
  return NULL;
}

/* BERTH_DEBUG=config: the files merged, in order, and those absent.  */
static void
log_config_files (berth_ctx *ctx, const char *system, const char *user, const char *env, const char *extra)
{
  const char *what[] = { "system", "user", "BERTH_CONFIG", "--config" };
  const char *files[] = { system, user, env && *env ? env : NULL, extra };
  for (size_t i = 0; i < ARRAY_SIZE (files); i++)
    if (files[i])
      berth_ctx_log (ctx, BERTH_LOG_DEBUG, "config", "%s file %s%s", what[i], files[i], access (files[i], F_OK) == 0 ? ": merged" : ": not present");
}

BERTH_EXPORT int
berth_ctx_load_config (berth_ctx *ctx, const char *extra, berth_error **reterr)
{
  _cleanup_free_ char *system = xasprintf ("%s/berth/config.yaml", BERTH_SYSCONFDIR);
  _cleanup_free_ char *user = berth_config_user_path ();
  const char *env = getenv ("BERTH_CONFIG");
  const char *sys_override = getenv ("BERTH_SYSTEM_CONFIG"); /* for tests of the layering */
  _cleanup_strv_free_ char **unknown = NULL; /* keys to warn about */
  berth_config_warn_fn w = berth_config_unknown_collect;
  int r;
  log_config_files (ctx, sys_override ? sys_override : system, user, env, extra);
  if ((r = berth_config_merge_file_warn (ctx->config, sys_override ? sys_override : system, false, w, &unknown, reterr)) < 0)
    return r;
  if (user && (r = berth_config_merge_file_warn (ctx->config, user, false, w, &unknown, reterr)) < 0)
    return r;
  if (env && *env && (r = berth_config_merge_file_warn (ctx->config, env, true, w, &unknown, reterr)) < 0)
    return r;
  if (extra && (r = berth_config_merge_file_warn (ctx->config, extra, true, w, &unknown, reterr)) < 0)
    return r;
  /* Nothing is loaded here: the scan of modules and plugins (it needs
     plugins.enabled) runs on first use, and each library is loaded only
     when its backend is looked up (berth_ctx_find_provider) or when a
     listing asks for all (berth_ctx_load_providers).  The configuration
     check needs no provider: the schema of the known keys is a table
     (config.c), and unknown keys are only warned about, so a backend's settings are
     validated the same whether or not its module is loaded.  */
  ctx->config_loaded = true;
  /* Now that plugins.enabled is known: a plugin's own keys are not typos. */
  berth_config_unknown_report (ctx, unknown);
  return 0;
}

BERTH_EXPORT const berth_config *
berth_ctx_config (const berth_ctx *ctx)
{
  return ctx->config;
}

BERTH_EXPORT int
berth_ctx_config_get (berth_ctx *ctx, const char *path, char **ret, berth_error **reterr)
{
  return berth_config_render (ctx->config, path, ret, reterr);
}

BERTH_EXPORT char *
berth_config_user_path (void)
{
  _cleanup_free_ char *dir = berth_xdg_dir ("XDG_CONFIG_HOME", ".config");
  return xasprintf ("%s/berth/config.yaml", dir);
}

BERTH_EXPORT int
berth_config_user_set (const char *path, const char *value, berth_error **reterr)
{
  _cleanup_free_ char *file = berth_config_user_path ();
  if (file == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return berth_config_set_in_file (file, path, value, reterr);
}

BERTH_EXPORT const char *
berth_version (void)
{
  return PACKAGE_VERSION;
}
