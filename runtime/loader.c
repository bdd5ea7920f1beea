/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* loader.c: modules ($(moduledir), $BERTH_MODULEDIR) and plugins
   ($XDG_DATA_HOME/berth/plugins/NAME/plugin.yaml).

   Lazy (DESIGN 5): a scan records every module and plugin without
   loading any; its name is known before dlopen (a module's file is named
   after its backend, NAME.so; a plugin's directory and plugin.yaml name
   it).  A command loads only the backend it uses (berth_load_named, from
   berth_ctx_find_provider); listing commands load all (berth_load_all).
   So a broken library, even one whose constructor crashes, breaks only
   the commands that use it and the listing ones (`backends`, `doctor`,
   `plugins list`; `plugins disable` loads nothing and is the way out).

   Rules (berth-provider(7)): absolute paths only, RTLD_NOW|RTLD_LOCAL,
   one entry symbol per ABI, ABI number and struct size checked before any
   callback is used.  A module or plugin that cannot be loaded is recorded
   in ctx->plugins with a one-line reason and never stops the others.  */
#include <config.h> /* autoconf: PACKAGE_VERSION */

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "loader.h"

#ifndef BERTH_MODULEDIR
#define BERTH_MODULEDIR "/usr/lib/berth/modules"
#endif

/* The size of the first ABI-2 layout: appending members stays ABI 2, so
   a provider built against an older header may be smaller than
   sizeof (berth_provider_ops), never smaller than this.  */
#define OPS_MIN_SIZE (offsetof (berth_provider_ops, gc) + sizeof (void (*) (void)))
/* The entry point of berth 0.1's provider ABI, refused by name.  */
#define ENTRY_ABI_1 "berth_provider_entry_v1"
#define MAX_CONFIG_KEYS 256
/* Anything larger than this is not a provider struct.  */
#define OPS_MAX_SIZE 4096
#define MAX_STRIP_KEYS 256
#define MAX_REASON 400
#define MAX_PLUGINS 256
#define PLUGIN_YAML "plugin.yaml"

/* ---- validation ---- */

/* A variable name, or a glob of names ("ACME_*"): at least 3 literal
   characters so that no plugin strips everything (PATH, HOME...).  */
static bool
strip_key_is_valid (const char *s)
{
  size_t literal = 0, n = 0;
  if (s == NULL || isdigit ((unsigned char) s[0]))
    return false;
  for (const char *p = s; *p; p++, n++)
    {
      if (isalnum ((unsigned char) *p) || *p == '_')
        literal++;
      else if (*p != '*' && *p != '?')
        return false;
    }
  return literal >= 3 && n <= 128;
}

/* Each declared key is the provider's own (terminal.NAME_...), of a
   known type, once.  */
static int
check_config_keys (const berth_provider_ops *ops, berth_error **reterr)
{
  size_t plen = strlen (ops->name);
  for (size_t i = 0; ops->config_keys && ops->config_keys[i].name; i++)
    {
      const berth_key_spec *k = &ops->config_keys[i];
      if (i >= MAX_CONFIG_KEYS)
        return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': more than %d config_keys", ops->name, MAX_CONFIG_KEYS);
      if (strncmp (k->name, ops->name, plen) != 0 || k->name[plen] != '_' || !berth_name_is_valid (k->name) || strlen (k->name) > 64)
        return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': config key '%.64s' must be named %s_[a-z0-9_]+", ops->name, k->name, ops->name);
      if (k->type < BERTH_KEY_STRING || k->type > BERTH_KEY_BINDS)
        return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': config key %s has an unknown type %u", ops->name, k->name, (unsigned) k->type);
      for (size_t j = 0; j < i; j++)
        if (strcmp (ops->config_keys[j].name, k->name) == 0)
          return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': config key %s is declared twice", ops->name, k->name);
    }
  return 0;
}

BERTH_INTERNAL int
berth_check_ops (const berth_provider_ops *ops, berth_error **reterr)
{
  int r;
  if (ops == NULL)
    return berth_error_set (reterr, BERTH_E_PLUGIN, "the entry point returned no provider");
  if (ops->abi != BERTH_PROVIDER_ABI)
    return berth_error_set (reterr, BERTH_E_ABI,
                            "built for provider ABI %u, this berth loads ABI %d: rebuild it against berth >= 0.2 (this is %s)",
                            (unsigned) ops->abi, BERTH_PROVIDER_ABI, PACKAGE_VERSION);
  if (ops->size < OPS_MIN_SIZE || ops->size > OPS_MAX_SIZE)
    return berth_error_set (reterr, BERTH_E_ABI,
                            "provider struct size %u is not valid for ABI %d (expected %zu to %d bytes): rebuild it against berth %s",
                            (unsigned) ops->size, BERTH_PROVIDER_ABI, (size_t) OPS_MIN_SIZE, OPS_MAX_SIZE, PACKAGE_VERSION);
  if (ops->name == NULL)
    return berth_error_set (reterr, BERTH_E_PLUGIN, "the provider has no name");
  if (!berth_name_is_valid (ops->name))
    return berth_error_set (reterr, BERTH_E_PLUGIN, "provider name '%.64s' is not valid (use [a-z0-9_])", ops->name);
  if (ops->exec_prefix == NULL && ops->start == NULL)
    return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s' has neither exec_prefix nor start", ops->name);
  if (ops->ensure == NULL)
    return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s' lacks the required ensure callback", ops->name);
  if (ops->env_data_size > (1u << 20))
    return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': env_data_size %zu is more than 1 MiB", ops->name, ops->env_data_size);
  if ((r = check_config_keys (ops, reterr)) < 0)
    return r;
  if (ops->default_cwd && strcmp (ops->default_cwd, "~") != 0 && ops->default_cwd[0] != '/')
    return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': default_cwd '%.64s' is neither absolute nor \"~\"",
                            ops->name, ops->default_cwd);
  if (ops->strip_env_keys)
    {
      size_t i;
      for (i = 0; ops->strip_env_keys[i]; i++)
        {
          if (i >= MAX_STRIP_KEYS)
            return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': more than %d strip_env_keys",
                                    ops->name, MAX_STRIP_KEYS);
          if (!strip_key_is_valid (ops->strip_env_keys[i]))
            return berth_error_set (reterr, BERTH_E_PLUGIN, "provider '%s': strip_env_keys entry '%.64s' is not a variable name or a narrow glob of names",
                                    ops->name, ops->strip_env_keys[i]);
        }
    }
  return 0;
}

/* ---- recording ---- */

/* Make MSG one bounded line.  */
static char *
one_line (const char *msg)
{
  size_t n = strnlen (msg ? msg : "", MAX_REASON);
  char *s = xstrndup (msg ? msg : "", n);
  for (char *p = s; *p; p++)
    if (*p == '\n' || *p == '\r' || *p == '\t')
      *p = ' ';
  return s;
}

static berth_plugin_info *
find_info (berth_ctx *ctx, const char *path)
{
  for (size_t i = 0; i < ctx->n_plugins; i++)
    if (ctx->plugins[i].path && strcmp (ctx->plugins[i].path, path) == 0)
      return &ctx->plugins[i];
  return NULL;
}

BERTH_INTERNAL void
berth_plugin_info_clear (berth_plugin_info *info)
{
  free (info->name);
  free (info->version);
  free (info->description);
  free (info->path);
  free (info->library);
  berth_strv_free (info->strip_env_keys);
  free (info->status);
  *info = (berth_plugin_info) { 0 };
}

static int
add_info (berth_ctx *ctx, const char *name, const char *path, bool enabled, berth_plugin_info **ret)
{
  berth_plugin_info *v = reallocarray (ctx->plugins, ctx->n_plugins + 1, sizeof *v);
  if (v == NULL)
    return -ENOMEM;
  ctx->plugins = v;
  berth_plugin_info *info = &v[ctx->n_plugins];
  *info = (berth_plugin_info) { .enabled = enabled };
  info->name = xstrdup (name);
  info->path = xstrdup (path);
  ctx->n_plugins++;
  *ret = info;
  return 0;
}

static void
set_status (berth_ctx *ctx, berth_plugin_info *info, bool loaded, const char *status)
{
  char *s = one_line (status);
  free (info->status);
  info->status = s;
  info->loaded = loaded;
  /* Debug (BERTH_DEBUG=loader), not a warning: every command would
     repeat it on stderr.  The reason is in `berth plugins list`, `berth
     doctor` and the error for an unknown backend (berth_ctx_find_plugin). */
  if (!loaded && strncmp (status, "disabled", 8) != 0)
    berth_ctx_log (ctx, BERTH_LOG_DEBUG, "loader", "%s %s: %s",
                   berth_plugin_info_is_module (info) ? "module" : "plugin", info->name, s);
}

static void
set_error (berth_ctx *ctx, berth_plugin_info *info, berth_error *err)
{
  set_status (ctx, info, false, err ? berth_error_message (err) : "failed");
}

/* Found and checked; LIBRARY is dlopen'ed when the backend is used.  */
static void
set_pending (berth_plugin_info *info, char *library)
{
  char *s = xstrdup ("not loaded yet");
  if (library == NULL || s == NULL)
    {
      free (library);
      free (s);
      return; /* out of memory: stays not loaded, status "unknown" */
    }
  free (info->library);
  info->library = library;
  free (info->status);
  info->status = s;
  info->pending = true;
}

/* dlopen PATH, find and check the entry point and register the provider.
   On failure returns < 0 with *reterr set and nothing kept.  */
static int
load_library (berth_ctx *ctx, const char *path, const char *expect_name, bool is_plugin,
              const berth_provider_ops **ret_ops, berth_error **reterr)
{
  if (path[0] != '/')
    return berth_error_set (reterr, BERTH_E_PLUGIN, "%s is not an absolute path", path);

  dlerror ();
  void *dl = dlopen (path, RTLD_NOW | RTLD_LOCAL);
  if (dl == NULL)
    {
      const char *e = dlerror ();
      return berth_error_set (reterr, BERTH_E_PLUGIN, "cannot load: %s", e ? e : path);
    }

  dlerror ();
  void *sym = dlsym (dl, BERTH_PROVIDER_ENTRY);
  if (sym == NULL && dlsym (dl, ENTRY_ABI_1) != NULL)
    {
      dlclose (dl);
      return berth_error_set (reterr, BERTH_E_ABI, "built for provider ABI 1 (berth 0.1): rebuild it against berth >= 0.2 (this is %s)",
                              PACKAGE_VERSION);
    }
  if (sym == NULL)
    {
      dlclose (dl);
      return berth_error_set (reterr, BERTH_E_ABI,
                              "%s has no %s symbol: not a berth provider, or built for another provider ABI",
                              path, BERTH_PROVIDER_ENTRY);
    }

  berth_provider_entry_fn entry;
  memcpy (&entry, &sym, sizeof entry);
  const berth_provider_ops *ops = entry ();
  int r = berth_check_ops (ops, reterr);
  if (r < 0)
    {
      dlclose (dl);
      return r;
    }
  if (expect_name && strcmp (ops->name, expect_name) != 0)
    {
      if (is_plugin)
        r = berth_error_set (reterr, BERTH_E_PLUGIN, "the library provides '%s' but plugin.yaml names '%s'",
                             ops->name, expect_name);
      else
        r = berth_error_set (reterr, BERTH_E_PLUGIN, "the module provides '%s' but its file is %s.so: name the file after its backend",
                             ops->name, expect_name);
      dlclose (dl);
      return r;
    }
  r = berth_ctx_register (ctx, ops, path, dl, is_plugin, reterr);
  if (r < 0)
    {
      dlclose (dl);
      return r;
    }
  *ret_ops = ops;
  return 0;
}

/* ---- modules ---- */

static int
filter_so (const struct dirent *d)
{
  size_t n = strlen (d->d_name);
  return d->d_name[0] != '.' && n > 3 && strcmp (d->d_name + n - 3, ".so") == 0;
}

static void
scan_module_dir (berth_ctx *ctx, const char *dir)
{
  if (dir[0] != '/')
    {
      berth_ctx_log (ctx, BERTH_LOG_WARNING, "loader", "module directory '%s' ignored: not an absolute path", dir);
      return;
    }
  struct dirent **names = NULL;
  int n = scandir (dir, &names, filter_so, alphasort);
  if (n < 0)
    {
      if (errno != ENOENT && errno != ENOTDIR)
        berth_ctx_log (ctx, BERTH_LOG_WARNING, "loader", "cannot read module directory %s: %s", dir, strerror (errno));
      return;
    }
  for (int i = 0; i < n; i++)
    {
      _cleanup_free_ char *path = xasprintf ("%s/%s", dir, names[i]->d_name);
      _cleanup_free_ char *base = xstrndup (names[i]->d_name, strlen (names[i]->d_name) - 3);
      free (names[i]);
      if (path == NULL || base == NULL)
        continue;
      if (find_info (ctx, path))
        continue; /* listed twice in $BERTH_MODULEDIR */
      berth_plugin_info *info = NULL;
      if (add_info (ctx, base, path, true, &info) < 0)
        continue;
      if (!berth_name_is_valid (base))
        {
          berth_error *err = NULL;
          berth_error_set (&err, BERTH_E_PLUGIN, "%s: a module's file is its backend's name ([a-z0-9_]) and .so", path);
          set_error (ctx, info, err);
          berth_error_free (err);
          continue;
        }
      set_pending (info, xstrdup (path));
    }
  free (names);
}

BERTH_INTERNAL int
berth_scan_modules (berth_ctx *ctx, const char *dir)
{
  const char *env = secure_getenv ("BERTH_MODULEDIR");
  const char *list = env && *env ? env : dir ? dir : BERTH_MODULEDIR;
  _cleanup_free_ char *copy = xstrdup (list);
  char *save = NULL;
  for (char *d = strtok_r (copy, ":", &save); d; d = strtok_r (NULL, ":", &save))
    scan_module_dir (ctx, d);
  return 0;
}

/* dlopen a pending record's library and register its provider.  */
static void
load_info (berth_ctx *ctx, berth_plugin_info *info)
{
  if (!info->pending)
    return;
  info->pending = false;
  free (ctx->names); /* berth_ctx_provider_names named it as pending */
  ctx->names = NULL;
  bool module = berth_plugin_info_is_module (info);
  const char *what = module ? "module" : "plugin";
  berth_error *err = NULL;
  const berth_provider_ops *ops = NULL;
  berth_provider *other = berth_ctx_find_registered (ctx, info->name);
  int r;
  if (other)
    /* Checked before dlopen: the first of a name wins (built-in, then
       modules, then plugins) and the others' code never runs.  */
    r = berth_error_set (&err, BERTH_E_PLUGIN, "%s: a backend named '%s' is already registered (%s)",
                         info->library, info->name, other->origin);
  else
    {
      /* Logged before dlopen: names the culprit if it crashes.  */
      berth_ctx_log (ctx, BERTH_LOG_DEBUG, "loader", "loading %s %s from %s", what, info->name, info->library);
      r = load_library (ctx, info->library, info->name, !module, &ops, &err);
    }
  if (r < 0)
    set_error (ctx, info, err);
  else
    {
      set_status (ctx, info, true, "loaded");
      if (info->description == NULL && ops->description)
        info->description = one_line (ops->description);
      berth_ctx_log (ctx, BERTH_LOG_DEBUG, "loader", "%s %s: backend %s", what, info->library, ops->name);
    }
  berth_error_free (err);
}

BERTH_INTERNAL void
berth_load_named (berth_ctx *ctx, const char *name)
{
  /* Records are in scan order: modules, then plugins.  */
  for (size_t i = 0; name && i < ctx->n_plugins && berth_ctx_find_registered (ctx, name) == NULL; i++)
    if (ctx->plugins[i].pending && strcmp (ctx->plugins[i].name, name) == 0)
      load_info (ctx, &ctx->plugins[i]);
}

BERTH_INTERNAL int
berth_load_all (berth_ctx *ctx)
{
  int failed = 0;
  for (size_t i = 0; i < ctx->n_plugins; i++)
    {
      load_info (ctx, &ctx->plugins[i]);
      if (ctx->plugins[i].enabled && !ctx->plugins[i].loaded)
        failed++;
    }
  return failed;
}

/* ---- plugins ---- */

/* Parse "1.2.3" (optionally after ">=") into up to 4 numbers.  */
static int
parse_version (const char *s, long v[4])
{
  memset (v, 0, 4 * sizeof (long));
  while (isspace ((unsigned char) *s))
    s++;
  if (s[0] == '>' && s[1] == '=')
    s += 2;
  while (isspace ((unsigned char) *s))
    s++;
  for (int i = 0;; i++)
    {
      if (i >= 4 || !isdigit ((unsigned char) *s))
        return -EINVAL;
      char *end;
      errno = 0;
      v[i] = strtol (s, &end, 10);
      if (errno || v[i] > 1000000)
        return -EINVAL;
      s = end;
      if (*s == '.')
        {
          s++;
          continue;
        }
      break;
    }
  while (isspace ((unsigned char) *s))
    s++;
  /* A pre-release or build suffix of our own version ("0.2.0-rc1",
     "0.1.0+git") compares on its numbers.  */
  return (*s == '\0' || *s == '-' || *s == '+' || *s == '~') ? 0 : -EINVAL;
}

/* Relative, no "..", no empty components.  */
static bool
library_path_ok (const char *lib)
{
  if (lib == NULL || lib[0] == '\0' || lib[0] == '/' || strlen (lib) > 255)
    return false;
  _cleanup_free_ char *copy = xstrdup (lib);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c; c = strtok_r (NULL, "/", &save))
    if (strcmp (c, "..") == 0 || strcmp (c, ".") == 0)
      return false;
  return strstr (lib, "//") == NULL;
}

static int
scalar_field (const berth_config *spec, const char *key, bool required, const char **ret, berth_error **reterr)
{
  const berth_config *node = berth_config_lookup (spec, key);
  if (node == NULL)
    {
      if (required)
        return berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml lacks '%s'", key);
      *ret = NULL;
      return 0;
    }
  const char *s = berth_config_kind (node) == BERTH_CONFIG_SCALAR ? berth_config_scalar (node) : NULL;
  if (s == NULL || (required && s[0] == '\0'))
    {
      const char *where = berth_config_where (node);
      return berth_error_set (reterr, BERTH_E_PLUGIN, "%s%s'%s' must be a non-empty string",
                              where ? where : "plugin.yaml", ": ", key);
    }
  *ret = s;
  return 0;
}

/* Read and check DIR/plugin.yaml; fill INFO's descriptive fields.
   *ret_library gets the absolute library path (caller frees).  */
static int
read_spec (const char *dir, const char *dirname, berth_plugin_info *info, char **ret_library, berth_error **reterr)
{
  _cleanup_free_ char *file = xasprintf ("%s/" PLUGIN_YAML, dir);
  struct stat st;
  if (stat (file, &st) < 0)
    return berth_error_set (reterr, BERTH_E_PLUGIN, "no plugin.yaml in %s", dir);

  berth_config *spec = berth_config_new ();
  if (spec == NULL)
    return -ENOMEM;
  berth_error *perr = NULL;
  int r = berth_config_merge_file (spec, file, true, &perr);
  if (r < 0)
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "malformed plugin.yaml: %s",
                           perr ? berth_error_message (perr) : file);
      berth_error_free (perr);
      berth_config_free (spec);
      return r;
    }

  const char *name, *version, *description, *kind, *library, *requires;
  if ((r = scalar_field (spec, "name", true, &name, reterr)) < 0
      || (r = scalar_field (spec, "kind", true, &kind, reterr)) < 0
      || (r = scalar_field (spec, "library", true, &library, reterr)) < 0
      || (r = scalar_field (spec, "version", false, &version, reterr)) < 0
      || (r = scalar_field (spec, "description", false, &description, reterr)) < 0
      || (r = scalar_field (spec, "requires_berth", false, &requires, reterr)) < 0)
    goto out;

  if (version)
    info->version = xstrndup (version, 64);
  if (description && (info->description = one_line (description)) == NULL)
    goto oom;

  if (!berth_name_is_valid (name))
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: name '%.64s' is not valid (use [a-z0-9_])", name);
      goto out;
    }
  if (strcmp (name, dirname) != 0)
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml names '%.64s' but its directory is '%s': they must match",
                           name, dirname);
      goto out;
    }
  if (berth_name_is_reserved (name))
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin '%s' rejected: '%s' is reserved for a built-in backend", name, name);
      goto out;
    }
  if (strcmp (kind, "backend") != 0)
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: kind '%.32s' is not supported (this berth loads kind: backend)", kind);
      goto out;
    }
  if (requires)
    {
      long want[4], have[4];
      if (parse_version (requires, want) < 0)
        {
          r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: requires_berth '%.32s' is not a version like 0.1.0", requires);
          goto out;
        }
      if (parse_version (PACKAGE_VERSION, have) == 0 && memcmp (want, have, sizeof want) != 0)
        for (int i = 0; i < 4; i++)
          if (want[i] != have[i])
            {
              if (want[i] > have[i])
                {
                  r = berth_error_set (reterr, BERTH_E_PLUGIN, "requires berth >= %.32s, this is berth %s: upgrade berth", requires, PACKAGE_VERSION);
                  goto out;
                }
              break;
            }
    }
  if (!library_path_ok (library))
    {
      r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: library '%.64s' must be a path inside the plugin directory", library);
      goto out;
    }
  /* The plugin's strip_env_keys, declared here so that they apply to
     every backend's processes while the plugin itself is not loaded.  */
  const berth_config *keys = berth_config_lookup (spec, "strip_env_keys");
  if (keys)
    {
      if (berth_config_kind (keys) != BERTH_CONFIG_SEQUENCE)
        {
          r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: strip_env_keys must be a list of variable names");
          goto out;
        }
      if ((info->strip_env_keys = berth_config_strv (spec, "strip_env_keys")) == NULL)
        goto oom;
      for (size_t i = 0; info->strip_env_keys[i]; i++)
        if (i >= MAX_STRIP_KEYS || !strip_key_is_valid (info->strip_env_keys[i]))
          {
            r = berth_error_set (reterr, BERTH_E_PLUGIN, "plugin.yaml: strip_env_keys entry '%.64s' is not a variable name or a narrow glob of names (at most %d)",
                                 info->strip_env_keys[i], MAX_STRIP_KEYS);
            info->strip_env_keys = berth_strv_free (info->strip_env_keys);
            goto out;
          }
    }
  *ret_library = xasprintf ("%s/%s", dir, library);
  r = 0;
  goto out;

oom:
  r = -ENOMEM;
out:
  berth_config_free (spec);
  return r;
}

static int
filter_dirs (const struct dirent *d)
{
  return d->d_name[0] != '.';
}

BERTH_INTERNAL bool
berth_plugin_info_is_module (const berth_plugin_info *info)
{
  /* Plugins are recorded by directory (named [a-z0-9_]), modules by file.  */
  size_t n = info->path ? strlen (info->path) : 0;
  return n > 3 && strcmp (info->path + n - 3, ".so") == 0;
}

BERTH_INTERNAL char *
berth_plugins_dir_internal (void)
{
  /* An override for tests and sandboxes (ignored when relative, and in
     set-uid programs).  */
  const char *dir = secure_getenv ("BERTH_PLUGINDIR");
  if (dir && dir[0] == '/')
    return xstrdup (dir);
  _cleanup_free_ char *data = berth_xdg_dir ("XDG_DATA_HOME", ".local/share");
  return xasprintf ("%s/berth/plugins", data);
}

static void
scan_plugin (berth_ctx *ctx, const char *base, const char *dirname, const char *const *enabled)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", base, dirname);
  if (find_info (ctx, dir))
    return;
  bool on = berth_strv_contains (enabled, dirname);
  berth_plugin_info *info;
  if (add_info (ctx, dirname, dir, on, &info) < 0)
    return;

  berth_error *err = NULL;
  _cleanup_free_ char *library = NULL;
  struct stat st;
  if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      if (on)
        berth_error_set (&err, BERTH_E_PLUGIN, "enabled but not installed: no %s", dir);
      else
        berth_error_set (&err, BERTH_E_PLUGIN, "%s is not a directory", dir);
      set_error (ctx, info, err);
      berth_error_free (err);
      return;
    }
  if (read_spec (dir, dirname, info, &library, &err) < 0)
    {
      if (on)
        set_error (ctx, info, err);
      else
        {
          _cleanup_free_ char *s = xasprintf ("disabled; %s", err ? berth_error_message (err) : "invalid");
          set_status (ctx, info, false, s);
        }
      berth_error_free (err);
      return;
    }
  if (!on)
    {
      set_status (ctx, info, false, "disabled");
      info->strip_env_keys = berth_strv_free (info->strip_env_keys);
      return;
    }

  if (stat (library, &st) < 0 || !S_ISREG (st.st_mode))
    {
      berth_error_set (&err, BERTH_E_PLUGIN, "library %s not found: reinstall the plugin", library);
      set_error (ctx, info, err);
      berth_error_free (err);
      return;
    }
  if (st.st_mode & S_IWOTH)
    {
      berth_error_set (&err, BERTH_E_PLUGIN, "library %s is writable by anyone: chmod o-w it", library);
      set_error (ctx, info, err);
      berth_error_free (err);
      return;
    }

  set_pending (info, library);
  library = NULL;
}

BERTH_INTERNAL int
berth_scan_plugins (berth_ctx *ctx)
{
  _cleanup_free_ char *base = berth_plugins_dir_internal ();
  if (base == NULL)
    return -ENOMEM;
  _cleanup_strv_free_ char **enabled = ctx->config ? berth_config_strv (ctx->config, "plugins.enabled") : NULL;

  struct dirent **names = NULL;
  int n = scandir (base, &names, filter_dirs, alphasort);
  if (n < 0)
    n = 0;
  for (int i = 0; i < n; i++)
    {
      if (i < MAX_PLUGINS)
        scan_plugin (ctx, base, names[i]->d_name, (const char *const *) enabled);
      free (names[i]);
    }
  free (names);

  /* Enabled but absent.  */
  for (size_t i = 0; enabled && enabled[i]; i++)
    {
      if (!berth_name_is_valid (enabled[i]))
        {
          berth_ctx_log (ctx, BERTH_LOG_WARNING, "loader", "plugins.enabled: '%s' is not a plugin name", enabled[i]);
          continue;
        }
      scan_plugin (ctx, base, enabled[i], (const char *const *) enabled);
    }
  return 0;
}

BERTH_INTERNAL void
berth_ctx_scan (berth_ctx *ctx)
{
  if (ctx->scanned || !ctx->config_loaded)
    return;
  ctx->scanned = true;
  berth_scan_modules (ctx, BERTH_MODULEDIR);
  berth_scan_plugins (ctx);
}
