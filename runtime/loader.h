/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* loader.h: helpers shared by loader.c and plugins.c (inside libberth).  */
#ifndef BERTH_LOADER_H
#define BERTH_LOADER_H

#include "berth-private.h"

/* $XDG_DATA_HOME/berth/plugins; caller frees.  */
BERTH_INTERNAL char *berth_plugins_dir_internal (void);
/* True for a module record (a .so file), false for a plugin (a directory). */
BERTH_INTERNAL bool berth_plugin_info_is_module (const berth_plugin_info *info);

#endif
