/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state.h: what env.c and state.c share.  state.c keeps a named
   environment on disk (the lock, the owner records and berth_env_save are
   in berth-private.h, for the session layer too); env.c builds and frees
   the handle, which gc needs for the leftovers it reaps.  */
#ifndef BERTH_STATE_H
#define BERTH_STATE_H

#include "berth-private.h"

/* state.c */
/* NAME can be a directory under envs/: [A-Za-z0-9_.-], at most 64, no
   leading '.' or '-'.  */
BERTH_INTERNAL bool berth_env_name_is_valid (const char *name);
/* $state_dir/envs, allocated.  */
BERTH_INTERNAL char *berth_envs_dir (berth_ctx *ctx);
/* The value of KEY in META ("key=value" lines, \n and \\ escaped),
   allocated; NULL when absent.  */
BERTH_INTERNAL char *berth_meta_get (const char *meta, const char *key);
/* The image or task of ENV is not the one recorded in META_PATH.  */
BERTH_INTERNAL bool berth_env_meta_differs (berth_env *env, const char *meta_path);
/* Read cwd and snapshot.sh of ENV again (another process may have run
   commands since); *RET_BACKEND the recorded backend, if asked.  */
BERTH_INTERNAL void berth_env_load_state (berth_env *env, char **ret_backend);

/* env.c */
/* Build the handle and its directories; no backend call yet.  FOR_REMOVE:
   a named environment must exist.  ATTACH_ID: the id of an existing
   throw-away environment (gc).  */
BERTH_INTERNAL int berth_env_new (berth_ctx *ctx, const berth_env_spec *spec, bool for_remove, const char *attach_id, berth_env **ret,
                                  berth_error **reterr);
BERTH_INTERNAL void berth_env_free (berth_env *env);
/* Clean ENV up for good through its backend, then forget its state and
   runtime directories: always when FORGET_ANYWAY (a creation that failed),
   else only when the backend's cleanup worked (berth rm, gc).  */
BERTH_INTERNAL int berth_env_discard (berth_env *env, bool forget_anyway, berth_error **reterr);
/* process.c: ENV has recorded background processes (host state).  */
BERTH_INTERNAL bool berth_env_has_process_records (const berth_env *env);
/* process.c: stop every one of them that still runs, where it runs.  */
BERTH_INTERNAL int berth_env_stop_processes (berth_env *env, berth_error **reterr);
/* Before a named environment goes: the ids of its recorded processes
   in the tombstone of its name (the user's state dir, removed/NAME;
   bounded, pruned by age and by berth gc), so that a later attach, logs
   or poll says they were lost with it rather than never there.  */
BERTH_INTERNAL void berth_env_tombstone_processes (berth_env *env);
/* berth gc: tombstones older than their keep time go.  */
BERTH_INTERNAL void berth_tombstones_prune (berth_ctx *ctx);
/* env.c: CWD asked for a command (NULL: the environment's), a relative one
   taken from the environment's cwd.  Caller frees.  */
BERTH_INTERNAL char *berth_env_resolve_cwd (berth_env *env, const char *cwd);
/* env.c: ensure a suspended (berth_env_stop_idle) environment again.  */
BERTH_INTERNAL int berth_env_resume (berth_env *env, berth_error **reterr);

#endif
