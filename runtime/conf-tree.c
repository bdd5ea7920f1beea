/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.c: the configuration tree.  Bounded libyaml parsing (one
   document, depth, size, node and anchor limits), layered merge, the
   schema of the known keys (a table), lookups for providers, rendering for
   `berth config get`, and in-place edits of a user file for `berth config
   set`.  The only file of berth that includes <yaml.h>.  */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <yaml.h>

#include <berth/provider.h>
#include "conf.h"
#include "util.h"

#define CONFIG_MAX_BYTES (1024 * 1024)
#define CONFIG_MAX_DEPTH 64
#define CONFIG_MAX_NODES 100000
#define CONFIG_MAX_ANCHORS 1024

/* A position in the source: 0-based line, column in characters.  */
typedef struct config_pos
{
  uint32_t line;
  uint32_t col;
} config_pos;

struct berth_config
{
  int kind;     /* BERTH_CONFIG_* */
  int style;    /* the yaml_*_style_t it was written in */
  bool null;    /* a plain null scalar: "", "~", "null" */
  char *scalar; /* scalar text */
  char *key;    /* key when a member of a mapping */
  char *where;  /* "file:line:col" */
  config_pos start, end, key_start, key_end;
  berth_config **items; /* sequence items or mapping members */
  size_t n_items;
  size_t cap_items;
};

/* ---- nodes ---- */

static berth_config *
node_free (berth_config *n)
{
  if (n == NULL)
    return NULL;
  for (size_t i = 0; i < n->n_items; i++)
    node_free (n->items[i]);
  free (n->items);
  free (n->scalar);
  free (n->key);
  free (n->where);
  free (n);
  return NULL;
}

static berth_config *
node_new (int kind, const char *name, config_pos start)
{
  berth_config *n = calloc (1, sizeof *n);
  if (n == NULL)
    return NULL;
  n->kind = kind;
  n->start = n->end = start;
  n->where = berth_strdup_printf ("%s:%" PRIu32 ":%" PRIu32, name, start.line + 1, start.col + 1);
  if (n->where == NULL)
    return node_free (n);
  return n;
}

static int
node_append (berth_config *parent, berth_config *child)
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

static void
node_remove (berth_config *parent, size_t i)
{
  node_free (parent->items[i]);
  memmove (parent->items + i, parent->items + i + 1, (parent->n_items - i - 1) * sizeof *parent->items);
  parent->n_items--;
}

static bool
text_is_null (const char *s)
{
  return s[0] == '\0' || strcmp (s, "~") == 0 || strcmp (s, "null") == 0 || strcmp (s, "Null") == 0
         || strcmp (s, "NULL") == 0;
}

static const berth_config *
node_child (const berth_config *n, const char *key, size_t keylen)
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

static int
node_depth (const berth_config *n)
{
  int d = 0;
  for (size_t i = 0; i < n->n_items; i++)
    {
      int c = node_depth (n->items[i]);
      if (c > d)
        d = c;
    }
  return d + (n->kind == BERTH_CONFIG_SCALAR ? 0 : 1);
}

static bool
node_equal (const berth_config *a, const berth_config *b)
{
  if (a->kind != b->kind || a->n_items != b->n_items)
    return false;
  if (a->kind == BERTH_CONFIG_SCALAR)
    return a->null == b->null && (a->null || strcmp (a->scalar, b->scalar) == 0);
  for (size_t i = 0; i < a->n_items; i++)
    {
      if ((a->items[i]->key == NULL) != (b->items[i]->key == NULL))
        return false;
      if (a->items[i]->key && strcmp (a->items[i]->key, b->items[i]->key) != 0)
        return false;
      if (!node_equal (a->items[i], b->items[i]))
        return false;
    }
  return true;
}

/* ---- messages ---- */

static int config_error (berth_error **reterr, const char *name, config_pos p, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));

static int
config_error (berth_error **reterr, const char *name, config_pos p, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  return berth_error_set (reterr, BERTH_E_CONFIG, "%s:%" PRIu32 ":%" PRIu32 ": %s", name, p.line + 1, p.col + 1, msg);
}

/* A value for a message: quoted, control characters replaced, cut.  */
static void
describe_value (const berth_config *n, char *buf, size_t size)
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

/* ---- parsing ---- */

typedef struct parse_frame
{
  berth_config *node;
  char *key; /* pending mapping key */
  config_pos key_start, key_end;
  bool have_key;
  char *anchor; /* anchor of this collection, registered at its end */
} parse_frame;

typedef struct parse_anchor
{
  char *name;
  const berth_config *node;
} parse_anchor;

typedef struct parse_state
{
  const char *name;
  const char *text;
  size_t len;
  parse_frame stack[CONFIG_MAX_DEPTH + 1];
  size_t depth;
  berth_config *root;
  parse_anchor anchors[CONFIG_MAX_ANCHORS];
  size_t n_anchors;
  size_t n_nodes;
  bool seen_document;
  bool seen_alias;
} parse_state;

static void
parse_state_free (parse_state *ps)
{
  for (size_t i = 0; i < ps->depth; i++)
    {
      free (ps->stack[i].key);
      free (ps->stack[i].anchor);
    }
  for (size_t i = 0; i < ps->n_anchors; i++)
    free (ps->anchors[i].name);
  node_free (ps->root);
  free (ps);
}

static config_pos
mark_pos (yaml_mark_t m)
{
  return (config_pos){ .line = m.line > UINT32_MAX ? UINT32_MAX : (uint32_t) m.line,
                       .col = m.column > UINT32_MAX ? UINT32_MAX : (uint32_t) m.column };
}

/* Line and column of byte OFFSET, for reader errors.  */
static config_pos
offset_pos (const char *text, size_t len, size_t offset)
{
  config_pos p = { 0, 0 };
  for (size_t i = 0; i < offset && i < len; i++)
    {
      if (text[i] == '\n')
        {
          p.line++;
          p.col = 0;
        }
      else if (((unsigned char) text[i] & 0xc0) != 0x80)
        p.col++;
    }
  return p;
}

static int
parse_count_node (parse_state *ps, config_pos p, berth_error **reterr)
{
  if (++ps->n_nodes > CONFIG_MAX_NODES)
    return config_error (reterr, ps->name, p, "more than %d nodes%s", CONFIG_MAX_NODES,
                         ps->seen_alias ? " (with aliases expanded)" : "");
  return 0;
}

static bool
parse_in_key_position (parse_state *ps)
{
  if (ps->depth == 0)
    return false;
  parse_frame *f = &ps->stack[ps->depth - 1];
  return f->node->kind == BERTH_CONFIG_MAPPING && !f->have_key;
}

/* Attach NODE (taken) to the open collection, as a key or a value.  */
static int
parse_attach (parse_state *ps, berth_config *node, berth_error **reterr)
{
  parse_frame *f;
  int r;
  if (ps->depth == 0)
    {
      node_free (ps->root);
      ps->root = node;
      return 0;
    }
  f = &ps->stack[ps->depth - 1];
  if (f->node->kind == BERTH_CONFIG_MAPPING)
    {
      if (!f->have_key)
        {
          if (node->kind != BERTH_CONFIG_SCALAR)
            {
              r = config_error (reterr, ps->name, node->start, "a mapping key must be a scalar");
              node_free (node);
              return r;
            }
          f->key = TAKE_PTR (node->scalar);
          f->key_start = node->start;
          f->key_end = node->end;
          f->have_key = true;
          node_free (node);
          return 0;
        }
      node->key = TAKE_PTR (f->key);
      node->key_start = f->key_start;
      node->key_end = f->key_end;
      f->have_key = false;
      /* An empty value sits right after its key.  */
      if (node->kind == BERTH_CONFIG_SCALAR && node->null && node->scalar[0] == '\0')
        node->start = node->end = node->key_end;
    }
  r = node_append (f->node, node);
  if (r < 0)
    node_free (node);
  return r;
}

static int
parse_anchor_add (parse_state *ps, const char *name, const berth_config *node, config_pos p, berth_error **reterr)
{
  if (ps->n_anchors == CONFIG_MAX_ANCHORS)
    return config_error (reterr, ps->name, p, "more than %d anchors", CONFIG_MAX_ANCHORS);
  ps->anchors[ps->n_anchors].name = strdup (name);
  if (ps->anchors[ps->n_anchors].name == NULL)
    return -ENOMEM;
  ps->anchors[ps->n_anchors++].node = node;
  return 0;
}

static berth_config *
parse_copy (parse_state *ps, const berth_config *src, config_pos p, int *r, berth_error **reterr)
{
  berth_config *n;
  *r = parse_count_node (ps, p, reterr);
  if (*r < 0)
    return NULL;
  n = calloc (1, sizeof *n);
  if (n == NULL)
    goto nomem;
  n->kind = src->kind;
  n->style = src->style;
  n->null = src->null;
  n->start = src->start;
  n->end = src->end;
  n->key_start = src->key_start;
  n->key_end = src->key_end;
  n->where = strdup (src->where);
  if (n->where == NULL || (src->scalar && (n->scalar = strdup (src->scalar)) == NULL)
      || (src->key && (n->key = strdup (src->key)) == NULL))
    goto nomem;
  for (size_t i = 0; i < src->n_items; i++)
    {
      berth_config *c = parse_copy (ps, src->items[i], p, r, reterr);
      if (c == NULL)
        return node_free (n);
      if (node_append (n, c) < 0)
        {
          node_free (c);
          goto nomem;
        }
    }
  return n;
nomem:
  *r = -ENOMEM;
  return node_free (n);
}

static int
parse_alias (parse_state *ps, yaml_event_t *ev, berth_error **reterr)
{
  const char *name = (const char *) ev->data.alias.anchor;
  config_pos p = mark_pos (ev->start_mark);
  const berth_config *target = NULL;
  berth_config *copy;
  int r;
  ps->seen_alias = true;
  for (size_t i = ps->n_anchors; i-- > 0;)
    if (strcmp (ps->anchors[i].name, name) == 0)
      {
        target = ps->anchors[i].node;
        break;
      }
  if (target == NULL)
    return config_error (reterr, ps->name, p, "unknown alias '*%.64s' (an anchor must be complete before it is used)", name);
  if (ps->depth + (size_t) node_depth (target) > CONFIG_MAX_DEPTH)
    return config_error (reterr, ps->name, p, "nesting deeper than %d levels", CONFIG_MAX_DEPTH);
  copy = parse_copy (ps, target, p, &r, reterr);
  if (copy == NULL)
    return r;
  free (copy->key);
  copy->key = NULL;
  copy->start = p;
  copy->end = mark_pos (ev->end_mark);
  return parse_attach (ps, copy, reterr);
}

static int
parse_scalar (parse_state *ps, yaml_event_t *ev, berth_error **reterr)
{
  config_pos p = mark_pos (ev->start_mark);
  const char *anchor = (const char *) ev->data.scalar.anchor;
  const char *value = (const char *) ev->data.scalar.value;
  berth_config *n;
  int r;
  if (ev->data.scalar.length != strlen (value))
    return config_error (reterr, ps->name, p, "a NUL character in a value is not allowed");
  r = parse_count_node (ps, p, reterr);
  if (r < 0)
    return r;
  if (anchor && parse_in_key_position (ps))
    return config_error (reterr, ps->name, p, "anchors on mapping keys are not supported");
  n = node_new (BERTH_CONFIG_SCALAR, ps->name, p);
  if (n == NULL || (n->scalar = strdup (value)) == NULL)
    {
      node_free (n);
      return -ENOMEM;
    }
  n->end = mark_pos (ev->end_mark);
  n->style = ev->data.scalar.style;
  n->null = n->style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.tag == NULL && text_is_null (value);
  r = parse_attach (ps, n, reterr);
  if (r < 0)
    return r;
  if (anchor)
    return parse_anchor_add (ps, anchor, n, p, reterr);
  return 0;
}

static int
parse_start (parse_state *ps, yaml_event_t *ev, int kind, berth_error **reterr)
{
  config_pos p = mark_pos (ev->start_mark);
  const yaml_char_t *anchor = kind == BERTH_CONFIG_MAPPING ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
  berth_config *n;
  int r;
  if (ps->depth >= CONFIG_MAX_DEPTH)
    return config_error (reterr, ps->name, p, "nesting deeper than %d levels", CONFIG_MAX_DEPTH);
  if (parse_in_key_position (ps))
    return config_error (reterr, ps->name, p, "a mapping key must be a scalar");
  r = parse_count_node (ps, p, reterr);
  if (r < 0)
    return r;
  n = node_new (kind, ps->name, p);
  if (n == NULL)
    return -ENOMEM;
  n->style = kind == BERTH_CONFIG_MAPPING ? (int) ev->data.mapping_start.style : (int) ev->data.sequence_start.style;
  r = parse_attach (ps, n, reterr);
  if (r < 0)
    return r;
  ps->stack[ps->depth] = (parse_frame){ .node = n };
  if (anchor && (ps->stack[ps->depth].anchor = strdup ((const char *) anchor)) == NULL)
    return -ENOMEM;
  ps->depth++;
  return 0;
}

static int
compare_member_keys (const void *a, const void *b)
{
  const berth_config *const *x = a, *const *y = b;
  int c = strcmp ((*x)->key, (*y)->key);
  if (c == 0)
    return (*x)->key_start.line < (*y)->key_start.line ? -1 : (*x)->key_start.line > (*y)->key_start.line;
  return c;
}

static int
parse_end (parse_state *ps, yaml_event_t *ev, berth_error **reterr)
{
  parse_frame *f = &ps->stack[ps->depth - 1];
  berth_config *n = f->node;
  int r = 0;
  n->end = mark_pos (ev->end_mark);
  if (n->kind == BERTH_CONFIG_MAPPING && n->n_items > 1)
    {
      _cleanup_free_ berth_config **sorted = malloc (n->n_items * sizeof *sorted);
      if (sorted == NULL)
        return -ENOMEM;
      memcpy (sorted, n->items, n->n_items * sizeof *sorted);
      qsort (sorted, n->n_items, sizeof *sorted, compare_member_keys);
      for (size_t i = 1; i < n->n_items; i++)
        if (strcmp (sorted[i - 1]->key, sorted[i]->key) == 0)
          return config_error (reterr, ps->name, sorted[i]->key_start, "duplicate key '%.64s'", sorted[i]->key);
    }
  if (f->anchor)
    r = parse_anchor_add (ps, f->anchor, n, n->start, reterr);
  free (f->anchor);
  free (f->key);
  ps->depth--;
  return r;
}

static int
parse_libyaml_error (parse_state *ps, yaml_parser_t *parser, berth_error **reterr)
{
  const char *problem = parser->problem ? parser->problem : "syntax error";
  switch (parser->error)
    {
    case YAML_MEMORY_ERROR:
      return berth_error_errno (reterr, ENOMEM, "%s: out of memory while parsing", ps->name);
    case YAML_READER_ERROR:
      if (parser->problem_value != -1)
        return config_error (reterr, ps->name, offset_pos (ps->text, ps->len, parser->problem_offset),
                             "invalid YAML: %s (byte 0x%02x)", problem, (unsigned) parser->problem_value & 0xffu);
      return config_error (reterr, ps->name, offset_pos (ps->text, ps->len, parser->problem_offset), "invalid YAML: %s",
                           problem);
    default:
      if (parser->context)
        return config_error (reterr, ps->name, mark_pos (parser->problem_mark), "invalid YAML: %s %s", problem,
                             parser->context);
      return config_error (reterr, ps->name, mark_pos (parser->problem_mark), "invalid YAML: %s", problem);
    }
}

/* Parse TEXT into a tree.  The top level must be a mapping (an empty
   document is an empty mapping) unless ANY_ROOT.  */
static int
parse_yaml (const char *name, const char *text, size_t len, bool any_root, berth_config **ret, berth_error **reterr)
{
  parse_state *ps;
  yaml_parser_t parser;
  yaml_event_t ev;
  bool done = false;
  int r = 0;

  if (len > CONFIG_MAX_BYTES)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: larger than %d bytes", name, CONFIG_MAX_BYTES);
  ps = calloc (1, sizeof *ps);
  if (ps == NULL)
    return -ENOMEM;
  ps->name = name;
  ps->text = text;
  ps->len = len;
  if (!yaml_parser_initialize (&parser))
    {
      parse_state_free (ps);
      return -ENOMEM;
    }
  yaml_parser_set_input_string (&parser, (const unsigned char *) text, len);
  yaml_parser_set_encoding (&parser, YAML_UTF8_ENCODING);

  while (!done && r >= 0)
    {
      if (!yaml_parser_parse (&parser, &ev))
        {
          r = parse_libyaml_error (ps, &parser, reterr);
          break;
        }
      switch (ev.type)
        {
        case YAML_DOCUMENT_START_EVENT:
          if (ps->seen_document)
            r = config_error (reterr, name, mark_pos (ev.start_mark), "only one YAML document is allowed");
          ps->seen_document = true;
          break;
        case YAML_ALIAS_EVENT:
          r = parse_alias (ps, &ev, reterr);
          break;
        case YAML_SCALAR_EVENT:
          r = parse_scalar (ps, &ev, reterr);
          break;
        case YAML_SEQUENCE_START_EVENT:
          r = parse_start (ps, &ev, BERTH_CONFIG_SEQUENCE, reterr);
          break;
        case YAML_MAPPING_START_EVENT:
          r = parse_start (ps, &ev, BERTH_CONFIG_MAPPING, reterr);
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          r = ps->depth > 0 ? parse_end (ps, &ev, reterr) : -EINVAL;
          break;
        case YAML_STREAM_END_EVENT:
          done = true;
          break;
        default:
          break;
        }
      yaml_event_delete (&ev);
    }
  yaml_parser_delete (&parser);

  if (r >= 0)
    {
      berth_config *root = ps->root;
      if (root == NULL || (!any_root && root->kind == BERTH_CONFIG_SCALAR && root->null))
        {
          node_free (root);
          ps->root = root = node_new (BERTH_CONFIG_MAPPING, name, (config_pos){ 0, 0 });
          if (root == NULL)
            r = -ENOMEM;
          else
            root->style = YAML_BLOCK_MAPPING_STYLE;
        }
      else if (!any_root && root->kind != BERTH_CONFIG_MAPPING)
        {
          char got[96];
          describe_value (root, got, sizeof got);
          r = config_error (reterr, name, root->start, "the top level must be a mapping, got %s", got);
        }
    }
  if (r >= 0)
    *ret = TAKE_PTR (ps->root);
  parse_state_free (ps);
  return r;
}

/* ---- values ---- */

static bool
parse_int64 (const char *s, int64_t *ret)
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

static bool
parse_double (const char *s, double *ret)
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

static bool
parse_bool (const char *s, bool *ret)
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

/* ---- schema of the known keys ---- */

typedef enum schema_type
{
  SCHEMA_SECTION, /* a mapping (empty when null) */
  SCHEMA_STRING,
  SCHEMA_NAME, /* [a-z0-9_]+ */
  SCHEMA_NUMBER,
  SCHEMA_INT,
  SCHEMA_BOOL,
  SCHEMA_STRV,   /* a sequence of strings */
  SCHEMA_OPTIONS, /* a string, a sequence of strings or a mapping of scalars */
  SCHEMA_STRMAP, /* a mapping of names to scalars */
  SCHEMA_BINDS,  /* a sequence of "src[:dest][:ro|rw]" or {src, dest, readonly} */
} schema_type;

typedef struct schema_key
{
  const char *path;
  schema_type type;
  const char *expect;
  double min; /* SCHEMA_NUMBER: value > min (MIN_OPEN) or >= min */
  bool min_open;
  double max; /* SCHEMA_NUMBER: value <= max, unless 0 */
  int64_t imin, imax; /* SCHEMA_INT: inclusive range */
  bool backend;  /* names a backend: `config set` checks that it exists */
  const char *def; /* the runtime's own default, shown by `config list`
                      (a backend's defaults are its own: berth-config(5)) */
} schema_key;

#define SCHEMA_STR(p) { p, SCHEMA_STRING, "a string" }
#define SCHEMA_LIST(p) { p, SCHEMA_STRV, "a list of strings" }
#define SCHEMA_BOOLEAN(p) { p, SCHEMA_BOOL, "a boolean (true/false, yes/no, on/off)" }
#define SCHEMA_COUNT(p) { p, SCHEMA_INT, "an integer >= 0", .imin = 0, .imax = INT64_MAX }

static const schema_key config_schema[] = {
  { "terminal", SCHEMA_SECTION, "a mapping" },
  { "tool_output", SCHEMA_SECTION, "a mapping" },
  { "plugins", SCHEMA_SECTION, "a mapping" },
  { "terminal.backend", SCHEMA_NAME, "a backend name ([a-z0-9_]+)", .backend = true, .def = "local" },
  SCHEMA_STR ("terminal.cwd"),
  { "terminal.timeout", SCHEMA_NUMBER, "a number of seconds from 0 (no timeout) to 2147483648", .min = 0, .max = BERTH_TIMEOUT_MAX, .def = "180" },
  { "terminal.lifetime_seconds", SCHEMA_INT, "an integer >= 0", .imin = 0, .imax = INT64_MAX, .def = "300" },
  SCHEMA_LIST ("terminal.env_passthrough"),
  SCHEMA_STR ("terminal.docker_image"),
  SCHEMA_LIST ("terminal.docker_volumes"),
  SCHEMA_BOOLEAN ("terminal.docker_network"),
  { "terminal.docker_env", SCHEMA_STRMAP, "a mapping of variable names to values" },
  SCHEMA_LIST ("terminal.docker_forward_env"),
  { "terminal.container_cpu", SCHEMA_NUMBER, "a number >= 0", .min = 0 },
  { "terminal.container_memory", SCHEMA_INT, "an integer >= 0 (MB)", .imin = 0, .imax = INT64_MAX },
  { "terminal.container_disk", SCHEMA_INT, "an integer >= 0 (MB)", .imin = 0, .imax = INT64_MAX },
  SCHEMA_BOOLEAN ("terminal.container_persistent"),
  SCHEMA_STR ("terminal.docker_shm_size"),
  SCHEMA_COUNT ("terminal.docker_pids_limit"),
  SCHEMA_BOOLEAN ("terminal.docker_run_as_host_user"),
  SCHEMA_BOOLEAN ("terminal.docker_snap_compat"),
  SCHEMA_BOOLEAN ("terminal.docker_mount_cwd_to_workspace"),
  SCHEMA_STR ("terminal.singularity_image"),
  SCHEMA_STR ("terminal.singularity_binary"),
  SCHEMA_LIST ("terminal.singularity_binds"),
  SCHEMA_BOOLEAN ("terminal.ssh_direct_bash"),
  { "terminal.ssh_connect_timeout", SCHEMA_INT, "an integer from 1 to 3600", .imin = 1, .imax = 3600 },
  { "terminal.ssh_control_persist", SCHEMA_INT, "an integer from 1 to 604800", .imin = 1, .imax = 604800 },
  SCHEMA_STR ("terminal.ssh_host"),
  SCHEMA_STR ("terminal.ssh_user"),
  SCHEMA_STR ("terminal.ssh_key"),
  { "terminal.ssh_options", SCHEMA_OPTIONS, "ssh options: [Key=Value, ...], {Key: Value, ...} or one Key=Value" },
  { "terminal.ssh_port", SCHEMA_INT, "an integer from 1 to 65535", .imin = 1, .imax = 65535 },
  SCHEMA_STR ("terminal.bwrap_profile"),
  { "terminal.bwrap_binds", SCHEMA_BINDS, "a list of binds ('src[:dest][:ro|rw]' or {src, dest, readonly})" },
  SCHEMA_LIST ("terminal.bwrap_hide"),
  SCHEMA_COUNT ("terminal.bwrap_memory_mb"),
  SCHEMA_COUNT ("terminal.bwrap_cpu_seconds"),
  SCHEMA_COUNT ("terminal.bwrap_max_procs"),
  { "tool_output.max_bytes", SCHEMA_INT, "a positive integer", .imin = 1, .imax = INT64_MAX, .def = "50000" },
  SCHEMA_LIST ("plugins.enabled"),
};

static int
schema_fail (berth_error **reterr, const berth_config *n, const char *path, const char *expect)
{
  char got[96];
  describe_value (n, got, sizeof got);
  return berth_error_set (reterr, BERTH_E_CONFIG, "%s: %s: expected %s, got %s", n->where, path, expect, got);
}

static bool
is_name (const char *s)
{
  if (*s == '\0')
    return false;
  for (; *s; s++)
    if (!(islower ((unsigned char) *s) || isdigit ((unsigned char) *s) || *s == '_'))
      return false;
  return true;
}

static bool
is_string (const berth_config *n)
{
  return n && n->kind == BERTH_CONFIG_SCALAR && !n->null;
}

/* "src[:dest][:ro|rw]": a source, an optional destination, an optional
   mode (the bwrap backend's syntax).  */
static bool
is_bind_spec (const char *s)
{
  const char *c1 = strchr (s, ':'), *c2;
  if (c1 == s || *s == '\0')
    return false;
  if (c1 == NULL)
    return true;
  if (c1[1] == '\0' || c1[1] == ':')
    return false;
  c2 = strchr (c1 + 1, ':');
  return c2 == NULL || strcmp (c2 + 1, "ro") == 0 || strcmp (c2 + 1, "rw") == 0;
}

static int
schema_check_item (const schema_key *k, const berth_config *item, size_t i, berth_error **reterr)
{
  char path[128];
  bool b;
  snprintf (path, sizeof path, "%s[%zu]", k->path, i);
  if (k->type == SCHEMA_STRV || k->type == SCHEMA_OPTIONS)
    return is_string (item) ? 0 : schema_fail (reterr, item, path, "a string");
  /* SCHEMA_BINDS */
  if (item->kind == BERTH_CONFIG_SCALAR)
    return is_string (item) && is_bind_spec (item->scalar) ? 0 : schema_fail (reterr, item, path, "'src[:dest][:ro|rw]'");
  if (item->kind == BERTH_CONFIG_MAPPING)
    {
      const berth_config *src = node_child (item, "src", 3), *dest = node_child (item, "dest", 4),
                         *ro = node_child (item, "readonly", 8);
      char sub[160];
      if (src == NULL)
        return berth_error_set (reterr, BERTH_E_CONFIG, "%s: %s: a bind needs 'src'", item->where, path);
      snprintf (sub, sizeof sub, "%s.src", path);
      if (!is_string (src))
        return schema_fail (reterr, src, sub, "a path");
      snprintf (sub, sizeof sub, "%s.dest", path);
      if (dest && !is_string (dest))
        return schema_fail (reterr, dest, sub, "a path");
      snprintf (sub, sizeof sub, "%s.readonly", path);
      if (ro && !(ro->kind == BERTH_CONFIG_SCALAR && parse_bool (ro->scalar, &b)))
        return schema_fail (reterr, ro, sub, "a boolean (true/false, yes/no, on/off)");
      return 0;
    }
  return schema_fail (reterr, item, path, "a bind ('src[:dest][:ro|rw]' or {src, dest, readonly})");
}

static int
schema_check (const schema_key *k, berth_config *n, berth_error **reterr)
{
  double d;
  int64_t v;
  bool b;
  int r;

  switch (k->type)
    {
    case SCHEMA_SECTION:
      return n->kind == BERTH_CONFIG_MAPPING ? 0 : schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_STRING:
      return n->kind == BERTH_CONFIG_SCALAR ? 0 : schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_NAME:
      return n->kind == BERTH_CONFIG_SCALAR && is_name (n->scalar) ? 0 : schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_NUMBER:
      if (n->kind == BERTH_CONFIG_SCALAR && parse_double (n->scalar, &d) && (k->min_open ? d > k->min : d >= k->min) && (k->max == 0 || d <= k->max))
        return 0;
      return schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_INT:
      if (n->kind == BERTH_CONFIG_SCALAR && parse_int64 (n->scalar, &v) && v >= k->imin && v <= k->imax)
        return 0;
      return schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_BOOL:
      return n->kind == BERTH_CONFIG_SCALAR && parse_bool (n->scalar, &b) ? 0 : schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_OPTIONS:
      if (n->kind == BERTH_CONFIG_SCALAR)
        return 0;
      if (n->kind == BERTH_CONFIG_MAPPING)
        goto strmap;
      /* fall through */
    case SCHEMA_STRV:
    case SCHEMA_BINDS:
      if (n->kind != BERTH_CONFIG_SEQUENCE)
        return schema_fail (reterr, n, k->path, k->expect);
      for (size_t i = 0; i < n->n_items; i++)
        if ((r = schema_check_item (k, n->items[i], i, reterr)) < 0)
          return r;
      return 0;
    case SCHEMA_STRMAP:
      if (n->kind != BERTH_CONFIG_MAPPING)
        return schema_fail (reterr, n, k->path, k->expect);
    strmap:
      for (size_t i = 0; i < n->n_items; i++)
        if (n->items[i]->kind != BERTH_CONFIG_SCALAR)
          {
            char path[192];
            snprintf (path, sizeof path, "%s.%.64s", k->path, n->items[i]->key);
            return schema_fail (reterr, n->items[i], path, "a scalar value");
          }
      return 0;
    }
  return 0;
}

/* Check the known keys of a freshly parsed file.  A null value of a known
   key means "not set here": it is dropped (a null section becomes an
   empty mapping).  Unknown keys and sections are left alone.  */
static int
schema_validate (berth_config *root, berth_error **reterr)
{
  for (size_t i = 0; i < ARRAY_SIZE (config_schema); i++)
    {
      const schema_key *k = &config_schema[i];
      const char *dot = strrchr (k->path, '.');
      berth_config *parent = root;
      const char *leaf = k->path;
      int r;
      if (dot)
        {
          parent = (berth_config *) node_child (root, k->path, (size_t) (dot - k->path));
          leaf = dot + 1;
        }
      if (parent == NULL || parent->kind != BERTH_CONFIG_MAPPING)
        continue;
      for (size_t j = 0; j < parent->n_items; j++)
        {
          berth_config *n = parent->items[j];
          if (strcmp (n->key, leaf) != 0)
            continue;
          if (n->kind == BERTH_CONFIG_SCALAR && n->null)
            {
              if (k->type != SCHEMA_SECTION)
                {
                  node_remove (parent, j);
                  break;
                }
              n->kind = BERTH_CONFIG_MAPPING;
              n->style = YAML_BLOCK_MAPPING_STYLE;
              free (n->scalar);
              n->scalar = NULL;
              n->null = false;
            }
          if ((r = schema_check (k, n, reterr)) < 0)
            return r;
          break;
        }
    }
  return 0;
}

/* ---- unknown keys ---- */

static const schema_key *
schema_find (const char *path)
{
  for (size_t i = 0; i < ARRAY_SIZE (config_schema); i++)
    if (strcmp (config_schema[i].path, path) == 0)
      return &config_schema[i];
  return NULL;
}

/* Optimal string alignment distance (a swap of neighbours is one edit),
   ignoring case; SIZE_MAX for words too long to be typos of a key.  */
static size_t
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  size_t d[65][65];
  if (la > 64 || lb > 64)
    return SIZE_MAX;
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++)
      {
        size_t cost = tolower ((unsigned char) a[i - 1]) != tolower ((unsigned char) b[j - 1]);
        size_t v = d[i - 1][j] + 1;
        if (d[i][j - 1] + 1 < v)
          v = d[i][j - 1] + 1;
        if (d[i - 1][j - 1] + cost < v)
          v = d[i - 1][j - 1] + cost;
        if (i > 1 && j > 1 && tolower ((unsigned char) a[i - 1]) == tolower ((unsigned char) b[j - 2])
            && tolower ((unsigned char) a[i - 2]) == tolower ((unsigned char) b[j - 1]) && d[i - 2][j - 2] + 1 < v)
          v = d[i - 2][j - 2] + 1;
        d[i][j] = v;
      }
  return d[la][lb];
}

/* The known key of SECTION closest to LEAF, or NULL when none is close
   enough to be what was meant.  */
static const char *
schema_suggest (const char *section, const char *leaf)
{
  size_t slen = strlen (section), best = SIZE_MAX, len = strlen (leaf);
  size_t max = len <= 4 ? 1 : len < 12 ? 2 : 3;
  const char *found = NULL;
  for (size_t i = 0; i < ARRAY_SIZE (config_schema); i++)
    {
      const char *p = config_schema[i].path;
      if (strncmp (p, section, slen) != 0 || p[slen] != '.')
        continue;
      size_t d = edit_distance (leaf, p + slen + 1);
      if (d < best)
        {
          best = d;
          found = p;
        }
    }
  return best <= max ? found : NULL;
}

/* Report the members of the terminal section of the file NAME that no
   schema entry knows (the section takes the Python agent's keys: a typo
   there is silently a default otherwise).  */
static void
schema_unknown (const char *name, const berth_config *root, berth_config_warn_fn warn, void *userdata)
{
  const berth_config *t = node_child (root, "terminal", 8);
  if (warn == NULL || t == NULL || t->kind != BERTH_CONFIG_MAPPING)
    return;
  for (size_t i = 0; i < t->n_items; i++)
    {
      const berth_config *m = t->items[i];
      _cleanup_free_ char *path = berth_strdup_printf ("terminal.%s", m->key);
      _cleanup_free_ char *where = berth_strdup_printf ("%s:%" PRIu32 ":%" PRIu32, name, m->key_start.line + 1, m->key_start.col + 1);
      if (path == NULL || where == NULL || schema_find (path))
        continue;
      warn (userdata, where, path, schema_suggest ("terminal", m->key));
    }
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
          node_free (*d);
          *d = c;
          found->key = c->key;
        }
      else if ((r = node_append (dst, c)) < 0)
        return r;
      src->items[i] = NULL;
    }
  return 0;
}

/* ---- the internal interface ---- */

berth_config *
berth_config_new (void)
{
  berth_config *n = node_new (BERTH_CONFIG_MAPPING, "(defaults)", (config_pos){ 0, 0 });
  if (n)
    n->style = YAML_BLOCK_MAPPING_STYLE;
  return n;
}

berth_config *
berth_config_free (berth_config *cfg)
{
  return node_free (cfg);
}

int
berth_config_merge_string_warn (berth_config *cfg, const char *name, const char *yaml, size_t len, berth_config_warn_fn warn,
                                void *userdata, berth_error **reterr)
{
  berth_config *tree = NULL;
  int r;
  if (name == NULL)
    name = "(string)";
  r = parse_yaml (name, yaml, len, false, &tree, reterr);
  if (r < 0)
    return r;
  r = schema_validate (tree, reterr);
  if (r >= 0)
    schema_unknown (name, tree, warn, userdata);
  if (r >= 0)
    {
      r = node_merge (cfg, tree);
      if (r < 0)
        r = berth_error_errno (reterr, -r, "%s: cannot merge the configuration", name);
    }
  node_free (tree);
  return r < 0 ? r : 0;
}

int
berth_config_merge_string (berth_config *cfg, const char *name, const char *yaml, size_t len, berth_error **reterr)
{
  return berth_config_merge_string_warn (cfg, name, yaml, len, NULL, NULL, reterr);
}

/* Read a configuration file: regular files only (and /dev/null, the
   usual "no configuration").  Opened non-blocking, so that a FIFO given
   as --config is refused instead of blocking forever, as is a directory
   or a device (/dev/zero, a tty): -ENOTSUP, *KIND says what it is.  */
static int
config_read (const char *path, char **ret, size_t *ret_len, const char **kind)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0)
    return -errno;
  if (fstat (fd, &st) < 0)
    return -errno;
  if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (1, 3))
    {
      *ret_len = 0;
      return (*ret = strdup ("")) ? 0 : -ENOMEM;
    }
  if (!S_ISREG (st.st_mode))
    {
      *kind = S_ISFIFO (st.st_mode)  ? "a FIFO"
              : S_ISDIR (st.st_mode) ? "a directory"
              : S_ISSOCK (st.st_mode) ? "a socket"
                                      : "a device";
      return -ENOTSUP;
    }
  return berth_read_fd (fd, CONFIG_MAX_BYTES, ret, ret_len);
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
  const char *kind = NULL;
  int r = config_read (path, &text, &len, &kind);
  if (r == -ENOENT && !must_exist)
    return 0;
  if (r == -ENOTSUP)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: not a regular file (%s); a configuration must be a YAML file", path, kind);
  if (r == -EFBIG)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: larger than 1 MiB; is this the right file?", path);
  if (r < 0)
    return berth_error_errno (reterr, -r, "%s: cannot read the configuration", path);
  return berth_config_merge_string_warn (cfg, path, text, len, warn, userdata, reterr);
}

/* ---- rendering ---- */

/* Plain text YAML 1.1 would read as something other than a string.  */
static bool
text_is_typed (const char *s)
{
  double d;
  bool b;
  return text_is_null (s) || parse_bool (s, &b) || parse_double (s, &d) || strcasecmp (s, "y") == 0
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
  return put_scalar_text (b, n->scalar, n->style == YAML_PLAIN_SCALAR_STYLE);
}

static int
render_flow (berth_buf *b, const berth_config *n)
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
        r = render_flow (b, n->items[i]);
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

static int
put_indent (berth_buf *b, int indent)
{
  int r = 0;
  for (int i = 0; r >= 0 && i < indent; i++)
    r = berth_buf_append (b, " ", 1);
  return r;
}

/* A non-flat collection in block style, lines joined by "\n" (no final
   newline).  The first line is not indented when FIRST_INLINE (it follows
   "- ").  */
static int
render_block (berth_buf *b, const berth_config *n, int indent, bool first_inline)
{
  int r = 0;
  for (size_t i = 0; r >= 0 && i < n->n_items; i++)
    {
      const berth_config *c = n->items[i];
      if (i > 0)
        r = berth_buf_puts (b, "\n");
      if (r >= 0 && !(i == 0 && first_inline))
        r = put_indent (b, indent);
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
                r = render_flow (b, c);
            }
          else if (r >= 0)
            {
              r = berth_buf_puts (b, "\n");
              if (r >= 0)
                r = render_block (b, c, indent + 2, false);
            }
        }
      else
        {
          r = berth_buf_puts (b, "- ");
          if (r >= 0)
            r = node_is_flat (c) ? render_flow (b, c) : render_block (b, c, indent + 2, true);
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
    return render_flow (b, n);
  return render_block (b, n, 0, false);
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
      n = node_child (n, path, len);
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
  return is_string (n) ? n->scalar : def;
}

BERTH_EXPORT int64_t
berth_config_int (const berth_config *cfg, const char *path, int64_t def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  int64_t v;
  return is_string (n) && parse_int64 (n->scalar, &v) ? v : def;
}

BERTH_EXPORT double
berth_config_double (const berth_config *cfg, const char *path, double def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  double v;
  return is_string (n) && parse_double (n->scalar, &v) ? v : def;
}

BERTH_EXPORT bool
berth_config_bool (const berth_config *cfg, const char *path, bool def)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  bool v;
  return is_string (n) && parse_bool (n->scalar, &v) ? v : def;
}

BERTH_EXPORT char **
berth_config_strv (const berth_config *cfg, const char *path)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  char **v;
  if (n == NULL || n->kind == BERTH_CONFIG_SCALAR)
    return NULL;
  v = calloc (1, sizeof *v);
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

/* ---- editing a user file ---- */

/* The text as lines: line I is [start[I], start[I + 1]).  */
typedef struct text_lines
{
  const char *text;
  size_t len;
  size_t *start;
  size_t n;
} text_lines;

static int
lines_init (text_lines *l, const char *text, size_t len)
{
  size_t n = 1;
  for (size_t i = 0; i < len; i++)
    n += text[i] == '\n';
  *l = (text_lines){ .text = text, .len = len, .start = malloc ((n + 1) * sizeof (size_t)), .n = 0 };
  if (l->start == NULL)
    return -ENOMEM;
  l->start[l->n++] = 0;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n')
      l->start[l->n++] = i + 1;
  l->start[l->n] = len;
  return 0;
}

/* Offset of the end of line LINE (its '\n', or the end of the text).  */
static size_t
lines_end (const text_lines *l, uint32_t line)
{
  size_t e;
  if (line >= l->n)
    return l->len;
  e = l->start[line + 1];
  return e > l->start[line] && l->text[e - 1] == '\n' ? e - 1 : e;
}

/* Byte offset of position P (columns count characters).  */
static size_t
lines_offset (const text_lines *l, config_pos p)
{
  size_t o, end;
  if (p.line >= l->n)
    return l->len;
  o = l->start[p.line];
  end = lines_end (l, p.line);
  for (uint32_t c = 0; c < p.col && o < end; c++)
    {
      o++;
      while (o < end && ((unsigned char) l->text[o] & 0xc0) == 0x80)
        o++;
    }
  return o;
}

/* The last line holding part of N (or of its keys).  */
static uint32_t
node_last_line (const berth_config *n)
{
  uint32_t last = n->start.line;
  if (n->kind == BERTH_CONFIG_SCALAR || n->style == YAML_FLOW_SEQUENCE_STYLE || n->style == YAML_FLOW_MAPPING_STYLE)
    return n->end.col == 0 && n->end.line > n->start.line ? n->end.line - 1 : n->end.line;
  for (size_t i = 0; i < n->n_items; i++)
    {
      uint32_t l = node_last_line (n->items[i]);
      if (l > last)
        last = l;
      if (n->items[i]->key && n->items[i]->key_end.line > last)
        last = n->items[i]->key_end.line;
    }
  return last;
}

static bool
is_block (const berth_config *n)
{
  return n->style == YAML_BLOCK_MAPPING_STYLE || n->style == YAML_BLOCK_SEQUENCE_STYLE;
}

/* The offset just after the ':' following member N's key, or -1.  */
static ssize_t
offset_after_colon (const text_lines *l, const berth_config *n)
{
  size_t o = lines_offset (l, n->key_end), end = lines_end (l, n->key_end.line);
  while (o < end && (l->text[o] == ' ' || l->text[o] == '\t'))
    o++;
  return o < end && l->text[o] == ':' ? (ssize_t) o + 1 : -1;
}

/* "KEY:" lines for COMPS[K..N-1] at INDENT, the last one with VTEXT.  */
static int
put_block_path (berth_buf *b, char **comps, size_t k, size_t n, int indent, const char *vtext)
{
  int r = 0;
  for (size_t j = k; r >= 0 && j < n; j++)
    {
      if (j > k)
        r = berth_buf_puts (b, "\n");
      if (r >= 0)
        r = put_indent (b, indent + 2 * (int) (j - k));
      if (r >= 0)
        r = berth_buf_printf (b, "%s:%s%s", comps[j], j + 1 == n ? " " : "", j + 1 == n ? vtext : "");
    }
  return r;
}

/* Compute the text of the file with COMPS set to VTEXT, keeping every
   other line.  Returns 0 and *RET, or 1 when no in-place edit applies.  */
static int
edit_in_place (const char *text, size_t len, const berth_config *root, char **comps, size_t n, const char *vtext,
               char **ret)
{
  const berth_config *x = root, *parent = NULL;
  size_t k = 0, a, b;
  text_lines l;
  berth_buf s = { 0 };
  ssize_t colon;
  int r = 0;

  while (k < n && x->kind != BERTH_CONFIG_SCALAR)
    {
      const berth_config *c = node_child (x, comps[k], strlen (comps[k]));
      if (c == NULL)
        break;
      parent = x;
      x = c;
      k++;
    }
  if (lines_init (&l, text, len) < 0)
    return -ENOMEM;

  if (k == n && x->kind == BERTH_CONFIG_SCALAR && !(x->null && x->scalar[0] == '\0')
      && x->style != YAML_LITERAL_SCALAR_STYLE && x->style != YAML_FOLDED_SCALAR_STYLE && x->start.line == x->end.line)
    {
      /* A simple scalar: replace just the value.  */
      a = lines_offset (&l, x->start);
      b = lines_offset (&l, x->end);
      r = berth_buf_puts (&s, vtext);
    }
  else if (k == n || x->kind != BERTH_CONFIG_MAPPING)
    {
      /* Replace the value of member X (empty, multi-line, a collection, or
         a non-mapping where a section is needed).  */
      bool empty = x->kind == BERTH_CONFIG_SCALAR && x->null && x->scalar[0] == '\0';
      if (parent == NULL || x->key == NULL || !is_block (parent) || (colon = offset_after_colon (&l, x)) < 0)
        goto fallback;
      if (k == n)
        {
          a = (size_t) colon;
          b = empty ? a : lines_end (&l, node_last_line (x));
          r = berth_buf_printf (&s, " %s", vtext);
        }
      else
        {
          a = empty ? lines_end (&l, x->key_end.line) : (size_t) colon;
          b = empty ? a : lines_end (&l, node_last_line (x));
          r = berth_buf_puts (&s, "\n");
          if (r >= 0)
            r = put_block_path (&s, comps, k, n, (int) x->key_start.col + 2, vtext);
        }
    }
  else if (x == root)
    {
      /* Append the section.  */
      a = b = len;
      if (len > 0 && text[len - 1] != '\n')
        r = berth_buf_puts (&s, "\n");
      if (r >= 0)
        r = put_block_path (&s, comps, k, n, 0, vtext);
      if (r >= 0)
        r = berth_buf_puts (&s, "\n");
    }
  else
    {
      /* Insert under the existing section, after its last line.  */
      if (!is_block (x) || x->n_items == 0)
        goto fallback;
      a = b = lines_end (&l, node_last_line (x));
      r = berth_buf_puts (&s, "\n");
      if (r >= 0)
        r = put_block_path (&s, comps, k, n, (int) x->items[0]->key_start.col, vtext);
    }

  if (r >= 0 && a <= b && b <= len)
    {
      berth_buf out = { 0 };
      r = berth_buf_append (&out, text, a);
      if (r >= 0)
        r = berth_buf_append (&out, s.data ? s.data : "", s.len);
      if (r >= 0)
        r = berth_buf_append (&out, text + b, len - b);
      if (r >= 0)
        *ret = berth_buf_steal (&out);
      else
        berth_buf_free (&out);
    }
  else if (r >= 0)
    r = 1;
  free (l.start);
  berth_buf_free (&s);
  return r;
fallback:
  free (l.start);
  berth_buf_free (&s);
  return 1;
}

/* Set COMPS to VALUE (taken) in the tree ROOT.  */
static int
tree_set (berth_config *root, char **comps, size_t n, berth_config *value)
{
  berth_config *x = root;
  for (size_t k = 0; k < n; k++)
    {
      berth_config *c = (berth_config *) node_child (x, comps[k], strlen (comps[k]));
      if (x->kind == BERTH_CONFIG_SEQUENCE && c == NULL)
        {
          node_free (value);
          return -ENOENT;
        }
      if (k + 1 == n)
        {
          if (x->kind == BERTH_CONFIG_MAPPING && (value->key = strdup (comps[k])) == NULL)
            {
              node_free (value);
              return -ENOMEM;
            }
          if (c)
            for (size_t i = 0; i < x->n_items; i++)
              if (x->items[i] == c)
                {
                  node_free (c);
                  x->items[i] = value;
                  return 0;
                }
          if (node_append (x, value) < 0)
            {
              node_free (value);
              return -ENOMEM;
            }
          return 0;
        }
      if (c && c->kind == BERTH_CONFIG_SCALAR)
        {
          /* A scalar where a section is needed becomes an empty one, in
             its place.  */
          free (c->scalar);
          c->scalar = NULL;
          c->null = false;
          c->kind = BERTH_CONFIG_MAPPING;
          c->style = YAML_BLOCK_MAPPING_STYLE;
        }
      if (c == NULL)
        {
          c = node_new (BERTH_CONFIG_MAPPING, "(set)", (config_pos){ 0, 0 });
          if (c == NULL || (c->key = strdup (comps[k])) == NULL || node_append (x, c) < 0)
            {
              node_free (c);
              node_free (value);
              return -ENOMEM;
            }
          c->style = YAML_BLOCK_MAPPING_STYLE;
        }
      x = c;
    }
  node_free (value);
  return 0;
}

/* Does TEXT read back as the tree EXPECTED?  */
static bool
edit_reads_back (const char *name, const char *text, const berth_config *expected)
{
  berth_config *tree = NULL;
  bool ok;
  if (parse_yaml (name, text, strlen (text), false, &tree, NULL) < 0)
    return false;
  ok = node_equal (tree, expected);
  node_free (tree);
  return ok;
}

/* VALUE from the command line: a flow collection or a quoted scalar is
   parsed as YAML; anything else is the string itself.  */
static int
parse_set_value (const char *value, berth_config **ret, berth_error **reterr)
{
  berth_config *n;
  if (strchr ("[{\"'", value[0]) && value[0] != '\0')
    return parse_yaml ("value", value, strlen (value), true, ret, reterr);
  n = node_new (BERTH_CONFIG_SCALAR, "value", (config_pos){ 0, 0 });
  if (n == NULL || (n->scalar = strdup (value)) == NULL)
    {
      node_free (n);
      return -ENOMEM;
    }
  n->style = YAML_PLAIN_SCALAR_STYLE;
  n->null = text_is_null (value);
  *ret = n;
  return 0;
}

/* The key: dotted components of [A-Za-z0-9_-].  */
static int
split_key (const char *path, char ***ret, size_t *ret_n, berth_error **reterr)
{
  _cleanup_free_ char *pathcopy = strdup (path);
  _cleanup_strv_free_ char **comps = calloc (1, sizeof *comps);
  size_t n;
  int r;
  if (comps == NULL || pathcopy == NULL)
    return -ENOMEM;
  for (char *save = NULL, *c = strtok_r (pathcopy, ".", &save); c; c = strtok_r (NULL, ".", &save))
    if ((r = berth_strv_push (&comps, c)) < 0)
      return r;
  n = berth_strv_length ((const char *const *) comps);
  if (n == 0 || n > 16 || path[0] == '.' || path[strlen (path) - 1] == '.' || strstr (path, ".."))
    return berth_error_set (reterr, BERTH_E_CONFIG, "'%.128s': not a valid key (use section.name)", path);
  for (const char *p = path; *p; p++)
    if (!(isalnum ((unsigned char) *p) || *p == '_' || *p == '-' || *p == '.'))
      return berth_error_set (reterr, BERTH_E_CONFIG, "'%.128s': not a valid key (use section.name)", path);
  *ret = TAKE_PTR (comps);
  *ret_n = n;
  return 0;
}

/* Read the user file to edit (the file a symlink points to): *RET_REAL,
   its text ("" when missing), whether it exists and its mode.  */
static int
edit_read (const char *file, char **ret_real, char **ret_text, size_t *ret_len, bool *ret_exists, mode_t *ret_mode,
           berth_error **reterr)
{
  _cleanup_free_ char *real = realpath (file, NULL);
  const char *kind = NULL;
  struct stat st;
  int r;
  if (real == NULL && (real = strdup (file)) == NULL)
    return -ENOMEM;
  r = config_read (real, ret_text, ret_len, &kind);
  *ret_exists = r >= 0;
  *ret_mode = 0600;
  if (r == -ENOTSUP)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: not a regular file (%s); a configuration must be a YAML file", file, kind);
  if (r == -EFBIG)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: larger than 1 MiB; is this the right file?", file);
  if (r < 0 && r != -ENOENT)
    return berth_error_errno (reterr, -r, "%s: cannot read the configuration", file);
  if (!*ret_exists)
    {
      *ret_len = 0;
      if ((*ret_text = strdup ("")) == NULL)
        return -ENOMEM;
    }
  if (*ret_exists && stat (real, &st) == 0)
    *ret_mode = st.st_mode & 07777;
  *ret_real = TAKE_PTR (real);
  return 0;
}

/* Is NAME one of the ", "-separated NAMES?  */
static bool
names_contain (const char *names, const char *name)
{
  size_t len = strlen (name);
  for (const char *p = names; p && *p;)
    {
      size_t n = strcspn (p, ",");
      if (n == len && strncmp (p, name, len) == 0)
        return true;
      p += n;
      p += strspn (p, ", ");
    }
  return false;
}

/* Keys that name a backend, set by SET_PATH (it or a section above it),
   must be one of NAMES.  */
static int
check_backends (const berth_config *tree, const char *set_path, const char *names, berth_error **reterr)
{
  size_t sl = strlen (set_path);
  for (size_t i = 0; i < ARRAY_SIZE (config_schema); i++)
    {
      const schema_key *k = &config_schema[i];
      const char *name;
      if (!k->backend || strncmp (k->path, set_path, sl) != 0 || (k->path[sl] != '\0' && k->path[sl] != '.'))
        continue;
      name = berth_config_string (tree, k->path, NULL);
      if (name == NULL || names_contain (names, name))
        continue;
      return berth_error_set (reterr, BERTH_E_CONFIG, "%s: no backend named '%.64s' (available: %s)", k->path, name, names);
    }
  return 0;
}

/* Check the edited text EDITED of FILE as the loader would, and what HOW
   asks for.  */
static int
edit_check (const berth_config_edit *how, const char *file, const char *edited, const char *path, berth_error **reterr)
{
  berth_config *check = berth_config_new ();
  int r;
  if (check == NULL)
    return -ENOMEM;
  r = berth_config_merge_string_warn (check, file, edited, strlen (edited), how ? how->warn : NULL, how ? how->userdata : NULL, reterr);
  if (r >= 0 && how && how->backends)
    r = check_backends (check, path, how->backends, reterr);
  node_free (check);
  return r;
}

int
berth_config_set_in_file_ex (const char *file, const char *path, const char *value, const berth_config_edit *how, berth_error **reterr)
{
  _cleanup_free_ char *real = NULL;
  _cleanup_free_ char *text = NULL;
  _cleanup_free_ char *edited = NULL;
  _cleanup_strv_free_ char **comps = NULL;
  berth_config *newval = NULL, *tree = NULL, *expected = NULL, *copy = NULL;
  berth_buf vbuf = { 0 };
  size_t len = 0, n;
  mode_t mode = 0600;
  bool exists;
  int r;

  if (path == NULL || *path == '\0' || value == NULL)
    return berth_error_set (reterr, BERTH_E_CONFIG, "config set: a key and a value are needed");
  if ((r = split_key (path, &comps, &n, reterr)) < 0)
    return r;
  if ((r = edit_read (file, &real, &text, &len, &exists, &mode, reterr)) < 0)
    return r;

  r = parse_set_value (value, &newval, reterr);
  if (r < 0)
    return r;
  r = render_flow (&vbuf, newval);
  if (r >= 0)
    r = parse_yaml (file, text, len, false, &tree, reterr);
  if (r < 0)
    goto out;

  {
    const berth_config *x = tree;
    for (size_t k = 0; k < n && x && x->kind != BERTH_CONFIG_SCALAR; k++)
      {
        const berth_config *c = node_child (x, comps[k], strlen (comps[k]));
        if (c == NULL && x->kind == BERTH_CONFIG_SEQUENCE)
          {
            r = berth_error_set (reterr, BERTH_E_CONFIG, "%s: %s: no item %s in that list; set the whole list instead",
                                 x->where, path, comps[k]);
            goto out;
          }
        x = c;
      }
  }
  /* The tree the new file must read back as.  */
  r = parse_yaml (file, text, len, false, &expected, reterr);
  if (r >= 0)
    r = parse_set_value (value, &copy, reterr);
  if (r >= 0)
    r = tree_set (expected, comps, n, copy);
  if (r < 0)
    goto out;

  r = edit_in_place (text, len, tree, comps, n, vbuf.data, &edited);
  if (r == 0 && !edit_reads_back (file, edited, expected))
    {
      free (edited);
      edited = NULL;
      r = 1;
    }
  if (r == 1)
    {
      /* Rewrite the whole file from the tree (comments are lost).  */
      berth_buf out = { 0 };
      r = expected->n_items ? render_block (&out, expected, 0, false) : 0;
      if (r >= 0)
        r = berth_buf_puts (&out, "\n");
      if (r >= 0)
        edited = berth_buf_steal (&out);
      else
        berth_buf_free (&out);
      if (r >= 0 && !edit_reads_back (file, edited, expected))
        r = berth_error_set (reterr, BERTH_E_CONFIG, "%s: cannot set %s to %.128s", file, path, value);
    }
  if (r < 0)
    goto out;

  /* Validate the result as a whole before it replaces the file.  */
  r = edit_check (how, file, edited, path, reterr);
  if (r < 0)
    goto out;
  if (!exists)
    {
      _cleanup_free_ char *dir = strdup (real);
      char *slash = dir ? strrchr (dir, '/') : NULL;
      if (dir == NULL)
        {
          r = -ENOMEM;
          goto out;
        }
      if (slash && slash != dir)
        {
          *slash = '\0';
          r = berth_mkdir_p (dir, 0700);
          if (r < 0)
            {
              r = berth_error_errno (reterr, -r, "%s: cannot create the directory", dir);
              goto out;
            }
        }
    }
  r = berth_write_file_atomic (real, edited, strlen (edited), mode);
  if (r < 0)
    r = berth_error_errno (reterr, -r, "%s: cannot write the configuration", file);
out:
  berth_buf_free (&vbuf);
  node_free (newval);
  node_free (tree);
  node_free (expected);
  return r < 0 ? r : 0;
}

int
berth_config_set_in_file (const char *file, const char *path, const char *value, berth_error **reterr)
{
  return berth_config_set_in_file_ex (file, path, value, NULL, reterr);
}

void
berth_config_unknown_collect (void *userdata, const char *where, const char *key, const char *suggestion)
{
  char ***v = userdata;
  if (berth_strv_push (v, where) < 0 || berth_strv_push (v, key) < 0 || berth_strv_push (v, suggestion ? suggestion : "") < 0)
    return;
}

/* ---- removing a key from a user file ---- */

/* Is the rest of LINE from FROM only blanks and a comment?  */
static bool
line_rest_is_blank (const text_lines *l, size_t from, uint32_t line)
{
  size_t end = lines_end (l, line);
  for (size_t o = from; o < end; o++)
    {
      if (l->text[o] == '#')
        return o == from || l->text[o - 1] == ' ' || l->text[o - 1] == '\t';
      if (l->text[o] != ' ' && l->text[o] != '\t' && l->text[o] != '\r')
        return false;
    }
  return true;
}

/* The text without the lines of member X of the block mapping PARENT, or
   1 when those lines hold something else too.  */
static int
edit_remove_lines (const char *text, size_t len, const berth_config *parent, const berth_config *x, char **ret)
{
  text_lines l;
  size_t a, b, k;
  uint32_t last;
  int r = 1;
  if (!is_block (parent) || x->key == NULL)
    return 1;
  if (lines_init (&l, text, len) < 0)
    return -ENOMEM;
  a = l.start[x->key_start.line < l.n ? x->key_start.line : l.n - 1];
  k = lines_offset (&l, x->key_start);
  last = node_last_line (x);
  for (size_t o = a; o < k; o++)
    if (text[o] != ' ' && text[o] != '\t')
      goto out;
  if (x->kind == BERTH_CONFIG_SCALAR || !is_block (x))
    {
      /* An empty value sits at its key: what follows starts after ':'. */
      size_t from = lines_offset (&l, x->end);
      if (x->kind == BERTH_CONFIG_SCALAR && x->null && x->scalar[0] == '\0')
        {
          ssize_t colon = offset_after_colon (&l, x);
          if (colon < 0)
            goto out;
          from = (size_t) colon;
        }
      if (x->end.line == last && !line_rest_is_blank (&l, from, last))
        goto out;
    }
  b = last + 1 < l.n ? l.start[last + 1] : len;
  if (a <= b && b <= len)
    {
      berth_buf out = { 0 };
      r = berth_buf_append (&out, text, a);
      if (r >= 0)
        r = berth_buf_append (&out, text + b, len - b);
      if (r >= 0)
        {
          if (out.data == NULL && (r = berth_buf_puts (&out, "")) < 0)
            goto out;
          *ret = berth_buf_steal (&out);
          r = 0;
        }
      else
        berth_buf_free (&out);
    }
out:
  free (l.start);
  return r;
}

int
berth_config_unset_in_file_ex (const char *file, const char *path, const berth_config_edit *how, berth_error **reterr)
{
  _cleanup_free_ char *real = NULL, *text = NULL, *edited = NULL;
  _cleanup_strv_free_ char **comps = NULL;
  berth_config *tree = NULL, *expected = NULL;
  berth_config *chain[17];
  size_t len = 0, n, t;
  mode_t mode;
  bool exists;
  int r;

  if (path == NULL || *path == '\0')
    return berth_error_set (reterr, BERTH_E_CONFIG, "config unset: a key is needed");
  if ((r = split_key (path, &comps, &n, reterr)) < 0)
    return r;
  if ((r = edit_read (file, &real, &text, &len, &exists, &mode, reterr)) < 0)
    return r;
  if ((r = parse_yaml (file, text, len, false, &tree, reterr)) < 0
      || (r = parse_yaml (file, text, len, false, &expected, reterr)) < 0)
    goto out;
  chain[0] = tree;
  for (size_t k = 0; k < n; k++)
    {
      chain[k + 1] = chain[k]->kind == BERTH_CONFIG_MAPPING ? (berth_config *) node_child (chain[k], comps[k], strlen (comps[k])) : NULL;
      if (chain[k + 1] == NULL)
        {
          r = berth_error_set (reterr, ENOENT, "%s is not set in %s", path, file);
          goto out;
        }
    }
  /* A section left empty goes too.  */
  for (t = n; t > 1 && chain[t - 1]->n_items == 1; t--)
    ;
  {
    berth_config *x = expected;
    for (size_t k = 0; k + 1 < t; k++)
      x = (berth_config *) node_child (x, comps[k], strlen (comps[k]));
    for (size_t i = x->n_items; i-- > 0;)
      if (strcmp (x->items[i]->key, comps[t - 1]) == 0)
        {
          node_remove (x, i);
          break;
        }
  }
  r = edit_remove_lines (text, len, chain[t - 1], chain[t], &edited);
  if (r == 0 && !edit_reads_back (file, edited, expected))
    {
      free (edited);
      edited = NULL;
      r = 1;
    }
  if (r == 1)
    {
      /* Rewrite the whole file from the tree (comments are lost).  */
      berth_buf out = { 0 };
      r = expected->n_items ? render_block (&out, expected, 0, false) : 0;
      if (r >= 0)
        r = berth_buf_puts (&out, expected->n_items ? "\n" : "");
      if (r >= 0)
        edited = berth_buf_steal (&out);
      else
        berth_buf_free (&out);
      if (r >= 0 && !edit_reads_back (file, edited, expected))
        r = berth_error_set (reterr, BERTH_E_CONFIG, "%s: cannot remove %s", file, path);
    }
  if (r >= 0)
    r = edit_check (how, file, edited, path, reterr);
  if (r >= 0)
    {
      r = berth_write_file_atomic (real, edited, strlen (edited), mode);
      if (r < 0)
        r = berth_error_errno (reterr, -r, "%s: cannot write the configuration", file);
    }
out:
  node_free (tree);
  node_free (expected);
  return r < 0 ? r : 0;
}

int
berth_config_unset_in_file (const char *file, const char *path, berth_error **reterr)
{
  return berth_config_unset_in_file_ex (file, path, NULL, reterr);
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
    r = render_flow (&b, n);
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
  for (size_t i = 0; r >= 0 && i < ARRAY_SIZE (config_schema); i++)
    if (config_schema[i].def && berth_config_lookup (cfg, config_schema[i].path) == NULL)
      r = list_add (&ls, strdup (config_schema[i].path), strdup (config_schema[i].def), NULL);
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
