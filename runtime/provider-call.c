/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider-call.c: every call from the runtime into a provider's ops
   (the lifecycle, the transports, flag, probe, doctor, gc) goes through
   here: one place for the defaults of absent optional ops, for the order
   of the lifecycle (attach first, once; release last, once), and the one
   place a per-call check belongs.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "provider-call.h"
#include "scope.h"

/* The scope guard (scope.c) sits here: every call on an environment
   first checks that the bound scope is the one that created it.  */

int
berth_provider_call_attach (berth_env *env, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (env->attached)
    return 0;
  if (ops->env_data_size > 0 && env->data == NULL)
    env->data = xcalloc (1, ops->env_data_size);
  int r = ops->attach ? ops->attach (env, reterr) : 0;
  if (r < 0)
    {
      /* Not attached: what it filled goes, and the next call (a remove
         after a failed open) attaches again -- and fails the same way
         when nothing changed, rather than run on a half-filled block.  */
      if (ops->release)
        ops->release (env);
      if (env->data)
        memset (env->data, 0, ops->env_data_size);
      return r;
    }
  env->attached = true;
  return 0;
}

int
berth_provider_call_ensure (berth_env *env, berth_error **reterr)
{
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  r = berth_provider_call_attach (env, reterr);
  return r < 0 ? r : env->provider->ops->ensure (env, reterr);
}

int
berth_provider_call_stop (berth_env *env, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  int r = berth_scope_check (env, reterr);
  if (r >= 0)
    r = berth_provider_call_attach (env, reterr);
  return r < 0 || ops->stop == NULL ? r : ops->stop (env, reterr);
}

bool
berth_provider_call_has_stop (const berth_provider *p)
{
  return p->ops->stop != NULL;
}

int
berth_provider_call_remove (berth_env *env, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  int r = berth_scope_check (env, reterr);
  if (r >= 0)
    r = berth_provider_call_attach (env, reterr);
  return r < 0 || ops->remove == NULL ? r : ops->remove (env, reterr);
}

void
berth_provider_call_release (berth_env *env)
{
  if (env->attached && env->provider->ops->release)
    env->provider->ops->release (env);
  env->attached = false;
  free (env->data);
  env->data = NULL;
}

bool
berth_provider_call_has_exec_prefix (const berth_provider *p)
{
  return p->ops->exec_prefix != NULL;
}

int
berth_provider_call_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  uint32_t flags = 0;
  if (!BERTH_HAS_FIELD (ops, berth_provider_ops, terminal_prefix) || ops->terminal_prefix == NULL)
    return berth_provider_call_exec_prefix (env, user, true, ret_argv, &flags, reterr);
  int r = berth_scope_check (env, reterr);
  if (r < 0 || (r = berth_provider_call_attach (env, reterr)) < 0)
    return r;
  return ops->terminal_prefix (env, user, ret_argv, reterr);
}

int
berth_provider_call_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (!BERTH_HAS_FIELD (ops, berth_provider_ops, agent_socket) || ops->agent_socket == NULL || !env->attached)
    return -ENOTSUP;
  *ret_path = NULL;
  int r = ops->agent_socket (env, path, setup, ret_path, reterr);
  if (r >= 0 && *ret_path == NULL)
    r = -EINVAL;
  if (r < 0)
    {
      free (*ret_path);
      *ret_path = NULL;
    }
  return r;
}

int
berth_provider_call_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (ops->exec_prefix == NULL)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s has no transport", ops->name);
  int r = berth_scope_check (env, reterr);
  if (r < 0 || (r = berth_provider_call_attach (env, reterr)) < 0)
    return r;
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
  return p->ops->start_flags;
}

int
berth_provider_call_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  const berth_provider_ops *ops = env->provider->ops;
  if (ops->start == NULL)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s has no start transport", ops->name);
  int r = berth_scope_check (env, reterr);
  if (r < 0 || (r = berth_provider_call_attach (env, reterr)) < 0)
    return r;
  return ops->start (env, req, ret, reterr);
}

int
berth_provider_call_flag (const berth_provider *p, uint32_t flag, bool *ret)
{
  if (p->ops->flag == NULL)
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
