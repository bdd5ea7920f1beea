/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf-ctx.c: the configuration services that need the context: edits of
   the user file checked against the backends that exist, warnings about
   unknown keys (a provider's own keys are not unknown), `config list`.
   The tree is conf-tree.c, the schema conf-schema.c, the editing
   conf-edit.c; this file is the only one of them that knows berth_ctx
   (the unit test and the fuzzers build the others without it).  */
#include "config.h"

#include <string.h>

#include "berth-private.h"
#include "conf-private.h"

/* The backend a key is named after ("terminal.docker_image": docker),
   or NULL: its provider declares the key (berth-provider(7)).  */
static char *
backend_of_key (berth_ctx *ctx, const char *path)
{
  const char *leaf = strchr (path, '.');
  const char *names = berth_ctx_provider_names (ctx);
  leaf = leaf ? leaf + 1 : path;
  for (const char *p = names; p && *p;)
    {
      size_t n = strcspn (p, ",");
      if (strncmp (leaf, p, n) == 0 && leaf[n] == '_')
        return xstrndup (p, n);
      p += n;
      p += strspn (p, ", ");
    }
  return NULL;
}

static void
unknown_log (void *userdata, const char *where, const char *key, const char *suggestion)
{
  berth_ctx *ctx = userdata;
  _cleanup_free_ char *backend = backend_of_key (ctx, key);
  if (backend)
    {
      /* not the core's: the backend's declared keys tell, when it is used */
      berth_strv_push (&ctx->config_deferred, where);
      berth_strv_push (&ctx->config_deferred, key);
      return;
    }
  if (suggestion)
    berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s; did you mean %s?", where, key, suggestion);
  else
    berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s (ignored)", where, key);
}

static bool
declares (const berth_key_spec *keys, const char *leaf)
{
  for (size_t i = 0; keys && keys[i].name; i++)
    if (strcmp (keys[i].name, leaf) == 0)
      return true;
  return false;
}

/* Warn about the deferred unknown keys named after P (a provider that
   declares no keys reads its own: nothing is unknown then).  */
static void
warn_undeclared (berth_ctx *ctx, const berth_provider_ops *ops, char **deferred)
{
  size_t n = strlen (ops->name);
  if (ops->config_keys == NULL)
    return;
  for (size_t i = 0; deferred && deferred[i] && deferred[i + 1]; i += 2)
    {
      const char *leaf = deferred[i + 1] + strlen ("terminal.");
      if (strncmp (deferred[i + 1], "terminal.", 9) != 0 || strncmp (leaf, ops->name, n) != 0 || leaf[n] != '_' || declares (ops->config_keys, leaf))
        continue;
      const char *s = conf_schema_suggest_declared (ops->config_keys, leaf);
      if (s)
        berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s; did you mean terminal.%s?", deferred[i], deferred[i + 1], s);
      else
        berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s (ignored)", deferred[i], deferred[i + 1]);
    }
}

int
berth_provider_check_config (berth_provider *p, berth_error **reterr)
{
  if (p->config_checked)
    return 0;
  int r = conf_schema_check_declared (p->ctx->config, p->ops->config_keys, reterr);
  if (r < 0)
    return r;
  p->config_checked = true;
  warn_undeclared (p->ctx, p->ops, p->ctx->config_deferred);
  return 0;
}

/* `config set`/`unset` of a key named after a backend: its provider (loaded
   for this) checks the edited file before it is written.  */
static int
check_edit (void *userdata, const berth_config *tree, const char *path, berth_error **reterr)
{
  berth_ctx *ctx = userdata;
  _cleanup_free_ char *backend = backend_of_key (ctx, path);
  berth_provider *p = backend ? berth_ctx_find_provider (ctx, backend) : NULL;
  if (p == NULL)
    return 0;
  int r = conf_schema_check_declared (tree, p->ops->config_keys, reterr);
  if (r < 0)
    return r;
  warn_undeclared (ctx, p->ops, ctx->config_deferred);
  berth_strv_free (ctx->config_deferred);
  ctx->config_deferred = NULL;
  return 0;
}

void
berth_config_unknown_report (berth_ctx *ctx, char **collected)
{
  for (size_t i = 0; collected && collected[i] && collected[i + 1] && collected[i + 2]; i += 3)
    unknown_log (ctx, collected[i], collected[i + 1], collected[i + 2][0] ? collected[i + 2] : NULL);
}

/* Without the layered configuration (it did not load) the enabled plugins
   are not known: the backend names are not checked then.  */
static berth_config_edit
edit_of (berth_ctx *ctx)
{
  return (berth_config_edit){ .warn = unknown_log, .check = check_edit, .userdata = ctx,
                              .backends = ctx->config_loaded ? berth_ctx_provider_names (ctx) : NULL };
}

BERTH_EXPORT int
berth_ctx_config_set (berth_ctx *ctx, const char *path, const char *value, berth_error **reterr)
{
  _cleanup_free_ char *file = berth_config_user_path ();
  berth_config_edit how = edit_of (ctx);
  if (file == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return berth_config_set_in_file_ex (file, path, value, &how, reterr);
}

BERTH_EXPORT int
berth_ctx_config_unset (berth_ctx *ctx, const char *path, berth_error **reterr)
{
  _cleanup_free_ char *file = berth_config_user_path ();
  berth_config_edit how = edit_of (ctx);
  if (file == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return berth_config_unset_in_file_ex (file, path, &how, reterr);
}

BERTH_EXPORT int
berth_ctx_config_list (berth_ctx *ctx, berth_config_list_fn fn, void *userdata, berth_error **reterr)
{
  return berth_config_list (ctx->config, fn, userdata, reterr);
}
