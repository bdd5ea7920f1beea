/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-quote.c: single-quote words for the remote shell (see ssh-quote.h).  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ssh-quote.h"

static int
append (char **out, size_t *out_len, const char *s, size_t len)
{
  char *n = realloc (*out, *out_len + len + 1);
  if (n == NULL)
    return -ENOMEM;
  memcpy (n + *out_len, s, len);
  *out_len += len;
  n[*out_len] = '\0';
  *out = n;
  return 0;
}

int
ssh_quote_append (char **out, size_t *out_len, const char *s, size_t len)
{
  int r;

  if (memchr (s, '\0', len) != NULL)
    return -EINVAL;
  if ((r = append (out, out_len, "'", 1)) < 0)
    return r;
  while (len > 0)
    {
      /* ' and \ go outside the quotes, escaped ('a'\''b', 'a'\\'b'):
         POSIX shells and fish (which treats \' and \\ as escapes even
         inside single quotes) read them the same way */
      size_t run = 0;
      while (run < len && s[run] != '\'' && s[run] != '\\')
        run++;
      if ((r = append (out, out_len, s, run)) < 0)
        return r;
      s += run;
      len -= run;
      if (len > 0)
        {
          if ((r = append (out, out_len, *s == '\'' ? "'\\''" : "'\\\\'", 4)) < 0)
            return r;
          s++;
          len--;
        }
    }
  return append (out, out_len, "'", 1);
}

int
ssh_join_words (const char *const *words, size_t n, char **ret)
{
  char *out = NULL;
  size_t out_len = 0;
  int r = append (&out, &out_len, "", 0);

  for (size_t i = 0; r >= 0 && i < n; i++)
    {
      if (i > 0)
        r = append (&out, &out_len, " ", 1);
      if (r >= 0)
        r = ssh_quote_append (&out, &out_len, words[i], strlen (words[i]));
    }
  if (r < 0)
    {
      free (out);
      return r;
    }
  *ret = out;
  return 0;
}
