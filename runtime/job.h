/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* job.h: one process inside an environment, started through the
   environment's transport (transport.h) and seen as a berth_proc.  */
#ifndef BERTH_JOB_H
#define BERTH_JOB_H

#include "berth-private.h"

typedef struct berth_job
{
  berth_proc proc;
  bool eof;
  const struct berth_transport_ops *transport; /* that started it */
} berth_job;

/* Wait up to TIMEOUT_MS for output (or for EXTRA_FD to become readable:
   *EXTRA_READY); deliver output to SINK.  Returns 1 while something is
   open, 0 once stdout and stderr ended, -errno on error.  */
BERTH_INTERNAL int berth_job_pump (berth_job *job, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink, void *userdata);
/* Read what the transport has of the job's output into SINK: 1 while it
   runs, 0 at end of output, <0 an error.  */
BERTH_INTERNAL int berth_job_pump_output (berth_job *job, berth_sink_fn sink, void *userdata);
/* Write stdin (non-blocking): bytes written or -EAGAIN.  */
BERTH_INTERNAL ssize_t berth_job_write (berth_job *job, const void *data, size_t len);
BERTH_INTERNAL void berth_job_close_stdin (berth_job *job);
BERTH_INTERNAL bool berth_job_stdin_open (const berth_job *job);

/* How to let go of a job.  */
typedef enum berth_job_end
{
  BERTH_JOB_WAIT,   /* it ended: collect its exit status */
  BERTH_JOB_DETACH, /* its status is known already (background children may
                       hold the streams): cut loose now */
  BERTH_JOB_KILL,   /* kill our side now */
} berth_job_end;

/* Release the job.  *RET_STATUS (may be NULL) gets the exit status, or
   -1 when the transport cannot tell (or was not asked to).  Returns < 0
   (BERTH_E_BACKEND) when waiting failed: the transport died under the
   command.  */
BERTH_INTERNAL int berth_job_end_status (berth_job *job, berth_job_end how, int *ret_status, berth_error **reterr);
/* berth_job_end_status for callers that only need the status (-1 also
   when waiting failed).  */
BERTH_INTERNAL int berth_job_finish (berth_job *job, berth_job_end how);
/* Run a short script inside ENV to completion, output discarded; its exit
   status in *RET_STATUS (may be NULL; -1 unknown).  < 0 when it could not
   be run or its transport failed; -ETIMEDOUT when it did not end within
   TIMEOUT seconds (which bound the transport's setup too).  */
BERTH_INTERNAL int berth_job_run_script (berth_env *env, const char *script, double timeout, int *ret_status, berth_error **reterr);
/* The same with the script's streams: IN (when HAS_IN) fed to its stdin
   then closed; its stdout kept in OUT up to OUT_MAX bytes (raw, binary
   safe; *RET_OVERFLOW set when it printed more), its stderr in ERR up to
   ERR_MAX.  OUT and ERR may be NULL.  */
typedef struct berth_script_io
{
  const void *in;
  size_t in_len;
  bool has_in;
  berth_buf *out;
  size_t out_max;
  bool *ret_overflow;
  berth_buf *err;
  size_t err_max;
} berth_script_io;
BERTH_INTERNAL int berth_job_run_script_io (berth_env *env, const char *script, double timeout, const berth_script_io *io, int *ret_status,
                                            berth_error **reterr);

/* A job's stdin fed from a prefix in memory (the wrapper script, a
   library caller's bytes, borrowed), then from FD (the caller's, never
   closed here) as the command takes it, through one buffer of
   BERTH_FEED_BUF bytes: memory stays bounded whatever the size.  The
   command's stdin is closed at FD's end; a command that stops reading
   (EPIPE) is no error, and FD is not read any further.  */
#define BERTH_FEED_BUF 65536
typedef struct berth_feed
{
  const char *pre;
  size_t pre_len, pre_off;
  int fd;         /* -1: none, or no longer read */
  char *buf;      /* read from FD, not yet written */
  size_t have, off;
  int read_error; /* errno of a failed read of FD, else 0 */
} berth_feed;
BERTH_INTERNAL void berth_feed_init (berth_feed *f, const void *pre, size_t pre_len, int fd);
BERTH_INTERNAL void berth_feed_free (berth_feed *f);
/* berth_job_pump that also moves stdin along F (NULL: none), waiting for
   the command's stdin to take bytes and FD to have some, never busy.  */
BERTH_INTERNAL int berth_job_pump_feed (berth_job *job, berth_feed *f, int timeout_ms, int extra_fd, bool *extra_ready, berth_sink_fn sink,
                                        void *userdata);

#endif
