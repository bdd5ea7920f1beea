/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider-call.c: every call from the runtime into a provider's ops
   (create, cleanup, the transports, flag, probe, doctor, gc, free_data)
   goes through here: one place for the defaults of absent optional ops,
   and the one place a per-call check belongs.  */
#include "config.h"

#include <errno.h>

#include "provider-call.h"

/* The hosted-scope guard (issue 13+) sits here: each wrapper checks the
   caller's scope before it calls into the provider.  */

int
berth_provider_call_create (berth_env *env, berth_error **reterr)
{
  return env->provider->ops->create (env, reterr);
}

int
berth_provider_call_cleanup (berth_env *env, bool remove, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  return ops->cleanup ? ops->cleanup (env, remove, reterr) : 0;
}

bool
berth_provider_call_has_exec_prefix (const berth_provider *p)
{
  return p->ops->exec_prefix != NULL;
}

int
berth_provider_call_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (ops->exec_prefix == NULL)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s has no transport", ops->name);
  return ops->exec_prefix (env, user, interactive, ret_argv, ret_flags, reterr);
}

bool
berth_provider_call_has_start (const berth_provider *p)
{
  return p->ops->start != NULL;
}

uint32_t
berth_provider_call_start_flags (const berth_provider *p)
{
  return BERTH_HAS_FIELD (p->ops, berth_provider_ops, start_flags) ? p->ops->start_flags : 0;
}

int
berth_provider_call_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (ops->start == NULL)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s has no start transport", ops->name);
  return ops->start (env, req, ret, reterr);
}

void
berth_provider_call_free_data (berth_env *env)
{
  if (env->data && env->provider->ops->free_data)
    env->provider->ops->free_data (env->data);
}

int
berth_provider_call_flag (const berth_provider *p, uint32_t flag, bool *ret)
{
  if (!BERTH_HAS_FIELD (p->ops, berth_provider_ops, flag) || p->ops->flag == NULL)
    return -ENOTSUP;
  return p->ops->flag (p->ctx->config, flag, ret);
}

int
berth_provider_call_probe (const berth_provider *p, char **ret_reason)
{
  *ret_reason = NULL;
  if (p->ops->probe == NULL)
    return BERTH_PROBE_READY;
  return p->ops->probe (p->ctx->config, ret_reason);
}

int
berth_provider_call_doctor (const berth_provider *p, berth_check_fn fn, void *userdata)
{
  return p->ops->doctor ? p->ops->doctor (p->ctx->config, fn, userdata) : 0;
}

bool
berth_provider_call_has_gc (const berth_provider *p)
{
  return p->ops->gc != NULL;
}

int
berth_provider_call_gc (const berth_provider *p, int64_t lifetime, berth_error **reterr)
{
  return p->ops->gc ? p->ops->gc (p->ctx->config, lifetime, reterr) : 0;
}

int
berth_provider_call_pull (const berth_provider *p, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  if (!BERTH_HAS_FIELD (p->ops, berth_provider_ops, pull) || p->ops->pull == NULL)
    return berth_error_set (reterr, -ENOTSUP, "backend %s has no images to pull: it prepares its environments on first use", p->ops->name);
  return p->ops->pull (p->ctx->config, image, fn, userdata, reterr);
}
