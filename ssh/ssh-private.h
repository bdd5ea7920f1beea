/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-private.h: what the ssh backend's ops (ssh.c) and its ControlMaster
   lifecycle (ssh-master.c) share: the per-environment data, its settings
   for ssh-argv.c, the constants, and the master's interface.  */
#ifndef SSH_PRIVATE_H
#define SSH_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <berth/provider.h>
#include <berth/provider-util.h>
#include "ssh-argv.h"

#define SSH_DEFAULT_CONNECT_TIMEOUT 10
#define SSH_DEFAULT_PERSIST_NAMED 600
#define SSH_DEFAULT_PERSIST_THROWAWAY 300
#define SSH_MUX_CHECK_MS 2000 /* a master answers in well under 1 ms */
#define SSH_MUX_RECHECK_MS 500
#define SSH_CAPTURE_MAX 16384
#define SSH_PROBE_MS 2000 /* a round trip over a master that is marked stalled */

typedef struct ssh_env
{
  char *ssh; /* absolute path of the client */
  char *helper;
  char *host, *user, *key;
  char **options;
  int port;
  int connect_timeout;
  int control_persist;
  char *control_path;
  char *control_dir;
  char *lock_path;
  char *pid_path;
  char *dest_path; /* the settings the running master was started with */
  char *identity;
  char *shell_path; /* what the remote login shell is: "bash" or "other" */
  char *stall_path; /* exists: a command over the master got no byte back */
  bool direct_bash; /* run `bash -c X` as X in the remote login bash */
  bool allow_direct;
  bool persistent;
} ssh_env;

static inline ssh_settings
settings_of (const ssh_env *e)
{
  return (ssh_settings){
    .ssh = e->ssh,
    .host = e->host,
    .user = e->user,
    .key = e->key,
    .port = e->port,
    .options = (const char *const *) e->options,
    .connect_timeout = e->connect_timeout,
    .control_persist = e->control_persist,
    .control_path = e->control_path,
  };
}

/* ---- the master (ssh-master.c) ---- */

/* Merged ssh output reduced to its last meaningful line (malloc'd).  */
char *ssh_last_line (const char *out);
/* "user@host[ port N]" for messages (malloc'd).  */
char *ssh_destination (const ssh_env *e);
/* Stop this environment's master (STATE: what ssh_mux_check said), and
   SIGKILL one that does not answer; its socket, pid and stall files go.  */
void ssh_stop_master (berth_env *env, const char *control_path, const char *pid_path, int state);
/* Everything that decides where the master connects (malloc'd), and
   whether the running master was started with it.  */
char *ssh_identity_of (const ssh_env *e);
bool ssh_identity_matches (const ssh_env *e);
/* The recorded answer to "is the remote login shell bash"; false when none.  */
bool ssh_read_shell (const char *path, bool *ret_bash);
/* Ask the remote login shell (or the day's cached answer) and record it
   in e->direct_bash and next to the socket.  */
void ssh_detect_shell (berth_env *env, ssh_env *e, uint64_t deadline);
/* Make sure this environment's master answers, starting (or replacing)
   one within DEADLINE (monotonic usec, 0 none).  */
int ssh_ensure_master (berth_env *env, ssh_env *e, uint64_t deadline, berth_error **reterr);
/* The control socket, its directory, lock and pid files, derived from the
   runtime directory RT alone.  0 or -ENOMEM.  */
int ssh_env_paths (const char *rt, char **ret_path, char **ret_dir, char **ret_lock, char **ret_pid);

/* ssh-agent-socket.c: agent_socket (provider.h), a forward of the master.  */
int ssh_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr);

#endif
