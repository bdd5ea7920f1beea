/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slurm-private.h: the slurm backend's pieces.  Built against the SDK
   only (<berth/provider.h>, <berth/provider-util.h>), as a third party
   would build it.  */
#ifndef BERTH_SLURM_PRIVATE_H
#define BERTH_SLURM_PRIVATE_H

#include <berth/provider-util.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Bounds (seconds) for the Slurm client commands when the call has no
   deadline of its own (berth_env_time_left caps them by it).  */
#define SLURM_QUERY_TIMEOUT 30.0   /* squeue, scancel, scontrol */
#define SLURM_ALLOC_TIMEOUT 300.0  /* salloc: waiting in the queue */
#define SLURM_PING_TIMEOUT 2.0     /* scontrol ping, for probe and diagnosis */
#define SLURM_STEP_KILL_TIMEOUT 5.0
#define SLURM_CAPTURE_MAX (64 * 1024)
#define SLURM_PROBE_TTL 10         /* seconds a cached `scontrol ping` holds */

/* ---- parse.c: pure helpers (unit-tested) ---- */

/* The job id in salloc's messages ("salloc: Granted job allocation 123",
   "Pending job allocation 123"), or NULL.  Caller frees.  */
char *slurm_parse_alloc_id (const char *out);

/* One line of `squeue -h -o '%i|%j|%k|%T'`.  Fields point into LINE,
   which is modified.  Returns 0, or -EINVAL for a line that is not one.  */
typedef struct slurm_job_row
{
  const char *id, *name, *comment, *state;
} slurm_job_row;
int slurm_parse_job_row (char *line, slurm_job_row *ret);

/* True for a job state whose allocation can run steps.  */
bool slurm_state_is_live (const char *state);

/* The comment berth puts on an allocation: "berth named HASH" for a named
   environment (HASH of its state directory: two state directories may
   use the same name), "berth tmp HOST PID START" for a throw-away one
   (HOST a hash of the host name, PID and START the owning process and its
   start time in clock ticks).  Caller frees.  */
char *slurm_comment_named (const char *state_dir);
char *slurm_comment_tmp (uint32_t host, pid_t pid, unsigned long long start);
/* Parse a "berth tmp" comment: 0, or -EINVAL when it is not one.  */
int slurm_parse_comment_tmp (const char *comment, uint32_t *ret_host, pid_t *ret_pid, unsigned long long *ret_start);

/* The last line of OUT that says something (trimmed, at most MAX
   bytes), or "" -- for error messages.  Caller frees.  */
char *slurm_last_line (const char *out, size_t max);

/* The marker the start transport's shim prints first on stderr:
   "berth-slurm-step=JOB.STEP\n".  */
#define SLURM_STEP_MARKER "berth-slurm-step="
/* The shim: runs "$@" with its stdout through a pipe (srun -u gives the
   task a pty on stdout; the command must not see one), exit status kept.
   With MARKER, first prints SLURM_STEP_MARKER on stderr.  */
const char *slurm_shim_script (bool marker);

/* The exec prefix of job JOB: srun --jobid=JOB --overlap --ntasks=1 ...,
   then the shim (not INTERACTIVE: -u, stdout a pipe; INTERACTIVE: --pty),
   then APPTAINER exec IMAGE when both are set.  CPUS > 0 adds
   --cpus-per-task.  Without SRUN_ERRORS, srun is quiet about its errors
   and the task's exit status too (--quiet twice: a stream's stderr is the
   command's own).  NULL on ENOMEM.  */
char **slurm_prefix_argv (const char *srun, const char *job, long cpus, bool interactive, bool marker, bool srun_errors,
                          const char *apptainer, const char *image);

/* ---- cli.c: running the Slurm client ---- */

typedef struct slurm_bins
{
  char *salloc, *srun, *squeue, *scancel, *scontrol, *sinfo;
} slurm_bins;
/* Look them up on PATH: 0, or -BERTH_E_UNAVAILABLE naming the first
   missing one and what to install.  */
int slurm_bins_find (slurm_bins *b, berth_error **reterr);
void slurm_bins_clear (slurm_bins *b);

/* Run ARGV (no shell) within TIMEOUT seconds: 0 with the exit status and
   merged output; < 0 when it could not run or timed out (-ETIMEDOUT).  */
int slurm_run (const char *const *argv, const char *stdin_data, double timeout, char **ret_out, int *ret_status,
               berth_error **reterr);

/* The error for client command ARGV that failed (R < 0: could not run or
   timed out after TIMEOUT; else exit STATUS with OUT): one line naming
   the command, Slurm's reason and what to check; asks `scontrol ping`
   (SCONTROL, may be NULL) whether slurmctld answers.  Returns -code.  */
int slurm_cmd_error (berth_error **reterr, const char *scontrol, const char *const *argv, int r, double timeout, int status,
                     const char *out);

/* `scontrol ping`: 1 up, 0 down (DETAIL: its words), < 0 could not run.
   An answer is cached for probe (slurm_ping_cache_path, SLURM_PROBE_TTL
   seconds), a failure drops the cache.  */
char *slurm_ping_cache_path (void);
int slurm_ping (const char *scontrol, double timeout, char **ret_detail);

/* squeue -h -u UID [-n NAME | -j JOB] -o '%i|%j|%k|%T': the rows in
   *RET (a malloc'd array of N, strings in *RET_BUF; free both).  A job id
   Slurm no longer knows is 0 rows.  */
int slurm_squeue (const slurm_bins *b, const char *name, const char *job, double timeout, slurm_job_row **ret, size_t *ret_n,
                  char **ret_buf, berth_error **reterr);

/* scancel [--signal=KILL] WHAT (a job, or JOB.STEP): 0 also when it is
   gone already.  */
int slurm_scancel (const slurm_bins *b, const char *what, bool kill_signal, double timeout, berth_error **reterr);

/* The start time (clock ticks since boot) of process PID, or 0.  */
unsigned long long slurm_proc_start (pid_t pid);
/* A hash of this host's name.  */
uint32_t slurm_host_hash (void);

/* ---- proc.c: the start transport ---- */

/* What an environment and the commands it started share (reference
   counted: a command may outlive its environment's data): whether the
   allocation was seen to end under a command.  */
typedef struct slurm_shared
{
  int refs;
  bool gone;
} slurm_shared;
slurm_shared *slurm_shared_ref (slurm_shared *sh);
void slurm_shared_unref (slurm_shared *sh);

typedef struct slurm_env slurm_env;
int slurm_proc_start_cmd (berth_env *env, slurm_env *s, const berth_start_req *req, berth_proc *ret, berth_error **reterr);

/* ---- agent.c: berth-agent's own step ---- */

/* REQ is the agent's start (BERTH_START_AGENT) in named environment S:
   start the same script detached, as the step berth-agent that serves
   the environment's socket until the allocation ends (or find one that
   does), so that REQ's agent only relays to it.  0 also when it could
   not (the relay's start says why), < 0 on ENOMEM.  */
int slurm_agent_serve (berth_env *env, slurm_env *s, const berth_start_req *req);

/* ---- slurm.c ---- */

struct slurm_env
{
  slurm_bins bins;
  char *name;    /* the job name: berth-<id> */
  char *comment; /* see slurm_comment_* */
  char *job;     /* the allocation, NULL before ensure / after remove */
  long cpus;     /* terminal.slurm_cpus_per_task, 0 unset */
  char *apptainer; /* on the node, when an image is set and it has one */
  char *image;
  bool persistent;
  bool no_client; /* no srun/salloc/squeue here (attach) */
  slurm_shared *shared;
};

/* Whether job JOB still holds a live allocation: 1 yes, 0 no (ended or
   unknown to Slurm), < 0 could not tell.  */
int slurm_job_alive (const slurm_env *s, const char *job, double timeout, berth_error **reterr);

#endif
