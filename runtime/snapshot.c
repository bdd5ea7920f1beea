/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <string.h>

#include "snapshot.h"

static bool
is_name_char (char c, bool first)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* End of a quoted value starting at P (on the opening quote): the index
   just past the closing quote, or 0 when it never closes.  */
static size_t
quoted_end (const char *s, size_t len, size_t p, char quote)
{
  for (size_t i = p + 1; i < len; i++)
    {
      if (s[i] == '\\')
        i++;
      else if (s[i] == quote)
        return i + 1;
    }
  return 0;
}

char *
berth_snapshot_filter (const char *s, size_t len, berth_name_filter drop, void *userdata)
{
  static const char decl[] = "declare -";
  berth_buf out = { 0 };
  size_t p = 0;
  berth_buf_append (&out, "", 0);
  while (p < len)
    {
      size_t start = p, name_start, name_end;
      if (len - p < sizeof decl - 1 || memcmp (s + p, decl, sizeof decl - 1) != 0)
        break;
      p += sizeof decl - 1;
      while (p < len && ((s[p] >= 'a' && s[p] <= 'z') || (s[p] >= 'A' && s[p] <= 'Z') || s[p] == '-'))
        p++;
      if (p >= len || s[p] != ' ')
        break;
      name_start = ++p;
      while (p < len && is_name_char (s[p], p == name_start))
        p++;
      name_end = p;
      if (name_end == name_start)
        break;
      if (p < len && s[p] == '=')
        {
          p++;
          if (p < len && s[p] == '"')
            p = quoted_end (s, len, p, '"');
          else if (p + 1 < len && s[p] == '$' && s[p + 1] == '\'')
            p = quoted_end (s, len, p + 1, '\'');
          else
            while (p < len && s[p] != '\n')
              p++;
          if (p == 0)
            break;
        }
      if (p < len && s[p] != '\n')
        break;
      if (p < len)
        p++;
      _cleanup_free_ char *name = strndup (s + name_start, name_end - name_start);
      if (name == NULL)
        break;
      if (!drop (userdata, name))
        berth_buf_append (&out, s + start, p - start);
    }
  return berth_buf_steal (&out);
}
