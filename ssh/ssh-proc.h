/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-proc.h: the ssh backend's start op: spawn the ssh client directly
   (no helper process) with the remote command's words quoted, and hand
   libberth a pollable process with separate stdout and stderr.  */
#ifndef BERTH_SSH_PROC_H
#define BERTH_SSH_PROC_H

#include <berth/provider.h>

/* Spawn ARGV (the full local ssh argv, the quoted command last) with
   ENVP; stdin from a socket when HAS_STDIN, else /dev/null.  */
int berth_ssh_proc_spawn (const char *const *argv, const char *const *envp, bool has_stdin, berth_proc *ret, berth_error **reterr);

#endif
