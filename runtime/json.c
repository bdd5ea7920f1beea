/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.c: the result object of an execute as JSON, the one rendering
 * shared by `berth exec --json` and berth serve (berth-serve(7)).  Strings
 * are escaped as the CLI always has: ", \, \n, \r, \t by name, other C0
 * controls and DEL as \u00XX, everything else (UTF-8 included) as is.  */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <berth/berth.h>
#include "util.h"

typedef struct jbuf
{
  char *s;
  size_t len, cap;
} jbuf;

static void
jb_grow (jbuf *b, size_t more)
{
  if (b->len + more + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more + 1)
    cap *= 2;
  b->s = xrealloc (b->s, cap);
  b->cap = cap;
}

static void
jb_add (jbuf *b, const char *s, size_t n)
{
  jb_grow (b, n);
  memcpy (b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void
jb_puts (jbuf *b, const char *s)
{
  jb_add (b, s, strlen (s));
}

static void BERTH_PRINTF (2, 3)
jb_printf (jbuf *b, const char *fmt, ...)
{
  char tmp[128];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (tmp, sizeof tmp, fmt, ap);
  va_end (ap);
  if (n > 0)
    jb_add (b, tmp, (size_t) n < sizeof tmp ? (size_t) n : sizeof tmp - 1);
}

static void
jb_string_len (jbuf *b, const char *s, size_t len)
{
  if (s == NULL)
    {
      jb_puts (b, "null");
      return;
    }
  jb_grow (b, len + 2);
  b->s[b->len++] = '"';
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];
      switch (c)
        {
        case '"': jb_puts (b, "\\\""); break;
        case '\\': jb_puts (b, "\\\\"); break;
        case '\n': jb_puts (b, "\\n"); break;
        case '\r': jb_puts (b, "\\r"); break;
        case '\t': jb_puts (b, "\\t"); break;
        default:
          if (c < 0x20 || c == 0x7f)
            jb_printf (b, "\\u%04x", c);
          else
            jb_add (b, (const char *) &c, 1);
        }
    }
  jb_add (b, "\"", 1);
}

static void
jb_string (jbuf *b, const char *s)
{
  jb_string_len (b, s, s ? strlen (s) : 0);
}

static const char *
tf (bool v)
{
  return v ? "true" : "false";
}

char *
berth_result_json (const berth_result *r, size_t *ret_len)
{
  jbuf b = { 0 };
  size_t len;
  const char *out = berth_result_output (r, &len);
  jb_printf (&b, "{\"schema_version\":%d,\"output\":", BERTH_SCHEMA_VERSION);
  jb_string_len (&b, out, len);
  jb_printf (&b, ",\"exit_code\":%d,\"cwd\":", berth_result_exit_code (r));
  jb_string (&b, berth_result_cwd (r));
  jb_printf (&b, ",\"cwd_changed\":%s,\"timed_out\":%s", tf (berth_result_cwd_changed (r)), tf (berth_result_timed_out (r)));
  jb_printf (&b, ",\"interrupted\":%s,\"truncated\":%s", tf (berth_result_interrupted (r)), tf (berth_result_truncated (r)));
  jb_printf (&b, ",\"output_total_bytes\":%llu,\"full_output_path\":", (unsigned long long) berth_result_total_bytes (r));
  jb_string (&b, berth_result_full_output_path (r));
  jb_printf (&b, ",\"environment_recreated\":%s,\"backend\":", tf (berth_result_environment_recreated (r)));
  jb_string (&b, berth_result_backend (r));
  jb_puts (&b, ",\"env\":");
  jb_string (&b, berth_result_env (r));
  jb_printf (&b, ",\"duration_ms\":%llu,\"termination\":{\"kind\":", (unsigned long long) berth_result_duration_ms (r));
  jb_string (&b, berth_termination_name (berth_result_termination (r)));
  if (berth_result_signal (r))
    {
      jb_puts (&b, ",\"signal\":");
      jb_string (&b, berth_result_signal (r));
    }
  jb_puts (&b, "},\"transport\":");
  jb_string (&b, berth_result_transport (r));
  jb_puts (&b, "}");
  if (ret_len)
    *ret_len = b.len;
  return b.s;
}
