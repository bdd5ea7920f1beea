/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* provider.h: the provider ABI, version 2.  In-tree backends and
 * third-party plugins are built against this one header (see
 * berth-provider(7)).
 *
 * A backend provides a *transport* -- how to start a process inside its
 * environment -- a lifecycle (attach, ensure, stop, remove), the
 * configuration keys it reads, and flags.  libberth provides the
 * semantics of execute (cwd and exported state, timeouts that kill the
 * tree where it runs, output cap, scrubbing).  */
#ifndef BERTH_PROVIDER_H
#define BERTH_PROVIDER_H

#include <berth/berth.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bump on any incompatible change, and rename the entry point to match.
   Appending members at the end of a struct is compatible (size checks).
   ABI 1 (berth 0.1: create + cleanup (bool)) is refused since 0.2.  */
#define BERTH_PROVIDER_ABI 2

/* True when a struct from the other side of the ABI carries FIELD.  */
#define BERTH_HAS_FIELD(ptr, type, field) \
  ((ptr)->size >= offsetof (type, field) + sizeof (((type *) 0)->field))

/* ---- transports ---- */

/* exec_prefix flags */
enum
{
  /* The local environment (scrubbed by libberth) reaches the inner
     command: local, bwrap.  Otherwise libberth sends allowed passthrough
     values in the script it feeds on stdin, never in argv.  */
  BERTH_PREFIX_PASSES_ENV = 1u << 0,
  /* File descriptors other than 0-2 reach the inner command.  */
  BERTH_PREFIX_PASSES_FDS = 1u << 1,
};

/* A process started by a custom transport (see start below).  libberth
   polls FD for POLLIN (and for POLLOUT while stdin is pending) and calls
   the ops.

   The two streams must stay separate all the way: BERTH_STREAM_OUT is
   what the command printed (stdout and stderr merged by the runtime's
   wrapper), BERTH_STREAM_ERR is the runtime's own STATE CHANNEL (the
   wrapper reports the command's exit, its cwd and its exports there).
   A transport that merges them, reorders bytes within one of them, or
   drops either corrupts the result; one that cannot keep them apart
   must not offer start (use exec_prefix, whose stderr stays a pipe).  */
enum
{
  BERTH_STREAM_OUT = 1, /* the command's output */
  BERTH_STREAM_ERR = 2, /* the runtime's state channel (the process's stderr) */
};
typedef void (*berth_sink_fn) (void *userdata, int stream, const char *data, size_t len);

typedef struct berth_proc_ops
{
  size_t size;
  /* Read what is available and deliver it to SINK.  Returns 1 when more
     may come, 0 at end of stream, -errno on failure.  */
  int (*pump) (void *proc, berth_sink_fn sink, void *userdata);
  /* Non-blocking write of stdin bytes: count written, -EAGAIN, -errno.  */
  ssize_t (*write_stdin) (void *proc, const void *buf, size_t len);
  int (*close_stdin) (void *proc);
  /* After end of stream: the exit status (0-255), or -1 when unknown.  */
  int (*wait) (void *proc, int *ret_status, berth_error **reterr);
  void (*free) (void *proc);
  /* Optional: true when PROC holds bytes its fd does not show readable
     (a TLS or frame buffer), so libberth calls pump without waiting.  */
  bool (*data_pending) (void *proc);
  /* Optional: send SIGNAL to the whole tree of PROC where it runs (its
     process group, session or cgroup there).  0 when delivered; -ENOTSUP
     to have libberth run its kill script through the transport instead. */
  int (*kill) (void *proc, int signal, berth_error **reterr);
  /* Optional (appended to ABI 2 in 0.2.x; check with BERTH_HAS_FIELD):
     after end of stream, how the command ended when the transport knows
     more than its status -- BERTH_TERMINATION_OOM (the kernel's OOM
     killer, seen in its cgroup's memory.events) or BERTH_TERMINATION_LIMIT
     (a resource limit it hit: SIGXCPU, SIGXFSZ), with the signal in
     *RET_SIGNAL.  Any other value: nothing more than wait's status.  It
     may wait for the exit as wait does; wait is still called after it.
     Never a guess from an exit status alone.  */
  berth_termination (*termination) (void *proc, int *ret_signal);
} berth_proc_ops;

struct berth_proc
{
  size_t size;
  int fd;       /* readable when pump has work */
  int stdin_fd; /* writable when stdin can take bytes; may equal fd; -1 none */
  const berth_proc_ops *ops;
  void *proc;
};

/* A berth_proc over file descriptors, for transports that obtain the
   command's stdio as fds (a spawned local client, fds passed from a jail).
   libberth owns the fds from then on; WAIT (optional) gives the exit
   status once both streams ended, else PID (when > 0) is reaped; FREE
   (optional) releases DATA.  */
typedef struct berth_fdproc_spec
{
  size_t size;
  int in_fd;  /* the command's stdin (a pipe or socket), or -1 */
  int out_fd; /* its stdout */
  int err_fd; /* its stderr */
  pid_t pid;  /* a local process to reap, or -1 */
  int (*wait) (void *data, int *ret_status, berth_error **reterr);
  void (*free) (void *data);
  void *data;
} berth_fdproc_spec;

typedef struct berth_proc berth_proc;
BERTH_EXPORT int berth_proc_from_fds (const berth_fdproc_spec *spec, berth_proc *ret, berth_error **reterr);
/* Spawn ARGV locally (new session, default signals, ENVP or inherited)
   with stdin (when HAS_STDIN; else /dev/null), stdout and stderr as a
   berth_proc.  Writes to its stdin never raise SIGPIPE.  */
BERTH_EXPORT int berth_proc_spawn (const char *const *argv, const char *const *envp, bool has_stdin, berth_proc *ret, berth_error **reterr);

/* berth_start_req flags */
enum
{
  /* ARGV is the runtime's own wrapper, exactly {"bash", "-c", SCRIPT}
     (execute's bootstrap, a kill script): any bash may run SCRIPT, so a
     transport whose remote login shell is bash may send SCRIPT to it as
     is instead of a second `bash -c`.  Never set for a caller's argv.  */
  BERTH_START_SHELL_SCRIPT = 1u << 0,
  /* ARGV is the runtime's start script of berth-agent (`sh -c SCRIPT`):
     it prints one text line beginning with "BERTH-AGENT-" when it does
     not become the agent, else the agent's frames follow on stdout and
     it serves the environment's agent socket (or relays to the agent
     that serves it already).  A transport whose processes end with the
     berth that started them (a Slurm step ends with its srun) may first
     start the same script detached, with BERTH_AGENT_SERVE=1 in its
     environment: that agent then serves the socket for as long as it
     runs, and this one relays to it.  Never set for a caller's argv.  */
  BERTH_START_AGENT = 1u << 1,
};

typedef struct berth_start_req
{
  size_t size;
  const char *const *argv; /* run inside the environment, unchanged */
  bool has_stdin;          /* feed stdin (else /dev/null) */
  const char *user;        /* NULL: the environment's default user */
  /* With BERTH_PREFIX_PASSES_FDS in the provider's start_flags: an fd to
     become the command's fd 3 (the runtime's script), else -1.  */
  int extra_fd;
  /* When the whole call must be over, in CLOCK_MONOTONIC microseconds,
     or 0 for none: a transport that must first (re)connect bounds that
     by it and fails rather than overrun (an older runtime's request has
     no such field: BERTH_HAS_FIELD (req, berth_start_req, deadline_usec)).  */
  uint64_t deadline_usec;
  /* BERTH_START_* (an older runtime's request has no such field:
     BERTH_HAS_FIELD (req, berth_start_req, flags)).  */
  uint32_t flags;
} berth_start_req;

/* ---- configuration keys a provider declares ---- */

/* berth_key_spec types */
enum
{
  BERTH_KEY_STRING = 1, /* a scalar */
  BERTH_KEY_BOOL,       /* true/false, yes/no, on/off */
  BERTH_KEY_INT,        /* an integer in [min, max] (both 0: any) */
  BERTH_KEY_NUMBER,     /* a number in [min, max] (both 0: any) */
  BERTH_KEY_STRV,       /* a sequence of strings */
  BERTH_KEY_STRMAP,     /* a mapping of names to scalars */
  BERTH_KEY_OPTIONS,    /* a string, a sequence of strings or a mapping of scalars */
  BERTH_KEY_BINDS,      /* a sequence of "src[:dest][:ro|rw]" or {src, dest, readonly} */
};

/* One key under terminal.: NAME must begin with the provider's name and
   "_" (docker_image).  libberth checks each file's values against these
   when the provider is loaded (file:line:col in the error), warns about
   an unknown key with the provider's prefix with a "did you mean", and
   `berth config set` refuses a bad value before it writes the file.  */
typedef struct berth_key_spec
{
  const char *name;
  uint32_t type;      /* BERTH_KEY_* */
  double min, max;    /* BERTH_KEY_INT, BERTH_KEY_NUMBER */
  const char *expect; /* what a value must be, for errors; NULL: from type and range */
} berth_key_spec;

/* ---- the provider ---- */

typedef struct berth_provider_ops
{
  uint32_t abi;  /* BERTH_PROVIDER_ABI */
  uint32_t size; /* sizeof (berth_provider_ops) */
  const char *name;
  const char *display_name;
  const char *description;
  const char *env_description; /* a prompt hint: where commands run */

  uint32_t flags;          /* BERTH_FLAG_* declared defaults */
  const char *default_cwd; /* NULL, an absolute path, or "~" */
  const char *cache_path_base;
  const char *const *strip_env_keys; /* NULL-terminated, or NULL */
  /* The keys it reads, ended by an entry whose name is NULL; or NULL.  */
  const berth_key_spec *config_keys;
  /* The size of the per-environment block libberth allocates (zeroed)
     before attach and frees after release: berth_env_get_data.  0: none. */
  size_t env_data_size;

  /* Optional: a flag whose value depends on the configuration.  Return 0
     and set *ret, or < 0 to fall back to the declared default.  */
  int (*flag) (const berth_config *cfg, uint32_t flag, bool *ret);
  /* Optional: cheap (< 2 s, no network) readiness; BERTH_PROBE_* and a
     malloc'd reason.  */
  int (*probe) (const berth_config *cfg, char **ret_reason);
  /* Optional: report checks through FN.  */
  int (*doctor) (const berth_config *cfg, berth_check_fn fn, void *userdata);
  const char *setup_instructions;

  /* The lifecycle.  Every environment is attached first; then either
     ensured (to run commands), or removed (`berth rm`, the end of a
     throw-away environment) -- remove also follows an attach alone.

     attach (optional): cheap and without side effects where it runs:
       read the configuration and the state this provider recorded
       (berth_env_state_dir), fill the data block, open a client.  No
       container, connection or process is made.
     ensure (required): make the environment run -- find it again (a
       named one) or create it -- and report berth_env_mark_recreated
       when a named one had to be made anew.  By berth_env_deadline_usec.
     stop (optional): idle -- suspend and keep the workspace (stop the
       container, drop the connection); the next ensure resumes it.
       NULL: nothing to suspend (it stays as it is).
     remove (optional): for good, idempotent: "nothing there" is success,
       and it must work after attach alone (find what to remove from
       berth_env_id, berth_env_state_dir, labels).  NULL: nothing to remove.
     release (optional): free what the data block points to (libberth
       frees the block itself); called once, last -- and also right after
       an attach that failed, on what that attach filled (libberth then
       zeroes the block, and the next call attaches again).  */
  int (*attach) (berth_env *env, berth_error **reterr);
  int (*ensure) (berth_env *env, berth_error **reterr);
  int (*stop) (berth_env *env, berth_error **reterr);
  int (*remove) (berth_env *env, berth_error **reterr);
  void (*release) (berth_env *env);

  /* The transport, called only on an ensured environment: libberth runs
     everything through exactly one -- start when it is set, else a local
     spawn of exec_prefix adapted into a start.
     - exec_prefix (required for streams, i.e. BERTH_FLAG_SUPPORTS_STREAMS):
       argv that runs the words that follow it inside the environment
       unchanged; libberth spawns prefix + argv locally.  *ret_flags gets
       BERTH_PREFIX_*.
     - start (optional): start REQ->argv inside the environment without a
       local process (an API), filling *ret.  -ESRCH: the environment no
       longer exists (no process of it can be running), e.g. a jail whose
       init is gone.  start_flags: the BERTH_PREFIX_* that hold for it
       (the environment reaches the command; req->extra_fd becomes its
       fd 3).  */
  int (*exec_prefix) (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr);
  int (*start) (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr);
  uint32_t start_flags;

  /* Optional: remove leftovers older than LIFETIME seconds; count removed.  */
  int (*gc) (const berth_config *cfg, int64_t lifetime, berth_error **reterr);
  /* Optional: fetch IMAGE into the backend's store now (berth pull),
     progress through FN (may be NULL).  */
  int (*pull) (const berth_config *cfg, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr);
  /* BERTH_HINT_*: what libberth should know of this transport.  */
  uint32_t hints;
  /* Optional: argv that runs the words that follow it on a terminal of
     its own inside the environment, sized as the caller's terminal (the
     spawned prefix's stdin) and resized with it: `docker exec -it`,
     `ssh -tt` (berth shell).  Leave it NULL where the interactive
     exec_prefix already hands the caller's terminal through (a local
     process, a jail, `srun --pty`): libberth uses that.  */
  int (*terminal_prefix) (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr);
  /* Optional (appended to ABI 2 in 0.2.x; check with BERTH_HAS_FIELD):
     where this host reaches PATH, the UNIX socket inside a named
     environment on which its agent (berth-agent --serve) listens, so that
     a berth process connects to it with no command through the
     transport: a host path in *RET_PATH (malloc'd, under 108 bytes).
     SETUP is false before each berth process's first command (be quick:
     no process, no network) and true once after an agent started serving
     PATH (the moment to make a forward).  < 0: not reachable from here;
     each berth process then starts its relay through the transport.  It
     is asked again (SETUP false) when a connection it gave ended under a
     command: an error in *RETERR (may be NULL) then says what the
     transport saw (the container stopped, the master is gone, the jail's
     init died), as the transport's own start would.  */
  int (*agent_socket) (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr);
} berth_provider_ops;

/* berth_provider_ops.hints */
enum
{
  /* No in-environment agent (berth-agent) on this transport: one exec
     per command.  For a transport whose processes cannot carry the
     agent's stream, or end with the berth that started them and that
     cannot start one detached (BERTH_START_AGENT says how the slurm
     backend does).  */
  BERTH_HINT_NO_AGENT = 1u << 0,
};

#define BERTH_PROVIDER_OPS_INIT .abi = BERTH_PROVIDER_ABI, .size = sizeof (berth_provider_ops)

typedef const berth_provider_ops *(*berth_provider_entry_fn) (void);
#define BERTH_PROVIDER_ENTRY "berth_provider_entry_v2"

/* A module or plugin exports exactly one symbol with this macro.  Built-in
   backends are listed in the runtime's table instead.  */
#ifdef BERTH_BUILDING_MODULE
#define BERTH_PROVIDER_EXPORT(ops)                                         \
  BERTH_EXPORT const berth_provider_ops *berth_provider_entry_v2 (void); \
  const berth_provider_ops *berth_provider_entry_v2 (void) { return &(ops); }
#else
#define BERTH_PROVIDER_EXPORT(ops)
#endif

/* ---- services libberth offers providers ---- */

/* Errors (berth.h has the rules): berth_error_set (reterr, code, fmt, ...)
   makes an error with the message FMT; berth_error_errno is the same
   constructor with ": strerror (ERRNUM)" appended when ERRNUM is an errno
   value (< 4096; a BERTH_E_* code gets nothing appended), for a failed
   system call: berth_error_errno (reterr, errno, "open %s", path).  Both
   take the code with either sign and return -code.  Context for an error
   a callee set goes through berth_error_wrap.  */
BERTH_EXPORT int berth_error_errno (berth_error **reterr, int errnum, const char *fmt, ...) BERTH_PRINTF (3, 4);
BERTH_EXPORT void berth_logf (berth_env *env, int level, const char *fmt, ...) BERTH_PRINTF (3, 4);
/* A debug line in AREA (the backend's name) where no env is at hand (a
   client library's request, probe, gc): it goes to the context of the
   call running on this thread, shown with BERTH_DEBUG=AREA or all.  */
BERTH_EXPORT void berth_debugf (const char *area, const char *fmt, ...) BERTH_PRINTF (2, 3);

/* Configuration.  PATH is dotted ("terminal.docker_image").  */
BERTH_EXPORT const berth_config *berth_config_lookup (const berth_config *cfg, const char *path);
BERTH_EXPORT const char *berth_config_string (const berth_config *cfg, const char *path, const char *def);
BERTH_EXPORT int64_t berth_config_int (const berth_config *cfg, const char *path, int64_t def);
BERTH_EXPORT double berth_config_double (const berth_config *cfg, const char *path, double def);
BERTH_EXPORT bool berth_config_bool (const berth_config *cfg, const char *path, bool def);
/* A sequence of scalars, or a mapping as "KEY=VALUE": NULL-terminated,
   free with berth_strv_free; NULL when absent.  */
BERTH_EXPORT char **berth_config_strv (const berth_config *cfg, const char *path);
/* Walk any node: kind, scalar value, children (sequence items or mapping
   values), and a mapping child's key.  */
enum
{
  BERTH_CONFIG_SCALAR = 1,
  BERTH_CONFIG_SEQUENCE = 2,
  BERTH_CONFIG_MAPPING = 3,
};
BERTH_EXPORT int berth_config_kind (const berth_config *node);
BERTH_EXPORT const char *berth_config_scalar (const berth_config *node);
BERTH_EXPORT size_t berth_config_count (const berth_config *node);
BERTH_EXPORT const berth_config *berth_config_item (const berth_config *node, size_t i);
BERTH_EXPORT const char *berth_config_key (const berth_config *node); /* key of a mapping member, or NULL */
/* "file:line:col" of a node, for error messages.  */
BERTH_EXPORT const char *berth_config_where (const berth_config *node);

/* The environment, as seen by its provider.  */
BERTH_EXPORT const berth_config *berth_env_config (const berth_env *env);
BERTH_EXPORT bool berth_env_is_persistent (const berth_env *env);
/* Opened under a hosted scope (a tenant other than "local"): the agent's
   own sandbox -- refuse anything that reaches the host (host mounts) and
   keep it off the network unless configured.  */
BERTH_EXPORT bool berth_env_is_hosted (const berth_env *env);
BERTH_EXPORT const char *berth_env_image (const berth_env *env);   /* spec image or NULL */
BERTH_EXPORT const char *berth_env_task_id (const berth_env *env); /* or NULL */
/* A stable id (the name for named environments, else random), [a-z0-9-]. */
BERTH_EXPORT const char *berth_env_id (const berth_env *env);
/* A private 0700 host directory for this environment's provider state:
   kept across invocations for named environments, removed at cleanup for
   throw-away ones.  */
BERTH_EXPORT const char *berth_env_state_dir (const berth_env *env);
/* A 0700 directory for sockets (short path), same lifetime.  */
BERTH_EXPORT const char *berth_env_runtime_dir (const berth_env *env);
/* The per-environment block of env_data_size bytes (NULL when 0).  */
BERTH_EXPORT void *berth_env_get_data (const berth_env *env);
/* The next result reports environment_recreated.  */
BERTH_EXPORT void berth_env_mark_recreated (berth_env *env);
/* Allowed passthrough variables as "KEY=VALUE" (borrowed, NULL-terminated):
   names in terminal.env_passthrough present in the host environment.  */
BERTH_EXPORT const char *const *berth_env_passthrough (berth_env *env);
/* The scrubbed host environment (borrowed) for transports that pass it.  */
BERTH_EXPORT const char *const *berth_env_host_environ (berth_env *env);
/* Path of a helper program berth installs (berth-jail, the berth CLI...):
   honours $BERTH_LIBEXECDIR / $BERTH_BINDIR for uninstalled test runs.  */
BERTH_EXPORT char *berth_helper_path (const char *name);

/* Make sure PATH is a private directory of this user, as tmux and
   OpenSSH insist for their sockets: created 0700 when absent (its parents
   too), else it must be a real directory (not a symlink) owned by the
   effective user with no group or other permissions.  A refusal says
   what is wrong and what to do.  */
BERTH_EXPORT int berth_private_dir (const char *path, berth_error **reterr);

/* The CLOCK_MONOTONIC time (microseconds) by which the call in progress on
   ENV must end -- the setup bound while it is opened, the command's
   deadline during execute -- or 0 for none.  A backend gives every
   request to its runtime (an HTTP call, a helper, a connection) no more
   than what is left, and fails with an error when it runs out.  */
BERTH_EXPORT uint64_t berth_env_deadline_usec (const berth_env *env);

/* Run a short host command to completion (no shell): capture up to
   MAX bytes of merged output (NUL-terminated, caller frees), exit status
   in *ret_status; killed after TIMEOUT seconds (-ETIMEDOUT).  ENVP NULL
   inherits.  STDIN_DATA may be NULL.  */
BERTH_EXPORT int berth_run_capture (const char *const *argv, const char *const *envp, const char *stdin_data, double timeout, size_t max, char **ret_output, int *ret_status, berth_error **reterr);

/* Single-quote S for a POSIX shell (always quotes).  Caller frees.  */
BERTH_EXPORT char *berth_shell_quote (const char *s);
/* Join ARGV into one shell-safe command line.  Caller frees.  */
BERTH_EXPORT char *berth_shell_join (const char *const *argv);
BERTH_EXPORT char **berth_strv_new (const char *first, ...);
BERTH_EXPORT int berth_strv_push (char ***strv, const char *s);
BERTH_EXPORT size_t berth_strv_length (const char *const *strv);

#ifdef __cplusplus
}
#endif
#endif
