/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth-private.h: structures shared inside libberth.  Never included by
   backends (they see only <berth/provider.h>).  */
#ifndef BERTH_PRIVATE_H
#define BERTH_PRIVATE_H

#include <berth/provider.h>
#include <berth/plugins.h>
#include "conf.h"
#include "util.h"

#define BERTH_RESERVED_NAMES \
  "local", "bwrap", "docker", "singularity", "ssh", "modal", "managed_modal", "daytona", "vercel_sandbox"

struct berth_provider
{
  const berth_provider_ops *ops;
  berth_ctx *ctx;
  char *origin; /* "builtin", or the module/plugin path */
  void *dl;     /* dlopen handle or NULL */
  bool config_checked; /* its declared keys were checked (conf-ctx.c) */
};

/* A module or plugin found by the scan (no dlopen), for lazy loading and
   for `plugins list`/doctor.  The name is known before loading: a
   module's file name, a plugin's directory (= plugin.yaml's name).  */
typedef struct berth_plugin_info
{
  char *name;
  char *version;
  char *description;
  char *path;    /* plugin directory or module file */
  char *library; /* what to dlopen while pending */
  char **strip_env_keys; /* declared in plugin.yaml (enabled plugins) */
  char *status;  /* "loaded", "disabled", "not loaded yet", or the one-line reason */
  bool enabled;
  bool loaded;
  bool pending;  /* enabled and checked, not dlopen'ed yet */
} berth_plugin_info;

struct berth_ctx
{
  unsigned n_ref; /* berth_ctx_ref / berth_ctx_unref */
  berth_config *config;
  berth_log_fn log_fn;
  void *log_userdata;
  berth_provider **providers;
  size_t n_providers;
  berth_plugin_info *plugins;
  size_t n_plugins;
  char *names; /* cached berth_ctx_provider_names */
  char *scope_tenant, *scope_agent; /* berth_ctx_set_scope, or NULL */
  char **config_deferred; /* (where, key) pairs of unknown keys named after
                             a backend: checked when it is used */
  char *state_dir;   /* $XDG_STATE_HOME/berth */
  char *runtime_dir; /* $XDG_RUNTIME_DIR/berth or /tmp/berth-UID */
  bool config_loaded; /* berth_ctx_load_config ran: the scan may happen */
  bool scanned;       /* module directories and plugins scanned */
};

/* conf-ctx.c: check the configuration against P's declared keys (once):
   a bad value is an error with file:line:col; an unknown key named after
   P is warned about with a "did you mean".  */
BERTH_INTERNAL int berth_provider_check_config (berth_provider *p, berth_error **reterr);

/* builtin.c: NULL-terminated */
BERTH_INTERNAL extern const berth_provider_ops *const berth_builtin_providers[];

/* registry.c */
BERTH_INTERNAL int berth_ctx_register (berth_ctx *ctx, const berth_provider_ops *ops, const char *origin, void *dl, bool is_plugin, berth_error **reterr);
BERTH_INTERNAL bool berth_name_is_reserved (const char *name);
BERTH_INTERNAL bool berth_name_is_valid (const char *name);

/* loader.c: the scan records what could be loaded without loading it;
   a module or plugin is dlopen'ed only by berth_load_named (the backend a
   command uses) or berth_load_all (listing commands).  */
/* Record every *.so in DIR ($BERTH_MODULEDIR overrides) as a module.  */
BERTH_INTERNAL int berth_scan_modules (berth_ctx *ctx, const char *dir);
/* Read plugin.yaml files under $XDG_DATA_HOME/berth/plugins and record
   them; failures are recorded in ctx->plugins, never fatal.  */
BERTH_INTERNAL int berth_scan_plugins (berth_ctx *ctx);
/* Both scans, once, after berth_ctx_load_config (a no-op before).  */
BERTH_INTERNAL void berth_ctx_scan (berth_ctx *ctx);
/* Load the pending modules, then plugins, named NAME until one registers.  */
BERTH_INTERNAL void berth_load_named (berth_ctx *ctx, const char *name);
/* Load every pending module and plugin; returns how many failed.  */
BERTH_INTERNAL int berth_load_all (berth_ctx *ctx);
BERTH_INTERNAL void berth_plugin_info_clear (berth_plugin_info *info);
/* The registered provider NAME, without loading anything.  */
BERTH_INTERNAL berth_provider *berth_ctx_find_registered (berth_ctx *ctx, const char *name);
/* Validate ops from a module or plugin: ABI, size, name, callbacks.  */
BERTH_INTERNAL int berth_check_ops (const berth_provider_ops *ops, berth_error **reterr);

/* log.c */
BERTH_INTERNAL void berth_ctx_log (berth_ctx *ctx, int level, const char *area, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* Is AREA in BERTH_DEBUG (all, or a comma list of areas)?  */
BERTH_INTERNAL bool berth_debug_enabled (const char *area);
/* The ctx and area debug lines of the spawn helpers go to, for the
   current thread: BERTH_LOG_SCOPE (ctx, area) at an entry point sets them
   until the end of the enclosing block.  */
typedef struct berth_log_scope
{
  berth_ctx *ctx;
  const char *area;
} berth_log_scope;
BERTH_INTERNAL berth_log_scope berth_log_scope_enter (berth_ctx *ctx, const char *area);
BERTH_INTERNAL void berth_log_scope_leave (berth_log_scope *saved);
#define BERTH_LOG_SCOPE(ctx, area) \
  __attribute__ ((cleanup (berth_log_scope_leave), unused)) berth_log_scope berth_log_saved_ = berth_log_scope_enter (ctx, area)
/* A debug line for a spawned process (ERROR: its errno when it failed).  */
BERTH_INTERNAL void berth_log_spawn (const char *const *argv, long pid, int error);

/* scrub.c */
/* Glob patterns of names that carry credentials (NULL-terminated).  */
BERTH_INTERNAL extern const char *const berth_credential_patterns[];
/* True when NAME is on the built-in credential list.  */
BERTH_INTERNAL bool berth_env_name_is_credential (const char *name);


/* env.c */
struct berth_env
{
  unsigned n_ref; /* berth_env_ref / berth_env_unref */
  berth_ctx *ctx;
  berth_provider *provider;
  char *name; /* NULL for throw-away */
  char *id;
  char *image;
  char *task_id;
  char *cwd;
  char *snapshot;
  char *state_dir;   /* host state of this environment (0700) */
  char *runtime_dir; /* sockets (0700) */
  char *spill_dir;
  char *temp_dir; /* berth_env_temp_dir, asked once (files.c) */
  char *owner_tenant, *owner_agent; /* the scope that created it (scope.c), or NULL */
  char incarnation[17];  /* random, per creation: what lives in the environment
                            itself (process directories) is this one's */
  char **host_environ;
  char **passthrough;
  void *data; /* the provider's block of env_data_size bytes */
  const struct berth_transport_ops *transport; /* chosen on first use (transport.c) */
  struct berth_agent_mux *agent; /* the agent's stream, or why there is none (agent-client.c) */
  int lock_fd;
  bool attached;  /* the provider's attach ran (provider-call.c) */
  bool suspended; /* stopped while idle; the next execute resumes it */
  bool created, cleaned, recreated;
  bool executing; /* a berth_exec runs in it (session.c): one at a time */
  bool image_unrecorded; /* spec->image given to an environment recorded without one */
  uint64_t deadline_usec; /* CLOCK_MONOTONIC bound of the call in progress, 0: none */
};

/* Bound ENV's backend calls by DEADLINE (0: none) until the guard goes
   out of scope, then restore the bound before it (a kill inside an
   execute):  `_cleanup_ (berth_env_deadline_endp) berth_env *g =
   berth_env_deadline_begin (env, deadline);`.  */
typedef struct berth_env_bound
{
  berth_env *env;
  uint64_t saved;
} berth_env_bound;
static inline berth_env_bound
berth_env_deadline_begin (berth_env *env, uint64_t deadline_usec)
{
  berth_env_bound b = { env, env->deadline_usec };
  env->deadline_usec = deadline_usec;
  return b;
}
static inline void
berth_env_deadline_endp (berth_env_bound *b)
{
  b->env->deadline_usec = b->saved;
}

/* fdproc.c: berth_proc_spawn with EXTRA_FD as the child's fd 3.  */
/* FLAGS: BERTH_SPAWN_* of child.h.  */
BERTH_INTERNAL int berth_proc_spawn_fd (const char *const *argv, const char *const *envp, int extra_fd, unsigned flags, berth_proc *ret, berth_error **reterr);

/* Serialize commands of a named environment across processes (no-ops
   for throw-away ones); refresh re-reads cwd and snapshot from disk.  */
BERTH_INTERNAL int berth_env_lock (berth_env *env, berth_error **reterr);
BERTH_INTERNAL void berth_env_unlock (berth_env *env);
BERTH_INTERNAL int berth_env_refresh (berth_env *env);
/* FILE in ENV's state directory names this process (pid and start time,
   the backend, JOB when given): "owner" of a throw-away environment,
   "running" while a command runs, for `berth gc` to find what a killed
   berth left.  */
BERTH_INTERNAL int berth_env_record_owner (berth_env *env, const char *file, const char *job, berth_error **reterr);
BERTH_INTERNAL void berth_env_forget_owner (berth_env *env, const char *file);
/* Persist cwd and snapshot of a named environment; a failure is an
   error naming the file.  */
BERTH_INTERNAL int berth_env_save (berth_env *env, berth_error **reterr);

/* error.c: attach what the command printed to E (takes OUTPUT).  */
BERTH_INTERNAL void berth_error_take_output (berth_error *e, char *output, size_t len);

#endif
