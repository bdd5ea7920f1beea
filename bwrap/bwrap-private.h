/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bwrap-private.h: shared by the bwrap provider's files.  */
#ifndef BERTH_BWRAP_PRIVATE_H
#define BERTH_BWRAP_PRIVATE_H

#include <berth/provider.h>

/* Per-environment data: the block libberth allocates (env_data_size).  */
typedef struct bwrap_data
{
  const char *state;   /* the jail's directory (berth_env_state_dir) */
  int64_t cpu_seconds; /* terminal.bwrap_cpu_seconds in force, 0: none */
  bool running;        /* ensure succeeded */
} bwrap_data;

/* The start transport (start.c).  */
int bwrap_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr);

#endif
