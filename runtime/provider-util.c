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
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

BERTH_EXPORT unsigned long long
berth_proc_start_time (pid_t pid)
{
  char path[64], buf[1024], *p;
  ssize_t n;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  p = strrchr (buf, ')'); /* the name may hold spaces and parentheses */
  if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
    return 0;
  /* fields after ')': 3 (state) ... 22 (starttime) */
  p += 2;
  for (int field = 3; field < 22 && p; field++)
    if ((p = strchr (p, ' ')))
      p++;
  return p ? strtoull (p, NULL, 10) : 0;
}

/* The pid /proc/locks names for the flock held on the file of FD, or 0.  */
static pid_t
lock_holder (int fd)
{
  struct stat st;
  char line[256];
  pid_t who = 0;
  if (fstat (fd, &st) < 0)
    return 0;
  FILE *f = fopen ("/proc/locks", "re");
  if (f == NULL)
    return 0;
  while (who == 0 && fgets (line, sizeof line, f))
    {
      /* "1: FLOCK  ADVISORY  WRITE 1234 00:2f:56789 0 EOF"; a waiter's
         line has "->" after the number */
      char kind[16];
      int pid;
      unsigned maj, min;
      unsigned long ino;
      if (sscanf (line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) == 5 && strcmp (kind, "FLOCK") == 0
          && ino == (unsigned long) st.st_ino && makedev (maj, min) == st.st_dev && pid > 0)
        who = pid;
    }
  fclose (f);
  return who;
}

BERTH_EXPORT int
berth_lock_file (const char *path, uint64_t deadline_usec, pid_t *ret_holder)
{
  useconds_t nap = 5000;
  if (ret_holder)
    *ret_holder = 0;
  _cleanup_close_ int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return -errno;
  for (;;)
    {
      if (flock (fd, deadline_usec ? LOCK_EX | LOCK_NB : LOCK_EX) == 0)
        return TAKE_FD (fd);
      if (errno != EWOULDBLOCK && errno != EINTR)
        return -errno;
      if (deadline_usec == 0)
        continue;
      uint64_t now = berth_monotonic_usec ();
      if (now >= deadline_usec)
        {
          if (ret_holder)
            *ret_holder = lock_holder (fd);
          return -ETIMEDOUT;
        }
      /* 5 ms first (a lock held for a moment), then up to 100 ms */
      usleep (deadline_usec - now < nap ? (useconds_t) (deadline_usec - now) : nap);
      if (nap < 100000)
        nap *= 2;
    }
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

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t
ror (uint32_t x, unsigned n)
{
  return x >> n | x << (32 - n);
}

static void
block (uint32_t h[8], const uint8_t *p)
{
  uint32_t w[64], a, b, c, d, e, f, g, hh;
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16 | (uint32_t) p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ror (w[i - 15], 7) ^ ror (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ror (w[i - 2], 17) ^ ror (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1 = hh + (ror (e, 6) ^ ror (e, 11) ^ ror (e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
      uint32_t t2 = (ror (a, 2) ^ ror (a, 13) ^ ror (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

BERTH_EXPORT void
berth_sha256_hex (const void *data, size_t len, char hex[65])
{
  uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  const uint8_t *p = data;
  size_t left = len;
  for (; left >= 64; p += 64, left -= 64)
    block (h, p);
  uint8_t tail[128] = { 0 };
  memcpy (tail, p, left);
  tail[left] = 0x80;
  size_t tl = left < 56 ? 64 : 128;
  uint64_t bits = (uint64_t) len * 8;
  for (int i = 0; i < 8; i++)
    tail[tl - 1 - i] = (uint8_t) (bits >> (8 * i));
  block (h, tail);
  if (tl == 128)
    block (h, tail + 64);
  for (int i = 0; i < 8; i++)
    snprintf (hex + 8 * i, 9, "%08x", h[i]);
}

