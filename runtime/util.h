/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.h: cleanup macros, strv and buffer helpers shared inside libberth
   and by backends (header-only pieces; functions in util.c).  */
#ifndef BERTH_UTIL_H
#define BERTH_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <berth/provider-util.h> /* _cleanup_*, TAKE_PTR, TAKE_FD */

#define ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))
#define BERTH_INTERNAL __attribute__ ((visibility ("hidden")))

/* Small allocations abort when memory runs out (DESIGN §4, as crun and
   bubblewrap do): no ENOMEM branch for a path, a name, an argv.  A size
   a user or a daemon controls is bounded first and allocated with plain
   malloc, failing cleanly.  xstrdup (NULL) is NULL.  */
__attribute__ ((noreturn, cold)) static inline void
berth_oom (void)
{
  abort ();
}

static inline void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);
  if (p == NULL)
    berth_oom ();
  return p;
}

static inline void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);
  if (p == NULL)
    berth_oom ();
  return p;
}

static inline void *
xrealloc (void *old, size_t n)
{
  void *p = realloc (old, n ? n : 1);
  if (p == NULL)
    berth_oom ();
  return p;
}

static inline char *
xstrdup (const char *s)
{
  if (s == NULL)
    return NULL;
  char *p = strdup (s);
  if (p == NULL)
    berth_oom ();
  return p;
}

static inline char *
xstrndup (const char *s, size_t n)
{
  char *p = strndup (s, n);
  if (p == NULL)
    berth_oom ();
  return p;
}

__attribute__ ((format (printf, 1, 2))) static inline char *
xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *p = NULL;
  va_start (ap, fmt);
  int r = vasprintf (&p, fmt, ap);
  va_end (ap);
  if (r < 0)
    berth_oom ();
  return p;
}

char **berth_strv_free (char **strv);

/* A growable byte buffer; data is always NUL-terminated.  */
typedef struct berth_buf
{
  char *data;
  size_t len;
  size_t cap;
} berth_buf;

BERTH_INTERNAL int berth_buf_append (berth_buf *b, const void *data, size_t len);
BERTH_INTERNAL int berth_buf_puts (berth_buf *b, const char *s);
BERTH_INTERNAL int berth_buf_printf (berth_buf *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
BERTH_INTERNAL void berth_buf_free (berth_buf *b);
BERTH_INTERNAL char *berth_buf_steal (berth_buf *b);

BERTH_INTERNAL char *berth_strdup_printf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
BERTH_INTERNAL char **berth_strv_copy (const char *const *strv);
BERTH_INTERNAL bool berth_strv_contains (const char *const *strv, const char *s);
/* mkdir -p with MODE for every created component.  */
BERTH_INTERNAL int berth_mkdir_p (const char *path, mode_t mode);
/* Write atomically (temp file + rename), file mode MODE.  */
BERTH_INTERNAL int berth_write_file_atomic (const char *path, const void *data, size_t len, mode_t mode);
/* The same unless the file holds DATA already: 0 when left as it was, 1
   when written.  (A rename over a file costs a data flush on ext4: most
   commands change no state.)  */
BERTH_INTERNAL int berth_write_file_changed (const char *path, const void *data, size_t len, mode_t mode);
/* Read a whole file (up to MAX bytes; -EFBIG beyond).  */
BERTH_INTERNAL int berth_read_file (const char *path, size_t max, char **ret, size_t *ret_len);
/* The same from an open descriptor (read to its end; not closed).  */
BERTH_INTERNAL int berth_read_fd (int fd, size_t max, char **ret, size_t *ret_len);
/* N random bytes as 2N lowercase hex characters.  */
BERTH_INTERNAL int berth_random_hex (char *out, size_t nbytes);
BERTH_INTERNAL uint64_t berth_now_usec (void);
/* $XDG_*_HOME with the usual fallbacks; caller frees.  */
BERTH_INTERNAL char *berth_xdg_dir (const char *var, const char *fallback_under_home);

#endif
