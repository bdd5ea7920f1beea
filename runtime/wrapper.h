/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* wrapper.h: the bash script that runs one command inside an environment,
   and the state channel it reports on.
 *
 * The script runs in a fresh `bash -c` (spawn-per-command).  It moves the
 * transport's stderr to fd 9 (the state channel), merges the command's
 * stderr into stdout, restores the snapshot of exported state, cds, runs
 * the command with fd 9 closed, and at exit writes NUL-framed records to
 * fd 9: "BERTH:cwd:<path>", "BERTH:env:<export -p>", "BERTH:fn:<functions
 * and aliases>", "BERTH:sig:<NAME>" (only when the command's shell died of
 * a trapped signal: `kill -SEGV $$`), "BERTH:ec:<n>" (and at start "BERTH:pid:<n>"; instead of
 * running the command, "BERTH:cwderr:<why>" when the cwd asked for cannot
 * be entered).  Nothing the command prints can forge a record:
 * the command never sees fd 9.  */
#ifndef BERTH_WRAPPER_H
#define BERTH_WRAPPER_H

#include "util.h"

/* Bootstraps given as `bash -c BOOT`: read the script from fd 3 (when the
   transport passes fds) or as a NUL-terminated prefix of stdin.  */
#define BERTH_BOOT_FD ". /dev/fd/3"
#define BERTH_BOOT_STDIN "IFS= read -r -d '' __berth_s; eval \"$__berth_s\""

typedef struct berth_script_spec
{
  const char *command;
  const char *cwd;                   /* "~", "~/x", absolute, or NULL */
  bool cwd_strict;                   /* CWD was asked for: if it cannot be entered,
                                        report "BERTH:cwderr:<why>" and exit 125;
                                        else fall back to an ancestor with a note */
  const char *snapshot;              /* text from the last command, or NULL */
  const char *job;                   /* BERTH_JOB token */
  const char *const *exports;        /* "K=V" exported before the command (passthrough), or NULL */
} berth_script_spec;

BERTH_INTERNAL char *berth_script_build (const berth_script_spec *spec);
/* A script that kills, inside the environment, every process of a job:
   same session or process group as WRAPPER_PID (may be 0), or carrying
   BERTH_JOB=JOB in its environment.  Loops until none are left.  */
BERTH_INTERNAL char *berth_kill_script (const char *job, long wrapper_pid);
/* The cd target: "~" stays for the remote shell to expand.  */
BERTH_INTERNAL char *berth_quote_cwd (const char *cwd);

/* The state channel, parsed incrementally.  */
#define BERTH_STATE_MAX (8u << 20)
typedef struct berth_state
{
  berth_buf raw;    /* unparsed bytes (bounded by BERTH_STATE_MAX) */
  berth_buf diag;   /* text that was not a record (stderr of the transport) */
  bool seen_nul; /* a field can be a record only after a NUL */
  bool have_pid, have_ec, have_cwd, have_sig, overflow;
  char sig[16];     /* "SEGV": the signal the command's shell died of (have_sig) */
  long pid;
  int ec;
  char *cwd;
  char *cwd_error; /* why the asked-for cwd cannot be entered ("no such directory", ...) */
  char *env; /* export -p, unfiltered */
  size_t env_len;
  char *fn; /* declare -f; alias -p */
} berth_state;

BERTH_INTERNAL int berth_state_feed (berth_state *st, const char *data, size_t len);
/* Parse what is left (end of stream).  */
BERTH_INTERNAL void berth_state_end (berth_state *st);
BERTH_INTERNAL void berth_state_free (berth_state *st);

#endif
