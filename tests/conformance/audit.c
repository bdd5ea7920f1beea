/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* audit.c: an LD_PRELOAD library for the conformance suite.  While
   berth_audit_active is set (by the program under test), every host
   open/stat/readlink/realpath/access of a path containing
   $BERTH_AUDIT_MATCH (one or more strings separated by '|') is appended
   to $BERTH_AUDIT_LOG: a file operation under a hosted scope must leave
   none.  */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Everything here must be seen by the dynamic linker (the build hides
   symbols by default).  */
#pragma GCC visibility push(default)

int berth_audit_active;

static void
note (const char *call, const char *path)
{
  const char *match = getenv ("BERTH_AUDIT_MATCH"), *log = getenv ("BERTH_AUDIT_LOG");
  if (!berth_audit_active || path == NULL || match == NULL || log == NULL)
    return;
  bool hit = false;
  for (const char *m = match; *m && !hit;)
    {
      size_t n = strcspn (m, "|");
      if (n > 0)
        {
          char one[256];
          snprintf (one, sizeof one, "%.*s", (int) (n < sizeof one ? n : sizeof one - 1), m);
          hit = strstr (path, one) != NULL;
        }
      m += n + (m[n] == '|');
    }
  if (!hit)
    return;
  int (*real_open) (const char *, int, ...) = (int (*) (const char *, int, ...)) dlsym (RTLD_NEXT, "open");
  int fd = real_open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  char line[512];
  int n = snprintf (line, sizeof line, "%s %s\n", call, path);
  if (n > 0 && write (fd, line, (size_t) n) < 0)
    n = 0;
  close (fd);
}

#define REAL(name)                       \
  static __typeof__ (&name) real_##name; \
  if (!real_##name)                      \
  real_##name = (__typeof__ (&name)) dlsym (RTLD_NEXT, #name)

int
open (const char *path, int flags, ...)
{
  REAL (open);
  va_list ap;
  va_start (ap, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg (ap, mode_t) : 0;
  va_end (ap);
  note ("open", path);
  return real_open (path, flags, mode);
}

int
open64 (const char *path, int flags, ...)
{
  REAL (open64);
  va_list ap;
  va_start (ap, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg (ap, mode_t) : 0;
  va_end (ap);
  note ("open64", path);
  return real_open64 (path, flags, mode);
}

int
openat (int dir, const char *path, int flags, ...)
{
  REAL (openat);
  va_list ap;
  va_start (ap, flags);
  mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg (ap, mode_t) : 0;
  va_end (ap);
  note ("openat", path);
  return real_openat (dir, path, flags, mode);
}

FILE *
fopen (const char *path, const char *mode)
{
  REAL (fopen);
  note ("fopen", path);
  return real_fopen (path, mode);
}

int
stat (const char *path, struct stat *st)
{
  REAL (stat);
  note ("stat", path);
  return real_stat (path, st);
}

int
lstat (const char *path, struct stat *st)
{
  REAL (lstat);
  note ("lstat", path);
  return real_lstat (path, st);
}

int
fstatat (int dir, const char *path, struct stat *st, int flags)
{
  REAL (fstatat);
  note ("fstatat", path);
  return real_fstatat (dir, path, st, flags);
}

int
access (const char *path, int mode)
{
  REAL (access);
  note ("access", path);
  return real_access (path, mode);
}

ssize_t
readlink (const char *path, char *buf, size_t size)
{
  REAL (readlink);
  note ("readlink", path);
  return real_readlink (path, buf, size);
}

char *
realpath (const char *path, char *resolved)
{
  REAL (realpath);
  note ("realpath", path);
  return real_realpath (path, resolved);
}

#pragma GCC visibility pop
