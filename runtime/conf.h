/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config.h: the configuration tree (libyaml stays inside config.c).
   Lookup services for providers are declared in <berth/provider.h>.  */
#ifndef BERTH_CONF_H
#define BERTH_CONF_H

#include <berth/provider.h>
#include "util.h"

/* An empty tree (a mapping).  */
BERTH_INTERNAL berth_config *berth_config_new (void);
BERTH_INTERNAL berth_config *berth_config_free (berth_config *cfg);
/* Parse PATH and merge it over CFG: mappings merge recursively, scalars and
   sequences replace.  A missing file is 0 unless MUST_EXIST.  Malformed
   YAML, a file over 1 MiB, or a known key of the wrong type is
   -BERTH_E_CONFIG with "file:line:col: ..." in the message.  Unknown keys
   and other top-level sections are ignored.  */
BERTH_INTERNAL int berth_config_merge_file (berth_config *cfg, const char *path, bool must_exist, berth_error **reterr);
/* Same, from memory; NAME is used in messages.  */
BERTH_INTERNAL int berth_config_merge_string (berth_config *cfg, const char *name, const char *yaml, size_t len, berth_error **reterr);
/* Render the node at PATH for `berth config get`: a scalar as is, other
   nodes as YAML.  -ENOENT when absent.  */
BERTH_INTERNAL int berth_config_render (const berth_config *cfg, const char *path, char **ret, berth_error **reterr);
/* Set PATH (dotted) to VALUE in the YAML file FILE (created 0600 with its
   directory when missing), keeping the rest of the file, comments
   included, where possible.  VALUE is parsed as a YAML flow scalar or
   flow sequence ("[a, b]").  The result is re-validated before it is
   written (atomically).  */
BERTH_INTERNAL int berth_config_set_in_file (const char *file, const char *path, const char *value, berth_error **reterr);

#endif
