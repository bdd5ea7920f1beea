/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-render.c: a tree as YAML text that reads back the same, for
   `berth config get` and `config list` (and for the rewrites of
   conf-edit.c).  */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf-private.h"

/* ---- rendering ---- */

/* Plain text YAML 1.1 would read as something other than a string.  */
static bool
text_is_typed (const char *s)
{
  double d;
  bool b;
  return conf_text_is_null (s) || conf_parse_bool (s, &b) || conf_parse_double (s, &d) || strcasecmp (s, "y") == 0
         || strcasecmp (s, "n") == 0 || strcmp (s, ".inf") == 0 || strcmp (s, ".nan") == 0;
}

/* Can S be written as a plain scalar, in flow or block context?  */
static bool
text_plain_safe (const char *s)
{
  size_t len = strlen (s);
  if (len == 0 || isspace ((unsigned char) s[0]) || isspace ((unsigned char) s[len - 1]))
    return false;
  if (strchr ("!&*|>'\"%@`#,[]{}", s[0]))
    return false;
  if (strchr ("-?:", s[0]) && (s[1] == '\0' || s[1] == ' '))
    return false;
  if (s[len - 1] == ':')
    return false;
  for (const char *p = s; *p; p++)
    {
      unsigned char c = (unsigned char) *p;
      if (c < 0x20 || c == 0x7f || strchr (",[]{}", c))
        return false;
      if ((c == ':' && p[1] == ' ') || (c == ' ' && p[1] == '#'))
        return false;
    }
  return true;
}

static int
put_quoted (berth_buf *b, const char *s)
{
  int r = berth_buf_puts (b, "\"");
  for (; r >= 0 && *s; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        r = berth_buf_printf (b, "\\%c", c);
      else if (c == '\n')
        r = berth_buf_puts (b, "\\n");
      else if (c == '\t')
        r = berth_buf_puts (b, "\\t");
      else if (c < 0x20 || c == 0x7f)
        r = berth_buf_printf (b, "\\x%02x", c);
      else
        r = berth_buf_append (b, s, 1);
    }
  return r < 0 ? r : berth_buf_puts (b, "\"");
}

/* TEXT as a scalar that reads back the same: plain when it can be (and,
   for text that was quoted, when plain would not change its type).  */
static int
put_scalar_text (berth_buf *b, const char *text, bool was_plain)
{
  if (text_plain_safe (text) && (was_plain || !text_is_typed (text)))
    return berth_buf_puts (b, text);
  return put_quoted (b, text);
}

static int
put_scalar (berth_buf *b, const berth_config *n)
{
  if (n->null)
    return berth_buf_puts (b, n->scalar[0] ? n->scalar : "~");
  return put_scalar_text (b, n->scalar, n->style == CONF_STYLE_PLAIN);
}

int
conf_render_flow (berth_buf *b, const berth_config *n)
{
  int r = 0;
  if (n->kind == BERTH_CONFIG_SCALAR)
    return put_scalar (b, n);
  r = berth_buf_puts (b, n->kind == BERTH_CONFIG_SEQUENCE ? "[" : "{");
  for (size_t i = 0; r >= 0 && i < n->n_items; i++)
    {
      if (i > 0)
        r = berth_buf_puts (b, ", ");
      if (r >= 0 && n->kind == BERTH_CONFIG_MAPPING)
        {
          r = put_scalar_text (b, n->items[i]->key, true);
          if (r >= 0)
            r = berth_buf_puts (b, ": ");
        }
      if (r >= 0)
        r = conf_render_flow (b, n->items[i]);
    }
  return r < 0 ? r : berth_buf_puts (b, n->kind == BERTH_CONFIG_SEQUENCE ? "]" : "}");
}

static bool
node_is_flat (const berth_config *n)
{
  if (n->kind == BERTH_CONFIG_SCALAR || n->n_items == 0)
    return true;
  if (n->kind == BERTH_CONFIG_MAPPING)
    return false;
  for (size_t i = 0; i < n->n_items; i++)
    if (n->items[i]->kind != BERTH_CONFIG_SCALAR)
      return false;
  return true;
}

int
conf_put_indent (berth_buf *b, int indent)
{
  int r = 0;
  for (int i = 0; r >= 0 && i < indent; i++)
    r = berth_buf_append (b, " ", 1);
  return r;
}

/* A non-flat collection in block style, lines joined by "\n" (no final
   newline).  The first line is not indented when FIRST_INLINE (it follows
   "- ").  */
int
conf_render_block (berth_buf *b, const berth_config *n, int indent, bool first_inline)
{
  int r = 0;
  for (size_t i = 0; r >= 0 && i < n->n_items; i++)
    {
      const berth_config *c = n->items[i];
      if (i > 0)
        r = berth_buf_puts (b, "\n");
      if (r >= 0 && !(i == 0 && first_inline))
        r = conf_put_indent (b, indent);
      if (r < 0)
        break;
      if (n->kind == BERTH_CONFIG_MAPPING)
        {
          r = put_scalar_text (b, c->key, true);
          if (r >= 0)
            r = berth_buf_puts (b, ":");
          if (r >= 0 && node_is_flat (c))
            {
              r = berth_buf_puts (b, " ");
              if (r >= 0)
                r = conf_render_flow (b, c);
            }
          else if (r >= 0)
            {
              r = berth_buf_puts (b, "\n");
              if (r >= 0)
                r = conf_render_block (b, c, indent + 2, false);
            }
        }
      else
        {
          r = berth_buf_puts (b, "- ");
          if (r >= 0)
            r = node_is_flat (c) ? conf_render_flow (b, c) : conf_render_block (b, c, indent + 2, true);
        }
    }
  return r;
}

static int
render_node (berth_buf *b, const berth_config *n)
{
  if (n->kind == BERTH_CONFIG_SCALAR)
    return berth_buf_puts (b, n->scalar);
  if (node_is_flat (n))
    return conf_render_flow (b, n);
  return conf_render_block (b, n, 0, false);
}

int
berth_config_render (const berth_config *cfg, const char *path, char **ret, berth_error **reterr)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  berth_buf b = { 0 };
  int r;
  if (n == NULL)
    return berth_error_set (reterr, ENOENT, "%s: not set", path && *path ? path : "(configuration)");
  r = render_node (&b, n);
  if (r < 0)
    {
      berth_buf_free (&b);
      return berth_error_errno (reterr, -r, "cannot render %s", path ? path : "the configuration");
    }
  *ret = berth_buf_steal (&b);
  return 0;
}

/* ---- listing the merged keys ---- */

typedef struct list_entry
{
  char *key, *value, *origin;
} list_entry;

typedef struct list_state
{
  list_entry *v;
  size_t n, cap;
} list_state;

static int
list_add (list_state *ls, char *key, char *value, char *origin)
{
  if (key == NULL || value == NULL)
    goto nomem;
  if (ls->n == ls->cap)
    {
      size_t cap = ls->cap ? ls->cap * 2 : 32;
      list_entry *v = realloc (ls->v, cap * sizeof *v);
      if (v == NULL)
        goto nomem;
      ls->v = v;
      ls->cap = cap;
    }
  ls->v[ls->n++] = (list_entry){ key, value, origin };
  return 0;
nomem:
  free (key);
  free (value);
  free (origin);
  return -ENOMEM;
}

/* "file:line" of member N (the line of its key).  */
static char *
node_origin (const berth_config *n)
{
  const char *w = n->where ? n->where : "";
  const char *c2 = strrchr (w, ':'), *c1 = NULL;
  for (const char *p = w; c2 && p < c2; p++)
    if (*p == ':')
      c1 = p;
  if (c1 == NULL)
    return strdup (w);
  return berth_strdup_printf ("%.*s:%" PRIu32, (int) (c1 - w), w, (n->key ? n->key_start.line : n->start.line) + 1);
}

static int
list_collect (list_state *ls, const berth_config *n, const char *path)
{
  int r = 0;
  if (n->kind == BERTH_CONFIG_MAPPING && n->n_items > 0)
    {
      for (size_t i = 0; r >= 0 && i < n->n_items; i++)
        {
          _cleanup_free_ char *sub = path ? berth_strdup_printf ("%s.%s", path, n->items[i]->key) : strdup (n->items[i]->key);
          r = sub ? list_collect (ls, n->items[i], sub) : -ENOMEM;
        }
      return r;
    }
  if (path == NULL)
    return 0;
  berth_buf b = { 0 };
  if (n->kind == BERTH_CONFIG_SCALAR)
    r = berth_buf_puts (&b, n->null ? "" : n->scalar);
  else
    r = conf_render_flow (&b, n);
  if (r >= 0 && b.data == NULL)
    r = berth_buf_puts (&b, "");
  if (r < 0)
    {
      berth_buf_free (&b);
      return r;
    }
  return list_add (ls, strdup (path), berth_buf_steal (&b), node_origin (n));
}

static int
compare_entries (const void *a, const void *b)
{
  return strcmp (((const list_entry *) a)->key, ((const list_entry *) b)->key);
}

int
berth_config_list (const berth_config *cfg, berth_config_list_fn fn, void *userdata, berth_error **reterr)
{
  list_state ls = { 0 };
  int r = list_collect (&ls, cfg, NULL);
  const char *path, *def;
  for (size_t i = 0; r >= 0 && (path = conf_schema_key (i, &def)); i++)
    if (def && berth_config_lookup (cfg, path) == NULL)
      r = list_add (&ls, strdup (path), strdup (def), NULL);
  if (r >= 0 && ls.n > 1)
    qsort (ls.v, ls.n, sizeof *ls.v, compare_entries);
  for (size_t i = 0; i < ls.n; i++)
    {
      if (r >= 0)
        fn (userdata, ls.v[i].key, ls.v[i].value, ls.v[i].origin);
      free (ls.v[i].key);
      free (ls.v[i].value);
      free (ls.v[i].origin);
    }
  free (ls.v);
  return r < 0 ? berth_error_errno (reterr, -r, "cannot list the configuration") : 0;
}
