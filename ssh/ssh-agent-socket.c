/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-agent-socket.c: where this host reaches the socket of the remote
   agent (agent_socket in provider.h): a forward of the environment's
   master, `ssh -O forward -L LOCAL:REMOTE`, made when an agent starts
   serving and the master has none yet, from a socket in the
   environment's private control directory to the agent's socket on the
   host.  It lives as long as the
   master; a master started again has none, and the next berth process
   relays through a session and makes it again.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ssh-mux.h"
#include "ssh-private.h"

#define FORWARD_TIMEOUT_S 10.0

/* The forward's local end, named after the remote path: a master keeps
   a forward for the life of the connection, and another path (another
   agent version) is another forward.  */
static char *
local_end (const ssh_env *e, const char *path)
{
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *) path; *p; p++)
    h = (h ^ *p) * 16777619u;
  char *local = NULL;
  return asprintf (&local, "%s/agent-%08x.fwd", e->control_dir, h) < 0 ? NULL : local;
}

/* Whether a listener answers at PATH.  */
static bool
listening (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return false;
  strcpy (sa.sun_path, path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool ok = s >= 0 && connect (s, (struct sockaddr *) &sa, sizeof sa) == 0;
  if (s >= 0)
    close (s);
  return ok;
}

int
ssh_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr)
{
  ssh_env *e = berth_env_get_data (env);
  _cleanup_free_ char *local = NULL, *spec = NULL, *out = NULL;
  if (e == NULL || e->control_dir == NULL || e->control_path == NULL || strchr (path, ':'))
    return -ENOTSUP;
  if ((local = local_end (e, path)) == NULL)
    return -ENOMEM;
  /* The forward of this master (the listener answers), or of none.  A
     master that does not answer (stopped, wedged) would take the
     connection into its backlog and never forward it: asked first, in
     process, as start does.  */
  if (!setup || listening (local))
    {
      if (access (local, F_OK) < 0)
        return -ENOENT;
      if (ssh_mux_check (e->control_path, SSH_MUX_RECHECK_MS, NULL) != SSH_MUX_ALIVE)
        {
          _cleanup_free_ char *dest = ssh_destination (e);
          return berth_error_set (reterr, BERTH_E_BACKEND, "ssh: the connection to %s was lost while the command ran (its connection master is gone)",
                                  dest ? dest : e->host);
        }
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
