/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-mux.h: talk to an OpenSSH ControlMaster directly over its control
   socket (PROTOCOL.mux): the liveness check `ssh -O check` does, without
   forking a client.  Self-contained (of libberth only the clock of
   <berth/provider-util.h>).  */
#ifndef SSH_MUX_H
#define SSH_MUX_H

#include <sys/types.h>

enum
{
  SSH_MUX_ALIVE = 1, /* the master answered; *ret_pid is its pid */
  SSH_MUX_ABSENT = 0, /* no socket, or nobody listening (stale) */
};

/* Check the master listening on PATH within TIMEOUT_MS milliseconds.
   Returns SSH_MUX_ALIVE (and the master's pid), SSH_MUX_ABSENT,
   -ETIMEDOUT when something accepts but does not answer (a wedged master),
   -EPROTO when the answer is not the mux protocol, -ENAMETOOLONG, or
   another -errno.  */
int ssh_mux_check (const char *path, int timeout_ms, pid_t *ret_pid);

/* Ask the master on PATH to exit (what `ssh -O exit` does).  0 when it
   acknowledged or went away, SSH_MUX_ABSENT (0) when nobody listens,
   -ETIMEDOUT when it does not answer, -EPERM/-EPROTO/-errno.  */
int ssh_mux_terminate (const char *path, int timeout_ms);

#endif
