/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-plugin-yaml: libFuzzer target for plugin.yaml handling in the
 * loader (runtime/loader.c): the input is written as
 * $BERTH_PLUGINDIR/fz/plugin.yaml of an enabled plugin "fz" and scanned.
 * Whatever it holds, the loader must record exactly one status line for
 * it, never crash, never leak, never load anything (no library exists).
 *
 * Build and run: tests/fuzz/run-fuzz-plugin-yaml.sh [SECONDS].  */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "loader.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* The registry, stubbed: nothing may get this far without a library.  */
int
berth_ctx_register (berth_ctx *ctx, const berth_provider_ops *ops, const char *origin, void *dl, bool is_plugin, berth_error **reterr)
{
  __builtin_trap ();
}

berth_provider *
berth_ctx_find_registered (berth_ctx *ctx, const char *name)
{
  return NULL;
}

bool
berth_name_is_reserved (const char *name)
{
  static const char *const reserved[] = { BERTH_RESERVED_NAMES, NULL };
  return berth_strv_contains (reserved, name);
}

bool
berth_name_is_valid (const char *name)
{
  if (name == NULL || *name == '\0' || strlen (name) > 64)
    return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
      return false;
  return true;
}

void
berth_ctx_log (berth_ctx *ctx, int level, const char *area, const char *fmt, ...)
{
}

static char yaml_path[4096];

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static berth_config *cfg;
  if (cfg == NULL)
    {
      const char *dir = getenv ("BERTH_PLUGINDIR");
      static const char enable[] = "plugins:\n  enabled: [fz, absent]\n";
      if (dir == NULL || dir[0] != '/')
        __builtin_trap ();
      snprintf (yaml_path, sizeof yaml_path, "%s/fz", dir);
      mkdir (dir, 0700);
      mkdir (yaml_path, 0700);
      strcat (yaml_path, "/plugin.yaml");
      cfg = berth_config_new ();
      if (cfg == NULL || berth_config_merge_string (cfg, "enable", enable, sizeof enable - 1, NULL) < 0)
        __builtin_trap ();
    }
  FILE *f = fopen (yaml_path, "we");
  if (f == NULL)
    return 0;
  fwrite (data, 1, size, f);
  fclose (f);

  berth_ctx ctx = { .config = cfg };
  berth_scan_plugins (&ctx);
  /* fz and absent, each once, each with a one-line status.  */
  if (ctx.n_plugins != 2)
    __builtin_trap ();
  for (size_t i = 0; i < ctx.n_plugins; i++)
    {
      berth_plugin_info *p = &ctx.plugins[i];
      if (p->loaded || p->status == NULL || p->status[0] == '\0' || strchr (p->status, '\n')
          || strlen (p->status) > 400 || p->name == NULL || p->path == NULL)
        __builtin_trap ();
      berth_plugin_info_clear (p);
    }
  free (ctx.plugins);
  return 0;
}
