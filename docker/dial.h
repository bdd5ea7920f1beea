/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dial.h: DOCKER_HOST=ssh://[USER@]HOST[:PORT], as the docker CLI does it:
   each connection to the engine is a local `ssh ... HOST docker system
   dial-stdio` whose stdin and stdout carry the HTTP bytes.  No curl here:
   api.c hands libcurl the parent's end of the socketpair.  */
#ifndef BERTH_DOCKER_DIAL_H
#define BERTH_DOCKER_DIAL_H

#include <stdbool.h>
#include <sys/types.h>

#include <berth/provider.h>

typedef struct docker_ssh_target
{
  char *user; /* NULL: ssh's default */
  char *host;
  char *port; /* NULL: ssh's default */
} docker_ssh_target;

/* Parse "ssh://[USER@]HOST[:PORT]" (HOST may be [IPv6]); a path, query or
   a user or host starting with '-' is -BERTH_E_CONFIG.  */
int docker_ssh_parse (const char *url, docker_ssh_target *ret, berth_error **reterr);
void docker_ssh_target_clear (docker_ssh_target *t);
/* ssh -o ConnectTimeout=30 -o BatchMode=yes [-o ControlMaster=auto -o
   ControlPath=CONTROL -o ControlPersist=60] -T [-l USER] [-p PORT] -- HOST
   docker system dial-stdio (SSH: the program, from PATH when NULL;
   CONTROL: NULL for no multiplexing).  Caller frees with berth_strv_free. */
char **docker_ssh_argv (const docker_ssh_target *t, const char *ssh, const char *control);
/* Where this user's ssh masters for docker engines live:
   "$XDG_RUNTIME_DIR/berth/dssh-%C" (the directory made 0700), or NULL
   when there is no private runtime directory (then no multiplexing).
   Caller frees.  */
char *docker_ssh_control_path (void);

typedef struct docker_dial
{
  int fd;     /* ours: the HTTP connection; -1 once closed */
  pid_t pid;  /* the ssh child; 0 once reaped */
  int errfd;  /* a memfd with its stderr, -1 when none */
  int status; /* its wait status once reaped */
} docker_dial;

/* A listening socket (close-on-exec) at a new PATH in a private
   directory ($XDG_RUNTIME_DIR or /tmp): CURLOPT_UNIX_SOCKET_PATH.  */
int docker_dial_listen (char path[128], int *ret_fd);
/* Remove the socket and its directory.  */
void docker_dial_unlisten (const char *path);
/* Start an ssh child that accepts ONE connection on LISTEN_FD -- from
   this process only (SO_PEERCRED), for at most 60 s -- and carries it
   as its stdin and stdout.  The child is in a process group of its own
   (the terminal's ^C goes to berth, which then closes the connection).
   RET->fd is a fresh unconnected socket for the caller to connect.
   CONTROL: as for docker_ssh_argv.  */
int docker_dial_spawn (const docker_ssh_target *t, const char *control, int listen_fd, docker_dial *ret);
/* Close our end (ssh sees EOF and exits).  */
void docker_dial_close (docker_dial *d);
/* Reap the child within WAIT_MS (0: only if it already exited; < 0: kill
   it after 1 s).  True once reaped.  */
bool docker_dial_reap (docker_dial *d, long wait_ms);
/* The last non-empty line ssh printed on stderr, or NULL.  Caller frees.  */
char *docker_dial_stderr (const docker_dial *d);
/* Forget D (reaped or not: a child still running is killed and reaped).  */
void docker_dial_free (docker_dial *d);

#endif
