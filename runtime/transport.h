/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* transport.h: how an environment runs things -- one transport per
   environment, chosen once (on first use) and recorded in it: the
   provider's start (an API) when it has one, else a local spawn of its
   exec_prefix adapted into a start, with the in-environment agent's
   channel over that one first (agent-client.h).  The session layer, the kill path and the
   stream see only this interface: start an argv with stdin/stdout/state
   streams and flags, its exit status (berth_job_end_status), kill the
   tree where it runs, data_pending.  */
#ifndef BERTH_TRANSPORT_H
#define BERTH_TRANSPORT_H

#include "job.h"

/* One start in preparation: the flags that hold for it, and what the
   transport needs to carry it out (the prefix argv of a spawn).  */
typedef struct berth_transport_call
{
  uint32_t flags; /* BERTH_PREFIX_* */
  char **prefix;  /* the exec_prefix transport's argv, else NULL */
  uint32_t start_flags; /* BERTH_START_* the caller adds to the request */
  /* The environment the command starts with when the transport knows it
     (the host's under PASSES_ENV, a serving agent's own), else NULL: the
     session leaves out of the snapshot what would only be set again.
     Borrowed; valid until the next start.  */
  const char *const *start_environ;
} berth_transport_call;

typedef struct berth_transport_ops
{
  const char *name; /* what berth_result_transport says: "agent", "exec" */
  const char *via;  /* for debug lines: "its exec prefix" */
  /* Fill *CALL for the next start (the flags, a prefix).  */
  int (*prepare) (berth_env *env, berth_transport_call *call, berth_error **reterr);
  /* Start REQ->argv inside ENV as *RET.  */
  int (*start) (berth_env *env, const berth_transport_call *call, const berth_start_req *req, berth_proc *ret, berth_error **reterr);
  /* Kill the tree of job TOKEN (PID, its shell where it runs, when known,
     else 0) within TIMEOUT seconds; NULL: the runtime's kill script run
     through start.  */
  int (*kill) (berth_env *env, const char *token, long pid, double timeout, int *ret_status, berth_error **reterr);
  /* True when PROC holds bytes its fd does not show readable (a TLS
     buffer); NULL: never.  */
  bool (*data_pending) (const berth_proc *proc);
} berth_transport_ops;

/* ENV's transport (chosen on the first call, then the same).  */
BERTH_INTERNAL const berth_transport_ops *berth_transport_get (berth_env *env);
/* The transport under the agent: the provider's start, else the exec
   prefix spawn (the agent is placed and started through it, and ENV
   falls back to it where the agent cannot run).  */
BERTH_INTERNAL const berth_transport_ops *berth_transport_fallback (berth_env *env);
/* Prepare a start: *CALL's flags say how the command sees the
   environment.  Free with berth_transport_call_free.  */
BERTH_INTERNAL int berth_transport_prepare (berth_env *env, berth_transport_call *call, berth_error **reterr);
BERTH_INTERNAL void berth_transport_call_free (berth_transport_call *call);
/* Start ARGV inside ENV as JOB.  START_FLAGS are berth_start_req's
   (BERTH_START_SHELL_SCRIPT only from the runtime's own `bash -c SCRIPT`
   wrappers, never for a caller's argv).  EXTRA_FD becomes fd 3 when the
   call's flags pass fds.  DEADLINE_USEC (monotonic, 0 none) bounds a start
   transport's setup (berth_start_req).  */
BERTH_INTERNAL int berth_transport_start (berth_env *env, const berth_transport_call *call, const char *const *argv, uint32_t start_flags,
                                          bool has_stdin, int extra_fd, uint64_t deadline_usec, berth_job *job, berth_error **reterr);
/* berth_transport_start through transport T.  */
BERTH_INTERNAL int berth_transport_start_via (const berth_transport_ops *t, berth_env *env, const berth_transport_call *call, const char *const *argv,
                                              uint32_t start_flags, bool has_stdin, int extra_fd, uint64_t deadline_usec, berth_job *job,
                                              berth_error **reterr);
/* Kill the tree of job TOKEN where it runs (PID: its shell there, or 0),
   within TIMEOUT seconds: the transport's own kill, else the kill script.
   *RET_STATUS (may be NULL) gets the script's exit status (-1 unknown).
   < 0 when it could not be delivered (ESRCH: the environment is gone).  */
BERTH_INTERNAL int berth_transport_kill (berth_env *env, const char *token, long pid, double timeout, int *ret_status, berth_error **reterr);
/* Kill the tree of the live JOB: through its berth_proc's kill when the
   transport has one, else berth_transport_kill; JOB is finished either
   way.  */
BERTH_INTERNAL int berth_transport_kill_job (berth_env *env, berth_job *job, const char *token, long pid, double timeout, int *ret_status,
                                             berth_error **reterr);
/* True when JOB's transport holds output its fd does not show.  */
BERTH_INTERNAL bool berth_transport_data_pending (const berth_job *job);

#endif
