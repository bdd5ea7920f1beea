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

/* A key named after a backend that is not built in
   ("terminal.acmebox_umask") belongs to that plugin or module, which
   reads it itself (berth-provider(7)): it is not unknown.  */
static bool
key_of_provider (berth_ctx *ctx, const char *path)
{
  const char *leaf = strchr (path, '.');
  const char *names = berth_ctx_provider_names (ctx);
  leaf = leaf ? leaf + 1 : path;
  for (const char *p = names; p && *p;)
    {
      size_t n = strcspn (p, ",");
      _cleanup_free_ char *name = strndup (p, n);
      if (name && !berth_name_is_reserved (name) && strncmp (leaf, name, n) == 0 && leaf[n] == '_')
        return true;
      p += n;
      p += strspn (p, ", ");
    }
  return false;
}

static void
unknown_log (void *userdata, const char *where, const char *key, const char *suggestion)
{
  berth_ctx *ctx = userdata;
  if (key_of_provider (ctx, key))
    return;
  if (suggestion)
    berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s; did you mean %s?", where, key, suggestion);
  else
    berth_ctx_log (ctx, BERTH_LOG_WARNING, "config", "%s: unknown key %s (ignored)", where, key);
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
  return (berth_config_edit){ .warn = unknown_log, .userdata = ctx,
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
