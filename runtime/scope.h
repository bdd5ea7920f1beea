/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* scope.h: hosted scopes (scope.c).  */
#ifndef BERTH_SCOPE_H
#define BERTH_SCOPE_H

#include "berth-private.h"

/* A tenant other than "local" is hosted.  */
BERTH_INTERNAL bool berth_scope_is_hosted (const char *tenant);
/* 0 when the scope bound to ENV's context is the one that created ENV,
   else BERTH_E_SCOPE ("cross-agent handle refused").  */
BERTH_INTERNAL int berth_scope_check (const berth_env *env, berth_error **reterr);
/* The environment name of the sandbox of (TENANT, AGENT): "h-<hash>".  */
BERTH_INTERNAL char *berth_scope_sandbox_name (const char *tenant, const char *agent);
/* Under a hosted scope: ENV's backend serves hosted scopes with the whole
   hosted interface, else BERTH_E_HOSTED naming what is missing.  */
BERTH_INTERNAL int berth_scope_admit (const berth_env *env, berth_error **reterr);

#endif
