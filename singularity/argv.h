/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* argv.h: pure builders and parsers of the singularity backend (argv of
   the Apptainer CLI, instance names, SIF cache names, `instance list
   --json` output).  No I/O here, so all of it is unit-tested.  */
#ifndef BERTH_SINGULARITY_ARGV_H
#define BERTH_SINGULARITY_ARGV_H

#include <berth/provider.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SING_NAME_PREFIX "berth-"
/* Throw-away instances: berth-tmp-<creator pid>-<env id>.  `berth gc`
   stops those whose creator is gone.  */
#define SING_TMP_PREFIX "berth-tmp-"
/* Named (persistent) environments: berth-env-<env id>-<hash of the
   state directory> (8 hex).  */
#define SING_ENV_PREFIX "berth-env-"
#define SING_DEFAULT_IMAGE "docker://nikolaik/python-nodejs:python3.11-nodejs20"
#define SING_MAX_NAME 200

/* The instance name for an environment: NULL when ENV_ID is not a valid
   berth id ([A-Za-z0-9._-], 1..128).  STATE_DIR: the environment's state
   directory (named environments).  Caller frees.  */
char *sing_instance_name (const char *env_id, bool persistent, pid_t creator, const char *state_dir);
/* For a throw-away instance name, the creator pid; -1 otherwise.  */
pid_t sing_instance_creator (const char *name);
/* True when NAME is a valid Apptainer instance name ([a-zA-Z0-9._-]+).  */
bool sing_valid_instance_name (const char *name);

/* The file name (no directory) of the cached SIF for a docker:// IMAGE,
   or NULL when IMAGE is not docker://.  "docker://a/b:c" -> "a-b-c.sif";
   characters outside [A-Za-z0-9._-] become '_'; names over 160
   characters are cut and suffixed with a hash of the whole reference.
   Caller frees.  */
char *sing_sif_name (const char *image);

/* A bind spec "src[:dest[:ro|rw]]": both paths absolute, no ',' (Apptainer
   splits on commas).  Returns 0 and the normalised "src:dest[:ro]"; else
   -BERTH_E_CONFIG and a message naming the spec.  */
int sing_parse_bind (const char *spec, char **ret, berth_error **reterr);
/* True when SPEC (already validated) is writable (no ":ro").  */
bool sing_bind_is_writable (const char *spec);

typedef struct sing_start_opts
{
  const char *bin;
  const char *image;
  const char *name;
  const char *overlay;             /* NULL: --writable-tmpfs */
  const char *const *binds;        /* normalised specs, or NULL */
  int64_t memory_mb;               /* <= 0: no --memory */
  double cpus;                     /* <= 0: no --cpus */
} sing_start_opts;

/* bin instance start --containall --no-home (--overlay DIR |
   --writable-tmpfs) [--bind SPEC]... [--memory NM] [--cpus N] IMAGE NAME  */
char **sing_start_argv (const sing_start_opts *o);
/* bin exec --cleanenv [--pwd PWD] instance://NAME  */
char **sing_exec_prefix_argv (const char *bin, const char *pwd, const char *name);
/* bin instance stop [--force] NAME  */
char **sing_stop_argv (const char *bin, const char *name, bool force);
/* bin instance list --json [NAME]  */
char **sing_list_argv (const char *bin, const char *name);
/* bin build OUT IMAGE  */
char **sing_build_argv (const char *bin, const char *out, const char *image);

typedef struct sing_instance
{
  char *name;
  int64_t pid; /* -1 when absent */
} sing_instance;

/* Parse `instance list --json` output (tolerates log lines around the
   JSON).  Names that are not valid instance names are skipped.  At most
   4096 entries.  Returns the count; free with sing_instances_free.  */
int sing_parse_instances (const char *text, sing_instance **ret, size_t *ret_n);
void sing_instances_free (sing_instance *v, size_t n);

/* The last non-empty lines of OUTPUT, at most MAX bytes, on one line
   ("; " between lines).  For error messages.  Caller frees.  */
char *sing_tail (const char *output, size_t max);

#endif
