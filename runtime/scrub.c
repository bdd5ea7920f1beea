/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* scrub.c: which environment variables never reach a spawned process.
   The built-in credential list, plus every loaded provider's
   strip_env_keys and those enabled plugins declare in plugin.yaml, minus the names the user allow-listed in terminal.env_passthrough.  */
#include "config.h"

#include <fnmatch.h>
#include <string.h>

#include "berth-private.h"

/* Glob patterns of names that carry credentials.  */
const char *const berth_credential_patterns[] = {
  "*_API_KEY", "*_API_KEYS", "*_TOKEN", "*_TOKENS", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*",
  "*_PASSWORD", "*_PASSWD", "*_PRIVATE_KEY", "*_ACCESS_KEY", "*_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "GH_TOKEN", "GITHUB_TOKEN",
  "OPENAI_*", "ANTHROPIC_*", "OPENROUTER_API_KEY", "MODAL_TOKEN_*", "DAYTONA_API_KEY",
  "TELEGRAM_*", "DISCORD_*", "SLACK_*", "SIGNAL_*", "EMAIL_*", "SUDO_PASSWORD",
  "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "NPM_TOKEN", "PYPI_TOKEN", "CARGO_REGISTRY_TOKEN",
  "DOCKER_AUTH_CONFIG", "VAULT_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS",
  "AZURE_CLIENT_SECRET", "DATABASE_URL",
  NULL,
};

bool
berth_env_name_is_credential (const char *name)
{
  for (size_t i = 0; berth_credential_patterns[i]; i++)
    if (fnmatch (berth_credential_patterns[i], name, 0) == 0)
      return true;
  return false;
}

/* The runtime's own channel variables never leak in either.  */
static bool
is_internal (const char *name)
{
  return strncmp (name, "BERTH_JOB", 9) == 0;
}

BERTH_EXPORT const char *const *
berth_provider_strip_env_keys (const berth_provider *p)
{
  static const char *const none[] = { NULL };
  return p->ops->strip_env_keys ? p->ops->strip_env_keys : none;
}

BERTH_EXPORT bool
berth_ctx_env_is_stripped (berth_ctx *ctx, const char *name)
{
  _cleanup_strv_free_ char **allow = berth_config_strv (ctx->config, "terminal.env_passthrough");
  if (is_internal (name))
    return true;
  if (berth_strv_contains ((const char *const *) allow, name))
    return false;
  if (berth_env_name_is_credential (name))
    return true;
  for (size_t i = 0; i < ctx->n_providers; i++)
    {
      const char *const *keys = ctx->providers[i]->ops->strip_env_keys;
      for (size_t k = 0; keys && keys[k]; k++)
        if (fnmatch (keys[k], name, 0) == 0)
          return true;
    }
  /* Enabled plugins load only when used: their plugin.yaml declares the
     keys for the commands of every other backend.  */
  berth_ctx_scan (ctx);
  for (size_t i = 0; i < ctx->n_plugins; i++)
    {
      const char *const *keys = (const char *const *) ctx->plugins[i].strip_env_keys;
      for (size_t k = 0; ctx->plugins[i].enabled && keys && keys[k]; k++)
        if (fnmatch (keys[k], name, 0) == 0)
          return true;
    }
  return false;
}
