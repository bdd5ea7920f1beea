/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-private.h: the configuration tree's node and the helpers shared by
   runtime/conf-*.c, and by them only (the rest of libberth sees conf.h
   and <berth/provider.h>).  libyaml's types stay in conf-parse.c: a node
   keeps the style it was written in as a conf_style.  */
#ifndef BERTH_CONF_PRIVATE_H
#define BERTH_CONF_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <berth/provider.h>
#include "conf.h"
#include "util.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

/* A position in the source: 0-based line, column in characters.  */
typedef struct config_pos
{
  uint32_t line;
  uint32_t col;
} config_pos;

/* How a node was written (what rendering and in-place edits keep).  */
typedef enum conf_style
{
  CONF_STYLE_ANY = 0, /* not from a file, or unknown */
  /* scalars */
  CONF_STYLE_PLAIN,
  CONF_STYLE_SINGLE_QUOTED,
  CONF_STYLE_DOUBLE_QUOTED,
  CONF_STYLE_LITERAL, /* | */
  CONF_STYLE_FOLDED,  /* > */
  /* sequences and mappings */
  CONF_STYLE_BLOCK,
  CONF_STYLE_FLOW,
} conf_style;

struct berth_config
{
  int kind;         /* BERTH_CONFIG_* */
  conf_style style; /* how it was written */
  bool null;        /* a plain null scalar: "", "~", "null" */
  char *scalar;     /* scalar text */
  char *key;        /* key when a member of a mapping */
  char *where;      /* "file:line:col" */
  config_pos start, end, key_start, key_end;
  berth_config **items; /* sequence items or mapping members */
  size_t n_items;
  size_t cap_items;
};

/* conf-tree.c: nodes.  */
BERTH_INTERNAL berth_config *conf_node_free (berth_config *n);
/* A node at START of the file NAME, "where" set; NULL without memory.  */
BERTH_INTERNAL berth_config *conf_node_new (int kind, const char *name, config_pos start);
BERTH_INTERNAL int conf_node_append (berth_config *parent, berth_config *child);
/* Free item I of PARENT and close the gap.  */
BERTH_INTERNAL void conf_node_remove (berth_config *parent, size_t i);
/* The member KEY (KEYLEN bytes) of a mapping, the last one; the item of a
   sequence at the decimal index KEY; else NULL.  */
BERTH_INTERNAL const berth_config *conf_node_child (const berth_config *n, const char *key, size_t keylen);
/* conf-tree.c: values.  */
BERTH_INTERNAL bool conf_text_is_null (const char *s);
BERTH_INTERNAL bool conf_parse_int64 (const char *s, int64_t *ret);
BERTH_INTERNAL bool conf_parse_double (const char *s, double *ret);
BERTH_INTERNAL bool conf_parse_bool (const char *s, bool *ret);
/* A non-null scalar.  */
BERTH_INTERNAL bool conf_is_string (const berth_config *n);
/* A value for a message: quoted, control characters replaced, cut.  */
BERTH_INTERNAL void conf_describe_value (const berth_config *n, char *buf, size_t size);

/* conf-parse.c: parse TEXT (LEN bytes, NAME in messages) into *RET.  The
   top level must be a mapping (an empty document is an empty mapping)
   unless ANY_ROOT.  */
BERTH_INTERNAL int conf_parse (const char *name, const char *text, size_t len, bool any_root, berth_config **ret,
                               berth_error **reterr);
/* Read the configuration file PATH (NAME in messages): a regular file
   (or /dev/null) of at most CONFIG_MAX_BYTES.  -ENOENT, with no error
   set, when it is missing.  */
BERTH_INTERNAL int conf_read_file (const char *path, const char *name, char **ret, size_t *ret_len, berth_error **reterr);

/* conf-schema.c: check the known keys of a freshly parsed file (a null
   value of a known key is dropped, a null section becomes empty).  */
BERTH_INTERNAL int conf_schema_validate (berth_config *root, berth_error **reterr);
/* Check the values under terminal. of CFG against the keys a provider
   declares (NULL-name terminated), with file:line:col.  */
BERTH_INTERNAL int conf_schema_check_declared (const berth_config *cfg, const berth_key_spec *keys, berth_error **reterr);
/* The declared key closest to LEAF ("docker_imgae"), or NULL.  */
BERTH_INTERNAL const char *conf_schema_suggest_declared (const berth_key_spec *keys, const char *leaf);
/* Report the unknown keys of ROOT's terminal section (file NAME) to WARN.  */
BERTH_INTERNAL void conf_schema_unknown (const char *name, const berth_config *root, berth_config_warn_fn warn, void *userdata);
/* Keys that name a backend, set by SET_PATH (it or a section above it),
   must be one of the ", "-separated NAMES.  */
BERTH_INTERNAL int conf_schema_check_backends (const berth_config *tree, const char *set_path, const char *names,
                                               berth_error **reterr);
/* The path of the I-th known key, and in *RET_DEF the runtime's default
   (or NULL); NULL past the last.  */
BERTH_INTERNAL const char *conf_schema_key (size_t i, const char **ret_def);

/* conf-render.c */
BERTH_INTERNAL int conf_put_indent (berth_buf *b, int indent);
/* N on one line, in flow style.  */
BERTH_INTERNAL int conf_render_flow (berth_buf *b, const berth_config *n);
/* A collection in block style, lines joined by "\n" (no final newline);
   the first line not indented when FIRST_INLINE (it follows "- ").  */
BERTH_INTERNAL int conf_render_block (berth_buf *b, const berth_config *n, int indent, bool first_inline);

#endif
