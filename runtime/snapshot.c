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

/* The entries at the start of S: each `declare -FLAGS NAME[=VALUE]` (a
   value may span lines) goes to KEEP (its NAME, and its text without
   the newline), and is copied when KEEP says so.  Returns the copy; *END
   gets where the entries end (the first text that is not one).  */
typedef bool (*entry_fn) (void *userdata, const char *name, const char *entry, size_t len);

static char *
walk_entries (const char *s, size_t len, entry_fn keep, void *userdata, size_t *end)
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
      size_t entry_end = p;
      if (p < len)
        p++;
      _cleanup_free_ char *name = strndup (s + name_start, name_end - name_start);
      if (name == NULL)
        break;
      if (keep (userdata, name, s + start, entry_end - start))
        berth_buf_append (&out, s + start, p - start);
    }
  *end = p;
  return berth_buf_steal (&out);
}

typedef struct
{
  berth_name_filter drop;
  void *userdata;
} name_filter;

static bool
keep_named (void *userdata, const char *name, const char *entry, size_t len)
{
  name_filter *f = userdata;
  return !f->drop (f->userdata, name);
}

char *
berth_snapshot_filter (const char *s, size_t len, berth_name_filter drop, void *userdata)
{
  name_filter f = { drop, userdata };
  size_t end;
  return walk_entries (s, len, keep_named, &f, &end); /* what follows the entries goes */
}

/* Whether ENTRY is exactly what bash prints for the environment entry
   KV (NAME=VALUE) of the same name: declare -x NAME="VALUE" with \ " $ `
   escaped (a value bash prints otherwise, $'...', never matches).  */
static bool
entry_is (const char *entry, size_t len, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t nlen = (size_t) (eq - kv);
  static const char decl[] = "declare -x ";
  if (len < sizeof decl - 1 + nlen + 3 || memcmp (entry, decl, sizeof decl - 1) != 0)
    return false;
  const char *e = entry + sizeof decl - 1, *end = entry + len;
  if (memcmp (e, kv, nlen) != 0 || e[nlen] != '=' || e[nlen + 1] != '"' || end[-1] != '"')
    return false;
  e += nlen + 2;
  end--;
  for (const char *v = eq + 1; *v; v++)
    {
      if ((unsigned char) *v < 0x20 || *v == 0x7f)
        return false;
      if (*v == '"' || *v == '\\' || *v == '$' || *v == '`')
        {
          if (e >= end || *e++ != '\\')
            return false;
        }
      if (e >= end || *e++ != *v)
        return false;
    }
  return e == end;
}

static bool
keep_unless_inherited (void *userdata, const char *name, const char *entry, size_t len)
{
  const char *const *environ_ = userdata;
  size_t n = strlen (name);
  for (size_t i = 0; environ_ && environ_[i]; i++)
    if (strncmp (environ_[i], name, n) == 0 && environ_[i][n] == '=')
      return !entry_is (entry, len, environ_[i]);
  return true;
}

char *
berth_snapshot_minus_environ (const char *snapshot, const char *const *environ_)
{
  size_t len = strlen (snapshot), end;
  _cleanup_free_ char *kept = walk_entries (snapshot, len, keep_unless_inherited, (void *) environ_, &end);
  return kept ? berth_strdup_printf ("%s%s", kept, snapshot + end) : NULL;
}
