/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef BERTH_AGENT_PTY_RUN_H
#define BERTH_AGENT_PTY_RUN_H

/* `berth-agent --pty-run -- ARGV...` (pty-run.c): ARGV with a new
   pseudo-terminal on its stdin and stdout; returns its exit status.  */
int agent_pty_run (char **argv);
/* A new pseudo-terminal (the agent's RUN with a pty uses it too).  */
int agent_open_pty (int *master, int *slave);

#endif
