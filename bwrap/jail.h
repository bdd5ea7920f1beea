/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail.h: internals of berth-jail, the libexec helper of the bwrap backend.
 *
 * berth-jail is small and single-threaded.  Like bubblewrap it may die()
 * on error; a failure inside the jail's init is reported to `create`
 * through a pipe so the caller always gets one precise line.  */
#ifndef BERTH_JAIL_H
#define BERTH_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JAIL_MAX_BINDS 64
#define JAIL_MAX_HIDES 256
#define JAIL_STATE_FILE "jail"
#define JAIL_LOCK_FILE "jail.lock"
#define JAIL_INIT_NAME "berth-jail-init"

/* Exit status of berth-jail itself when it cannot do its job (as opposed
   to the status of the command it runs).  */
#define JAIL_EXIT_FAILURE 125

enum
{
  JAIL_PROFILE_RESTRICTED = 0, /* read-only workspace, no network */
  JAIL_PROFILE_WORKSPACE = 1,  /* writable workspace, no network */
  JAIL_PROFILE_NETWORK = 2,    /* writable workspace, host network */
};

struct jail_bind
{
  const char *src;
  const char *dest;
  bool ro;
};

struct jail_opts
{
  const char *state;
  int profile;
  const char *workspace; /* NULL: none */
  struct jail_bind binds[JAIL_MAX_BINDS];
  size_t n_binds;
  const char *hides[JAIL_MAX_HIDES];
  size_t n_hides;
  const char *home;
  pid_t owner; /* 0: the jail persists until destroyed */
  int64_t memory_mb, cpu_seconds, max_procs; /* 0: unlimited */
};

/* What `create` records for `exec` and `destroy`.  */
struct jail_state
{
  pid_t pid;
  uint64_t starttime; /* field 22 of /proc/PID/stat, against pid reuse */
  uint64_t userns;    /* inode of the jail's user namespace */
  bool netns;         /* the jail has its own network namespace */
  int64_t memory_mb, cpu_seconds, max_procs;
  char workspace[4096];
};

/* ---- jail-util.c ---- */
/* Where die() reports: -1 for stderr (the default), or a pipe to `create`. */
extern int jail_report_fd;
_Noreturn void die (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
_Noreturn void die_errno (int err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
void warnx_ (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
/* Write a small file completely; -errno.  */
int write_file (const char *path, const char *data);
/* Read up to SIZE-1 bytes into BUF, NUL-terminated; -errno.  */
ssize_t read_file_buf (const char *path, char *buf, size_t size);
int parse_int64 (const char *s, int64_t *ret);
/* Start time (clock ticks since boot) of PID, or 0.  */
uint64_t proc_starttime (pid_t pid);
/* The state letter of PID (R, S, Z...), or 0.  */
char proc_state (pid_t pid);
/* mkdir -p below an existing path; -errno.  */
int mkdir_parents (const char *path, mode_t mode);

/* ---- jail-state.c ---- */
int jail_state_write (const char *dir, const struct jail_state *st);
/* 0, -ENOENT when no jail was ever created, other -errno.  */
int jail_state_read (const char *dir, struct jail_state *st);
/* Open a pidfd on the recorded init when it is still that process: >= 0,
   or -ESRCH when it is gone.  */
int jail_state_open (const struct jail_state *st);

/* ---- jail-mount.c ---- */
/* In the jail's fresh mount namespace (as root of its user namespace):
   build the whole filesystem view and pivot into it.  */
void jail_setup_mounts (const struct jail_opts *o, bool legacy);
/* The built-in list of credential stores under $HOME.  */
extern const char *const jail_home_hides[];
extern const char *const jail_system_hides[];

/* ---- jail-priv.c ---- */
/* Drop every capability (effective, permitted, inheritable, ambient,
   bounding), lock securebits and verify the result; die on failure.  */
void jail_drop_caps (void);
void jail_set_no_new_privs (void);
/* Load the seccomp filter (TIOCSTI/TIOCLINUX masked compare, nested user
   namespaces, kernel attack surface); die on failure.  */
void jail_load_seccomp (void);
struct sock_fprog;
/* The same filter compiled once to cBPF (ret->filter is malloc'd), and
   loading such a program (needs no_new_privs).  */
void jail_build_seccomp (struct sock_fprog *ret);
void jail_load_seccomp_prog (const struct sock_fprog *prog);
void jail_set_rlimits (int64_t memory_mb, int64_t cpu_seconds, int64_t max_procs);

/* ---- jail-serve.c ---- */
struct jail_serve_ctx
{
  const char *workspace;
  int64_t memory_mb, cpu_seconds, max_procs;
  const struct sock_fprog *seccomp;
};
/* Listen on STATE/jail.sock (called while the host is still visible).  */
int jail_serve_bind (const char *state);
/* Accept pending requests, forking one command each.  */
void jail_serve_accept (int lfd, const struct jail_serve_ctx *ctx);
/* Reap children; report the status of commands to their clients.  */
void jail_serve_reap (void);

/* ---- jail-diagnose.c ---- */
enum
{
  JAIL_STEP_USERNS = 1, /* clone (CLONE_NEWUSER | ...) */
  JAIL_STEP_UIDMAP,     /* writing uid_map / gid_map / setgroups */
  JAIL_STEP_MOUNT,      /* making / a slave, tmpfs, binds */
  JAIL_STEP_PROC,       /* mounting a fresh procfs */
  JAIL_STEP_NET,        /* bringing up lo in the new netns */
  JAIL_STEP_SECCOMP,    /* loading the seccomp filter */
};
/* Facts about the host the diagnosis depends on (read from ROOT, normally
   "/", so tests can use a fake tree).  */
struct jail_host_facts
{
  long max_user_namespaces;      /* -1 unknown */
  long unprivileged_userns_clone; /* -1 absent (not a Debian-patched kernel) */
  long apparmor_restrict_userns; /* -1 absent */
  int seccomp_mode;              /* Seccomp: in /proc/self/status, -1 unknown */
  bool userns_supported;         /* /proc/self/ns/user exists */
  bool in_container;             /* /.dockerenv, /run/.containerenv or container= */
  uid_t uid;
};
void jail_host_facts_read (const char *root, struct jail_host_facts *f);
/* A one-line, precise reason (malloc'd) for a failure of STEP with ERR.  */
char *jail_diagnose (const struct jail_host_facts *f, int step, int err);

#endif
