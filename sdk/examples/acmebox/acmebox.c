/* SPDX-License-Identifier: MIT */
/* acmebox: an example out-of-tree berth backend plugin.
 *
 * Every environment is a directory on the host (berth_env_state_dir)
 * with its own HOME; commands run as the invoking user with that HOME and
 * a configurable umask.  It shows the whole provider contract in one
 * file: flags as data, a declared config key (terminal.acmebox_umask),
 * probe, doctor, the lifecycle (attach, ensure, remove) with a
 * per-environment data block, and an exec_prefix transport.
 *
 * libberth does the rest (cwd tracking, exported variables, timeouts,
 * output cap, secret scrubbing): a backend only says how to start a
 * process inside its environment.  See berth-provider(7).
 *
 * Build: make && make install   (needs only pkg-config --cflags --libs berth) */

/* nftw () */
#define _GNU_SOURCE 1
/* Export berth_provider_entry_v2 from this library.  */
#define BERTH_BUILDING_MODULE 1
#include <berth/provider.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ACMEBOX_SHELL "/bin/sh"
#define DEFAULT_UMASK "022"

static bool
umask_is_valid (const char *s)
{
  size_t n = strlen (s);
  if (n < 3 || n > 4)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < '0' || s[i] > '7')
      return false;
  return true;
}

static const char *
acmebox_umask (const berth_config *cfg)
{
  return berth_config_string (cfg, "terminal.acmebox_umask", DEFAULT_UMASK);
}

static int
acmebox_probe (const berth_config *cfg, char **ret_reason)
{
  if (access (ACMEBOX_SHELL, X_OK) < 0)
    {
      if (ret_reason)
        *ret_reason = strdup (ACMEBOX_SHELL " is not executable");
      return BERTH_PROBE_UNAVAILABLE;
    }
  if (!umask_is_valid (acmebox_umask (cfg)))
    {
      if (ret_reason)
        *ret_reason = strdup ("terminal.acmebox_umask must be 3 or 4 octal digits");
      return BERTH_PROBE_NEEDS_SETUP;
    }
  return BERTH_PROBE_READY;
}

static int
acmebox_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  bool sh = access (ACMEBOX_SHELL, X_OK) == 0;
  fn (userdata, "acmebox shell", sh, ACMEBOX_SHELL, sh ? NULL : "install a POSIX shell as " ACMEBOX_SHELL);
  const char *u = acmebox_umask (cfg);
  bool ok = umask_is_valid (u);
  fn (userdata, "acmebox umask", ok, u, ok ? NULL : "berth config set terminal.acmebox_umask 022");
  return 0;
}

/* The per-environment block (env_data_size): libberth allocates it
   zeroed before attach and frees it after the environment is done.  */
typedef struct acmebox_env
{
  char home[4096];
} acmebox_env;

/* Attach: cheap, no side effects -- only work out where the home is.  It
   runs first, also before remove (`berth rm` from a fresh process).  */
static int
acmebox_attach (berth_env *env, berth_error **reterr)
{
  acmebox_env *a = berth_env_get_data (env);
  const char *dir = berth_env_state_dir (env);
  if (dir == NULL || dir[0] != '/')
    return berth_error_set (reterr, BERTH_E_ENV, "acmebox: the environment has no state directory");
  if ((size_t) snprintf (a->home, sizeof a->home, "%s/home", dir) >= sizeof a->home)
    return berth_error_set (reterr, BERTH_E_ENV, "acmebox: state directory path too long");
  return 0;
}

/* Ensure: make (or find again, for a named environment) the home.  */
static int
acmebox_ensure (berth_env *env, berth_error **reterr)
{
  acmebox_env *a = berth_env_get_data (env);
  const char *u = acmebox_umask (berth_env_config (env));
  if (!umask_is_valid (u))
    return berth_error_set (reterr, BERTH_E_CONFIG,
                            "terminal.acmebox_umask '%s' is not valid: use 3 or 4 octal digits, e.g. 022", u);
  if (mkdir (a->home, 0700) < 0 && errno != EEXIST)
    return berth_error_errno (reterr, errno, "acmebox: cannot create %s", a->home);
  berth_logf (env, BERTH_LOG_DEBUG, "acmebox environment %s in %s", berth_env_id (env), a->home);
  return 0;
}

/* The transport: prefix + words runs the words unchanged, with HOME set
   to the environment's home and the configured umask.  A tiny sh wrapper
   (not `env`, which would eat words of the form NAME=VALUE).  stdin,
   stdout and stderr are the process's own: they stay separate.  */
static int
acmebox_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv,
                     uint32_t *ret_flags, berth_error **reterr)
{
  (void) interactive; /* no terminal handling: the words decide */
  if (user && *user)
    return berth_error_set (reterr, ENOTSUP,
                            "acmebox runs commands as the invoking user only (asked for '%s')", user);
  const char *dir = berth_env_state_dir (env);
  if (dir == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "acmebox: the environment has no state directory");

  char **argv = berth_strv_new (ACMEBOX_SHELL, "-c",
                                "umask \"$3\" && HOME=\"$1/home\" && ACMEBOX_ENV=\"$2\" "
                                "&& export HOME ACMEBOX_ENV && cd \"$HOME\" || exit 125; "
                                "shift 3; exec \"$@\"",
                                "acmebox", dir, berth_env_id (env), acmebox_umask (berth_env_config (env)),
                                NULL);
  if (argv == NULL)
    return berth_error_errno (reterr, ENOMEM, "acmebox: out of memory");
  *ret_argv = argv;
  *ret_flags = BERTH_PREFIX_PASSES_ENV | BERTH_PREFIX_PASSES_FDS;
  return 0;
}

static int
remove_entry (const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void) st;
  (void) ftw;
  if (type == FTW_DP)
    return rmdir (path) < 0 && errno != ENOENT ? -1 : 0;
  return unlink (path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Remove, for good (throw-away environments, `berth rm`); idempotent: no
   home is success.  A named environment keeps its home between
   invocations (libberth does not call remove then).  Background jobs are
   not stopped: acmebox does not declare cleanup_stops_processes.  */
static int
acmebox_remove (berth_env *env, berth_error **reterr)
{
  acmebox_env *a = berth_env_get_data (env);
  if (nftw (a->home, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
    return berth_error_errno (reterr, errno, "acmebox: cannot remove %s", a->home);
  return 0;
}

/* The keys acmebox reads: libberth checks their type in every
   configuration file (file:line:col) and warns about a misspelt
   terminal.acmebox_* key.  The octal format is acmebox's own check.  */
static const berth_key_spec acmebox_config_keys[] = {
  { "acmebox_umask", BERTH_KEY_STRING, .expect = "3 or 4 octal digits, e.g. 022" },
  { NULL },
};

/* Values stripped from every process berth spawns, whatever the backend. */
static const char *const acmebox_strip_env_keys[] = { "ACMEBOX_LICENSE_KEY", NULL };

const berth_provider_ops berth_acmebox_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "acmebox",
  .display_name = "ACME box",
  .description = "commands on this host in a per-environment directory with its own HOME",
  .env_description = "this host, as you, with HOME in a private per-environment directory",
  .flags = BERTH_FLAG_USES_HOST_FILESYSTEM | BERTH_FLAG_SUPPORTS_STREAMS,
  .default_cwd = "~",
  .cache_path_base = NULL,
  .strip_env_keys = acmebox_strip_env_keys,
  .probe = acmebox_probe,
  .doctor = acmebox_doctor,
  .setup_instructions = "acmebox needs only " ACMEBOX_SHELL ".  Optional: berth config set terminal.acmebox_umask 077",
  .config_keys = acmebox_config_keys,
  .env_data_size = sizeof (acmebox_env),
  .attach = acmebox_attach,
  .ensure = acmebox_ensure,
  .remove = acmebox_remove,
  .exec_prefix = acmebox_exec_prefix,
};

BERTH_PROVIDER_EXPORT (berth_acmebox_provider)
