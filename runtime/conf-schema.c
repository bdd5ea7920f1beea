/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-schema.c: the schema of the known keys -- the core's table here,
   each backend's keys declared by its provider (berth_key_spec) -- the
   check of a parsed file against the core's, of a merged configuration
   against a provider's, unknown keys of the terminal section with a "did
   you mean", the keys that name a backend, and the runtime's own
   defaults.  */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "conf-private.h"

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
  /* The container keys of the contract, shared by the container
     backends (docker, singularity); each backend's own keys are declared
     by its provider.  */
  { "terminal.agent", SCHEMA_NAME, "auto (commands through berth-agent where it can run; the default) or off (one exec per command)" },
  { "terminal.container_cpu", SCHEMA_NUMBER, "a number >= 0", .min = 0 },
  { "terminal.container_memory", SCHEMA_INT, "an integer >= 0 (MB)", .imin = 0, .imax = INT64_MAX },
  SCHEMA_BOOLEAN ("terminal.container_persistent"),
  { "tool_output.max_bytes", SCHEMA_INT, "a positive integer", .imin = 1, .imax = INT64_MAX, .def = "50000" },
  SCHEMA_LIST ("plugins.enabled"),
};

static int
schema_fail (berth_error **reterr, const berth_config *n, const char *path, const char *expect)
{
  char got[96];
  conf_describe_value (n, got, sizeof got);
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
    return conf_is_string (item) ? 0 : schema_fail (reterr, item, path, "a string");
  /* SCHEMA_BINDS */
  if (item->kind == BERTH_CONFIG_SCALAR)
    return conf_is_string (item) && is_bind_spec (item->scalar) ? 0 : schema_fail (reterr, item, path, "'src[:dest][:ro|rw]'");
  if (item->kind == BERTH_CONFIG_MAPPING)
    {
      const berth_config *src = conf_node_child (item, "src", 3), *dest = conf_node_child (item, "dest", 4),
                         *ro = conf_node_child (item, "readonly", 8);
      char sub[160];
      if (src == NULL)
        return berth_error_set (reterr, BERTH_E_CONFIG, "%s: %s: a bind needs 'src'", item->where, path);
      snprintf (sub, sizeof sub, "%s.src", path);
      if (!conf_is_string (src))
        return schema_fail (reterr, src, sub, "a path");
      snprintf (sub, sizeof sub, "%s.dest", path);
      if (dest && !conf_is_string (dest))
        return schema_fail (reterr, dest, sub, "a path");
      snprintf (sub, sizeof sub, "%s.readonly", path);
      if (ro && !(ro->kind == BERTH_CONFIG_SCALAR && conf_parse_bool (ro->scalar, &b)))
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
      if (n->kind == BERTH_CONFIG_SCALAR && conf_parse_double (n->scalar, &d) && (k->min_open ? d > k->min : d >= k->min) && (k->max == 0 || d <= k->max))
        return 0;
      return schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_INT:
      if (n->kind == BERTH_CONFIG_SCALAR && conf_parse_int64 (n->scalar, &v) && v >= k->imin && v <= k->imax)
        return 0;
      return schema_fail (reterr, n, k->path, k->expect);
    case SCHEMA_BOOL:
      return n->kind == BERTH_CONFIG_SCALAR && conf_parse_bool (n->scalar, &b) ? 0 : schema_fail (reterr, n, k->path, k->expect);
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
int
conf_schema_validate (berth_config *root, berth_error **reterr)
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
          parent = (berth_config *) conf_node_child (root, k->path, (size_t) (dot - k->path));
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
                  conf_node_remove (parent, j);
                  break;
                }
              n->kind = BERTH_CONFIG_MAPPING;
              n->style = CONF_STYLE_BLOCK;
              free (n->scalar);
              n->scalar = NULL;
              n->null = false;
            }
          if ((r = schema_check (k, n, reterr)) < 0)
            return r;
          break;
        }
    }
  /* The same for the keys of the terminal section the core does not know
     (a backend's, checked against its declared keys when it is used).  */
  berth_config *t = (berth_config *) conf_node_child (root, "terminal", 8);
  for (size_t j = 0; t && t->kind == BERTH_CONFIG_MAPPING && j < t->n_items;)
    if (t->items[j]->kind == BERTH_CONFIG_SCALAR && t->items[j]->null)
      conf_node_remove (t, j);
    else
      j++;
  return 0;
}

/* ---- the keys a provider declares ---- */

/* The schema entry of a declared key (PATH: "terminal.NAME").  */
static schema_key
schema_of_declared (const berth_key_spec *k, const char *path, char *expect, size_t size)
{
  static const schema_type types[] = {
    [BERTH_KEY_STRING] = SCHEMA_STRING, [BERTH_KEY_BOOL] = SCHEMA_BOOL,     [BERTH_KEY_INT] = SCHEMA_INT,
    [BERTH_KEY_NUMBER] = SCHEMA_NUMBER, [BERTH_KEY_STRV] = SCHEMA_STRV,     [BERTH_KEY_STRMAP] = SCHEMA_STRMAP,
    [BERTH_KEY_OPTIONS] = SCHEMA_OPTIONS, [BERTH_KEY_BINDS] = SCHEMA_BINDS,
  };
  bool ranged = k->min != 0 || k->max != 0;
  schema_key sk = { .path = path, .type = types[k->type], .expect = expect };
  switch (k->type)
    {
    case BERTH_KEY_INT:
      /* (double) INT64_MAX rounds up: converting it back would overflow */
      sk.imin = ranged && k->min > -9.2e18 ? (int64_t) k->min : INT64_MIN;
      sk.imax = !ranged || k->max >= 9.2e18 ? INT64_MAX : (int64_t) k->max;
      snprintf (expect, size, ranged ? "an integer from %.0f to %.0f" : "an integer", k->min, k->max);
      break;
    case BERTH_KEY_NUMBER:
      sk.min = ranged ? k->min : -1e308;
      sk.max = ranged ? k->max : 0;
      snprintf (expect, size, ranged ? "a number from %g to %g" : "a number", k->min, k->max);
      break;
    case BERTH_KEY_BOOL:
      snprintf (expect, size, "a boolean (true/false, yes/no, on/off)");
      break;
    case BERTH_KEY_STRV:
      snprintf (expect, size, "a list of strings");
      break;
    case BERTH_KEY_STRMAP:
      snprintf (expect, size, "a mapping of names to values");
      break;
    case BERTH_KEY_OPTIONS:
      snprintf (expect, size, "a string, a list of strings or a mapping of values");
      break;
    case BERTH_KEY_BINDS:
      snprintf (expect, size, "a list of binds ('src[:dest][:ro|rw]' or {src, dest, readonly})");
      break;
    default:
      snprintf (expect, size, "a string");
    }
  if (k->expect)
    snprintf (expect, size, "%s", k->expect);
  return sk;
}

int
conf_schema_check_declared (const berth_config *cfg, const berth_key_spec *keys, berth_error **reterr)
{
  const berth_config *t = conf_node_child (cfg, "terminal", 8);
  if (t == NULL || t->kind != BERTH_CONFIG_MAPPING || keys == NULL)
    return 0;
  for (size_t i = 0; keys[i].name; i++)
    {
      const berth_config *n = conf_node_child (t, keys[i].name, strlen (keys[i].name));
      char path[96], expect[160];
      if (n == NULL)
        continue;
      snprintf (path, sizeof path, "terminal.%s", keys[i].name);
      schema_key sk = schema_of_declared (&keys[i], path, expect, sizeof expect);
      int r = schema_check (&sk, (berth_config *) n, reterr);
      if (r < 0)
        return r;
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

const char *
conf_schema_suggest_declared (const berth_key_spec *keys, const char *leaf)
{
  size_t best = SIZE_MAX, len = strlen (leaf);
  size_t max = len <= 4 ? 1 : len < 12 ? 2 : 3;
  const char *found = NULL;
  for (size_t i = 0; keys && keys[i].name; i++)
    {
      size_t d = edit_distance (leaf, keys[i].name);
      if (d < best)
        {
          best = d;
          found = keys[i].name;
        }
    }
  return best <= max ? found : NULL;
}

/* Report the members of the terminal section of the file NAME that no
   schema entry knows (the section takes the Python agent's keys: a typo
   there is silently a default otherwise).  */
void
conf_schema_unknown (const char *name, const berth_config *root, berth_config_warn_fn warn, void *userdata)
{
  const berth_config *t = conf_node_child (root, "terminal", 8);
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
int
conf_schema_check_backends (const berth_config *tree, const char *set_path, const char *names, berth_error **reterr)
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

void
berth_config_unknown_collect (void *userdata, const char *where, const char *key, const char *suggestion)
{
  char ***v = userdata;
  if (berth_strv_push (v, where) < 0 || berth_strv_push (v, key) < 0 || berth_strv_push (v, suggestion ? suggestion : "") < 0)
    return;
}

const char *
conf_schema_key (size_t i, const char **ret_def)
{
  if (i >= ARRAY_SIZE (config_schema))
    return NULL;
  *ret_def = config_schema[i].def;
  return config_schema[i].path;
}
