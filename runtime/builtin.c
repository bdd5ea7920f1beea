/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* builtin.c: the backends linked into libberth (configure decides).  Unit
   tests link their own table instead.  */
#include "config.h"

#include "berth-private.h"

#ifdef BERTH_BUILTIN_LOCAL
extern const berth_provider_ops berth_local_provider;
#endif
#ifdef BERTH_BUILTIN_BWRAP
extern const berth_provider_ops berth_bwrap_provider;
#endif
#ifdef BERTH_BUILTIN_DOCKER
extern const berth_provider_ops berth_docker_provider;
#endif
#ifdef BERTH_BUILTIN_SINGULARITY
extern const berth_provider_ops berth_singularity_provider;
#endif
#ifdef BERTH_BUILTIN_SSH
extern const berth_provider_ops berth_ssh_provider;
#endif
#ifdef BERTH_BUILTIN_SLURM
extern const berth_provider_ops berth_slurm_provider;
#endif

const berth_provider_ops *const berth_builtin_providers[] = {
#ifdef BERTH_BUILTIN_LOCAL
  &berth_local_provider,
#endif
#ifdef BERTH_BUILTIN_BWRAP
  &berth_bwrap_provider,
#endif
#ifdef BERTH_BUILTIN_DOCKER
  &berth_docker_provider,
#endif
#ifdef BERTH_BUILTIN_SINGULARITY
  &berth_singularity_provider,
#endif
#ifdef BERTH_BUILTIN_SSH
  &berth_ssh_provider,
#endif
#ifdef BERTH_BUILTIN_SLURM
  &berth_slurm_provider,
#endif
  NULL,
};
