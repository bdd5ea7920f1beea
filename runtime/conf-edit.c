/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-edit.c: in-place edits of a user file for `berth config set` and
   `config unset`: the lines of the changed key are rewritten, the rest of
   the file (comments included) kept; the result must read back as the
   expected tree and pass the loader's checks before it replaces the file
   (atomically), else the file is rewritten from the tree.  */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "conf-private.h"

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
  if (n->kind == BERTH_CONFIG_SCALAR || n->style == CONF_STYLE_FLOW)
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
  return n->style == CONF_STYLE_BLOCK;
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
        r = conf_put_indent (b, indent + 2 * (int) (j - k));
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
      const berth_config *c = conf_node_child (x, comps[k], strlen (comps[k]));
      if (c == NULL)
        break;
      parent = x;
      x = c;
      k++;
    }
  if (lines_init (&l, text, len) < 0)
    return -ENOMEM;

  if (k == n && x->kind == BERTH_CONFIG_SCALAR && !(x->null && x->scalar[0] == '\0')
      && x->style != CONF_STYLE_LITERAL && x->style != CONF_STYLE_FOLDED && x->start.line == x->end.line)
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
      berth_config *c = (berth_config *) conf_node_child (x, comps[k], strlen (comps[k]));
      if (x->kind == BERTH_CONFIG_SEQUENCE && c == NULL)
        {
          conf_node_free (value);
          return -ENOENT;
        }
      if (k + 1 == n)
        {
          if (x->kind == BERTH_CONFIG_MAPPING && (value->key = strdup (comps[k])) == NULL)
            {
              conf_node_free (value);
              return -ENOMEM;
            }
          if (c)
            for (size_t i = 0; i < x->n_items; i++)
              if (x->items[i] == c)
                {
                  conf_node_free (c);
                  x->items[i] = value;
                  return 0;
                }
          if (conf_node_append (x, value) < 0)
            {
              conf_node_free (value);
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
          c->style = CONF_STYLE_BLOCK;
        }
      if (c == NULL)
        {
          c = conf_node_new (BERTH_CONFIG_MAPPING, "(set)", (config_pos){ 0, 0 });
          if (c == NULL || (c->key = strdup (comps[k])) == NULL || conf_node_append (x, c) < 0)
            {
              conf_node_free (c);
              conf_node_free (value);
              return -ENOMEM;
            }
          c->style = CONF_STYLE_BLOCK;
        }
      x = c;
    }
  conf_node_free (value);
  return 0;
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

/* Does TEXT read back as the tree EXPECTED?  */
static bool
edit_reads_back (const char *name, const char *text, const berth_config *expected)
{
  berth_config *tree = NULL;
  bool ok;
  if (conf_parse (name, text, strlen (text), false, &tree, NULL) < 0)
    return false;
  ok = node_equal (tree, expected);
  conf_node_free (tree);
  return ok;
}

/* R is what an in-place edit gave (0: *EDITED made, 1: not possible
   here).  An edit that does not read back as EXPECTED is dropped too, and
   the whole file is rewritten from EXPECTED (comments are lost); that
   must read back, else "FILE: cannot WHAT".  */
static int
edit_or_rewrite (const char *file, int r, const berth_config *expected, char **edited, const char *what, berth_error **reterr)
{
  berth_buf out = { 0 };
  if (r == 0 && !edit_reads_back (file, *edited, expected))
    {
      free (*edited);
      *edited = NULL;
      r = 1;
    }
  if (r != 1)
    return r;
  r = expected->n_items ? conf_render_block (&out, expected, 0, false) : 0;
  if (r >= 0)
    r = berth_buf_puts (&out, expected->n_items ? "\n" : "");
  if (r >= 0)
    *edited = berth_buf_steal (&out);
  else
    berth_buf_free (&out);
  if (r >= 0 && !edit_reads_back (file, *edited, expected))
    r = berth_error_set (reterr, BERTH_E_CONFIG, "%s: cannot %s", file, what);
  return r;
}

/* VALUE from the command line: a flow collection or a quoted scalar is
   parsed as YAML; anything else is the string itself.  */
static int
parse_set_value (const char *value, berth_config **ret, berth_error **reterr)
{
  berth_config *n;
  if (strchr ("[{\"'", value[0]) && value[0] != '\0')
    return conf_parse ("value", value, strlen (value), true, ret, reterr);
  n = conf_node_new (BERTH_CONFIG_SCALAR, "value", (config_pos){ 0, 0 });
  if (n == NULL || (n->scalar = strdup (value)) == NULL)
    {
      conf_node_free (n);
      return -ENOMEM;
    }
  n->style = CONF_STYLE_PLAIN;
  n->null = conf_text_is_null (value);
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
  struct stat st;
  int r;
  if (real == NULL)
    real = xstrdup (file);
  r = conf_read_file (real, file, ret_text, ret_len, reterr);
  *ret_exists = r >= 0;
  *ret_mode = 0600;
  if (r < 0 && r != -ENOENT)
    return r;
  if (!*ret_exists)
    {
      *ret_len = 0;
      *ret_text = xstrdup ("");
    }
  if (*ret_exists && stat (real, &st) == 0)
    *ret_mode = st.st_mode & 07777;
  *ret_real = TAKE_PTR (real);
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
    r = conf_schema_check_backends (check, path, how->backends, reterr);
  if (r >= 0 && how && how->check)
    r = how->check (how->userdata, check, path, reterr);
  conf_node_free (check);
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
  r = conf_render_flow (&vbuf, newval);
  if (r >= 0)
    r = conf_parse (file, text, len, false, &tree, reterr);
  if (r < 0)
    goto out;

  {
    const berth_config *x = tree;
    for (size_t k = 0; k < n && x && x->kind != BERTH_CONFIG_SCALAR; k++)
      {
        const berth_config *c = conf_node_child (x, comps[k], strlen (comps[k]));
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
  r = conf_parse (file, text, len, false, &expected, reterr);
  if (r >= 0)
    r = parse_set_value (value, &copy, reterr);
  if (r >= 0)
    r = tree_set (expected, comps, n, copy);
  if (r < 0)
    goto out;

  r = edit_in_place (text, len, tree, comps, n, vbuf.data, &edited);
  {
    char what[320];
    snprintf (what, sizeof what, "set %s to %.128s", path, value);
    r = edit_or_rewrite (file, r, expected, &edited, what, reterr);
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
  conf_node_free (newval);
  conf_node_free (tree);
  conf_node_free (expected);
  return r < 0 ? r : 0;
}

int
berth_config_set_in_file (const char *file, const char *path, const char *value, berth_error **reterr)
{
  return berth_config_set_in_file_ex (file, path, value, NULL, reterr);
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
  if ((r = conf_parse (file, text, len, false, &tree, reterr)) < 0
      || (r = conf_parse (file, text, len, false, &expected, reterr)) < 0)
    goto out;
  chain[0] = tree;
  for (size_t k = 0; k < n; k++)
    {
      chain[k + 1] = chain[k]->kind == BERTH_CONFIG_MAPPING ? (berth_config *) conf_node_child (chain[k], comps[k], strlen (comps[k])) : NULL;
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
      x = (berth_config *) conf_node_child (x, comps[k], strlen (comps[k]));
    for (size_t i = x->n_items; i-- > 0;)
      if (strcmp (x->items[i]->key, comps[t - 1]) == 0)
        {
          conf_node_remove (x, i);
          break;
        }
  }
  r = edit_remove_lines (text, len, chain[t - 1], chain[t], &edited);
  {
    char what[320];
    snprintf (what, sizeof what, "remove %s", path);
    r = edit_or_rewrite (file, r, expected, &edited, what, reterr);
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
  conf_node_free (tree);
  conf_node_free (expected);
  return r < 0 ? r : 0;
}

int
berth_config_unset_in_file (const char *file, const char *path, berth_error **reterr)
{
  return berth_config_unset_in_file_ex (file, path, NULL, reterr);
}
