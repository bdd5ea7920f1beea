/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shell.c: POSIX shell quoting.  */
#include "config.h"

#include <string.h>

#include <berth/provider.h>
#include "util.h"

/* 'abc' with every ' written as '\''.  Always quotes, so the result is
   one word whatever S holds (except NUL, which C strings cannot carry).  */
BERTH_EXPORT char *
berth_shell_quote (const char *s)
{
  berth_buf b = { 0 };
  if (berth_buf_puts (&b, "'") < 0)
    return NULL;
  for (const char *p = s; *p; p++)
    {
      int r = *p == '\'' ? berth_buf_puts (&b, "'\\''") : berth_buf_append (&b, p, 1);
      if (r < 0)
        {
          berth_buf_free (&b);
          return NULL;
        }
    }
  if (berth_buf_puts (&b, "'") < 0)
    {
      berth_buf_free (&b);
      return NULL;
    }
  return berth_buf_steal (&b);
}

BERTH_EXPORT char *
berth_shell_join (const char *const *argv)
{
  berth_buf b = { 0 };
  for (size_t i = 0; argv && argv[i]; i++)
    {
      _cleanup_free_ char *q = berth_shell_quote (argv[i]);
      if (q == NULL || (i && berth_buf_puts (&b, " ") < 0) || berth_buf_puts (&b, q) < 0)
        {
          berth_buf_free (&b);
          return NULL;
        }
    }
  return berth_buf_steal (&b);
}
