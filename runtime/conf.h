/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* conf.h: the configuration module's interface to the rest of libberth.
   Lookup services for providers are declared in <berth/provider.h>; the
   node and what runtime/conf-*.c share are in conf-private.h (libyaml
   stays inside conf-parse.c).  */
#ifndef BERTH_CONF_H
#define BERTH_CONF_H

#include <berth/provider.h>
#include "util.h"

/* conf-tree.c.  An empty tree (a mapping).  */
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
/* Called for each key of a file's terminal section that the schema does
   not know, with its "file:line:col" and the closest known key (or
   NULL).  */
typedef void (*berth_config_warn_fn) (void *userdata, const char *where, const char *key, const char *suggestion);
BERTH_INTERNAL int berth_config_merge_file_warn (berth_config *cfg, const char *path, bool must_exist, berth_config_warn_fn warn,
                                                void *userdata, berth_error **reterr);
BERTH_INTERNAL int berth_config_merge_string_warn (berth_config *cfg, const char *name, const char *yaml, size_t len,
                                                  berth_config_warn_fn warn, void *userdata, berth_error **reterr);
/* conf-schema.c.  A berth_config_warn_fn that keeps what it is told in the strv at
   USERDATA (char ***), for berth_config_unknown_report once the providers
   can be known: keys named after a plugin or module backend
   ("terminal.NAME_...") are theirs; the others are logged as warnings
   with a "did you mean".  */
BERTH_INTERNAL void berth_config_unknown_collect (void *userdata, const char *where, const char *key, const char *suggestion);
/* conf-ctx.c */
BERTH_INTERNAL void berth_config_unknown_report (berth_ctx *ctx, char **collected);
/* conf-render.c.  Render the node at PATH for `berth config get`: a scalar as is, other
   nodes as YAML.  -ENOENT when absent.  */
BERTH_INTERNAL int berth_config_render (const berth_config *cfg, const char *path, char **ret, berth_error **reterr);
/* conf-edit.c.  Set PATH (dotted) to VALUE in the YAML file FILE (created 0600 with its
   directory when missing), keeping the rest of the file, comments
   included, where possible.  VALUE is parsed as a YAML flow scalar or
   flow sequence ("[a, b]").  The result is re-validated before it is
   written (atomically).  */
BERTH_INTERNAL int berth_config_set_in_file (const char *file, const char *path, const char *value, berth_error **reterr);
/* Remove PATH from FILE (and the sections it leaves empty), keeping the
   rest of the file, comments included, where possible.  -ENOENT when
   FILE does not set it.  */
BERTH_INTERNAL int berth_config_unset_in_file (const char *file, const char *path, berth_error **reterr);
/* What an edit checks besides the loader's rules.  */
typedef struct berth_config_edit
{
  berth_config_warn_fn warn; /* unknown keys of the edited file, or NULL */
  void *userdata;
  const char *backends; /* ", "-separated: what a key naming a backend may
                           be set to (terminal.backend); NULL: unchecked */
  /* The edited file TREE, PATH being set or unset, checked by the keys the
     provider PATH is named after declares; NULL: unchecked.  */
  int (*check) (void *userdata, const berth_config *tree, const char *path, berth_error **reterr);
} berth_config_edit;
BERTH_INTERNAL int berth_config_set_in_file_ex (const char *file, const char *path, const char *value, const berth_config_edit *how,
                                               berth_error **reterr);
BERTH_INTERNAL int berth_config_unset_in_file_ex (const char *file, const char *path, const berth_config_edit *how, berth_error **reterr);
/* conf-render.c.  Every key of CFG (dotted, sorted) with its value as text and its
   "file:line", then the runtime's defaults of the keys set nowhere
   (origin NULL).  */
BERTH_INTERNAL int berth_config_list (const berth_config *cfg, berth_config_list_fn fn, void *userdata, berth_error **reterr);

#endif
