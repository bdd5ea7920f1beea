/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider-call.h: the one dispatch layer into a provider.  Every runtime
   caller goes through these wrappers, never through the provider's ops
   table directly (curl's Curl_ssl_* over struct Curl_ssl): an optional op
   that is absent gets its default here, once.  */
#ifndef BERTH_PROVIDER_CALL_H
#define BERTH_PROVIDER_CALL_H

#include "berth-private.h"

/* The environment's provider: its lifecycle.  Attach runs once, first
   (ensure, stop and remove attach when it has not run); release runs
   last (berth_env_free) and frees the data block.  An absent optional op
   succeeds.  */
BERTH_INTERNAL int berth_provider_call_attach (berth_env *env, berth_error **reterr);
BERTH_INTERNAL int berth_provider_call_ensure (berth_env *env, berth_error **reterr);
BERTH_INTERNAL int berth_provider_call_stop (berth_env *env, berth_error **reterr);
BERTH_INTERNAL bool berth_provider_call_has_stop (const berth_provider *p);
BERTH_INTERNAL int berth_provider_call_remove (berth_env *env, berth_error **reterr);
BERTH_INTERNAL void berth_provider_call_release (berth_env *env);
BERTH_INTERNAL bool berth_provider_call_has_exec_prefix (const berth_provider *p);
/* The provider's agent_socket (provider.h) on an attached ENV;
   -ENOTSUP when it has none.  */
BERTH_INTERNAL int berth_provider_call_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr);
BERTH_INTERNAL int berth_provider_call_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr);
BERTH_INTERNAL int berth_provider_call_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags,
                                                    berth_error **reterr);
BERTH_INTERNAL bool berth_provider_call_has_start (const berth_provider *p);
/* BERTH_PREFIX_* that hold for the start transport.  */
BERTH_INTERNAL uint32_t berth_provider_call_start_flags (const berth_provider *p);
BERTH_INTERNAL int berth_provider_call_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr);
/* The provider itself, no environment.  */
/* Returns < 0 when the provider has no flag op or it declined.  */
BERTH_INTERNAL int berth_provider_call_flag (const berth_provider *p, uint32_t flag, bool *ret);
/* BERTH_PROBE_READY, reason NULL, when the provider has no probe.  */
BERTH_INTERNAL int berth_provider_call_probe (const berth_provider *p, char **ret_reason);
/* 0 when the provider has no doctor.  */
BERTH_INTERNAL int berth_provider_call_doctor (const berth_provider *p, berth_check_fn fn, void *userdata);
BERTH_INTERNAL bool berth_provider_call_has_gc (const berth_provider *p);
BERTH_INTERNAL int berth_provider_call_gc (const berth_provider *p, int64_t lifetime, berth_error **reterr);
/* -ENOTSUP with a message when the provider has no pull.  */
BERTH_INTERNAL int berth_provider_call_pull (const berth_provider *p, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr);

#endif
