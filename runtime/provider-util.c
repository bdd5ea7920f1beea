/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider-util.c: the services of <berth/provider-util.h> -- program
   lookup, clock, hash, directory trees and state files -- written once
   for every backend.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <berth/provider.h>
#include <berth/provider-util.h>
#include "util.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* CANDIDATE made absolute against the working directory (no link is
   resolved: the name it was found under is kept).  */
static char *
absolute (const char *candidate)
{
  char cwd[PATH_MAX];
  if (candidate[0] == '/')
    return strdup (candidate);
  if (getcwd (cwd, sizeof cwd) == NULL)
    return NULL;
  return berth_strdup_printf ("%s/%s", cwd, candidate);
}

BERTH_EXPORT char *
berth_find_program (const char *name)
{
  const char *path = getenv ("PATH");

  if (name == NULL || *name == '\0')
    return NULL;
  if (strchr (name, '/') != NULL)
    return access (name, X_OK) == 0 ? absolute (name) : NULL;
  if (path == NULL || *path == '\0')
    path = DEFAULT_PATH;
  for (const char *p = path;;)
    {
      const char *colon = strchr (p, ':');
      size_t len = colon ? (size_t) (colon - p) : strlen (p);
      if (len > 0)
        {
          _cleanup_free_ char *cand = berth_strdup_printf ("%.*s/%s", (int) len, p, name);
          struct stat st;
          if (cand && stat (cand, &st) == 0 && S_ISREG (st.st_mode) && access (cand, X_OK) == 0)
            return absolute (cand);
        }
      if (colon == NULL)
        return NULL;
      p = colon + 1;
    }
}

BERTH_EXPORT uint64_t
berth_monotonic_usec (void)
{
  return berth_now_usec ();
}

BERTH_EXPORT double
berth_env_time_left (const berth_env *env, double cap)
{
  uint64_t deadline = berth_env_deadline_usec (env), now = berth_now_usec ();
  double left;
  if (deadline == 0)
    return cap;
  left = deadline > now ? (double) (deadline - now) / 1e6 : 0.005;
  return left < cap ? left : cap;
}

BERTH_EXPORT uint64_t
berth_fnv1a64 (const void *data, size_t len)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < len; i++)
    {
      h ^= p[i];
      h *= 0x100000001b3ULL;
    }
  return h;
}

BERTH_EXPORT int
berth_mkdir_parents (const char *path, mode_t mode)
{
  if (path == NULL || *path == '\0')
    return -EINVAL;
  return berth_mkdir_p (path, mode);
}

/* Remove what is under the directory DFD (on device DEV; other file
   systems mounted below are left alone, as rm --one-file-system).  */
static int
remove_under (int dfd, dev_t dev)
{
  DIR *d = fdopendir (dfd);
  struct dirent *de;
  int r = 0;
  if (d == NULL)
    {
      r = -errno;
      close (dfd);
      return r;
    }
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode))
        {
          int sub;
          if (st.st_dev != dev)
            {
              r = -EXDEV;
              continue;
            }
          sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0)
            {
              int q = remove_under (sub, dev);
              if (q < 0 && r == 0)
                r = q;
            }
          if (unlinkat (dirfd (d), de->d_name, AT_REMOVEDIR) < 0 && r == 0)
            r = -errno;
        }
      else if (unlinkat (dirfd (d), de->d_name, 0) < 0 && errno != ENOENT && r == 0)
        r = -errno;
    }
  closedir (d);
  return r;
}

BERTH_EXPORT int
berth_remove_tree (const char *path)
{
  struct stat st;
  int fd, r;
  if (path == NULL || *path == '\0')
    return -EINVAL;
  if (lstat (path, &st) < 0)
    return errno == ENOENT ? 0 : -errno;
  if (!S_ISDIR (st.st_mode))
    return unlink (path) < 0 && errno != ENOENT ? -errno : 0;
  fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  r = remove_under (fd, st.st_dev);
  if (rmdir (path) < 0 && errno != ENOENT)
    return r < 0 ? r : -errno;
  return 0;
}

BERTH_EXPORT ssize_t
berth_state_file_read (const char *path, char **ret)
{
  _cleanup_close_ int fd = -1;
  char *data = NULL;
  size_t len = 0;
  int r;
  if (path == NULL || *path == '\0')
    return -EINVAL;
  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return -errno;
  if (ret == NULL)
    return 0;
  r = berth_read_fd (fd, BERTH_STATE_FILE_MAX, &data, &len);
  if (r < 0)
    return r;
  *ret = data;
  return (ssize_t) len;
}

BERTH_EXPORT int
berth_state_file_write (const char *path, const void *data, size_t len)
{
  if (path == NULL || *path == '\0' || (data == NULL && len > 0))
    return -EINVAL;
  if (len > BERTH_STATE_FILE_MAX)
    return -EFBIG;
  return berth_write_file_atomic (path, data ? data : "", len, 0600);
}

/* The path of state file NAME of ENV, or NULL (errno set).  */
static char *
state_path (const berth_env *env, const char *name)
{
  const char *dir = env ? berth_env_state_dir (env) : NULL;
  if (dir == NULL || *dir == '\0' || name == NULL || *name == '\0' || strchr (name, '/') || strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      errno = EINVAL;
      return NULL;
    }
  char *p = berth_strdup_printf ("%s/%s", dir, name);
  if (p == NULL)
    errno = ENOMEM;
  return p;
}

BERTH_EXPORT ssize_t
berth_env_state_read (const berth_env *env, const char *name, char **ret)
{
  _cleanup_free_ char *path = state_path (env, name);
  if (path == NULL)
    return -errno;
  return berth_state_file_read (path, ret);
}

BERTH_EXPORT int
berth_env_state_write (const berth_env *env, const char *name, const void *data, size_t len)
{
  _cleanup_free_ char *path = state_path (env, name);
  if (path == NULL)
    return -errno;
  return berth_state_file_write (path, data, len);
}

BERTH_EXPORT int
berth_env_state_remove (const berth_env *env, const char *name)
{
  _cleanup_free_ char *path = state_path (env, name);
  if (path == NULL)
    return -errno;
  return unlink (path) < 0 && errno != ENOENT ? -errno : 0;
}
