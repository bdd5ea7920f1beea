/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-parse.c: YAML text into a configuration tree.  Bounded libyaml
   parsing (one document, depth, size, node and anchor limits), libyaml's
   styles mapped to conf_style, and the reading of a configuration file.
   The only file of berth that includes <yaml.h>.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <yaml.h>

#include "conf-private.h"

#define CONFIG_MAX_DEPTH 64
#define CONFIG_MAX_NODES 100000
#define CONFIG_MAX_ANCHORS 1024

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
  conf_node_free (ps->root);
  free (ps);
}

/* libyaml's styles as berth's (the tree never sees libyaml's types).  */
static conf_style
scalar_style (yaml_scalar_style_t s)
{
  switch (s)
    {
    case YAML_PLAIN_SCALAR_STYLE:
      return CONF_STYLE_PLAIN;
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
      return CONF_STYLE_SINGLE_QUOTED;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
      return CONF_STYLE_DOUBLE_QUOTED;
    case YAML_LITERAL_SCALAR_STYLE:
      return CONF_STYLE_LITERAL;
    case YAML_FOLDED_SCALAR_STYLE:
      return CONF_STYLE_FOLDED;
    default:
      return CONF_STYLE_ANY;
    }
}

static conf_style
sequence_style (yaml_sequence_style_t s)
{
  return s == YAML_BLOCK_SEQUENCE_STYLE ? CONF_STYLE_BLOCK : s == YAML_FLOW_SEQUENCE_STYLE ? CONF_STYLE_FLOW : CONF_STYLE_ANY;
}

static conf_style
mapping_style (yaml_mapping_style_t s)
{
  return s == YAML_BLOCK_MAPPING_STYLE ? CONF_STYLE_BLOCK : s == YAML_FLOW_MAPPING_STYLE ? CONF_STYLE_FLOW : CONF_STYLE_ANY;
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
      conf_node_free (ps->root);
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
              conf_node_free (node);
              return r;
            }
          f->key = TAKE_PTR (node->scalar);
          f->key_start = node->start;
          f->key_end = node->end;
          f->have_key = true;
          conf_node_free (node);
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
  r = conf_node_append (f->node, node);
  if (r < 0)
    conf_node_free (node);
  return r;
}

static int
parse_anchor_add (parse_state *ps, const char *name, const berth_config *node, config_pos p, berth_error **reterr)
{
  if (ps->n_anchors == CONFIG_MAX_ANCHORS)
    return config_error (reterr, ps->name, p, "more than %d anchors", CONFIG_MAX_ANCHORS);
  ps->anchors[ps->n_anchors].name = xstrdup (name);
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
  n = xcalloc (1, sizeof *n);
  n->kind = src->kind;
  n->style = src->style;
  n->null = src->null;
  n->start = src->start;
  n->end = src->end;
  n->key_start = src->key_start;
  n->key_end = src->key_end;
  n->where = xstrdup (src->where);
  /* a value is the config's size (bounded), not small: it fails cleanly */
  if ((src->scalar && (n->scalar = strdup (src->scalar)) == NULL) || (src->key && (n->key = strdup (src->key)) == NULL))
    goto nomem;
  for (size_t i = 0; i < src->n_items; i++)
    {
      berth_config *c = parse_copy (ps, src->items[i], p, r, reterr);
      if (c == NULL)
        return conf_node_free (n);
      if (conf_node_append (n, c) < 0)
        {
          conf_node_free (c);
          goto nomem;
        }
    }
  return n;
nomem:
  *r = -ENOMEM;
  return conf_node_free (n);
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
  n = conf_node_new (BERTH_CONFIG_SCALAR, ps->name, p);
  if ((n->scalar = strdup (value)) == NULL)
    {
      conf_node_free (n);
      return -ENOMEM;
    }
  n->end = mark_pos (ev->end_mark);
  n->style = scalar_style (ev->data.scalar.style);
  n->null = n->style == CONF_STYLE_PLAIN && ev->data.scalar.tag == NULL && conf_text_is_null (value);
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
  n = conf_node_new (kind, ps->name, p);
  if (n == NULL)
    return -ENOMEM;
  n->style = kind == BERTH_CONFIG_MAPPING ? mapping_style (ev->data.mapping_start.style)
                                          : sequence_style (ev->data.sequence_start.style);
  r = parse_attach (ps, n, reterr);
  if (r < 0)
    return r;
  ps->stack[ps->depth] = (parse_frame){ .node = n };
  if (anchor)
    ps->stack[ps->depth].anchor = xstrdup ((const char *) anchor);
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

int
conf_parse (const char *name, const char *text, size_t len, bool any_root, berth_config **ret, berth_error **reterr)
{
  parse_state *ps;
  yaml_parser_t parser;
  yaml_event_t ev;
  bool done = false;
  int r = 0;

  if (len > CONFIG_MAX_BYTES)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: larger than %d bytes", name, CONFIG_MAX_BYTES);
  ps = xcalloc (1, sizeof *ps);
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
          conf_node_free (root);
          ps->root = root = conf_node_new (BERTH_CONFIG_MAPPING, name, (config_pos){ 0, 0 });
          if (root == NULL)
            r = -ENOMEM;
          else
            root->style = CONF_STYLE_BLOCK;
        }
      else if (!any_root && root->kind != BERTH_CONFIG_MAPPING)
        {
          char got[96];
          conf_describe_value (root, got, sizeof got);
          r = config_error (reterr, name, root->start, "the top level must be a mapping, got %s", got);
        }
    }
  if (r >= 0)
    *ret = TAKE_PTR (ps->root);
  parse_state_free (ps);
  return r;
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
      *ret = xstrdup ("");
      return 0;
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
conf_read_file (const char *path, const char *name, char **ret, size_t *ret_len, berth_error **reterr)
{
  const char *kind = NULL;
  int r = config_read (path, ret, ret_len, &kind);
  if (r == -ENOENT)
    return r;
  if (r == -ENOTSUP)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: not a regular file (%s); a configuration must be a YAML file", name, kind);
  if (r == -EFBIG)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: larger than 1 MiB; is this the right file?", name);
  if (r < 0)
    return berth_error_errno (reterr, -r, "%s: cannot read the configuration", name);
  return 0;
}
