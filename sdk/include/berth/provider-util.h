/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider-util.h: small services libberth implements once for every
 * backend, so none carries its own copy: finding a program on PATH, the
 * monotonic clock, a stable hash, making and removing directory trees,
 * and small private state files (an id, a recorded setting) kept next to
 * the environment.  Installed with <berth/provider.h>; in-tree backends
 * and plugins use it alike.  */
#ifndef BERTH_PROVIDER_UTIL_H
#define BERTH_PROVIDER_UTIL_H

#include <berth/provider.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scope-bound cleanup (GCC and Clang), as libberth itself uses ---- */

/* _cleanup_free_ char *s = ...;  freed when S goes out of scope; TAKE_PTR
   hands it on without freeing.  */
#define _cleanup_(f) __attribute__ ((cleanup (f)))
#define _cleanup_free_ _cleanup_ (berth_freep)
#define _cleanup_close_ _cleanup_ (berth_closep)
#define _cleanup_strv_free_ _cleanup_ (berth_strv_freep)
#define TAKE_PTR(p) ({ __typeof__ (p) _p_ = (p); (p) = NULL; _p_; })
#define TAKE_FD(fd) ({ int _fd_ = (fd); (fd) = -1; _fd_; })

static inline void
berth_freep (void *p)
{
  free (*(void **) p);
}

static inline void
berth_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

static inline void
berth_strv_freep (char ***p)
{
  berth_strv_free (*p);
}

/* ---- programs ---- */

/* The absolute path of the program NAME, malloc'd, or NULL when there is
   none.  NAME with a slash is taken as is (made absolute against the
   working directory when relative, never resolving links, so a
   `singularity` link to apptainer keeps its name); else the first
   executable regular file NAME in the directories of $PATH
   (/usr/local/bin:/usr/bin:/bin when PATH is unset or empty; empty
   entries are skipped).  */
BERTH_EXPORT char *berth_find_program (const char *name);

/* ---- time ---- */

/* CLOCK_MONOTONIC in microseconds: the clock of berth_env_deadline_usec
   and berth_start_req.deadline_usec.  */
BERTH_EXPORT uint64_t berth_monotonic_usec (void);

/* What is left of ENV's deadline (berth_env_deadline_usec), in seconds and
   at most CAP: the timeout to give a helper or a request.  CAP when there
   is no deadline; a few milliseconds once it has passed, so the call fails
   at once with its own timeout.  */
BERTH_EXPORT double berth_env_time_left (const berth_env *env, double cap);

/* ---- processes ---- */

/* The start time of process PID (field 22 of /proc/PID/stat, clock ticks
   since boot): with the pid it names one process for good, as a recycled
   pid has another start time.  0 when there is no such process or it is
   a zombie (exited, its parent did not reap it yet).  */
BERTH_EXPORT unsigned long long berth_proc_start_time (pid_t pid);

/* ---- locks ---- */

/* Open PATH (created 0600 when absent, never through a symbolic link) and
   take an exclusive flock on it, waiting at most until DEADLINE_USEC
   (berth_monotonic_usec; 0: as long as it takes).  Returns the fd that
   holds the lock (O_CLOEXEC; closing it releases the lock), -ETIMEDOUT
   when the deadline came first, or -errno.  *RET_HOLDER (may be NULL)
   gets the pid holding the lock when it timed out and /proc/locks names
   one, else 0: for the message that says who to wait for.  */
BERTH_EXPORT int berth_lock_file (const char *path, uint64_t deadline_usec, pid_t *ret_holder);

/* ---- hashing ---- */

/* 64-bit FNV-1a of LEN bytes at DATA: stable across releases and hosts,
   for names derived from a longer string (a socket path, a cache file).
   Not a cryptographic hash.  */
BERTH_EXPORT uint64_t berth_fnv1a64 (const void *data, size_t len);
/* SHA-256 of DATA as 64 lowercase hex digits and a NUL (a file checked by
   hash, a docker context's directory name).  */
BERTH_EXPORT void berth_sha256_hex (const void *data, size_t len, char hex[65]);

/* ---- directories ---- */

/* mkdir -p: PATH and its missing parents, each created with MODE; an
   existing directory is fine.  0 or -errno.  */
BERTH_EXPORT int berth_mkdir_parents (const char *path, mode_t mode);
/* rm -rf: PATH and, for a directory, everything under it (symbolic links
   are removed, never followed).  0 (also when PATH is absent) or -errno.  */
BERTH_EXPORT int berth_remove_tree (const char *path);

/* ---- small state files ---- */

/* At most this many bytes per state file.  */
#define BERTH_STATE_FILE_MAX (1u << 20)

/* Read the state file NAME (a plain file name, no '/') of ENV's state
   directory (berth_env_state_dir): its bytes, NUL-terminated, in *RET
   (malloc'd; RET may be NULL to ask whether it exists).  Returns the
   length, -ENOENT when there is none, -ELOOP for a symbolic link (never
   followed), -EFBIG beyond BERTH_STATE_FILE_MAX, -EINVAL for a bad NAME
   or an environment without a state directory, or -errno.  */
BERTH_EXPORT ssize_t berth_env_state_read (const berth_env *env, const char *name, char **ret);
/* Replace the state file NAME with LEN bytes of DATA, atomically (a
   reader sees the old or the new content, never a part), mode 0600.
   0 or -errno.  */
BERTH_EXPORT int berth_env_state_write (const berth_env *env, const char *name, const void *data, size_t len);
/* Remove the state file NAME; 0 also when there was none.  */
BERTH_EXPORT int berth_env_state_remove (const berth_env *env, const char *name);

/* The same for a state file at PATH in a private directory of the
   backend's own (next to a control socket, a per-user cache).  */
BERTH_EXPORT ssize_t berth_state_file_read (const char *path, char **ret);
BERTH_EXPORT int berth_state_file_write (const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
