/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* registry.c: the provider registry of a context (ctx.c): names,
   registration, lookups and each provider's properties.  Provider flags
   are data; lookups are fail-soft.  Modules and plugins load lazily:
   looking a backend up by name loads that one (loader.c); only
   berth_ctx_load_providers loads them all.  */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "berth-private.h"
#include "agent-client.h"
#include "provider-call.h"

static const char *const reserved_names[] = { BERTH_RESERVED_NAMES, NULL };

bool
berth_name_is_reserved (const char *name)
{
  return berth_strv_contains (reserved_names, name);
}

bool
berth_name_is_valid (const char *name)
{
  /* Words YAML reads as null or booleans cannot name a backend in a config. */
  static const char *const yaml_words[] = { "null", "true", "false", "yes", "no", "on", "off", "y", "n", NULL };
  if (name == NULL || *name == '\0' || strlen (name) > 64 || berth_strv_contains (yaml_words, name))
    return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

int
berth_ctx_register (berth_ctx *ctx, const berth_provider_ops *ops, const char *origin, void *dl, bool is_plugin, berth_error **reterr)
{
  berth_provider *p, **v;
  if (!berth_name_is_valid (ops->name))
    return berth_error_set (reterr, BERTH_E_PLUGIN, "%s: invalid backend name '%s' (use [a-z0-9_])", origin, ops->name ? ops->name : "");
  if (is_plugin && berth_name_is_reserved (ops->name))
    return berth_error_set (reterr, BERTH_E_PLUGIN, "%s: the name '%s' is reserved for a built-in backend", origin, ops->name);
  if (berth_ctx_find_registered (ctx, ops->name))
    return berth_error_set (reterr, BERTH_E_PLUGIN, "%s: a backend named '%s' is already registered", origin, ops->name);
  /* built-ins are checked as the loader checks a module or plugin */
  int r = berth_check_ops (ops, reterr);
  if (r < 0)
    return berth_error_wrap (reterr, r, "%s", origin);
  p = xcalloc (1, sizeof *p);
  v = xrealloc (ctx->providers, (ctx->n_providers + 1) * sizeof *v);
  ctx->providers = v;
  p->ops = ops;
  p->ctx = ctx;
  p->origin = xstrdup (origin);
  p->dl = dl;
  ctx->providers[ctx->n_providers++] = p;
  free (ctx->names);
  ctx->names = NULL;
  return 0;
}

BERTH_INTERNAL berth_provider *
berth_ctx_find_registered (berth_ctx *ctx, const char *name)
{
  for (size_t i = 0; name && i < ctx->n_providers; i++)
    if (strcmp (ctx->providers[i]->ops->name, name) == 0)
      return ctx->providers[i];
  return NULL;
}

BERTH_EXPORT berth_provider *
berth_ctx_find_provider (berth_ctx *ctx, const char *name)
{
  berth_provider *p = berth_ctx_find_registered (ctx, name);
  if (p || name == NULL)
    return p;
  /* Load just the module or plugin of that name (DESIGN 5).  */
  berth_ctx_scan (ctx);
  berth_load_named (ctx, name);
  return berth_ctx_find_registered (ctx, name);
}

BERTH_EXPORT int
berth_ctx_load_providers (berth_ctx *ctx)
{
  berth_ctx_scan (ctx);
  return berth_load_all (ctx);
}

BERTH_EXPORT berth_provider *
berth_ctx_next_provider (berth_ctx *ctx, size_t *cursor)
{
  if (*cursor >= ctx->n_providers)
    return NULL;
  return ctx->providers[(*cursor)++];
}

BERTH_EXPORT const char *
berth_ctx_provider_names (berth_ctx *ctx)
{
  berth_buf b = { 0 };
  if (ctx->names)
    return ctx->names;
  /* The registered ones, then those that would load on use (named
     without loading them: an error message never runs a library).  */
  berth_ctx_scan (ctx);
  for (size_t i = 0; i < ctx->n_providers; i++)
    berth_buf_printf (&b, "%s%s", i ? ", " : "", ctx->providers[i]->ops->name);
  for (size_t i = 0; i < ctx->n_plugins; i++)
    {
      const berth_plugin_info *pi = &ctx->plugins[i];
      bool seen = !pi->pending || berth_ctx_find_registered (ctx, pi->name);
      for (size_t j = 0; !seen && j < i; j++)
        seen = ctx->plugins[j].pending && strcmp (ctx->plugins[j].name, pi->name) == 0;
      if (!seen)
        berth_buf_printf (&b, "%s%s", b.len ? ", " : "", pi->name);
    }
  ctx->names = berth_buf_steal (&b);
  return ctx->names;
}

static const struct
{
  uint32_t flag;
  const char *name;
} flag_names[] = {
  { BERTH_FLAG_IS_REMOTE, "is_remote" },
  { BERTH_FLAG_IS_CONTAINER, "is_container" },
  { BERTH_FLAG_SKIP_CONTAINER_GUARDS, "skip_container_guards" },
  { BERTH_FLAG_USES_HOST_FILESYSTEM, "uses_host_filesystem" },
  { BERTH_FLAG_SUPPORTS_STREAMS, "supports_streams" },
  { BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT, "session_isolated_when_nonpersistent" },
  { BERTH_FLAG_CLEANUP_STOPS_PROCESSES, "cleanup_stops_processes" },
  { BERTH_FLAG_SERVES_HOSTED_SCOPES, "serves_hosted_scopes" },
};

BERTH_EXPORT const char *
berth_flag_name (uint32_t flag)
{
  for (size_t i = 0; i < ARRAY_SIZE (flag_names); i++)
    if (flag_names[i].flag == flag)
      return flag_names[i].name;
  return NULL;
}

BERTH_EXPORT const char *
berth_provider_name (const berth_provider *p)
{
  return p->ops->name;
}

BERTH_EXPORT const char *
berth_provider_description (const berth_provider *p)
{
  return p->ops->description ? p->ops->description : "";
}

BERTH_EXPORT const char *
berth_provider_origin (const berth_provider *p)
{
  return p->origin;
}

BERTH_EXPORT bool
berth_provider_flag (berth_provider *p, uint32_t flag)
{
  bool declared = (p->ops->flags & flag) != 0, v;
  if (berth_provider_call_flag (p, flag, &v) >= 0)
    return v;
  return declared;
}

BERTH_EXPORT const char *
berth_provider_default_cwd (const berth_provider *p)
{
  return p->ops->default_cwd;
}

BERTH_EXPORT const char *
berth_provider_cache_path_base (const berth_provider *p)
{
  return p->ops->cache_path_base;
}

BERTH_EXPORT int
berth_provider_probe (berth_provider *p, char **ret_reason)
{
  char *reason = NULL;
  int r;
  BERTH_LOG_SCOPE (p->ctx, p->ops->name);
  r = berth_provider_call_probe (p, &reason);
  if (r < 0 || r > BERTH_PROBE_UNAVAILABLE)
    {
      free (reason);
      reason = xasprintf ("probe failed (%d)", r);
      r = BERTH_PROBE_UNAVAILABLE;
    }
  *ret_reason = reason;
  return r;
}

BERTH_EXPORT const char *
berth_provider_setup_instructions (berth_provider *p)
{
  return p->ops->setup_instructions;
}

BERTH_EXPORT int
berth_provider_doctor (berth_provider *p, berth_check_fn fn, void *userdata)
{
  _cleanup_free_ char *reason = NULL;
  int state = berth_provider_probe (p, &reason);
  fn (userdata, "probe", state == BERTH_PROBE_READY, reason ? reason : "ready", state == BERTH_PROBE_READY ? NULL : p->ops->setup_instructions);
  berth_error *err = NULL;
  bool keys_ok = berth_provider_check_config (p, &err) >= 0;
  fn (userdata, "configuration", keys_ok, keys_ok ? "its keys are valid" : berth_error_message (err),
      keys_ok ? NULL : "fix the value in the file named (berth config set or unset the key)");
  berth_error_free (err);
  if (BERTH_HAS_FIELD (p->ops, berth_provider_ops, hints) && (p->ops->hints & BERTH_HINT_NO_AGENT))
    fn (userdata, "berth-agent", true, "not used by this backend (its transport's processes end with their berth): one exec per command", NULL);
  else
    berth_agent_doctor (p->ctx, p->ops->name, state == BERTH_PROBE_READY, berth_provider_flag (p, BERTH_FLAG_IS_REMOTE), fn, userdata);
  BERTH_LOG_SCOPE (p->ctx, p->ops->name);
  return berth_provider_call_doctor (p, fn, userdata);
}
