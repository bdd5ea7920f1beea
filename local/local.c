/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* local.c: commands run on the host, as the user.  The transport is the
   empty prefix: the words run directly, with the scrubbed environment and
   inherited fds.  The reference behaviour for the contract suite.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <berth/provider.h>

/* Nothing to make: the host is there.  */
static int
local_ensure (berth_env *env, berth_error **reterr)
{
  return 0;
}

static int
local_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  char **argv;
  if (user && *user)
    return berth_error_set (reterr, ENOTSUP, "local: running as another user (%s) is not supported", user);
  argv = berth_strv_new (NULL);
  if (argv == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  *ret_argv = argv;
  *ret_flags = BERTH_PREFIX_PASSES_ENV | BERTH_PREFIX_PASSES_FDS;
  return 0;
}

/* The agent's socket is a host path already.  */
static int
local_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr)
{
  *ret_path = strdup (path);
  return *ret_path ? 0 : -ENOMEM;
}

const berth_provider_ops berth_local_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "local",
  .display_name = "Local shell",
  .description = "commands run on this host as the current user",
  .env_description = "Commands run directly on the user's machine; files you change are the user's files.",
  .flags = BERTH_FLAG_USES_HOST_FILESYSTEM | BERTH_FLAG_SUPPORTS_STREAMS,
  .ensure = local_ensure,
  .exec_prefix = local_exec_prefix,
  .agent_socket = local_agent_socket,
};

BERTH_PROVIDER_EXPORT (berth_local_provider)
