/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* transport.c: one transport per environment, chosen once: the agent's
   channel (agent-client.c) over its fallback, which is the provider's
   start, else a local spawn of its exec_prefix adapted into a start; the
   kill of a job's tree is the runtime's kill script run through the same
   transport unless the transport kills by itself.  */
#include "config.h"

#include <signal.h>
#include <string.h>

#include "agent-client.h"
#include "child.h"
#include "provider-call.h"
#include "scope.h"
#include "transport.h"
#include "wrapper.h"

/* ---- the provider's start ---- */

static int
start_prepare (berth_env *env, berth_transport_call *call, berth_error **reterr)
{
  call->prefix = NULL;
  call->flags = berth_provider_call_start_flags (env->provider);
  return 0;
}

static int
start_start (berth_env *env, const berth_transport_call *call, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  int r = berth_provider_call_start (env, req, ret, reterr);
  if (r < 0)
    return r;
  if (ret->ops == NULL || ret->fd < 0)
    return berth_error_set (reterr, BERTH_E_BACKEND, "backend %s started nothing", berth_env_backend (env));
  return 0;
}

static const berth_transport_ops start_transport = {
  .name = "exec",
  .via = "its start callback",
  .prepare = start_prepare,
  .start = start_start,
};

/* ---- a local spawn of the exec prefix ---- */

static int
prefix_prepare (berth_env *env, berth_transport_call *call, berth_error **reterr)
{
  char **prefix = NULL;
  uint32_t flags = 0;
  int r = berth_provider_call_exec_prefix (env, NULL, true, &prefix, &flags, reterr);
  if (r < 0)
    return r;
  call->prefix = prefix;
  call->flags = flags;
  return 0;
}

static int
prefix_start (berth_env *env, const berth_transport_call *call, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  _cleanup_strv_free_ char **argv = berth_strv_copy ((const char *const *) call->prefix);
  for (size_t i = 0; argv && req->argv[i]; i++)
    if (berth_strv_push (&argv, req->argv[i]) < 0)
      return berth_error_errno (reterr, ENOMEM, "out of memory");
  if (argv == NULL || argv[0] == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* The client (for local, the command's own shell) dies with this
     process: a berth killed with -9 does not leave it running.  */
  int r = berth_proc_spawn_fd ((const char *const *) argv, (const char *const *) env->host_environ, req->extra_fd,
                               (req->has_stdin ? BERTH_SPAWN_STDIN : 0) | BERTH_SPAWN_DIE_WITH_PARENT, ret, reterr);
  if (r < 0)
    return berth_error_wrap (reterr, r, "%s", berth_env_backend (env)); /* "local: cannot run bash: <why>" */
  return 0;
}

static const berth_transport_ops prefix_transport = {
  .name = "exec",
  .via = "its exec prefix",
  .prepare = prefix_prepare,
  .start = prefix_start,
};

/* ---- the interface ---- */

const berth_transport_ops *
berth_transport_fallback (berth_env *env)
{
  return berth_provider_call_has_start (env->provider) ? &start_transport : &prefix_transport;
}

const berth_transport_ops *
berth_transport_get (berth_env *env)
{
  /* The agent first, unless switched off (it falls back by itself where
     it cannot run: agent-client.c).  */
  if (env->transport == NULL)
    env->transport = berth_agent_wanted (env) ? &berth_agent_transport : berth_transport_fallback (env);
  return env->transport;
}

int
berth_transport_prepare (berth_env *env, berth_transport_call *call, berth_error **reterr)
{
  *call = (berth_transport_call){ 0 };
  /* The scope guard for what reaches no provider callback (a command
     over the agent's stream); provider-call.c checks every one that does. */
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  if ((r = berth_transport_get (env)->prepare (env, call, reterr)) < 0)
    return r;
  if (call->flags & BERTH_PREFIX_PASSES_ENV)
    call->start_environ = (const char *const *) env->host_environ;
  return r;
}

void
berth_transport_call_free (berth_transport_call *call)
{
  berth_strv_free (call->prefix);
  call->prefix = NULL;
}

int
berth_transport_start (berth_env *env, const berth_transport_call *call, const char *const *argv, uint32_t start_flags, bool has_stdin, int extra_fd,
                       uint64_t deadline_usec, berth_job *job, berth_error **reterr)
{
  return berth_transport_start_via (berth_transport_get (env), env, call, argv, start_flags, has_stdin, extra_fd, deadline_usec, job, reterr);
}

int
berth_transport_start_via (const berth_transport_ops *t, berth_env *env, const berth_transport_call *call, const char *const *argv,
                           uint32_t start_flags, bool has_stdin, int extra_fd, uint64_t deadline_usec, berth_job *job, berth_error **reterr)
{
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  berth_start_req req = {
    .size = sizeof req,
    .argv = argv,
    .has_stdin = has_stdin,
    .extra_fd = extra_fd,
    .deadline_usec = deadline_usec,
    .flags = start_flags | (call ? call->start_flags : 0),
  };
  *job = (berth_job){ .proc = { .size = sizeof job->proc, .fd = -1, .stdin_fd = -1 }, .transport = t };
  return t->start (env, call, &req, &job->proc, reterr);
}

int
berth_transport_kill (berth_env *env, const char *token, long pid, double timeout, int *ret_status, berth_error **reterr)
{
  const berth_transport_ops *t = berth_transport_get (env);
  if (ret_status)
    *ret_status = -1;
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  if (t->kill)
    return t->kill (env, token, pid, timeout, ret_status, reterr);
  _cleanup_free_ char *ks = berth_kill_script (token, pid);
  return berth_job_run_script (env, ks, timeout, ret_status, reterr);
}

bool
berth_transport_data_pending (const berth_job *job)
{
  const berth_proc_ops *ops = job->proc.ops;
  if (ops && BERTH_HAS_FIELD (ops, berth_proc_ops, data_pending) && ops->data_pending)
    return ops->data_pending (job->proc.proc);
  return job->transport && job->transport->data_pending && ops && job->transport->data_pending (&job->proc);
}

int
berth_transport_kill_job (berth_env *env, berth_job *job, const char *token, long pid, double timeout, int *ret_status, berth_error **reterr)
{
  const berth_proc_ops *ops = job->proc.ops;
  if (ops && BERTH_HAS_FIELD (ops, berth_proc_ops, kill) && ops->kill)
    {
      /* The transport signals the tree where it runs (its own session or
         cgroup there): no kill script to start.  */
      int r = ops->kill (job->proc.proc, SIGKILL, reterr);
      if (r != -ENOTSUP)
        {
          if (ret_status)
            *ret_status = r < 0 ? -1 : 0;
          berth_job_finish (job, BERTH_JOB_KILL);
          return r;
        }
    }
  berth_job_finish (job, BERTH_JOB_KILL);
  return berth_transport_kill (env, token, pid, timeout, ret_status, reterr);
}
