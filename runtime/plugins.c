/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plugins.c: the consumer side of the loader's records (<berth/plugins.h>)
   and plugins.enabled editing.  */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <berth/plugins.h>

#include "loader.h"

BERTH_EXPORT const berth_plugin_info *
berth_ctx_next_plugin (berth_ctx *ctx, size_t *cursor)
{
  if (ctx == NULL || cursor == NULL)
    return NULL;
  berth_ctx_scan (ctx);
  if (*cursor >= ctx->n_plugins)
    return NULL;
  return &ctx->plugins[(*cursor)++];
}

BERTH_EXPORT const berth_plugin_info *
berth_ctx_find_plugin (berth_ctx *ctx, const char *name)
{
  const berth_plugin_info *found = NULL;
  if (ctx)
    berth_ctx_scan (ctx);
  for (size_t i = 0; ctx && name && i < ctx->n_plugins; i++)
    if (ctx->plugins[i].name && strcmp (ctx->plugins[i].name, name) == 0)
      {
        /* Prefer the one that loaded, then a plugin over a module.  */
        if (ctx->plugins[i].loaded)
          return &ctx->plugins[i];
        if (found == NULL || !berth_plugin_info_is_module (&ctx->plugins[i]))
          found = &ctx->plugins[i];
      }
  return found;
}

BERTH_EXPORT const char *
berth_plugin_name (const berth_plugin_info *p)
{
  return p ? p->name : NULL;
}

BERTH_EXPORT const char *
berth_plugin_version (const berth_plugin_info *p)
{
  return p ? p->version : NULL;
}

BERTH_EXPORT const char *
berth_plugin_description (const berth_plugin_info *p)
{
  return p ? p->description : NULL;
}

BERTH_EXPORT const char *
berth_plugin_path (const berth_plugin_info *p)
{
  return p ? p->path : NULL;
}

BERTH_EXPORT bool
berth_plugin_is_module (const berth_plugin_info *p)
{
  return p && berth_plugin_info_is_module (p);
}

BERTH_EXPORT bool
berth_plugin_enabled (const berth_plugin_info *p)
{
  return p && p->enabled;
}

BERTH_EXPORT bool
berth_plugin_loaded (const berth_plugin_info *p)
{
  return p && p->loaded;
}

BERTH_EXPORT const char *
berth_plugin_status (const berth_plugin_info *p)
{
  return p ? (p->status ? p->status : "unknown") : NULL;
}

BERTH_EXPORT char *
berth_plugins_dir (void)
{
  return berth_plugins_dir_internal ();
}

BERTH_EXPORT int
berth_plugins_set_enabled (berth_ctx *ctx, const char *name, bool enable, berth_error **reterr)
{
  if (name == NULL || !berth_name_is_valid (name))
    return berth_error_set (reterr, EINVAL, "'%.64s' is not a plugin name (use [a-z0-9_])", name ? name : "");

  _cleanup_strv_free_ char **cur = ctx && ctx->config ? berth_config_strv (ctx->config, "plugins.enabled") : NULL;
  bool present = berth_strv_contains ((const char *const *) cur, name);
  if (present == enable)
    return 0;

  if (enable)
    {
      _cleanup_free_ char *dir = berth_plugins_dir_internal ();
      _cleanup_free_ char *yaml = dir ? berth_strdup_printf ("%s/%s/plugin.yaml", dir, name) : NULL;
      struct stat st;
      if (yaml == NULL)
        return berth_error_errno (reterr, ENOMEM, "cannot enable %s", name);
      if (berth_name_is_reserved (name))
        return berth_error_set (reterr, BERTH_E_PLUGIN, "'%s' is a built-in backend name, not a plugin", name);
      if (stat (yaml, &st) < 0)
        return berth_error_set (reterr, BERTH_E_PLUGIN, "plugin %s is not installed (no %s): install it first", name, yaml);
    }

  berth_buf b = { 0 };
  int r = berth_buf_puts (&b, "[");
  bool first = true;
  for (size_t i = 0; r >= 0 && cur && cur[i]; i++)
    {
      if (!enable && strcmp (cur[i], name) == 0)
        continue;
      if (!berth_name_is_valid (cur[i]))
        continue; /* cannot be written as a plain flow scalar; never loadable */
      r = berth_buf_printf (&b, "%s%s", first ? "" : ", ", cur[i]);
      first = false;
    }
  if (r >= 0 && enable)
    r = berth_buf_printf (&b, "%s%s", first ? "" : ", ", name);
  if (r >= 0)
    r = berth_buf_puts (&b, "]");
  if (r < 0)
    {
      berth_buf_free (&b);
      return berth_error_errno (reterr, ENOMEM, "cannot %s %s", enable ? "enable" : "disable", name);
    }

  _cleanup_free_ char *home = berth_xdg_dir ("XDG_CONFIG_HOME", ".config");
  _cleanup_free_ char *file = home ? berth_strdup_printf ("%s/berth/config.yaml", home) : NULL;
  if (file == NULL)
    {
      berth_buf_free (&b);
      return berth_error_errno (reterr, ENOMEM, "cannot %s %s", enable ? "enable" : "disable", name);
    }
  r = berth_config_set_in_file (file, "plugins.enabled", b.data, reterr);
  berth_buf_free (&b);
  return r < 0 ? r : 1;
}

BERTH_EXPORT int
berth_plugins_doctor (berth_ctx *ctx, berth_check_fn fn, void *userdata)
{
  int failed = 0;
  if (ctx)
    berth_ctx_load_providers (ctx); /* a doctor looks at every one */
  for (size_t i = 0; ctx && fn && i < ctx->n_plugins; i++)
    {
      const berth_plugin_info *p = &ctx->plugins[i];
      bool module = berth_plugin_info_is_module (p);
      _cleanup_free_ char *check = berth_strdup_printf ("%s %s", module ? "module" : "plugin", p->name);
      const char *status = p->status ? p->status : "unknown";
      bool ok = p->loaded || (!p->enabled && strcmp (status, "disabled") == 0);
      _cleanup_free_ char *fix = NULL;
      if (!ok && module)
        fix = berth_strdup_printf ("remove or reinstall %s (a module built for this berth %s)", p->path, PACKAGE_VERSION);
      else if (!ok && p->enabled)
        fix = berth_strdup_printf ("fix or reinstall the plugin in %s, or run: berth plugins disable %s", p->path, p->name);
      else if (!ok)
        fix = berth_strdup_printf ("fix the plugin in %s before enabling it, or remove it", p->path);
      if (!ok)
        failed++;
      fn (userdata, check ? check : p->name, ok, status, fix);
    }
  return failed;
}
