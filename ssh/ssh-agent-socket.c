/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-agent-socket.c: where this host reaches the socket of the remote
   agent (agent_socket in provider.h): a forward of the environment's
   master, `ssh -O forward -L LOCAL:REMOTE`, made once when the agent
   starts serving, from a socket in the environment's private control
   directory to the agent's socket on the host.  It lives as long as the
   master; a master started again has none, and the next berth process
   relays through a session and makes it again.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ssh-private.h"

#define FORWARD_NAME "agent.fwd"
#define FORWARD_TIMEOUT_S 10.0

int
ssh_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path)
{
  ssh_env *e = berth_env_get_data (env);
  _cleanup_free_ char *local = NULL, *spec = NULL, *out = NULL;
  if (e == NULL || e->control_dir == NULL || e->control_path == NULL || strchr (path, ':'))
    return -ENOTSUP;
  if (asprintf (&local, "%s/" FORWARD_NAME, e->control_dir) < 0)
    return -ENOMEM;
  if (!setup)
    {
      if (access (local, F_OK) < 0)
        return -ENOENT;
      *ret_path = local;
      local = NULL;
      return 0;
    }
  /* A master's listener is not unlinked when the master goes.  */
  unlink (local);
  ssh_settings s = settings_of (e);
  char **argv = NULL;
  int status = -1;
  int r = asprintf (&spec, "%s:%s", local, path) < 0 ? -ENOMEM : ssh_build_argv (&s, SSH_ARGV_CONTROL, true, "forward", &argv);
  /* -L before the destination, which ends the argv */
  size_t n = argv ? berth_strv_length ((const char *const *) argv) : 0;
  if (r == 0 && (r = berth_strv_push (&argv, "-L")) == 0 && (r = berth_strv_push (&argv, spec)) == 0)
    {
      char *dest = argv[n - 1];
      memmove (&argv[n - 1], &argv[n], 2 * sizeof *argv);
      argv[n + 1] = dest;
    }
  if (r == 0)
    r = berth_run_capture ((const char *const *) argv, NULL, NULL, berth_env_time_left (env, FORWARD_TIMEOUT_S), SSH_CAPTURE_MAX, &out, &status, NULL);
  berth_strv_free (argv);
  if (r == 0 && status != 0)
    {
      berth_logf (env, BERTH_LOG_DEBUG, "ssh: no forward to the agent's socket (%s): each berth process relays through a session", out ? out : "");
      r = -EPROTO;
    }
  if (r < 0)
    return r;
  *ret_path = local;
  local = NULL;
  return 0;
}
