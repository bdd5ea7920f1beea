/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* files.c: file operations where the environment's commands run (DESIGN
   3.3): read, fetch, write (atomic), realpath, the temp directory.

   A backend that uses the host filesystem (local) is served on the host
   directly.  Every other one goes through the environment's transport --
   a short bash script per call, like the Python agent's file tools -- so
   a file tool sees exactly what a command sees: the jail's read-only root
   and hidden credential stores, the container's own filesystem.  Bytes
   are raw (no UTF-8 repair), sizes bounded, and a failure is an error
   with the path and its errno (ENOENT, EACCES, EROFS, EISDIR, EFBIG).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth-private.h"
#include "job.h"
#include "scope.h"

/* One call may take this long through a transport (a 10 MB file over a
   slow link), unless the caller's deadline is nearer.  */
#define FILES_TIMEOUT_S 120.0
#define FILES_MAX_DEFAULT (64u << 20)
#define FILES_MAX_LIMIT (1u << 30)
#define ERR_MAX 4096

/* The host fast path: never under a hosted scope (nothing of an agent's
   file operations may touch the host).  */
static bool
on_host (const berth_env *env)
{
  return !berth_env_is_hosted (env) && berth_provider_flag (env->provider, BERTH_FLAG_USES_HOST_FILESYSTEM);
}

/* The guard of every file operation; the transport path checks again at
   the dispatch layer.  */
#define FILES_GUARD(env)                                \
  do                                                    \
    {                                                   \
      int guard_r_ = berth_scope_check ((env), reterr); \
      if (guard_r_ < 0)                                 \
        return guard_r_;                                \
    }                                                   \
  while (0)

/* PATH made absolute against the environment's cwd (host side).  */
static char *
host_path (const berth_env *env, const char *path)
{
  if (path[0] == '/' || env->cwd == NULL)
    return xstrdup (path);
  return xasprintf ("%s/%s", env->cwd, path);
}

/* The errno a script reported as "berth-files: NAME" on stderr, or the one
   a shell's message names, else EIO.  */
static int
script_errno (const char *err)
{
  static const struct
  {
    const char *text;
    int code;
  } map[] = {
    { "ENOENT", ENOENT },   { "EISDIR", EISDIR },   { "EACCES", EACCES },   { "ENOTREG", EINVAL },
    { "Read-only file system", EROFS }, { "Permission denied", EACCES }, { "No such file or directory", ENOENT },
    { "Is a directory", EISDIR }, { "No space left on device", ENOSPC }, { "Not a directory", ENOTDIR },
  };
  for (size_t i = 0; err && i < ARRAY_SIZE (map); i++)
    if (strstr (err, map[i].text))
      return map[i].code;
  return EIO;
}

static int
files_error (berth_error **reterr, int code, const char *what, const char *path)
{
  if (code == EINVAL)
    return berth_error_set (reterr, EINVAL, "%s %s: not a regular file", what, path);
  return berth_error_errno (reterr, code, "%s %s", what, path);
}

/* Run SCRIPT (bash, in the environment, from its cwd) with IO.  A script
   that exits 0 is a success; one that does not is the errno its stderr
   names.  */
static int
run_files_script (berth_env *env, const char *what, const char *path, const char *body, berth_script_io *io, berth_error **reterr)
{
  berth_buf err = { 0 };
  int status = -1;
  double timeout = FILES_TIMEOUT_S;
  if (env->deadline_usec)
    {
      uint64_t now = berth_now_usec ();
      timeout = env->deadline_usec > now ? (double) (env->deadline_usec - now) / 1e6 : 0.01;
    }
  _cleanup_free_ char *cwd = env->cwd ? berth_shell_quote (env->cwd) : NULL;
  /* No cwd of its own yet (a fresh named environment): the path is taken
     as given.  A cwd that is gone makes relative paths fail, not the call. */
  _cleanup_free_ char *script = xasprintf ("%s%s%s\n%s", cwd ? "cd " : "", cwd ? cwd : "", cwd ? " 2>/dev/null" : "", body);
  io->err = &err;
  io->err_max = ERR_MAX;
  int r = berth_job_run_script_io (env, script, timeout, io, &status, reterr);
  if (r >= 0 && status != 0)
    r = files_error (reterr, script_errno (err.data), what, path);
  berth_buf_free (&err);
  return r;
}

/* ---- read / fetch ---- */

static int
host_read (berth_env *env, const char *path, size_t max, bool regular_only, void **ret, size_t *ret_len, berth_error **reterr)
{
  _cleanup_free_ char *p = host_path (env, path);
  _cleanup_close_ int fd = open (p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  berth_buf b = { 0 };
  if (fd < 0)
    return files_error (reterr, errno, "cannot read", path);
  if (fstat (fd, &st) < 0)
    return files_error (reterr, errno, "cannot read", path);
  if (S_ISDIR (st.st_mode))
    return files_error (reterr, EISDIR, "cannot read", path);
  if (regular_only && !S_ISREG (st.st_mode))
    return files_error (reterr, EINVAL, "cannot fetch", path);
  for (;;)
    {
      char chunk[65536];
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          berth_buf_free (&b);
          return files_error (reterr, errno, "cannot read", path);
        }
      if (n == 0)
        break;
      if (b.len + (size_t) n > max)
        {
          berth_buf_free (&b);
          return berth_error_set (reterr, EFBIG, "%s is larger than the %zu bytes asked for", path, max);
        }
      berth_buf_append (&b, chunk, (size_t) n);
    }
  *ret_len = b.len;
  *ret = b.data ? berth_buf_steal (&b) : xstrdup ("");
  return 0;
}

static int
env_read (berth_env *env, const char *path, size_t max, bool regular_only, void **ret, size_t *ret_len, berth_error **reterr)
{
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  *ret = NULL;
  *ret_len = 0;
  FILES_GUARD (env);
  if (path == NULL || *path == '\0')
    return berth_error_set (reterr, EINVAL, "no path given");
  if (max == 0)
    max = FILES_MAX_DEFAULT;
  if (max > FILES_MAX_LIMIT)
    return berth_error_set (reterr, EINVAL, "at most %u bytes can be read at once (asked for %zu)", FILES_MAX_LIMIT, max);
  if (on_host (env))
    return host_read (env, path, max, regular_only, ret, ret_len, reterr);
  _cleanup_free_ char *q = berth_shell_quote (path);
  _cleanup_free_ char *body = xasprintf ("p=%s\n"
                                         "[ -e \"$p\" ] || { echo 'berth-files: ENOENT' >&2; exit 2; }\n"
                                         "[ -d \"$p\" ] && { echo 'berth-files: EISDIR' >&2; exit 2; }\n"
                                         "%s"
                                         "[ -r \"$p\" ] || { echo 'berth-files: EACCES' >&2; exit 2; }\n"
                                         "exec head -c %zu < \"$p\"\n",
                                         q, regular_only ? "[ -f \"$p\" ] || { echo 'berth-files: ENOTREG' >&2; exit 2; }\n" : "", max + 1);
  berth_buf out = { 0 };
  bool overflow = false;
  berth_script_io io = { .out = &out, .out_max = max, .ret_overflow = &overflow };
  int r = run_files_script (env, regular_only ? "cannot fetch" : "cannot read", path, body, &io, reterr);
  if (r >= 0 && overflow)
    r = berth_error_set (reterr, EFBIG, "%s is larger than the %zu bytes asked for", path, max);
  if (r < 0)
    {
      berth_buf_free (&out);
      return r;
    }
  *ret_len = out.len;
  *ret = out.data ? berth_buf_steal (&out) : xstrdup ("");
  return 0;
}

BERTH_EXPORT int
berth_env_read_file (berth_env *env, const char *path, size_t max, void **ret_data, size_t *ret_len, berth_error **reterr)
{
  return env_read (env, path, max, false, ret_data, ret_len, reterr);
}

BERTH_EXPORT int
berth_env_fetch_file (berth_env *env, const char *path, size_t max, void **ret_data, size_t *ret_len, berth_error **reterr)
{
  return env_read (env, path, max, true, ret_data, ret_len, reterr);
}

/* ---- write ---- */

static int
host_write (berth_env *env, const char *path, const void *data, size_t len, mode_t mode, berth_error **reterr)
{
  _cleanup_free_ char *p = host_path (env, path);
  _cleanup_free_ char *dir = xstrdup (p);
  char *slash = strrchr (dir, '/');
  if (slash && slash != dir)
    *slash = '\0';
  else if (slash)
    slash[1] = '\0';
  int mr = berth_mkdir_parents (dir, 0755);
  if (mr < 0)
    return files_error (reterr, -mr, "cannot write", path);
  /* Atomic: a temporary file next to it, renamed over it.  */
  _cleanup_free_ char *tmp = xasprintf ("%s/.berth-write.XXXXXX", dir);
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return files_error (reterr, errno, "cannot write", path);
  const char *d = data;
  size_t off = 0;
  int e = 0;
  while (off < len && e == 0)
    {
      ssize_t n = write (fd, d + off, len - off);
      if (n < 0 && errno != EINTR)
        e = errno;
      else if (n > 0)
        off += (size_t) n;
    }
  if (e == 0 && fchmod (fd, mode & 07777) < 0)
    e = errno;
  if (close (fd) < 0 && e == 0)
    e = errno;
  if (e == 0 && rename (tmp, p) < 0)
    e = errno;
  if (e)
    {
      unlink (tmp);
      return files_error (reterr, e, "cannot write", path);
    }
  return 0;
}

BERTH_EXPORT int
berth_env_write_file (berth_env *env, const char *path, const void *data, size_t len, mode_t mode, berth_error **reterr)
{
  FILES_GUARD (env);
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  if (path == NULL || *path == '\0')
    return berth_error_set (reterr, EINVAL, "no path given");
  if (len > FILES_MAX_LIMIT)
    return berth_error_set (reterr, EFBIG, "at most %u bytes can be written at once (%zu given)", FILES_MAX_LIMIT, len);
  if (mode == 0)
    mode = 0644;
  if (on_host (env))
    return host_write (env, path, data, len, mode, reterr);
  _cleanup_free_ char *q = berth_shell_quote (path);
  /* mkdir -p the parent (as the agents' file tools do), write a temporary
     file next to the target, rename it over: atomic where the target's
     filesystem allows.  */
  _cleanup_free_ char *body = xasprintf ("p=%s\n"
                                         "case $p in */*) d=${p%%/*}; d=${d:-/} ;; *) d=. ;; esac\n"
                                         "[ -d \"$p\" ] && { echo 'berth-files: EISDIR' >&2; exit 2; }\n"
                                         "mkdir -p -- \"$d\" || exit 2\n"
                                         "t=\"$d/.berth-write.$$\"\n"
                                         "trap 'rm -f -- \"$t\"' EXIT\n"
                                         "cat > \"$t\" || exit 2\n"
                                         "chmod %o \"$t\" || exit 2\n"
                                         "mv -f -- \"$t\" \"$p\" || exit 2\n"
                                         "trap - EXIT\n",
                                         q, (unsigned) (mode & 07777));
  berth_script_io io = { .in = data, .in_len = len, .has_in = true };
  return run_files_script (env, "cannot write", path, body, &io, reterr);
}

/* ---- realpath, temp dir ---- */

static char *
last_absolute_line (const berth_buf *b)
{
  char *found = NULL;
  char *copy = xstrndup (b->data ? b->data : "", b->len);
  for (char *line = strtok (copy, "\n"); line; line = strtok (NULL, "\n"))
    if (line[0] == '/')
      found = line;
  char *r = found ? xstrdup (found) : NULL;
  free (copy);
  return r;
}

BERTH_EXPORT int
berth_env_realpath (berth_env *env, const char *path, char **ret, berth_error **reterr)
{
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  *ret = NULL;
  FILES_GUARD (env);
  if (path == NULL || *path == '\0')
    return berth_error_set (reterr, EINVAL, "no path given");
  if (on_host (env))
    {
      _cleanup_free_ char *p = host_path (env, path);
      char *r = realpath (p, NULL);
      if (r == NULL)
        return files_error (reterr, errno, "cannot resolve", path);
      *ret = r;
      return 0;
    }
  _cleanup_free_ char *q = berth_shell_quote (path);
  _cleanup_free_ char *body = xasprintf ("p=%s\n"
                                         "[ -e \"$p\" ] || { echo 'berth-files: ENOENT' >&2; exit 2; }\n"
                                         "readlink -f -- \"$p\" 2>/dev/null || realpath -- \"$p\"\n",
                                         q);
  berth_buf out = { 0 };
  berth_script_io io = { .out = &out, .out_max = PATH_MAX * 2 };
  int r = run_files_script (env, "cannot resolve", path, body, &io, reterr);
  if (r >= 0 && (*ret = last_absolute_line (&out)) == NULL)
    r = berth_error_set (reterr, EIO, "cannot resolve %s: the environment printed no absolute path", path);
  berth_buf_free (&out);
  return r;
}

BERTH_EXPORT int
berth_env_temp_dir (berth_env *env, char **ret, berth_error **reterr)
{
  BERTH_LOG_SCOPE (env->ctx, berth_env_backend (env));
  *ret = NULL;
  FILES_GUARD (env);
  if (env->temp_dir == NULL)
    {
      if (on_host (env))
        {
          const char *t = getenv ("TMPDIR");
          env->temp_dir = xstrdup (t && t[0] == '/' ? t : "/tmp");
        }
      else
        {
          /* The environment's own: a jail's private /tmp, a container's
             /tmp, the remote $TMPDIR.  Asked once per handle.  */
          berth_buf out = { 0 };
          berth_script_io io = { .out = &out, .out_max = PATH_MAX };
          int r = run_files_script (env, "cannot find the temp directory of", berth_env_backend (env),
                                    "t=${TMPDIR:-/tmp}; case $t in /*) ;; *) t=/tmp ;; esac; printf '%s\\n' \"$t\"\n", &io, reterr);
          if (r >= 0 && (env->temp_dir = last_absolute_line (&out)) == NULL)
            r = berth_error_set (reterr, EIO, "%s: the environment printed no temp directory", berth_env_backend (env));
          berth_buf_free (&out);
          if (r < 0)
            return r;
        }
    }
  *ret = xstrdup (env->temp_dir);
  return 0;
}
