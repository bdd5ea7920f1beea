/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-tree.c: the configuration tree.  Nodes, the values of scalars,
   the layered merge (parse, check against the schema, merge over what is
   there) and the lookups for providers (the SDK's berth_config_*).
   Parsing is conf-parse.c, the schema conf-schema.c, rendering
   conf-render.c, editing a user file conf-edit.c.  */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf-private.h"

/* ---- nodes ---- */

berth_config *
conf_node_free (berth_config *n)
{
  if (n == NULL)
    return NULL;
  for (size_t i = 0; i < n->n_items; i++)
    conf_node_free (n->items[i]);
  free (n->items);
  free (n->scalar);
  free (n->key);
  free (n->where);
  free (n);
  return NULL;
}

berth_config *
conf_node_new (int kind, const char *name, config_pos start)
{
  berth_config *n = xcalloc (1, sizeof *n);
  n->kind = kind;
  n->start = n->end = start;
  n->where = xasprintf ("%s:%" PRIu32 ":%" PRIu32, name, start.line + 1, start.col + 1);
  return n;
}

int
conf_node_append (berth_config *parent, berth_config *child)
{
  if (parent->n_items == parent->cap_items)
    {
      size_t cap = parent->cap_items ? parent->cap_items * 2 : 4;
      berth_config **v = realloc (parent->items, cap * sizeof *v);
      if (v == NULL)
        return -ENOMEM;
      parent->items = v;
      parent->cap_items = cap;
    }
  parent->items[parent->n_items++] = child;
  return 0;
}

void
conf_node_remove (berth_config *parent, size_t i)
{
  conf_node_free (parent->items[i]);
  memmove (parent->items + i, parent->items + i + 1, (parent->n_items - i - 1) * sizeof *parent->items);
  parent->n_items--;
}

bool
conf_text_is_null (const char *s)
{
  return s[0] == '\0' || strcmp (s, "~") == 0 || strcmp (s, "null") == 0 || strcmp (s, "Null") == 0
         || strcmp (s, "NULL") == 0;
}

const berth_config *
conf_node_child (const berth_config *n, const char *key, size_t keylen)
{
  if (n == NULL)
    return NULL;
  if (n->kind == BERTH_CONFIG_MAPPING)
    {
      for (size_t i = n->n_items; i-- > 0;)
        {
          const char *k = n->items[i]->key;
          if (k && strncmp (k, key, keylen) == 0 && k[keylen] == '\0')
            return n->items[i];
        }
      return NULL;
    }
  if (n->kind == BERTH_CONFIG_SEQUENCE && keylen > 0 && keylen < 10)
    {
      size_t idx = 0;
      for (size_t i = 0; i < keylen; i++)
        {
          if (!isdigit ((unsigned char) key[i]))
            return NULL;
          idx = idx * 10 + (size_t) (key[i] - '0');
        }
      return idx < n->n_items ? n->items[idx] : NULL;
    }
  return NULL;
}

/* A value for a message: quoted, control characters replaced, cut.  */
void
conf_describe_value (const berth_config *n, char *buf, size_t size)
{
  if (n->kind == BERTH_CONFIG_SEQUENCE)
    snprintf (buf, size, "a list");
  else if (n->kind == BERTH_CONFIG_MAPPING)
    snprintf (buf, size, "a mapping");
  else if (n->null)
    snprintf (buf, size, "an empty value");
  else
    {
      /* Room for the quotes, "..." and the NUL; cut between characters.  */
      size_t j = 0, max = size - 10;
      const char *s = n->scalar;
      buf[j++] = '\'';
      for (; *s && (j < max || ((unsigned char) *s & 0xc0) == 0x80); s++)
        buf[j++] = ((unsigned char) *s < 0x20 || *s == 0x7f) ? '?' : *s;
      if (*s)
        {
          memcpy (buf + j, "...", 3);
          j += 3;
        }
      buf[j++] = '\'';
      buf[j] = '\0';
    }
}

/* ---- values ---- */

bool
conf_parse_int64 (const char *s, int64_t *ret)
{
  char *end;
  long long v;
  if (!(isdigit ((unsigned char) s[0]) || ((s[0] == '-' || s[0] == '+') && isdigit ((unsigned char) s[1]))))
    return false;
  errno = 0;
  v = strtoll (s, &end, 10);
  if (errno != 0 || *end != '\0')
    return false;
  *ret = (int64_t) v;
  return true;
}

bool
conf_parse_double (const char *s, double *ret)
{
  char *end;
  double v;
  locale_t c, old;
  if (!(isdigit ((unsigned char) s[0]) || s[0] == '.' || s[0] == '-' || s[0] == '+'))
    return false;
  /* Numbers in the file are in the C locale whatever the program's.  */
  c = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  if (c == (locale_t) 0)
    return false;
  old = uselocale (c);
  errno = 0;
  v = strtod (s, &end);
  uselocale (old);
  freelocale (c);
  if (end == s || *end != '\0' || errno == ERANGE || !isfinite (v))
    return false;
  *ret = v;
  return true;
}

bool
conf_parse_bool (const char *s, bool *ret)
{
  static const char *const yes[] = { "true", "yes", "on" };
  static const char *const no[] = { "false", "no", "off" };
  for (size_t i = 0; i < ARRAY_SIZE (yes); i++)
    {
      if (strcasecmp (s, yes[i]) == 0)
        {
          *ret = true;
          return true;
        }
      if (strcasecmp (s, no[i]) == 0)
        {
          *ret = false;
          return true;
        }
    }
  return false;
}

bool
conf_is_string (const berth_config *n)
{
  return n && n->kind == BERTH_CONFIG_SCALAR && !n->null;
}

/* ---- merge ---- */

typedef struct merge_index
{
  const char *key;
  size_t pos;
} merge_index;

static int
compare_merge_index (const void *a, const void *b)
{
  return strcmp (((const merge_index *) a)->key, ((const merge_index *) b)->key);
}

/* Merge the members of SRC (emptied) into the mapping DST: a sorted index
   of DST's keys keeps this O(n log n) for wide mappings.  */
static int
node_merge (berth_config *dst, berth_config *src)
{
  _cleanup_free_ merge_index *index = NULL;
  size_t n_index = dst->n_items;
  if (n_index > 0)
    {
      index = malloc (n_index * sizeof *index);
      if (index == NULL)
        return -ENOMEM;
      for (size_t i = 0; i < n_index; i++)
        index[i] = (merge_index){ dst->items[i]->key, i };
      qsort (index, n_index, sizeof *index, compare_merge_index);
    }
  for (size_t i = 0; i < src->n_items; i++)
    {
      berth_config *c = src->items[i];
      merge_index want = { c->key, 0 };
      merge_index *found = n_index ? bsearch (&want, index, n_index, sizeof *index, compare_merge_index) : NULL;
      berth_config **d = found ? &dst->items[found->pos] : NULL;
      int r;
      if (d && (*d)->kind == BERTH_CONFIG_MAPPING && c->kind == BERTH_CONFIG_MAPPING)
        {
          r = node_merge (*d, c);
          if (r < 0)
            return r;
          continue;
        }
      if (d)
        {
          conf_node_free (*d);
          *d = c;
          found->key = c->key;
        }
      else if ((r = conf_node_append (dst, c)) < 0)
        return r;
      src->items[i] = NULL;
    }
  return 0;
}

/* ---- loading: parse, check, merge over the tree ---- */

berth_config *
berth_config_new (void)
{
  berth_config *n = conf_node_new (BERTH_CONFIG_MAPPING, "(defaults)", (config_pos){ 0, 0 });
  if (n)
    n->style = CONF_STYLE_BLOCK;
  return n;
}

berth_config *
berth_config_free (berth_config *cfg)
{
  return conf_node_free (cfg);
}

int
berth_config_merge_string_warn (berth_config *cfg, const char *name, const char *yaml, size_t len, berth_config_warn_fn warn,
                                void *userdata, berth_error **reterr)
{
  berth_config *tree = NULL;
  int r;
  if (name == NULL)
    name = "(string)";
  r = conf_parse (name, yaml, len, false, &tree, reterr);
  if (r < 0)
    return r;
  r = conf_schema_validate (tree, reterr);
  if (r >= 0)
    conf_schema_unknown (name, tree, warn, userdata);
  if (r >= 0)
    {
      r = node_merge (cfg, tree);
      if (r < 0)
        r = berth_error_errno (reterr, -r, "%s: cannot merge the configuration", name);
    }
  conf_node_free (tree);
  return r < 0 ? r : 0;
}

int
berth_config_merge_string (berth_config *cfg, const char *name, const char *yaml, size_t len, berth_error **reterr)
{
  return berth_config_merge_string_warn (cfg, name, yaml, len, NULL, NULL, reterr);
}

int
berth_config_merge_file (berth_config *cfg, const char *path, bool must_exist, berth_error **reterr)
{
  return berth_config_merge_file_warn (cfg, path, must_exist, NULL, NULL, reterr);
}

int
berth_config_merge_file_warn (berth_config *cfg, const char *path, bool must_exist, berth_config_warn_fn warn, void *userdata,
                              berth_error **reterr)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  int r = conf_read_file (path, path, &text, &len, reterr);
  if (r == -ENOENT && !must_exist)
    return 0;
  if (r == -ENOENT)
    return berth_error_errno (reterr, ENOENT, "%s: cannot read the configuration", path);
  if (r < 0)
    return r;
  return berth_config_merge_string_warn (cfg, path, text, len, warn, userdata, reterr);
}

/* ---- lookups (the provider services) ---- */

BERTH_EXPORT const berth_config *
berth_config_lookup (const berth_config *cfg, const char *path)
{
  const berth_config *n = cfg;
  if (path == NULL)
    return cfg;
  while (n && *path)
    {
      size_t len = strcspn (path, ".");
      n = conf_node_child (n, path, len);
      path += len;
      if (*path == '.')
        path++;
    }
  return n;
}

BERTH_EXPORT const char *
berth_config_string (const berth_config *cfg, const char *path, const char *def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  return conf_is_string (n) ? n->scalar : def;
}

BERTH_EXPORT int64_t
berth_config_int (const berth_config *cfg, const char *path, int64_t def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  int64_t v;
  return conf_is_string (n) && conf_parse_int64 (n->scalar, &v) ? v : def;
}

BERTH_EXPORT double
berth_config_double (const berth_config *cfg, const char *path, double def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  double v;
  return conf_is_string (n) && conf_parse_double (n->scalar, &v) ? v : def;
}

BERTH_EXPORT bool
berth_config_bool (const berth_config *cfg, const char *path, bool def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  bool v;
  return conf_is_string (n) && conf_parse_bool (n->scalar, &v) ? v : def;
}

BERTH_EXPORT char **
berth_config_strv (const berth_config *cfg, const char *path)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  char **v;
  if (n == NULL || n->kind == BERTH_CONFIG_SCALAR)
    return NULL;
  v = xcalloc (1, sizeof *v);
  for (size_t i = 0; v && i < n->n_items; i++)
    {
      const berth_config *c = n->items[i];
      if (c->kind != BERTH_CONFIG_SCALAR)
        continue;
      if (n->kind == BERTH_CONFIG_MAPPING)
        {
          _cleanup_free_ char *kv = berth_strdup_printf ("%s=%s", c->key, c->null ? "" : c->scalar);
          if (kv == NULL || berth_strv_push (&v, kv) < 0)
            v = berth_strv_free (v);
        }
      else if (!c->null && berth_strv_push (&v, c->scalar) < 0)
        v = berth_strv_free (v);
    }
  return v;
}

BERTH_EXPORT int
berth_config_kind (const berth_config *node)
{
  return node ? node->kind : 0;
}

BERTH_EXPORT const char *
berth_config_scalar (const berth_config *node)
{
  return node && node->kind == BERTH_CONFIG_SCALAR ? node->scalar : NULL;
}

BERTH_EXPORT size_t
berth_config_count (const berth_config *node)
{
  return node ? node->n_items : 0;
}

BERTH_EXPORT const berth_config *
berth_config_item (const berth_config *node, size_t i)
{
  return node && i < node->n_items ? node->items[i] : NULL;
}

BERTH_EXPORT const char *
berth_config_key (const berth_config *node)
{
  return node ? node->key : NULL;
}

BERTH_EXPORT const char *
berth_config_where (const berth_config *node)
{
  return node && node->where ? node->where : "";
}

