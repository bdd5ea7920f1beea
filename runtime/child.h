/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* child.h: start a local process with pipes, in its own session.  */
#ifndef BERTH_CHILD_H
#define BERTH_CHILD_H

#include <sys/types.h>
#include "util.h"

typedef struct berth_child
{
  pid_t pid;
  int in_fd;  /* our end of its stdin (a socket: use send MSG_NOSIGNAL), or -1 (/dev/null) */
  int out_fd; /* read end of its stdout */
  int err_fd; /* read end of its stderr, or -1 when merged into out_fd */
} berth_child;

#define BERTH_CHILD_INIT { .pid = -1, .in_fd = -1, .out_fd = -1, .err_fd = -1 }

enum
{
  BERTH_SPAWN_STDIN = 1u << 0,     /* give it a stdin pipe */
  BERTH_SPAWN_MERGE_ERR = 1u << 1, /* stderr into the stdout pipe */
  BERTH_SPAWN_NONBLOCK = 1u << 2,  /* our ends are O_NONBLOCK */
  /* SIGKILLed when the spawning thread dies (PR_SET_PDEATHSIG): a berth
     killed with -9 takes its local command's leader with it.  Forks
     instead of posix_spawn.  */
  BERTH_SPAWN_DIE_WITH_PARENT = 1u << 3,
};

/* EXTRA_FD, when >= 0, becomes fd 3 of the child.  ENVP NULL inherits.  */
BERTH_INTERNAL int berth_child_spawn (const char *const *argv, const char *const *envp, int extra_fd, unsigned flags, berth_child *ret);
/* Close our ends, then reap; KILL first sends SIGKILL to the process
   (not its group).  Returns the wait status decoded as 0-255 / 128+sig.  */
BERTH_INTERNAL int berth_child_finish (berth_child *c, bool kill_first);
BERTH_INTERNAL int berth_status_decode (int wstatus);

#endif
