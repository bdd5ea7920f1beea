/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth.h: the consumer API of libberth.
 *
 * Conventions (see libberth(3)):
 *  - a function that can fail returns int: >= 0 success, -code failure, where
 *    code is an errno value or a BERTH_E_* value (>= 5000);
 *  - berth_error **reterr is the last parameter and may be NULL;
 *  - out-parameters (ret_...) are written only on success;
 *  - a non-zero exit status, a timeout or truncation is data in the result,
 *    never an error;
 *  - *_unref / *_free accept NULL and return NULL;
 *  - specs are size-prefixed: start from the _INIT macro.  */
#ifndef BERTH_BERTH_H
#define BERTH_BERTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* mode_t */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BERTH_EXPORT __attribute__ ((visibility ("default")))
#define BERTH_PRINTF(f, a) __attribute__ ((format (printf, f, a)))
#else
#define BERTH_EXPORT
#define BERTH_PRINTF(f, a)
#endif

typedef struct berth_ctx berth_ctx;
typedef struct berth_provider berth_provider; /* borrowed from its ctx */
typedef struct berth_env berth_env;
typedef struct berth_result berth_result;
typedef struct berth_error berth_error;
typedef struct berth_config berth_config; /* borrowed configuration tree */

enum
{
  BERTH_E_FAILED = 5000, /* failure with no better code */
  BERTH_E_NO_PROVIDER,   /* no backend of that name */
  BERTH_E_ABI,           /* module or plugin built for another ABI */
  BERTH_E_CONFIG,        /* configuration invalid (message has file:line:col) */
  BERTH_E_BACKEND,       /* the runtime (daemon, tool, host) refused or failed */
  BERTH_E_PROTOCOL,      /* a reply could not be understood */
  BERTH_E_UNAVAILABLE,   /* the backend cannot run here (message says why) */
  BERTH_E_PLUGIN,        /* a plugin was rejected (message says why) */
  BERTH_E_ENV,           /* bad environment name, state or cwd */
  BERTH_E_SCOPE,         /* a handle used under another scope than the one that made it */
  BERTH_E_HOSTED,        /* the backend cannot serve a hosted scope (message says why) */
};

BERTH_EXPORT int berth_error_code (const berth_error *e);
BERTH_EXPORT const char *berth_error_message (const berth_error *e);
BERTH_EXPORT berth_error *berth_error_free (berth_error *e);
/* What a command printed before execute failed under it (its transport
   died mid-command, or its state could not be recorded): capped like a
   result's output, or NULL when the error is not of that kind.  */
BERTH_EXPORT const char *berth_error_output (const berth_error *e, size_t *ret_len);
/* Set *reterr (when reterr is non-NULL) to a new error CODE with the
   message FMT, and return -CODE.  CODE may be given with either sign
   (ENOENT or -ENOENT, BERTH_E_BACKEND or -BERTH_E_BACKEND); inside the
   error it is always positive, and 0 becomes BERTH_E_FAILED.
   When *reterr is set already the new error is a second, independent
   failure (a cleanup failing after the failure it cleans up): the first
   error is the cause and is kept, the second goes to the debug log
   (BERTH_DEBUG=error).  To add context to the error that is set, use
   berth_error_wrap, not a second berth_error_set.  */
BERTH_EXPORT int berth_error_set (berth_error **reterr, int code, const char *fmt, ...) BERTH_PRINTF (3, 4);
/* Add context on the way up: the message of *reterr becomes
   "FMT: <its message>" and its code stays; returns -(its code).  Where
   nothing was set (reterr NULL, or the callee returned a code without
   an error), it sets an error CODE with the message "FMT: strerror
   (CODE)" (as berth_error_errno) and returns -CODE.  So
     if (r < 0)
       return berth_error_wrap (reterr, r, "bwrap: creating the jail");
   never loses the cause nor the context.  */
BERTH_EXPORT int berth_error_wrap (berth_error **reterr, int code, const char *fmt, ...) BERTH_PRINTF (3, 4);

/* ---- logging ---- */
enum
{
  BERTH_LOG_ERROR = 3,
  BERTH_LOG_WARNING = 4,
  BERTH_LOG_INFO = 6,
  BERTH_LOG_DEBUG = 7,
};
typedef void (*berth_log_fn) (void *userdata, int level, const char *area, const char *msg);

/* ---- context, configuration, registry ---- */
BERTH_EXPORT int berth_ctx_new (berth_ctx **ret, berth_error **reterr);
/* Contexts are reference counted: berth_ctx_new returns one reference,
   berth_ctx_ref adds one (and returns CTX), berth_ctx_unref drops one and
   frees the context at the last.  Its environments do not hold one: the
   context must outlive them.  */
BERTH_EXPORT berth_ctx *berth_ctx_ref (berth_ctx *ctx);
BERTH_EXPORT berth_ctx *berth_ctx_unref (berth_ctx *ctx);
BERTH_EXPORT void berth_ctx_set_log (berth_ctx *ctx, berth_log_fn fn, void *userdata);
/* Load the layered configuration: system, user, $BERTH_CONFIG, then EXTRA
   (may be NULL).  Loads no module or plugin: those load on first use of
   their backend (berth_ctx_find_provider), or all at once with
   berth_ctx_load_providers.  */
BERTH_EXPORT int berth_ctx_load_config (berth_ctx *ctx, const char *extra, berth_error **reterr);
BERTH_EXPORT const berth_config *berth_ctx_config (const berth_ctx *ctx);
/* `berth config get`: the merged value at a dotted PATH rendered as text
   (YAML for lists and maps); -ENOENT when unset.  Caller frees.  */
BERTH_EXPORT int berth_ctx_config_get (berth_ctx *ctx, const char *path, char **ret, berth_error **reterr);
/* The user configuration file ($XDG_CONFIG_HOME/berth/config.yaml).  */
BERTH_EXPORT char *berth_config_user_path (void);
/* `berth config set`: write PATH = VALUE into the user file, keeping the
   rest of it; the result is validated before it is written.  */
BERTH_EXPORT int berth_config_user_set (const char *path, const char *value, berth_error **reterr);
/* The same, with the value also checked against CTX: a key that names a
   backend (terminal.backend) must name one that exists (built in, a module
   or an enabled plugin).  Unknown terminal keys are logged as warnings.  */
BERTH_EXPORT int berth_ctx_config_set (berth_ctx *ctx, const char *path, const char *value, berth_error **reterr);
/* `berth config unset`: remove PATH from the user file, keeping the rest
   of it; -ENOENT when the file does not set it.  */
BERTH_EXPORT int berth_ctx_config_unset (berth_ctx *ctx, const char *path, berth_error **reterr);
/* `berth config list`: every merged key (dotted) with its value as text
   (lists in flow style), sorted, and ORIGIN "file:line" where it was set,
   or NULL for the runtime's own default of a key set nowhere.  */
typedef void (*berth_config_list_fn) (void *userdata, const char *key, const char *value, const char *origin);
BERTH_EXPORT int berth_ctx_config_list (berth_ctx *ctx, berth_config_list_fn fn, void *userdata, berth_error **reterr);

/* The backend NAME, or NULL.  Loads its module or enabled plugin (only
   that one) when it is not loaded yet; a failure is recorded for
   berth_ctx_find_plugin.  */
BERTH_EXPORT berth_provider *berth_ctx_find_provider (berth_ctx *ctx, const char *name);
/* Load every module and enabled plugin, for listings (`berth backends`,
   `doctor`, `plugins list`).  A library that crashes while loading takes
   the process down: only listings and commands using it do this.
   Returns how many could not be loaded (their reasons: <berth/plugins.h>). */
BERTH_EXPORT int berth_ctx_load_providers (berth_ctx *ctx);
/* Iterate the registered (built-in and loaded) providers: *cursor starts
   at 0; returns NULL at the end.  Call berth_ctx_load_providers first to
   see them all.  */
BERTH_EXPORT berth_provider *berth_ctx_next_provider (berth_ctx *ctx, size_t *cursor);
/* Comma-separated names of the available backends (loaded or loadable,
   named without loading them), for error messages.  */
BERTH_EXPORT const char *berth_ctx_provider_names (berth_ctx *ctx);

/* Provider flags (DESIGN 3.1), consulted as data.  */
enum
{
  BERTH_FLAG_IS_REMOTE = 1u << 0,
  BERTH_FLAG_IS_CONTAINER = 1u << 1,
  BERTH_FLAG_SKIP_CONTAINER_GUARDS = 1u << 2,
  BERTH_FLAG_USES_HOST_FILESYSTEM = 1u << 3,
  BERTH_FLAG_SUPPORTS_STREAMS = 1u << 4,
  BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT = 1u << 5,
  BERTH_FLAG_CLEANUP_STOPS_PROCESSES = 1u << 6,
  BERTH_FLAG_SERVES_HOSTED_SCOPES = 1u << 7,
};
BERTH_EXPORT const char *berth_flag_name (uint32_t flag);

BERTH_EXPORT const char *berth_provider_name (const berth_provider *p);
BERTH_EXPORT const char *berth_provider_description (const berth_provider *p);
BERTH_EXPORT const char *berth_provider_origin (const berth_provider *p); /* "builtin", module or plugin path */
/* Fail-soft: a provider whose dynamic flag callback fails gets the declared
   default (a failing skip_container_guards keeps guards on).  */
BERTH_EXPORT bool berth_provider_flag (berth_provider *p, uint32_t flag);
BERTH_EXPORT const char *berth_provider_default_cwd (const berth_provider *p);
BERTH_EXPORT const char *berth_provider_cache_path_base (const berth_provider *p);
/* The variable names (or narrow globs: SLURM_JOB_*) P declares in its
   strip_env_keys, NULL-terminated; never NULL.  berth strips the union of
   every provider's from what it spawns (berth_ctx_env_is_stripped).  */
BERTH_EXPORT const char *const *berth_provider_strip_env_keys (const berth_provider *p);

enum
{
  BERTH_PROBE_READY = 0,
  BERTH_PROBE_NEEDS_SETUP = 1,
  BERTH_PROBE_UNAVAILABLE = 2,
};
/* Cheap readiness check; never fails: returns a BERTH_PROBE_* and a reason
   (caller frees *ret_reason, may be NULL when ready).  */
BERTH_EXPORT int berth_provider_probe (berth_provider *p, char **ret_reason);
BERTH_EXPORT const char *berth_provider_setup_instructions (berth_provider *p);

/* Doctor: each check is reported through FN.  */
typedef void (*berth_check_fn) (void *userdata, const char *name, bool ok, const char *detail, const char *fix);
BERTH_EXPORT int berth_provider_doctor (berth_provider *p, berth_check_fn fn, void *userdata);

/* The union of every loaded provider's strip_env_keys, those declared by
   enabled plugins in plugin.yaml, and the built-in credential list, minus
   terminal.env_passthrough: true when NAME must not reach a spawned
   process.  */
BERTH_EXPORT bool berth_ctx_env_is_stripped (berth_ctx *ctx, const char *name);

/* ---- environments ---- */
typedef struct berth_env_spec
{
  size_t size;         /* sizeof (berth_env_spec) of the caller */
  const char *backend; /* NULL: terminal.backend */
  const char *name;    /* NULL: throw-away environment; else persisted by name */
  const char *cwd;     /* NULL: terminal.cwd or the backend's default */
  const char *image;   /* NULL: the backend's configured image */
  const char *task_id; /* optional, for labels */
  /* Seconds that opening (creating, starting, pulling...) may take;
     0: no bound.  Backends give up by then with an error.  */
  double setup_timeout;
} berth_env_spec;
#define BERTH_ENV_SPEC_INIT { .size = sizeof (berth_env_spec) }

BERTH_EXPORT int berth_env_open (berth_ctx *ctx, const berth_env_spec *spec, berth_env **ret, berth_error **reterr);
/* Handles are reference counted: berth_env_open returns one reference,
   berth_env_ref adds one (and returns ENV).  berth_env_unref drops one;
   the last releases the handle: a throw-away environment is cleaned up,
   a named one persists until berth_env_remove.  */
BERTH_EXPORT berth_env *berth_env_ref (berth_env *env);
BERTH_EXPORT berth_env *berth_env_unref (berth_env *env);
/* Idempotent: releases the environment per its persistence.  */
BERTH_EXPORT int berth_env_cleanup (berth_env *env, berth_error **reterr);
/* Cleans up a named environment for good and forgets its state.  */
BERTH_EXPORT int berth_env_remove (berth_ctx *ctx, const char *name, berth_error **reterr);
/* Suspend ENV while it is idle, keeping its workspace (docker stops the
   container, ssh drops its connection; a backend with nothing to suspend
   keeps running).  The next execute resumes it transparently, with
   environment_recreated false when the workspace survived.  EBUSY while
   a command runs in it.  */
BERTH_EXPORT int berth_env_stop_idle (berth_env *env, berth_error **reterr);
BERTH_EXPORT const char *berth_env_name (const berth_env *env);
BERTH_EXPORT const char *berth_env_backend (const berth_env *env);
BERTH_EXPORT const char *berth_env_cwd (const berth_env *env);

/* ---- scopes ----
   Bind CTX to an agent's scope (TENANT, AGENT), or to none (both NULL).
   A tenant other than "local" is hosted: environments opened then are the
   agent's sandbox -- one per (tenant, agent), whatever name is asked for
   (berth_env_name says which) -- and only a backend with
   serves_hosted_scopes and the whole hosted interface is accepted
   (BERTH_E_HOSTED).  An environment records the scope that opened it;
   every later call on it, its processes and files checks that the bound
   scope is that one (BERTH_E_SCOPE, also when none is bound).  */
BERTH_EXPORT int berth_ctx_set_scope (berth_ctx *ctx, const char *tenant, const char *agent, berth_error **reterr);
BERTH_EXPORT const char *berth_env_tenant (const berth_env *env); /* NULL: opened under no scope */
/* CTX is bound to a hosted scope: its environments are named by it.  */
BERTH_EXPORT bool berth_ctx_is_hosted (const berth_ctx *ctx);
BERTH_EXPORT const char *berth_env_agent (const berth_env *env);

/* Named environments, for `berth ls`.  FN is called per environment.  */
typedef void (*berth_env_list_fn) (void *userdata, const char *name, const char *backend, const char *cwd, int64_t last_used);
BERTH_EXPORT int berth_env_list (berth_ctx *ctx, berth_env_list_fn fn, void *userdata, berth_error **reterr);
/* The same with everything recorded of each (size-prefixed: new fields are
   appended).  */
typedef struct berth_env_info
{
  size_t size;
  const char *name, *backend, *cwd;
  int64_t last_used;
  const char *tenant, *agent; /* the scope that created it, or NULL */
  bool suspended;             /* stopped while idle (berth_env_stop_idle, reap) */
} berth_env_info;
typedef void (*berth_env_info_fn) (void *userdata, const berth_env_info *info);
BERTH_EXPORT int berth_env_list_info (berth_ctx *ctx, berth_env_info_fn fn, void *userdata, berth_error **reterr);
/* Suspend (berth_env_stop_idle) every named environment unused for more
   than IDLE seconds, each under the scope that created it -- never one
   with a background process still running, nor one suspended already.
   FN (may be NULL) hears of each: ACTION "suspended", "busy" (running
   work keeps it), or "failed" with WHY.  Destroys nothing.  Returns how
   many were suspended.  */
typedef void (*berth_reap_fn) (void *userdata, const char *name, const char *action, const char *why);
BERTH_EXPORT int berth_reap_idle (berth_ctx *ctx, double idle, berth_reap_fn fn, void *userdata, berth_error **reterr);
/* Remove leftovers older than terminal.lifetime_seconds in every backend
   that has a gc callback; returns how many were removed.  */
BERTH_EXPORT int berth_gc (berth_ctx *ctx, berth_error **reterr);
/* Prune the spill files of truncated outputs ($XDG_CACHE_HOME/berth/output,
   only berth's own regular files in its own 0700 directory): those older
   than terminal.lifetime_seconds, then the oldest while the directory
   holds more than 256 MiB.  FN (may be NULL) is called for each with
   REASON "expired" or "over_limit".  With DRY_RUN nothing is removed.
   Returns how many were (or would be) removed.  */
typedef void (*berth_gc_output_fn) (void *userdata, const char *path, uint64_t bytes, const char *reason);
BERTH_EXPORT int berth_gc_output (berth_ctx *ctx, bool dry_run, berth_gc_output_fn fn, void *userdata, berth_error **reterr);
/* Environments a killed berth left, and leftovers of failed creations:
   a throw-away environment whose owner (pid and start time) is gone is
   removed through its backend's cleanup, running or not (REASON
   "owner_gone"); a named one's command whose berth is gone is killed
   where it runs, the environment kept ("orphaned_command"); a state or
   runtime directory without a record older than
   terminal.lifetime_seconds is removed ("incomplete").  FN (may be NULL)
   is called for each.  With DRY_RUN nothing changes.  Returns how many
   were (or would be) handled.  */
typedef void (*berth_gc_env_fn) (void *userdata, const char *env, const char *backend, const char *reason, const char *detail);
BERTH_EXPORT int berth_gc_envs (berth_ctx *ctx, bool dry_run, berth_gc_env_fn fn, void *userdata, berth_error **reterr);

/* ---- images ---- */
/* One line of a pull's progress.  LAYER is the layer (NULL for the
   image's own lines: "Pulling from ...", "Digest: ...", "Status: ...");
   CURRENT and TOTAL are bytes, -1 when unknown.  */
typedef struct berth_pull_event
{
  size_t size; /* sizeof (berth_pull_event) of the library */
  const char *layer;
  const char *status; /* "Pulling fs layer", "Downloading", "Pull complete", ... */
  int64_t current, total;
} berth_pull_event;
typedef void (*berth_pull_fn) (void *userdata, const berth_pull_event *ev);
/* Fetch IMAGE into BACKEND's image store ahead of its first use (NULL:
   terminal.backend), reporting progress through FN (may be NULL; the
   library prints nothing).  BERTH_E_CONFIG for an image that does not
   exist, BERTH_E_UNAVAILABLE for an unreachable engine or registry,
   -ENOTSUP for a backend without images.  */
BERTH_EXPORT int berth_pull (berth_ctx *ctx, const char *backend, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr);

/* ---- execute ---- */
/* Receives merged output as it arrives (raw bytes).  Return < 0 to interrupt.  */
typedef int (*berth_output_fn) (void *userdata, const char *data, size_t len);

typedef struct berth_exec_spec
{
  size_t size;
  const char *command;    /* one shell string, run by bash -c */
  const char *cwd;        /* NULL: the environment's current cwd */
  double timeout;         /* seconds, at most BERTH_TIMEOUT_MAX; 0: terminal.timeout
                             (default 180, 0 there: none); BERTH_TIMEOUT_NONE: none */
  const void *stdin_data; /* with has_stdin: fed then closed; else /dev/null */
  size_t stdin_len;
  bool has_stdin;
  berth_output_fn on_output; /* optional streaming callback */
  void *userdata;
  int cancel_fd;    /* readable => interrupt (130); -1 or 0 when unused */
  size_t max_bytes; /* 0: tool_output.max_bytes (default 50000) */
  /* With has_stdin and stdin_stream: after stdin_data, the command's stdin
     is copied from STDIN_FD (left open, not read ahead) as the command
     reads it, in bounded memory, and closed at its end.  */
  bool stdin_stream;
  int stdin_fd;
} berth_exec_spec;
#define BERTH_EXEC_SPEC_INIT { .size = sizeof (berth_exec_spec), .cancel_fd = -1, .stdin_fd = -1 }
#define BERTH_TIMEOUT_NONE (-1.0)
#define BERTH_TIMEOUT_MAX 2147483648.0 /* 2^31 s; larger values are refused */

BERTH_EXPORT int berth_env_execute (berth_env *env, const berth_exec_spec *spec, berth_result **ret, berth_error **reterr);

BERTH_EXPORT const char *berth_result_output (const berth_result *r, size_t *ret_len); /* capped, valid UTF-8 */
BERTH_EXPORT int berth_result_exit_code (const berth_result *r);
BERTH_EXPORT const char *berth_result_cwd (const berth_result *r);
BERTH_EXPORT bool berth_result_cwd_changed (const berth_result *r);
BERTH_EXPORT bool berth_result_timed_out (const berth_result *r);
BERTH_EXPORT bool berth_result_interrupted (const berth_result *r);
BERTH_EXPORT bool berth_result_truncated (const berth_result *r);
BERTH_EXPORT bool berth_result_environment_recreated (const berth_result *r);
BERTH_EXPORT uint64_t berth_result_total_bytes (const berth_result *r);
BERTH_EXPORT const char *berth_result_full_output_path (const berth_result *r); /* NULL unless truncated */
BERTH_EXPORT const char *berth_result_backend (const berth_result *r);
BERTH_EXPORT const char *berth_result_env (const berth_result *r);
BERTH_EXPORT uint64_t berth_result_duration_ms (const berth_result *r);
/* ---- files, where the environment's commands run ----
   A backend that uses the host filesystem (local) is served on the host;
   every other through its transport, seeing what a command sees (a
   jail's read-only root and hidden stores, a container's filesystem).
   Relative paths are taken from the environment's cwd.  Bytes are raw.
   Errors carry the path and an errno code: ENOENT, EACCES, EROFS, EISDIR,
   EFBIG (larger than MAX), ENOSPC.  */
/* The whole of PATH, at most MAX bytes (0: 64 MiB; at most 1 GiB), into
   *RET_DATA (malloc'd, NUL-terminated after *RET_LEN bytes).  */
BERTH_EXPORT int berth_env_read_file (berth_env *env, const char *path, size_t max, void **ret_data, size_t *ret_len, berth_error **reterr);
/* berth_env_read_file of a regular file only (EINVAL otherwise): media a
   caller delivers elsewhere.  */
BERTH_EXPORT int berth_env_fetch_file (berth_env *env, const char *path, size_t max, void **ret_data, size_t *ret_len, berth_error **reterr);
/* Replace PATH with LEN bytes of DATA, mode MODE (0: 0644), its parent
   directories made: atomically where the target allows (a temporary file
   renamed over it).  */
BERTH_EXPORT int berth_env_write_file (berth_env *env, const char *path, const void *data, size_t len, mode_t mode, berth_error **reterr);
/* PATH with every link resolved, in the environment (malloc'd).  */
BERTH_EXPORT int berth_env_realpath (berth_env *env, const char *path, char **ret, berth_error **reterr);
/* The environment's own temporary directory (malloc'd): a jail's private
   /tmp, a container's /tmp, the remote $TMPDIR, the host's for local.  */
BERTH_EXPORT int berth_env_temp_dir (berth_env *env, char **ret, berth_error **reterr);

/* ---- background processes ----
   A command started in the environment that outlives the call (a dev
   server, a watcher): run by the environment's shell with its cwd and
   exported state, output merged, in its own session there.  It stays in
   the environment (a jail's, a container's) and is reachable from any
   berth process by its id until the environment is removed: output is
   replayed from its start (at most the last 1 MiB, with a marker when
   more was dropped).  Handles are reference counted.  */
typedef struct berth_process berth_process;
typedef struct berth_process_spec
{
  size_t size;
  const char *command; /* one shell string, run by bash */
  const char *cwd;     /* NULL: the environment's cwd */
  bool has_stdin;      /* berth_process_write feeds it; else /dev/null */
  bool pty;            /* its stdin and stdout a terminal of its own (80x24);
                          needs berth-agent in the environment: ENOTSUP
                          where commands run without it (transport exec) */
} berth_process_spec;
#define BERTH_PROCESS_SPEC_INIT { .size = sizeof (berth_process_spec) }
enum
{
  BERTH_PROCESS_RUNNING = 1,
  BERTH_PROCESS_EXITED = 2, /* exit code and termination known */
  BERTH_PROCESS_LOST = 3,   /* gone without a status: its environment was
                               removed, recreated, or killed under it */
};
#define BERTH_PROCESS_OUTPUT 1 /* the stream berth_process_read reports */
BERTH_EXPORT int berth_env_start_process (berth_env *env, const berth_process_spec *spec, berth_process **ret, berth_error **reterr);
/* The process ID of ENV (from berth_process_id, any berth process).
   ENOENT when there is none (never there, or the environment was removed
   since).  */
BERTH_EXPORT int berth_env_attach_process (berth_env *env, const char *id, berth_process **ret, berth_error **reterr);
BERTH_EXPORT const char *berth_process_id (const berth_process *p);
BERTH_EXPORT berth_process *berth_process_ref (berth_process *p);
BERTH_EXPORT berth_process *berth_process_unref (berth_process *p);
/* A file descriptor readable when output may be there (poll it, then
   berth_process_read), or < 0.  */
BERTH_EXPORT int berth_process_fd (berth_process *p, berth_error **reterr);
/* Raw output bytes into BUF: > 0 read, 0 at the end of its output (it
   ended and everything was read), -EAGAIN none now.  *RET_STREAM (may be
   NULL) gets BERTH_PROCESS_OUTPUT.  */
BERTH_EXPORT ssize_t berth_process_read (berth_process *p, void *buf, size_t len, int *ret_stream, berth_error **reterr);
/* Its output so far, at once: the last 1 MiB (with a marker line first
   when more was dropped); malloc'd, NUL-terminated after *RET_LEN.  */
BERTH_EXPORT int berth_process_output (berth_process *p, void **ret, size_t *ret_len, berth_error **reterr);
/* Its stdin (started with has_stdin): LEN bytes, then close for EOF.  */
BERTH_EXPORT int berth_process_write (berth_process *p, const void *data, size_t len, berth_error **reterr);
BERTH_EXPORT int berth_process_close_stdin (berth_process *p, berth_error **reterr);
/* BERTH_PROCESS_*; once exited, *RET_EXIT_CODE and *RET_TERMINATION
   ("exited", "signaled" -- its shell's 128+N --, "stopped" by
   berth_process_stop; "lost"); both may be NULL.  */
BERTH_EXPORT int berth_process_poll (berth_process *p, int *ret_exit_code, const char **ret_termination, berth_error **reterr);
/* Kill its whole tree where it runs (children that left its session too).  */
BERTH_EXPORT int berth_process_stop (berth_process *p, berth_error **reterr);
/* STARTED: epoch seconds; EXIT_CODE -1 and TERMINATION NULL while running. */
typedef void (*berth_process_list_fn) (void *userdata, const char *id, const char *command, int64_t started, int state, int exit_code,
                                       const char *termination);
/* Every process started in ENV that it still records.  */
BERTH_EXPORT int berth_env_list_processes (berth_env *env, berth_process_list_fn fn, void *userdata, berth_error **reterr);

/* ---- non-blocking execute ----
   berth_env_execute is exactly this loop, run to the end:

     berth_exec *x;
     if (berth_env_exec_begin (env, &spec, &x, &err) < 0) ...
     while ((r = berth_exec_step (x, &res, &err)) > 0)
       poll (&(struct pollfd){ berth_exec_fd (x), POLLIN }, 1, -1);
     berth_exec_free (x);

   begin takes the named environment's lock (waiting for another
   process's command, as execute does), checks the spec and starts the
   command through the backend's transport (a spawn, or the provider's
   start: that setup may block, bounded by the command's timeout).  The
   lock is held until the command has ended (step returned 0 or < 0) or
   the exec is freed; one exec at a time per environment handle (EBUSY).
   Two handles on one named environment in one thread: the second begin
   waits for the first's lock as another process would, i.e. forever --
   run one command per named environment at a time.
   SPEC's strings and stdin bytes are read in begin; its on_output and
   userdata are used until the end.  ENV must outlive the exec.

   berth_exec_fd: an epoll fd, readable (POLLIN) when step has work: the
   command's output, room in its stdin, the caller's stdin fd or cancel
   fd readable, or a deadline (timeout, the drain of background children
   after the exit) reached -- so no timeout needs computing by the
   caller.  It can go into the caller's own poll/epoll set.

   berth_exec_step does what is ready without waiting and returns 1
   while the command runs; 0 when it has ended, *RET set (the result of
   berth_env_execute, same rules); < 0 an error (as berth_env_execute's,
   with the command's output in the error where it has some).  The last
   step does the wrap-up -- the exit status, a kill of the tree where it
   runs (bounded by 5 s) and the saved state -- and may block for that
   long.  A step after the end is EALREADY.

   berth_exec_interrupt: as the spec's cancel fd -- the next step kills
   the command's tree where it runs; the result is interrupted, 130.
   berth_exec_free of a running command kills it the same way (no
   result), and releases the lock.  */
typedef struct berth_exec berth_exec;
BERTH_EXPORT int berth_env_exec_begin (berth_env *env, const berth_exec_spec *spec, berth_exec **ret, berth_error **reterr);
BERTH_EXPORT int berth_exec_fd (const berth_exec *exec);
BERTH_EXPORT int berth_exec_step (berth_exec *exec, berth_result **ret, berth_error **reterr);
BERTH_EXPORT int berth_exec_interrupt (berth_exec *exec);
BERTH_EXPORT berth_exec *berth_exec_free (berth_exec *exec);

/* How the command ended.  SIGNALED only when the exit record says the
   command's shell died of a signal (`kill -SEGV $$`; the exit code stays
   128+N); a child process killed by a signal is 128+N to bash and
   stays EXITED.  OOM (the kernel's OOM killer) and LIMIT (a resource
   limit's signal: SIGXCPU, SIGXFSZ) only when the transport saw it (the
   agent: its cgroup's OOM-kill count, the limits it runs under), never
   guessed from an exit status.  */
typedef enum berth_termination
{
  BERTH_TERMINATION_EXITED,
  BERTH_TERMINATION_SIGNALED,
  BERTH_TERMINATION_TIMEOUT,
  BERTH_TERMINATION_INTERRUPTED,
  BERTH_TERMINATION_OOM,
  BERTH_TERMINATION_LIMIT,
} berth_termination;
BERTH_EXPORT berth_termination berth_result_termination (const berth_result *r);
/* "exited", "signaled", "timeout", "interrupted", "oom", "limit"; NULL
   for a value this library does not know.  */
BERTH_EXPORT const char *berth_termination_name (berth_termination t);
/* "SIGSEGV" when SIGNALED, the signal when OOM ("SIGKILL") or LIMIT
   ("SIGXCPU"), else NULL.  */
BERTH_EXPORT const char *berth_result_signal (const berth_result *r);
/* How the command reached the environment: "exec" (a spawn of the
   backend's exec prefix, or its start callback); "agent" is to come.  */
BERTH_EXPORT const char *berth_result_transport (const berth_result *r);
BERTH_EXPORT berth_result *berth_result_free (berth_result *r);
/* The version of the shape of every JSON object berth prints (berth(1),
   JSON OUTPUT) and berth serve speaks (berth-serve(7)).  */
#define BERTH_SCHEMA_VERSION 1
/* R as the JSON result object of `berth exec --json` and of berth serve's
   execute (one line, no newline; fields in berth-serve(7)), with
   schema_version.  Never NULL (aborts when memory runs out); caller frees.
   *RET_LEN (may be NULL) gets its length.  */
BERTH_EXPORT char *berth_result_json (const berth_result *r, size_t *ret_len);

/* ---- exec_prefix and streams ---- */
/* A local argv that runs whatever words follow it inside ENV with stdin and
   stdout open, passing the words through unchanged.  -ENOTSUP when the
   backend cannot right now.  Free with berth_strv_free.  */
BERTH_EXPORT int berth_env_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, berth_error **reterr);
/* The same for a terminal: the words that follow run on a terminal of
   their own inside ENV, sized as the caller's (the prefix's stdin must
   be one) and resized with it; where the backend hands the caller's
   terminal through, the interactive exec_prefix.  -ENOTSUP or
   BERTH_E_UNAVAILABLE (what is missing) when it cannot.  */
BERTH_EXPORT int berth_env_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr);
/* Runs ARGV inside ENV bridging IN_FD to its stdin and its stdout/stderr
   to OUT_FD/ERR_FD until it exits; returns its exit status.  ARGV runs
   under bash there: a missing command is 127 with the shell's one line
   ("WORD: command not found") on every backend.  */
BERTH_EXPORT int berth_env_stream (berth_env *env, const char *const *argv, int in_fd, int out_fd, int err_fd, berth_error **reterr);
typedef struct berth_stream_spec
{
  size_t size;
  const char *const *argv;
  int in_fd;     /* copied to its stdin as it reads (bounded memory); -1: none */
  int out_fd, err_fd;
  /* Readable => the command's whole tree is killed where it runs (the
     kill execute uses) and 130 is returned; -1 unused.  OUT_FD's reader
     gone (EPIPE) kills it too, and 141 is returned.  */
  int cancel_fd;
} berth_stream_spec;
#define BERTH_STREAM_SPEC_INIT { .size = sizeof (berth_stream_spec), .in_fd = -1, .out_fd = 1, .err_fd = 2, .cancel_fd = -1 }
BERTH_EXPORT int berth_env_stream_ex (berth_env *env, const berth_stream_spec *spec, berth_error **reterr);
/* A bash rc file's text (malloc'd) that gives an interactive shell the
   environment's state: its exports, functions and aliases, its cwd
   (berth shell).  */
BERTH_EXPORT int berth_env_shell_rc (berth_env *env, char **ret, berth_error **reterr);

BERTH_EXPORT char **berth_strv_free (char **strv);
BERTH_EXPORT const char *berth_version (void);

#ifdef __cplusplus
}
#endif
#endif
