/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.h: finding and running the Apptainer/Singularity CLI.  */
#ifndef BERTH_SINGULARITY_CLI_H
#define BERTH_SINGULARITY_CLI_H

#include <berth/provider.h>

/* Timeouts (seconds), as the Python agent uses them.  */
#define SING_VERSION_TIMEOUT 10.0
#define SING_PROBE_TIMEOUT 1.5
#define SING_START_TIMEOUT 120.0
#define SING_STOP_TIMEOUT 30.0
#define SING_LIST_TIMEOUT 30.0
#define SING_BUILD_TIMEOUT 600.0
#define SING_CAPTURE_MAX (256 * 1024)

/* The binary: terminal.singularity_binary (a path, or a name looked up in
   PATH), else `apptainer`, else `singularity` in PATH.  Returns 0 and a
   malloc'd absolute path; -BERTH_E_UNAVAILABLE with install guidance
   naming both when none is found.  */
int sing_find_binary (const berth_config *cfg, char **ret_path, berth_error **reterr);

/* Run `BIN version` (TIMEOUT seconds): 0 and the trimmed version line;
   else an error "'BIN version' failed (exit N): OUTPUT" or "... timed out
   after Ns".  */
int sing_check_version (const char *bin, double timeout, char **ret_version, berth_error **reterr);

/* Run ARGV (no shell) to completion; 0 with exit status and merged
   output; < 0 only when it could not run or timed out.  */
int sing_run (const char *const *argv, double timeout, char **ret_output, int *ret_status, berth_error **reterr);

/* The SIF cache directory: $XDG_CACHE_HOME/berth/sif (or
   ~/.cache/berth/sif).  Caller frees.  */
char *sing_sif_cache_dir (void);

/* The image to start: IMAGE itself unless it is docker://, in which case
   a SIF cached under sing_sif_cache_dir() (built once, under a lock); a
   failed build falls back to IMAGE with a warning logged on ENV.  Never
   fails except for memory.  */
int sing_resolve_image (berth_env *env, const char *bin, const char *image, char **ret_image, berth_error **reterr);

/* berth pull: build the docker:// IMAGE into the SIF cache now, under
   the cache's lock (a SIF there is built anew: a tag may have moved),
   progress through FN.  BERTH_E_CONFIG for an image that is not
   docker://, BERTH_E_UNAVAILABLE when the build fails.  */
int sing_pull (const char *bin, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr);


#endif
