/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plugins.h: what was found in the module directories and the plugin
   directory, and enabling or disabling a plugin (see berth-provider(7)).

   Modules ($(pkglibdir)/modules, $BERTH_MODULEDIR) are always enabled;
   a module's file is named after its backend (NAME.so).  Plugins live in
   $XDG_DATA_HOME/berth/plugins/NAME/ ($BERTH_PLUGINDIR overrides the
   parent directory) (plugin.yaml plus the library it names) and are
   enabled when NAME is listed in plugins.enabled of the configuration.
   Either is loaded only when its backend is used (berth_ctx_find_provider)
   or by berth_ctx_load_providers.  A module or plugin that cannot be
   loaded never stops the others: it is listed with a one-line reason. */
#ifndef BERTH_PLUGINS_H
#define BERTH_PLUGINS_H

#include <berth/berth.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct berth_plugin_info berth_plugin_info; /* borrowed from its ctx */

/* Iterate the modules and plugins found (no library is loaded for this),
   plugins in name order after modules: *cursor starts at 0; NULL at the
   end.  One not used yet says "not loaded yet": call
   berth_ctx_load_providers first for every final status.  */
BERTH_EXPORT const berth_plugin_info *berth_ctx_next_plugin (berth_ctx *ctx, size_t *cursor);

/* The record of the plugin (or module) named NAME, or NULL: lets an
   "unknown backend" error say why (e.g. "disabled", or its reason).  */
BERTH_EXPORT const berth_plugin_info *berth_ctx_find_plugin (berth_ctx *ctx, const char *name);

/* The provider name, or the directory/file name when it could not be read. */
BERTH_EXPORT const char *berth_plugin_name (const berth_plugin_info *p);
BERTH_EXPORT const char *berth_plugin_version (const berth_plugin_info *p);     /* or NULL */
BERTH_EXPORT const char *berth_plugin_description (const berth_plugin_info *p); /* or NULL */
/* The plugin directory, or the module file.  */
BERTH_EXPORT const char *berth_plugin_path (const berth_plugin_info *p);
/* True for a module (always enabled), false for a plugin.  */
BERTH_EXPORT bool berth_plugin_is_module (const berth_plugin_info *p);
/* Listed in plugins.enabled (modules: always).  */
BERTH_EXPORT bool berth_plugin_enabled (const berth_plugin_info *p);
/* Registered as a backend.  */
BERTH_EXPORT bool berth_plugin_loaded (const berth_plugin_info *p);
/* "loaded", "disabled", or a one-line reason it was not loaded.  */
BERTH_EXPORT const char *berth_plugin_status (const berth_plugin_info *p);

/* $BERTH_PLUGINDIR when set (absolute), else $XDG_DATA_HOME/berth/plugins.
   Caller frees.  */
BERTH_EXPORT char *berth_plugins_dir (void);

/* Add NAME to (ENABLE) or remove it from plugins.enabled in the user
   configuration file ($XDG_CONFIG_HOME/berth/config.yaml), starting
   from the merged list of CTX.  Enabling needs NAME installed in
   berth_plugins_dir.  Returns 1 when the file changed, 0 when NAME was
   already in that state.  Takes effect for contexts loaded afterwards.  */
BERTH_EXPORT int berth_plugins_set_enabled (berth_ctx *ctx, const char *name, bool enable, berth_error **reterr);

/* For `berth doctor`: loads all (berth_ctx_load_providers), then one
   check per module and plugin ("plugin NAME" / "module NAME"); a module,
   or an enabled plugin, that did not load fails with its reason and a
   fix.  Returns how many checks failed.  */
BERTH_EXPORT int berth_plugins_doctor (berth_ctx *ctx, berth_check_fn fn, void *userdata);

#ifdef __cplusplus
}
#endif
#endif
