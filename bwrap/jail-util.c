/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-util.c: dying with a precise message, small file helpers.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"

int jail_report_fd = -1;

static void
report (const char *msg)
{
  int fd = jail_report_fd >= 0 ? jail_report_fd : STDERR_FILENO;
  char line[4200];
  int n = snprintf (line, sizeof line, "%s%s\n", jail_report_fd >= 0 ? "" : "berth-jail: ", msg);
  if (n < 0)
    return;
  if ((size_t) n >= sizeof line)
    n = sizeof line - 1;
  while (n > 0)
    {
      ssize_t w = write (fd, line, n);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      n -= w;
    }
}

void
die (const char *fmt, ...)
{
  char msg[4096];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  report (msg);
  _exit (JAIL_EXIT_FAILURE);
}

void
die_errno (int err, const char *fmt, ...)
{
  char msg[4096];
  size_t len;
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  len = strlen (msg);
  snprintf (msg + len, sizeof msg - len, ": %s", strerror (err));
  report (msg);
  _exit (JAIL_EXIT_FAILURE);
}

void
warnx_ (const char *fmt, ...)
{
  va_list ap;
  fputs ("berth-jail: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

char *
xstrdup (const char *s)
{
  char *r = strdup (s);
  if (r == NULL)
    die ("out of memory");
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  char *r;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&r, fmt, ap) < 0)
    die ("out of memory");
  va_end (ap);
  return r;
}

int
write_file (const char *path, const char *data)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
  size_t len = strlen (data);
  if (fd < 0)
    return -errno;
  while (len > 0)
    {
      ssize_t w = write (fd, data, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0)
        {
          int e = errno;
          close (fd);
          return -e;
        }
      data += w;
      len -= w;
    }
  if (close (fd) < 0)
    return -errno;
  return 0;
}

ssize_t
read_file_buf (const char *path, char *buf, size_t size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  size_t got = 0;
  if (fd < 0)
    return -errno;
  while (got + 1 < size)
    {
      ssize_t r = read (fd, buf + got, size - 1 - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        {
          int e = errno;
          close (fd);
          return -e;
        }
      if (r == 0)
        break;
      got += r;
    }
  close (fd);
  buf[got] = '\0';
  return got;
}

int
parse_int64 (const char *s, int64_t *ret)
{
  char *end;
  long long v;
  if (s == NULL || *s == '\0')
    return -EINVAL;
  errno = 0;
  v = strtoll (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return -EINVAL;
  *ret = v;
  return 0;
}

uint64_t
proc_starttime (pid_t pid)
{
  char path[64], buf[2048], *p;
  unsigned long long v;
  int field;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (read_file_buf (path, buf, sizeof buf) <= 0)
    return 0;
  /* comm may contain anything: fields restart after the last ')'.  */
  p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  /* After ") " comes field 3 (state); starttime is field 22.  */
  p += 2;
  for (field = 3; field < 22; field++)
    {
      p = strchr (p, ' ');
      if (p == NULL)
        return 0;
      p++;
    }
  if (sscanf (p, "%llu", &v) != 1)
    return 0;
  return v;
}

int
mkdir_parents (const char *path, mode_t mode)
{
  char buf[4096];
  size_t len = strlen (path);
  if (len >= sizeof buf)
    return -ENAMETOOLONG;
  memcpy (buf, path, len + 1);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        if (mkdir (buf, mode) < 0 && errno != EEXIST)
          return -errno;
        *p = '/';
      }
  if (mkdir (buf, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

char
proc_state (pid_t pid)
{
  char path[64], buf[2048], *p;
  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  if (read_file_buf (path, buf, sizeof buf) <= 0)
    return 0;
  p = strrchr (buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}
