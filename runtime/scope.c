/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* scope.c: hosted scopes (DESIGN 3.3, the provider guide's "Hosted
   scopes").  A context may be bound to a scope, (tenant, agent); one whose
   tenant is not "local" is *hosted*.  Every environment records the scope
   that created it, and every call into its provider -- the one dispatch
   layer, provider-call.c -- and every file operation first checks that
   the bound scope is that one (BERTH_E_SCOPE otherwise, also when no
   scope is bound).

   Under a hosted scope the sandbox is the agent's: its identity is
   (tenant, agent), never an environment name, task id or path -- all of
   an agent's sessions share one sandbox, two agents never do -- and only
   a backend that serves hosted scopes, with the whole hosted interface
   (its lifecycle's stop and remove, a transport), is accepted, before
   anything is created.  */
#include "config.h"

#include <string.h>

#include "berth-private.h"
#include "scope.h"

static bool
scope_word_is_valid (const char *s)
{
  size_t n = s ? strlen (s) : 0;
  if (n == 0 || n > 64)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
      return false;
  return true;
}

BERTH_EXPORT int
berth_ctx_set_scope (berth_ctx *ctx, const char *tenant, const char *agent, berth_error **reterr)
{
  if ((tenant == NULL) != (agent == NULL))
    return berth_error_set (reterr, EINVAL, "a scope names both a tenant and an agent (or neither)");
  if (tenant && (!scope_word_is_valid (tenant) || !scope_word_is_valid (agent)))
    return berth_error_set (reterr, EINVAL, "tenant and agent are 1 to 64 letters, digits, '.', '_' or '-'");
  free (ctx->scope_tenant);
  free (ctx->scope_agent);
  ctx->scope_tenant = xstrdup (tenant);
  ctx->scope_agent = xstrdup (agent);
  return 0;
}

bool
berth_scope_is_hosted (const char *tenant)
{
  return tenant != NULL && strcmp (tenant, "local") != 0;
}

BERTH_EXPORT bool
berth_ctx_is_hosted (const berth_ctx *ctx)
{
  return berth_scope_is_hosted (ctx->scope_tenant);
}

BERTH_EXPORT bool
berth_env_is_hosted (const berth_env *env)
{
  return berth_scope_is_hosted (env->owner_tenant);
}

BERTH_EXPORT const char *
berth_env_tenant (const berth_env *env)
{
  return env->owner_tenant;
}

BERTH_EXPORT const char *
berth_env_agent (const berth_env *env)
{
  return env->owner_agent;
}

static bool
same (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp (a, b) == 0);
}

int
berth_scope_check (const berth_env *env, berth_error **reterr)
{
  const berth_ctx *ctx = env->ctx;
  if (same (ctx->scope_tenant, env->owner_tenant) && same (ctx->scope_agent, env->owner_agent))
    return 0;
  return berth_error_set (reterr, BERTH_E_SCOPE, "cross-agent handle refused: environment %s belongs to %s/%s, the bound scope is %s%s%s",
                          env->name ? env->name : env->id, env->owner_tenant ? env->owner_tenant : "(none)", env->owner_agent ? env->owner_agent : "(none)",
                          ctx->scope_tenant ? ctx->scope_tenant : "none", ctx->scope_tenant ? "/" : "", ctx->scope_agent ? ctx->scope_agent : "");
}

char *
berth_scope_sandbox_name (const char *tenant, const char *agent)
{
  /* A stable name from the identity, not from anything the caller names:
     a hash over both words with a separator no word can hold.  */
  _cleanup_free_ char *key = xasprintf ("%s/%s", tenant, agent);
  return xasprintf ("h-%016llx", (unsigned long long) berth_fnv1a64 (key, strlen (key)));
}

int
berth_scope_admit (const berth_env *env, berth_error **reterr)
{
  const berth_provider *p = env->provider;
  const char *name = p->ops->name;
  if (!berth_env_is_hosted (env))
    return 0;
  if (!berth_provider_flag ((berth_provider *) p, BERTH_FLAG_SERVES_HOSTED_SCOPES))
    return berth_error_set (reterr, BERTH_E_HOSTED,
                            "backend %s cannot serve a hosted scope (tenant %s): it does not declare serves_hosted_scopes, so its "
                            "commands would not run in a sandbox of the agent's own; use a backend that does (berth backends)",
                            name, env->owner_tenant);
  /* the hosted interface: a transport (commands, processes, files and
     the temp dir all ride it), stop (idle suspension) and remove
     (cleanup) */
  const char *missing = p->ops->start == NULL && p->ops->exec_prefix == NULL ? "an execute transport (start or exec_prefix)"
                        : p->ops->stop == NULL                             ? "stop (idle suspension)"
                        : p->ops->remove == NULL                           ? "remove (cleanup)"
                                                                           : NULL;
  if (missing)
    return berth_error_set (reterr, BERTH_E_HOSTED, "backend %s declares serves_hosted_scopes but lacks %s of the hosted interface", name,
                            missing);
  return 0;
}
