/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.c: berth serve's bounded JSON reader and its writer.  */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void *
xrealloc_or_die (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    abort (); /* small allocations abort, as in the runtime */
  return p;
}

/* ---- reader ---- */

typedef struct parser
{
  const unsigned char *s;
  size_t len, pos, nodes;
  const char *err;
} parser;

static bool
fail (parser *p, const char *msg)
{
  if (p->err == NULL)
    p->err = msg;
  return false;
}

static void
skip_ws (parser *p)
{
  while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
    p->pos++;
}

static bool
literal (parser *p, const char *word)
{
  size_t n = strlen (word);
  if (p->len - p->pos < n || memcmp (p->s + p->pos, word, n) != 0)
    return fail (p, "invalid literal");
  p->pos += n;
  return true;
}

static int
hex4 (parser *p)
{
  int v = 0;
  if (p->len - p->pos < 4)
    return -1;
  for (int i = 0; i < 4; i++)
    {
      unsigned char c = p->s[p->pos++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return -1;
    }
  return v;
}

static void
put_utf8 (sbuf *b, uint32_t cp)
{
  char t[4];
  size_t n;
  if (cp < 0x80)
    t[0] = (char) cp, n = 1;
  else if (cp < 0x800)
    t[0] = (char) (0xc0 | (cp >> 6)), t[1] = (char) (0x80 | (cp & 0x3f)), n = 2;
  else if (cp < 0x10000)
    t[0] = (char) (0xe0 | (cp >> 12)), t[1] = (char) (0x80 | ((cp >> 6) & 0x3f)), t[2] = (char) (0x80 | (cp & 0x3f)), n = 3;
  else
    t[0] = (char) (0xf0 | (cp >> 18)), t[1] = (char) (0x80 | ((cp >> 12) & 0x3f)), t[2] = (char) (0x80 | ((cp >> 6) & 0x3f)), t[3] = (char) (0x80 | (cp & 0x3f)), n = 4;
  sb_add (b, t, n);
}

static bool
parse_string (parser *p, char **ret, size_t *ret_len)
{
  sbuf b = { 0 };
  p->pos++; /* the opening quote */
  for (;;)
    {
      if (p->pos >= p->len)
        {
          sb_free (&b);
          return fail (p, "unterminated string");
        }
      unsigned char c = p->s[p->pos];
      if (c == '"')
        {
          p->pos++;
          break;
        }
      if (c < 0x20)
        {
          sb_free (&b);
          return fail (p, "control character in a string");
        }
      if (c == '\\')
        {
          if (++p->pos >= p->len)
            {
              sb_free (&b);
              return fail (p, "unterminated string");
            }
          c = p->s[p->pos++];
          switch (c)
            {
            case '"': sb_add (&b, "\"", 1); break;
            case '\\': sb_add (&b, "\\", 1); break;
            case '/': sb_add (&b, "/", 1); break;
            case 'b': sb_add (&b, "\b", 1); break;
            case 'f': sb_add (&b, "\f", 1); break;
            case 'n': sb_add (&b, "\n", 1); break;
            case 'r': sb_add (&b, "\r", 1); break;
            case 't': sb_add (&b, "\t", 1); break;
            case 'u':
              {
                int hi = hex4 (p), lo;
                uint32_t cp;
                if (hi < 0)
                  goto bad_escape;
                if (hi >= 0xd800 && hi <= 0xdbff)
                  {
                    if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
                      goto bad_escape;
                    p->pos += 2;
                    lo = hex4 (p);
                    if (lo < 0xdc00 || lo > 0xdfff)
                      goto bad_escape;
                    cp = 0x10000 + (((uint32_t) hi - 0xd800) << 10) + ((uint32_t) lo - 0xdc00);
                  }
                else if (hi >= 0xdc00 && hi <= 0xdfff)
                  goto bad_escape;
                else
                  cp = (uint32_t) hi;
                put_utf8 (&b, cp);
                break;
              }
            default:
            bad_escape:
              sb_free (&b);
              return fail (p, "invalid escape in a string");
            }
          continue;
        }
      /* a run of plain bytes: must be UTF-8 */
      size_t start = p->pos, end = p->pos;
      while (end < p->len && p->s[end] != '"' && p->s[end] != '\\' && p->s[end] >= 0x20)
        end++;
      bool partial;
      size_t ok = utf8_valid_prefix (p->s + start, end - start, &partial);
      if (ok != end - start)
        {
          p->pos = start + ok;
          sb_free (&b);
          return fail (p, "a string is not valid UTF-8");
        }
      sb_add (&b, (const char *) p->s + start, end - start);
      p->pos = end;
    }
  if (b.s == NULL)
    sb_add (&b, "", 0);
  *ret = b.s;
  *ret_len = b.len;
  return true;
}

static bool
parse_number (parser *p, jv *v)
{
  size_t start = p->pos;
  const unsigned char *s = p->s;
  if (p->pos < p->len && s[p->pos] == '-')
    p->pos++;
  if (p->pos >= p->len)
    return fail (p, "invalid number");
  if (s[p->pos] == '0')
    p->pos++;
  else if (s[p->pos] >= '1' && s[p->pos] <= '9')
    while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
      p->pos++;
  else
    return fail (p, "invalid number");
  if (p->pos < p->len && s[p->pos] == '.')
    {
      p->pos++;
      if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
        return fail (p, "invalid number");
      while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
        p->pos++;
    }
  if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E'))
    {
      p->pos++;
      if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-'))
        p->pos++;
      if (p->pos >= p->len || s[p->pos] < '0' || s[p->pos] > '9')
        return fail (p, "invalid number");
      while (p->pos < p->len && s[p->pos] >= '0' && s[p->pos] <= '9')
        p->pos++;
    }
  size_t n = p->pos - start;
  if (n > 64)
    return fail (p, "number too long");
  v->raw = xrealloc_or_die (NULL, n + 1);
  memcpy (v->raw, s + start, n);
  v->raw[n] = '\0';
  v->num = strtod (v->raw, NULL);
  v->type = JV_NUMBER;
  return true;
}

static void jv_clear (jv *v);

static bool parse_value (parser *p, jv *v, int depth);

static bool
parse_container (parser *p, jv *v, int depth, bool object)
{
  size_t cap = 0;
  v->type = object ? JV_OBJECT : JV_ARRAY;
  p->pos++; /* [ or { */
  skip_ws (p);
  if (p->pos < p->len && p->s[p->pos] == (object ? '}' : ']'))
    {
      p->pos++;
      return true;
    }
  for (;;)
    {
      char *key = NULL;
      size_t key_len;
      skip_ws (p);
      if (object)
        {
          if (p->pos >= p->len || p->s[p->pos] != '"')
            return fail (p, "expected a string key");
          if (!parse_string (p, &key, &key_len))
            return false;
          if (strlen (key) != key_len)
            {
              free (key);
              return fail (p, "a key holds a NUL");
            }
          skip_ws (p);
          if (p->pos >= p->len || p->s[p->pos] != ':')
            {
              free (key);
              return fail (p, "expected ':'");
            }
          p->pos++;
        }
      if (v->len == cap)
        {
          cap = cap ? cap * 2 : 4;
          v->items = xrealloc_or_die (v->items, cap * sizeof *v->items);
          if (object)
            v->keys = xrealloc_or_die (v->keys, cap * sizeof *v->keys);
        }
      memset (&v->items[v->len], 0, sizeof v->items[0]);
      if (object)
        v->keys[v->len] = key;
      v->len++;
      if (!parse_value (p, &v->items[v->len - 1], depth + 1))
        return false;
      skip_ws (p);
      if (p->pos >= p->len)
        return fail (p, object ? "unterminated object" : "unterminated array");
      if (p->s[p->pos] == ',')
        {
          p->pos++;
          continue;
        }
      if (p->s[p->pos] == (object ? '}' : ']'))
        {
          p->pos++;
          return true;
        }
      return fail (p, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static bool
parse_value (parser *p, jv *v, int depth)
{
  if (depth > SERVE_JSON_MAX_DEPTH)
    return fail (p, "nested too deeply");
  if (++p->nodes > SERVE_JSON_MAX_NODES)
    return fail (p, "too many values");
  skip_ws (p);
  if (p->pos >= p->len)
    return fail (p, "expected a value");
  switch (p->s[p->pos])
    {
    case '{': return parse_container (p, v, depth, true);
    case '[': return parse_container (p, v, depth, false);
    case '"':
      v->type = JV_STRING;
      return parse_string (p, &v->str, &v->len);
    case 't':
      v->type = JV_BOOL, v->b = true;
      return literal (p, "true");
    case 'f':
      v->type = JV_BOOL, v->b = false;
      return literal (p, "false");
    case 'n':
      v->type = JV_NULL;
      return literal (p, "null");
    default:
      if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9'))
        return parse_number (p, v);
      return fail (p, "expected a JSON value");
    }
}

static void
jv_clear (jv *v)
{
  if (v->type == JV_ARRAY || v->type == JV_OBJECT)
    {
      for (size_t i = 0; i < v->len; i++)
        {
          jv_clear (&v->items[i]);
          if (v->keys)
            free (v->keys[i]);
        }
    }
  free (v->items);
  free (v->keys);
  free (v->str);
  free (v->raw);
}

jv *
jv_free (jv *v)
{
  if (v)
    {
      jv_clear (v);
      free (v);
    }
  return NULL;
}

int
jv_parse (const char *text, size_t len, jv **ret, const char **errmsg, size_t *errpos)
{
  parser p = { (const unsigned char *) text, len, 0, 0, NULL };
  jv *v = xrealloc_or_die (NULL, sizeof *v);
  memset (v, 0, sizeof *v);
  if (parse_value (&p, v, 0))
    {
      skip_ws (&p);
      if (p.pos == p.len)
        {
          *ret = v;
          return 0;
        }
      fail (&p, "text after the value");
    }
  jv_free (v);
  if (errmsg)
    *errmsg = p.err ? p.err : "invalid JSON";
  if (errpos)
    *errpos = p.pos;
  return -1;
}

const jv *
jv_get (const jv *o, const char *key)
{
  if (o == NULL || o->type != JV_OBJECT)
    return NULL;
  /* the last of duplicate keys wins, as most readers do */
  for (size_t i = o->len; i-- > 0;)
    if (strcmp (o->keys[i], key) == 0)
      return &o->items[i];
  return NULL;
}

/* ---- UTF-8, base64 ---- */

size_t
utf8_valid_prefix (const unsigned char *s, size_t len, bool *ret_partial)
{
  size_t i = 0;
  *ret_partial = false;
  while (i < len)
    {
      unsigned char c = s[i];
      size_t n;
      uint32_t min, cp;
      if (c < 0x80)
        {
          i++;
          continue;
        }
      if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, cp = c & 0x1f;
      else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, cp = c & 0x0f;
      else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, cp = c & 0x07;
      else
        return i;
      size_t k;
      for (k = 1; k < n && i + k < len; k++)
        {
          if ((s[i + k] & 0xc0) != 0x80)
            return i;
          cp = (cp << 6) | (s[i + k] & 0x3f);
          /* reject overlongs, surrogates and > U+10FFFF as soon as known */
          if (k == 1 && ((n == 3 && c == 0xe0 && s[i + 1] < 0xa0) || (n == 3 && c == 0xed && s[i + 1] > 0x9f)
                         || (n == 4 && c == 0xf0 && s[i + 1] < 0x90) || (n == 4 && c == 0xf4 && s[i + 1] > 0x8f)))
            return i;
        }
      if (k < n)
        {
          *ret_partial = true; /* a sequence cut by the end of S */
          return i;
        }
      if (cp < min)
        return i;
      i += n;
    }
  return i;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
sb_base64 (sbuf *b, const void *data, size_t len)
{
  const unsigned char *d = data;
  sb_add (b, "\"", 1);
  for (size_t i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t) d[i] << 16;
      if (i + 1 < len)
        v |= (uint32_t) d[i + 1] << 8;
      if (i + 2 < len)
        v |= d[i + 2];
      char t[4] = { b64[(v >> 18) & 63], b64[(v >> 12) & 63], i + 1 < len ? b64[(v >> 6) & 63] : '=', i + 2 < len ? b64[v & 63] : '=' };
      sb_add (b, t, 4);
    }
  sb_add (b, "\"", 1);
}

int
base64_decode (const char *s, size_t len, unsigned char **ret, size_t *ret_len)
{
  unsigned char *out = xrealloc_or_die (NULL, len / 4 * 3 + 3);
  size_t n = 0;
  uint32_t acc = 0;
  int bits = 0;
  size_t i = 0;
  for (; i < len && s[i] != '='; i++)
    {
      const char *c = s[i] ? strchr (b64, s[i]) : NULL;
      if (c == NULL)
        {
          free (out);
          return -1;
        }
      acc = (acc << 6) | (uint32_t) (c - b64);
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          out[n++] = (unsigned char) (acc >> bits);
          acc &= (1u << bits) - 1;
        }
    }
  /* at most two '=' and nothing after them; no dangling 6 bits */
  size_t pad = len - i;
  if (pad > 2 || bits >= 6 || (pad && (i + pad) % 4 != 0))
    {
      free (out);
      return -1;
    }
  for (; i < len; i++)
    if (s[i] != '=')
      {
        free (out);
        return -1;
      }
  *ret = out;
  *ret_len = n;
  return 0;
}

/* ---- writer ---- */

void
sb_add (sbuf *b, const char *s, size_t n)
{
  if (b->len + n + 1 > b->cap)
    {
      size_t cap = b->cap ? b->cap : 256;
      while (cap < b->len + n + 1)
        cap *= 2;
      b->s = xrealloc_or_die (b->s, cap);
      b->cap = cap;
    }
  if (n)
    memcpy (b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void
sb_puts (sbuf *b, const char *s)
{
  sb_add (b, s, strlen (s));
}

void
sb_printf (sbuf *b, const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start (ap, fmt);
  int n = vasprintf (&s, fmt, ap);
  va_end (ap);
  if (n < 0)
    abort ();
  sb_add (b, s, (size_t) n);
  free (s);
}

void
sb_string_len (sbuf *b, const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *) s;
  if (s == NULL)
    {
      sb_puts (b, "null");
      return;
    }
  sb_add (b, "\"", 1);
  size_t i = 0;
  while (i < len)
    {
      bool partial;
      /* the longest valid run, written with the CLI's escapes */
      size_t ok = utf8_valid_prefix (u + i, len - i, &partial);
      for (size_t k = i; k < i + ok; k++)
        {
          unsigned char c = u[k];
          char t[8];
          switch (c)
            {
            case '"': sb_add (b, "\\\"", 2); break;
            case '\\': sb_add (b, "\\\\", 2); break;
            case '\n': sb_add (b, "\\n", 2); break;
            case '\r': sb_add (b, "\\r", 2); break;
            case '\t': sb_add (b, "\\t", 2); break;
            default:
              if (c < 0x20 || c == 0x7f)
                {
                  snprintf (t, sizeof t, "\\u%04x", c);
                  sb_add (b, t, 6);
                }
              else
                sb_add (b, (const char *) &u[k], 1);
            }
        }
      i += ok;
      if (i < len)
        {
          sb_puts (b, "\xef\xbf\xbd"); /* U+FFFD for one byte that is not UTF-8 */
          i++;
        }
    }
  sb_add (b, "\"", 1);
}

void
sb_string (sbuf *b, const char *s)
{
  sb_string_len (b, s, s ? strlen (s) : 0);
}

void
sb_value (sbuf *b, const jv *v)
{
  switch (v->type)
    {
    case JV_NULL: sb_puts (b, "null"); break;
    case JV_BOOL: sb_puts (b, v->b ? "true" : "false"); break;
    case JV_NUMBER: sb_puts (b, v->raw); break;
    case JV_STRING: sb_string_len (b, v->str, v->len); break;
    case JV_ARRAY:
    case JV_OBJECT:
      sb_add (b, v->type == JV_ARRAY ? "[" : "{", 1);
      for (size_t i = 0; i < v->len; i++)
        {
          if (i)
            sb_add (b, ",", 1);
          if (v->type == JV_OBJECT)
            {
              sb_string (b, v->keys[i]);
              sb_add (b, ":", 1);
            }
          sb_value (b, &v->items[i]);
        }
      sb_add (b, v->type == JV_ARRAY ? "]" : "}", 1);
      break;
    }
}

void
sb_free (sbuf *b)
{
  free (b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}
