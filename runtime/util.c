/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include <berth/provider.h>
#include "util.h"

BERTH_EXPORT char **
berth_strv_free (char **strv)
{
  if (strv)
    {
      for (char **s = strv; *s; s++)
        free (*s);
      free (strv);
    }
  return NULL;
}

BERTH_EXPORT size_t
berth_strv_length (const char *const *strv)
{
  size_t n = 0;
  while (strv && strv[n])
    n++;
  return n;
}

BERTH_EXPORT int
berth_strv_push (char ***strv, const char *s)
{
  size_t n = berth_strv_length ((const char *const *) *strv);
  char *copy = strdup (s);
  if (copy == NULL)
    return -ENOMEM;
  char **v = realloc (*strv, (n + 2) * sizeof (char *));
  if (v == NULL)
    {
      free (copy);
      return -ENOMEM;
    }
  v[n] = copy;
  v[n + 1] = NULL;
  *strv = v;
  return 0;
}

BERTH_EXPORT char **
berth_strv_new (const char *first, ...)
{
  char **v = calloc (1, sizeof (char *));
  va_list ap;
  if (v == NULL)
    return NULL;
  va_start (ap, first);
  for (const char *s = first; s; s = va_arg (ap, const char *))
    if (berth_strv_push (&v, s) < 0)
      {
        va_end (ap);
        return berth_strv_free (v);
      }
  va_end (ap);
  return v;
}

char **
berth_strv_copy (const char *const *strv)
{
  char **v = calloc (1, sizeof (char *));
  for (size_t i = 0; v && strv && strv[i]; i++)
    if (berth_strv_push (&v, strv[i]) < 0)
      return berth_strv_free (v);
  return v;
}

bool
berth_strv_contains (const char *const *strv, const char *s)
{
  for (size_t i = 0; strv && strv[i]; i++)
    if (strcmp (strv[i], s) == 0)
      return true;
  return false;
}

int
berth_buf_append (berth_buf *b, const void *data, size_t len)
{
  if (b->len + len + 1 > b->cap)
    {
      size_t cap = b->cap ? b->cap : 256;
      while (cap < b->len + len + 1)
        cap *= 2;
      char *d = realloc (b->data, cap);
      if (d == NULL)
        return -ENOMEM;
      b->data = d;
      b->cap = cap;
    }
  if (len)
    memcpy (b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

int
berth_buf_puts (berth_buf *b, const char *s)
{
  return berth_buf_append (b, s, strlen (s));
}

int
berth_buf_printf (berth_buf *b, const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  int n;
  va_start (ap, fmt);
  n = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (n < 0)
    return -ENOMEM;
  n = berth_buf_append (b, s, (size_t) n);
  free (s);
  return n;
}

void
berth_buf_free (berth_buf *b)
{
  free (b->data);
  *b = (berth_buf){ 0 };
}

char *
berth_buf_steal (berth_buf *b)
{
  char *d = b->data;
  if (d == NULL)
    d = xstrdup ("");
  *b = (berth_buf){ 0 };
  return d;
}

char *
berth_strdup_printf (const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  if (vasprintf (&s, fmt, ap) < 0)
    s = NULL;
  va_end (ap);
  return s;
}

int
berth_mkdir_p (const char *path, mode_t mode)
{
  _cleanup_free_ char *p = xstrdup (path);
  for (char *s = p + 1; *s; s++)
    if (*s == '/')
      {
        *s = '\0';
        if (mkdir (p, mode) < 0 && errno != EEXIST)
          return -errno;
        *s = '/';
      }
  if (mkdir (p, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

BERTH_EXPORT int
berth_private_dir (const char *path, berth_error **reterr)
{
  struct stat st;
  if (mkdir (path, 0700) < 0 && errno == ENOENT)
    {
      _cleanup_free_ char *parent = xstrdup (path);
      char *slash = strrchr (parent, '/');
      if (slash && slash != parent)
        {
          *slash = '\0';
          (void) berth_mkdir_p (parent, 0700);
        }
      (void) mkdir (path, 0700);
    }
  if (lstat (path, &st) < 0)
    return berth_error_errno (reterr, errno, "cannot create the directory %s", path);
  if (S_ISLNK (st.st_mode))
    return berth_error_set (reterr, BERTH_E_ENV, "%s is a symbolic link; berth keeps its sockets and state only in a real directory of yours: remove it", path);
  if (!S_ISDIR (st.st_mode))
    return berth_error_set (reterr, BERTH_E_ENV, "%s is not a directory: remove it", path);
  if (st.st_uid != geteuid ())
    return berth_error_set (reterr, BERTH_E_ENV, "%s belongs to uid %u, not to you (uid %u): another user could replace berth's files there; remove it or set XDG_RUNTIME_DIR / XDG_STATE_HOME",
                            path, (unsigned) st.st_uid, (unsigned) geteuid ());
  if (st.st_mode & 077)
    return berth_error_set (reterr, BERTH_E_ENV, "%s has mode %04o: berth needs it private (chmod 700 %s)", path, (unsigned) (st.st_mode & 07777), path);
  return 0;
}

int
berth_write_file_atomic (const char *path, const void *data, size_t len, mode_t mode)
{
  _cleanup_free_ char *tmp = xasprintf ("%s.tmp.XXXXXX", path);
  _cleanup_close_ int fd = -1;
  const char *p = data;
  fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (fchmod (fd, mode) < 0)
    goto fail;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        goto fail;
      p += n;
      len -= (size_t) n;
    }
  if (rename (tmp, path) < 0)
    goto fail;
  return 0;
fail:
  {
    int r = -errno;
    unlink (tmp);
    return r;
  }
}

int
berth_write_file_changed (const char *path, const void *data, size_t len, mode_t mode)
{
  _cleanup_free_ char *old = NULL;
  size_t old_len = 0;
  struct stat st;
  if (stat (path, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 07777) == mode && (size_t) st.st_size == len
      && berth_read_file (path, len + 1, &old, &old_len) == 0 && old_len == len
      && (len == 0 || memcmp (old, data, len) == 0))
    return 0;
  int r = berth_write_file_atomic (path, data, len, mode);
  return r < 0 ? r : 1;
}

int
berth_read_file (const char *path, size_t max, char **ret, size_t *ret_len)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  return berth_read_fd (fd, max, ret, ret_len);
}

int
berth_read_fd (int fd, size_t max, char **ret, size_t *ret_len)
{
  berth_buf b = { 0 };
  char chunk[65536];
  for (;;)
    {
      ssize_t n = read (fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int r = -errno;
          berth_buf_free (&b);
          return r;
        }
      if (n == 0)
        break;
      if (b.len + (size_t) n > max)
        {
          berth_buf_free (&b);
          return -EFBIG;
        }
      if (berth_buf_append (&b, chunk, (size_t) n) < 0)
        {
          berth_buf_free (&b);
          return -ENOMEM;
        }
    }
  if (ret_len)
    *ret_len = b.len;
  *ret = berth_buf_steal (&b);
  return 0;
}

int
berth_random_hex (char *out, size_t nbytes)
{
  unsigned char raw[64];
  if (nbytes > sizeof raw)
    return -EINVAL;
  if (getrandom (raw, nbytes, 0) != (ssize_t) nbytes)
    return -EIO;
  for (size_t i = 0; i < nbytes; i++)
    sprintf (out + 2 * i, "%02x", raw[i]);
  return 0;
}

uint64_t
berth_now_usec (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

char *
berth_xdg_dir (const char *var, const char *fallback_under_home)
{
  const char *v = getenv (var);
  const char *home = getenv ("HOME");
  if (v && v[0] == '/')
    return xstrdup (v);
  if (home == NULL || home[0] != '/')
    {
      struct passwd *pw = getpwuid (getuid ());
      home = pw ? pw->pw_dir : "/";
    }
  return xasprintf ("%s/%s", home, fallback_under_home);
}

BERTH_EXPORT char *
berth_helper_path (const char *name)
{
  const char *libexec = getenv ("BERTH_LIBEXECDIR");
  const char *bindir = getenv ("BERTH_BINDIR");
  /* Uninstalled test runs point these at the build tree (colon lists).  */
  const char *dirs[] = { libexec, bindir, BERTH_LIBEXECDIR, BERTH_BINDIR };
  for (size_t i = 0; i < ARRAY_SIZE (dirs); i++)
    {
      if (dirs[i] == NULL)
        continue;
      _cleanup_free_ char *copy = xstrdup (dirs[i]);
      char *save = NULL;
      for (char *d = strtok_r (copy, ":", &save); d; d = strtok_r (NULL, ":", &save))
        {
          char *p = xasprintf ("%s/%s", d, name);
          if (access (p, X_OK) == 0)
            return p;
          free (p);
        }
    }
  return xasprintf ("%s/%s", BERTH_LIBEXECDIR, name);
}
