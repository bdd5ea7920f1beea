/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh.c: the ssh backend.  Drives the system OpenSSH client (so the user's
 * ~/.ssh/config, agent, known_hosts and ProxyJump keep working) through one
 * multiplexed master per environment.
 *
 *  - create() establishes the master (ssh -M -N -f, ControlPersist) on a
 *    control socket in this environment's own 0700 runtime directory, so
 *    sibling environments to the same destination never share or kill
 *    each other's master.  Connection failures (unreachable, auth refused,
 *    host key changed) are errors with ssh's own message.
 *  - start() (execute, kill scripts, streams) and exec_prefix() first
 *    check the master in-process over its control socket (ssh-mux.c, no
 *    fork) and re-establish a dead or wedged one.  start() spawns
 *    `ssh -T ... host -- <quoted words>` itself (berth_proc_spawn); exec_prefix()
 *    returns [berth-ssh-exec, ssh, -T, ..., host, --] for other callers:
 *    the helper quotes the words that follow so they arrive unchanged.
 *  - sshd runs every command as `$SHELL -c STRING`.  When the remote login
 *    shell is bash (asked once per master, kept next to the socket),
 *    start() sends the runtime's `bash -c SCRIPT` (the request says so
 *    with BERTH_START_SHELL_SCRIPT) as SCRIPT itself: the same bash
 *    semantics (Debian's bash sources ~/.bashrc for ssh commands in both
 *    cases), one bash start fewer per command.  Any other login
 *    shell, or terminal.ssh_direct_bash: false, keeps the quoted words.
 *  - cleanup() leaves a named environment's master for the next `berth
 *    exec -e NAME`, and otherwise sends `-O exit` to this environment's
 *    master only.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ssh-private.h"
#include "ssh-mux.h"
#include "ssh-quote.h"

/* Release: what the block (env_data_size) points to.  */
static void
ssh_release (berth_env *env)
{
  ssh_env *e = berth_env_get_data (env);
  free (e->ssh);
  free (e->helper);
  free (e->host);
  free (e->user);
  free (e->key);
  berth_strv_free (e->options);
  free (e->control_path);
  free (e->control_dir);
  free (e->lock_path);
  free (e->pid_path);
  free (e->dest_path);
  free (e->identity);
  free (e->shell_path);
  free (e->stall_path);
}

/* ---- configuration ---- */

static const char *
cfg_scalar (const berth_config *cfg, const char *path)
{
  const berth_config *n = berth_config_lookup (cfg, path);
  const char *s = n && berth_config_kind (n) == BERTH_CONFIG_SCALAR ? berth_config_scalar (n) : NULL;
  return s && *s ? s : NULL;
}

/* An integer key: DEF when absent, -EINVAL when not a number in range.  */
static int
cfg_int (const berth_config *cfg, const char *path, long lo, long hi, int def, int *ret, berth_error **reterr)
{
  const char *s = cfg_scalar (cfg, path);
  char *end;
  long v;
  if (s == NULL)
    {
      *ret = def;
      return 0;
    }
  errno = 0;
  v = strtol (s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi)
    return berth_error_set (reterr, BERTH_E_CONFIG, "%s: must be a number between %ld and %ld (got '%s')", path, lo, hi, s);
  *ret = (int) v;
  return 0;
}

static int
read_settings (const berth_config *cfg, ssh_env *e, berth_error **reterr)
{
  const char *host = cfg_scalar (cfg, "terminal.ssh_host");
  const char *user = cfg_scalar (cfg, "terminal.ssh_user");
  const char *key = cfg_scalar (cfg, "terminal.ssh_key");
  int r;

  if ((r = cfg_int (cfg, "terminal.ssh_port", 1, 65535, 0, &e->port, reterr)) < 0
      || (r = cfg_int (cfg, "terminal.ssh_connect_timeout", 1, 3600, SSH_DEFAULT_CONNECT_TIMEOUT, &e->connect_timeout, reterr)) < 0
      || (r = cfg_int (cfg, "terminal.ssh_control_persist", 1, 7 * 86400,
                       e->persistent ? SSH_DEFAULT_PERSIST_NAMED : SSH_DEFAULT_PERSIST_THROWAWAY, &e->control_persist, reterr)) < 0)
    return r;
  e->host = host ? strdup (host) : NULL;
  e->user = user ? strdup (user) : NULL;
  e->key = key ? strdup (key) : NULL;
  /* a list of "Key=Value", a mapping {Key: Value}, or one "Key=Value" */
  e->options = berth_config_strv (cfg, "terminal.ssh_options");
  if (e->options == NULL && cfg_scalar (cfg, "terminal.ssh_options"))
    e->options = berth_strv_new (cfg_scalar (cfg, "terminal.ssh_options"), NULL);
  if ((host && !e->host) || (user && !e->user) || (key && !e->key))
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return 0;
}

/* ---- ops ---- */

/* Attach: only where this environment's connection files are (the
   runtime directory); nothing is read from the network or started.  */
static int
ssh_attach (berth_env *env, berth_error **reterr)
{
  ssh_env *e = berth_env_get_data (env);
  const char *rt = berth_env_runtime_dir (env);
  e->persistent = berth_env_is_persistent (env);
  if (rt == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "ssh: the environment has no runtime directory");
  if (ssh_env_paths (rt, &e->control_path, &e->control_dir, &e->lock_path, &e->pid_path) < 0
      || asprintf (&e->dest_path, "%s.dest", e->control_path) < 0 || asprintf (&e->shell_path, "%s.shell", e->control_path) < 0
      || asprintf (&e->stall_path, "%s.stall", e->control_path) < 0)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return 0;
}

/* The settings, checked, and the client found: once per handle.  */
static int
ssh_configure (berth_env *env, ssh_env *e, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  const char *rt = berth_env_runtime_dir (env);
  char *reason = NULL;
  ssh_settings s;
  int r;
  if ((r = read_settings (cfg, e, reterr)) < 0)
    return r;
  e->ssh = berth_find_program ("ssh");
  if (e->ssh == NULL)
    return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "ssh is not installed or not in PATH: install the OpenSSH client (apt install openssh-client)");
  /* only exec_prefix needs the helper (execute uses start): checked there */
  e->helper = berth_helper_path ("berth-ssh-exec");
  if (strcmp (e->control_dir, rt) != 0 && (r = berth_private_dir (e->control_dir, reterr)) < 0)
    return r;
  s = settings_of (e);
  if (ssh_settings_check (&s, &reason) < 0)
    {
      r = berth_error_set (reterr, BERTH_E_CONFIG, "%s", reason ? reason : "invalid ssh settings");
      free (reason);
      return r;
    }
  e->allow_direct = berth_config_bool (cfg, "terminal.ssh_direct_bash", true);
  e->identity = ssh_identity_of (e);
  return 0;
}

static int
ssh_ensure (berth_env *env, berth_error **reterr)
{
  ssh_env *e = berth_env_get_data (env);
  int r;

  if (e->ssh) /* configured: a resume after stop */
    return ssh_ensure_master (env, e, 0, reterr);
  if ((r = ssh_configure (env, e, reterr)) < 0)
    return r;
  if (!ssh_identity_matches (e))
    {
      /* a master from other settings (or none): never reuse it */
      int state = ssh_mux_check (e->control_path, SSH_MUX_RECHECK_MS, NULL);
      if (state != SSH_MUX_ABSENT)
        {
          berth_logf (env, BERTH_LOG_INFO, "ssh: the ssh settings changed; replacing the connection master");
          ssh_stop_master (env, e->control_path, e->pid_path, state);
        }
    }
  /* A named environment connected before with these settings: its
     master is checked (and replaced) by the command that uses it, within
     that command's deadline.  Otherwise connect now: a host that cannot
     be reached is an error of the creation.  */
  bool known = e->persistent && ssh_identity_matches (e) && ssh_read_shell (e->shell_path, &e->direct_bash);
  if (!known && (r = ssh_ensure_master (env, e, 0, reterr)) < 0)
    return r;
  if (!e->allow_direct)
    e->direct_bash = false;
  else if (!ssh_read_shell (e->shell_path, &e->direct_bash))
    ssh_detect_shell (env, e, 0); /* a master started before this was recorded */
  return 0;
}

/* The exec prefix; TERMINAL: a remote terminal (ssh -tt), sized and
   resized as the local one on ssh's stdin.  */
static int
prefix_argv (berth_env *env, const char *user, bool interactive, bool terminal, char ***ret_argv, berth_error **reterr)
{
  ssh_env *e = berth_env_get_data (env);
  ssh_settings s;
  char **ssh = NULL, **argv = NULL;
  int r;

  if (e->helper == NULL || access (e->helper, X_OK) < 0)
    return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "ssh: the helper %s is missing: reinstall berth (or set BERTH_LIBEXECDIR)",
                            e->helper ? e->helper : "berth-ssh-exec");
  if ((r = ssh_ensure_master (env, e, 0, reterr)) < 0)
    return r;
  s = settings_of (e);
  if ((r = ssh_build_argv (&s, terminal ? SSH_ARGV_TERMINAL : SSH_ARGV_CLIENT, !interactive, NULL, &ssh)) < 0)
    return berth_error_errno (reterr, -r, "out of memory");
  argv = berth_strv_new (e->helper, NULL);
  for (size_t i = 0; argv && ssh[i]; i++)
    if (berth_strv_push (&argv, ssh[i]) < 0)
      argv = berth_strv_free (argv);
  if (argv && berth_strv_push (&argv, "--") < 0)
    argv = berth_strv_free (argv);
  /* another remote user: through sudo, which must not prompt */
  if (argv && user && *user && strcmp (user, e->user) != 0)
    {
      const char *sudo[] = { "sudo", "-n", "-H", "-u", user, "--", NULL };
      for (size_t i = 0; argv && sudo[i]; i++)
        if (berth_strv_push (&argv, sudo[i]) < 0)
          argv = berth_strv_free (argv);
    }
  ssh_argv_free (ssh);
  if (argv == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  *ret_argv = argv;
  return 0;
}

static int
ssh_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  *ret_flags = 0;
  return prefix_argv (env, user, interactive, false, ret_argv, reterr);
}

static int
ssh_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr)
{
  return prefix_argv (env, user, true, true, ret_argv, reterr);
}

/* execute's process: the spawned client, and the control socket that
   tells the remote's exit 255 from a connection lost mid-command.  */
typedef struct ssh_proc
{
  berth_proc inner;
  char *control_path;
  char *dest;
  char *stall_path;
  bool got_bytes, eof;
  berth_sink_fn sink;
  void *userdata;
} ssh_proc;

static void
ssh_proc_sink (void *userdata, int stream, const char *data, size_t len)
{
  ssh_proc *p = userdata;
  if (len > 0)
    p->got_bytes = true;
  p->sink (p->userdata, stream, data, len);
}

static int
ssh_proc_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  ssh_proc *p = proc;
  int r;
  p->sink = sink;
  p->userdata = userdata;
  r = p->inner.ops->pump (p->inner.proc, ssh_proc_sink, p);
  if (r == 0)
    p->eof = true;
  return r;
}

static ssize_t
ssh_proc_write_stdin (void *proc, const void *buf, size_t len)
{
  ssh_proc *p = proc;
  return p->inner.ops->write_stdin (p->inner.proc, buf, len);
}

static int
ssh_proc_close_stdin (void *proc)
{
  ssh_proc *p = proc;
  return p->inner.ops->close_stdin (p->inner.proc);
}

static int
ssh_proc_wait (void *proc, int *ret_status, berth_error **reterr)
{
  ssh_proc *p = proc;
  int r = p->inner.ops->wait (p->inner.proc, ret_status, reterr);
  if (r < 0 || *ret_status != 255)
    return r;
  /* ssh exits 255 for its own failures and for a remote command killed
     by a signal: the master, still there or gone, tells them apart.  */
  if (ssh_mux_check (p->control_path, SSH_MUX_CHECK_MS, NULL) == SSH_MUX_ALIVE)
    return 0;
  return berth_error_set (reterr, BERTH_E_BACKEND, "ssh: the connection to %s was lost while the command ran (its connection master is gone)", p->dest);
}

static void
ssh_proc_free (void *proc)
{
  ssh_proc *p = proc;
  if (p == NULL)
    return;
  /* Given up on before the host sent a single byte (every command sends
     its pid at once): the host may have stopped answering behind a master
     that still answers locally.  The next start asks it first.  */
  if (!p->eof && !p->got_bytes && p->stall_path)
    (void) berth_state_file_write (p->stall_path, "", 0);
  if (p->inner.ops && p->inner.ops->free)
    p->inner.ops->free (p->inner.proc);
  free (p->control_path);
  free (p->dest);
  free (p->stall_path);
  free (p);
}

static const berth_proc_ops ssh_proc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = ssh_proc_pump,
  .write_stdin = ssh_proc_write_stdin,
  .close_stdin = ssh_proc_close_stdin,
  .wait = ssh_proc_wait,
  .free = ssh_proc_free,
};

/* execute's transport: the ssh client spawned directly (one exec fewer
   than the exec_prefix helper on every command), the words quoted here.  */
static int
ssh_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  ssh_env *e = berth_env_get_data (env);
  const char *user = BERTH_HAS_FIELD (req, berth_start_req, user) ? req->user : NULL;
  const char *sudo[] = { "sudo", "-n", "-H", "-u", user, "--" };
  const char **words = NULL;
  ssh_settings s;
  char **argv = NULL, *joined = NULL;
  size_t n = 0, nargs = berth_strv_length (req->argv);
  int r;

  if (e == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "ssh: the environment was not created");
  if (nargs == 0)
    return berth_error_set (reterr, EINVAL, "ssh: nothing to run");
  if ((r = ssh_ensure_master (env, e, BERTH_HAS_FIELD (req, berth_start_req, deadline_usec) ? req->deadline_usec : 0, reterr)) < 0)
    return r;
  bool other_user = user && *user && strcmp (user, e->user) != 0;
  bool script = BERTH_HAS_FIELD (req, berth_start_req, flags) && (req->flags & BERTH_START_SHELL_SCRIPT) && nargs == 3;
  if (e->direct_bash && !other_user && script)
    {
      /* the runtime's `bash -c SCRIPT`, and the remote login shell is
         bash: it runs the script itself */
      joined = strdup (req->argv[2]);
      if (joined == NULL)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  else
    {
      words = calloc (nargs + 7, sizeof (char *));
      if (words == NULL)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
      if (other_user)
        for (size_t i = 0; i < 6; i++)
          words[n++] = sudo[i];
      for (size_t i = 0; i < nargs; i++)
        words[n++] = req->argv[i];
      r = ssh_join_words (words, n, &joined);
      free (words);
      if (r < 0)
        return berth_error_errno (reterr, -r, "ssh: cannot quote the command");
    }
  s = settings_of (e);
  r = ssh_build_argv (&s, SSH_ARGV_CLIENT, !req->has_stdin, NULL, &argv);
  if (r == 0 && (berth_strv_push (&argv, "--") < 0 || berth_strv_push (&argv, joined) < 0))
    r = -ENOMEM;
  free (joined);
  if (r < 0)
    {
      berth_strv_free (argv);
      return berth_error_errno (reterr, -r, "out of memory");
    }
  ssh_proc *p = calloc (1, sizeof *p);
  if (p == NULL || (p->control_path = strdup (e->control_path)) == NULL || (p->dest = ssh_destination (e)) == NULL
      || (p->stall_path = strdup (e->stall_path)) == NULL)
    {
      berth_strv_free (argv);
      ssh_proc_free (p);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  r = berth_proc_spawn ((const char *const *) argv, berth_env_host_environ (env), req->has_stdin, &p->inner, reterr);
  berth_strv_free (argv);
  if (r < 0)
    {
      ssh_proc_free (p);
      return r;
    }
  *ret = (berth_proc){ .size = sizeof *ret, .fd = p->inner.fd, .stdin_fd = p->inner.stdin_fd, .ops = &ssh_proc_ops, .proc = p };
  return 0;
}

/* Stop the connection master (and forget what it was started with).  */
static void
drop_master (berth_env *env, ssh_env *e)
{
  ssh_stop_master (env, e->control_path, e->pid_path, ssh_mux_check (e->control_path, 1000, NULL));
  unlink (e->lock_path);
  unlink (e->dest_path);
  unlink (e->shell_path);
}

/* Idle: drop the connection; the remote host keeps everything, and the
   next command connects again.  */
static int
ssh_stop (berth_env *env, berth_error **reterr)
{
  drop_master (env, berth_env_get_data (env));
  return 0;
}

/* For good: the same -- what runs on the host is the host's (ssh does
   not declare cleanup_stops_processes).  */
static int
ssh_remove (berth_env *env, berth_error **reterr)
{
  drop_master (env, berth_env_get_data (env));
  return 0;
}

static int
ssh_probe (const berth_config *cfg, char **ret_reason)
{
  const char *host = cfg_scalar (cfg, "terminal.ssh_host");
  const char *user = cfg_scalar (cfg, "terminal.ssh_user");
  char *ssh = berth_find_program ("ssh");
  if (ssh == NULL)
    {
      *ret_reason = strdup ("ssh is not installed or not in PATH (apt install openssh-client)");
      return BERTH_PROBE_UNAVAILABLE;
    }
  free (ssh);
  if (host == NULL || user == NULL)
    {
      *ret_reason = strdup ("set ssh_host and ssh_user (terminal.ssh_host, terminal.ssh_user)");
      return BERTH_PROBE_NEEDS_SETUP;
    }
  return BERTH_PROBE_READY;
}

static int
ssh_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  ssh_env e = { 0 };
  char *ssh = berth_find_program ("ssh"), *helper = berth_helper_path ("berth-ssh-exec");
  char *reason = NULL, *out = NULL;
  berth_error *err = NULL;
  ssh_settings s;
  char **argv = NULL;
  int status = -1;
  bool ok;

  fn (userdata, "ssh client", ssh != NULL, ssh ? ssh : "ssh not found on PATH", "apt install openssh-client");
  ok = helper && access (helper, X_OK) == 0;
  fn (userdata, "berth-ssh-exec helper", ok, helper ? helper : "unknown path", "reinstall berth, or set BERTH_LIBEXECDIR for an uninstalled build");
  free (helper);
  if (read_settings (cfg, &e, &err) < 0)
    {
      fn (userdata, "configuration", false, berth_error_message (err), "fix the terminal.ssh_* keys");
      goto out;
    }
  e.ssh = ssh;
  e.control_path = (char *) "/tmp/x"; /* not used by DIRECT */
  s = settings_of (&e);
  if (ssh_settings_check (&s, &reason) < 0)
    {
      fn (userdata, "configuration", false, reason, "berth config set terminal.ssh_host HOST; berth config set terminal.ssh_user USER");
      goto out;
    }
  fn (userdata, "configuration", true, e.host, NULL);
  if (e.key)
    fn (userdata, "key file", access (e.key, R_OK) == 0 || e.key[0] == '~', e.key, "check terminal.ssh_key");
  if (ssh == NULL)
    goto out;
  if (ssh_build_argv (&s, SSH_ARGV_DIRECT, true, NULL, &argv) == 0 && berth_strv_push (&argv, "--") == 0
      && berth_strv_push (&argv, "true") == 0
      && berth_run_capture ((const char *const *) argv, NULL, NULL, e.connect_timeout + 20.0, SSH_CAPTURE_MAX, &out, &status, NULL) == 0
      && status == 0)
    fn (userdata, "connection", true, e.host, NULL);
  else
    {
      char *why = ssh_last_line (out);
      fn (userdata, "connection", false, why, "check that `ssh -p PORT USER@HOST true` works without a prompt (BatchMode)");
      free (why);
    }
out:
  e.ssh = NULL;
  e.control_path = NULL;
  free (e.host);
  free (e.user);
  free (e.key);
  berth_strv_free (e.options);
  berth_strv_free (argv);
  berth_error_free (err);
  free (reason);
  free (out);
  free (ssh);
  return 0;
}

/* Stale control sockets in the fallback directory (masters of long
   runtime paths that died without cleanup): unlinked with their lock and
   pid files.  Live masters expire by themselves (ControlPersist).  */
static int
ssh_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  char dir[64];
  struct dirent *de;
  DIR *d;
  int removed = 0;

  snprintf (dir, sizeof dir, "/tmp/berth-ssh-%lu", (unsigned long) geteuid ());
  /* Only a private directory of ours is cleaned (never another user's).  */
  if (berth_private_dir (dir, NULL) < 0 || (d = opendir (dir)) == NULL)
    return 0;
  while ((de = readdir (d)) != NULL)
    {
      char path[128], extra[160];
      struct stat st;
      if (strncmp (de->d_name, "shell-", 6) == 0 && strlen (de->d_name) == 22)
        {
          snprintf (path, sizeof path, "%s/%s", dir, de->d_name);
          if (lstat (path, &st) == 0 && S_ISREG (st.st_mode) && time (NULL) - st.st_mtime >= 86400 && unlink (path) == 0)
            removed++;
          continue;
        }
      if (strlen (de->d_name) != 16 || strspn (de->d_name, "0123456789abcdef") != 16)
        continue;
      snprintf (path, sizeof path, "%s/%s", dir, de->d_name);
      if (lstat (path, &st) < 0 || !S_ISSOCK (st.st_mode) || st.st_uid != geteuid ())
        continue;
      if (ssh_mux_check (path, 500, NULL) != SSH_MUX_ABSENT)
        continue;
      if (unlink (path) == 0)
        removed++;
      snprintf (extra, sizeof extra, "%s.pid", path);
      unlink (extra);
      snprintf (extra, sizeof extra, "%s.lock", path);
      unlink (extra);
    }
  closedir (d);
  return removed;
}

static const char ssh_setup[] =
  "The ssh backend runs commands on a remote host with the system OpenSSH client.\n"
  "  1. apt install openssh-client (on this host)\n"
  "  2. berth config set terminal.ssh_host HOST\n"
  "  3. berth config set terminal.ssh_user USER\n"
  "  4. optional: terminal.ssh_port, terminal.ssh_key (a private key), terminal.ssh_options ([Key=Value, ...])\n"
  "  5. key-based login must work without a prompt: ssh -o BatchMode=yes USER@HOST true\n"
  "Your ~/.ssh/config (Host aliases, ProxyJump, agent) is honoured.\n";

static const berth_key_spec ssh_config_keys[] = {
  { "ssh_host", BERTH_KEY_STRING },
  { "ssh_user", BERTH_KEY_STRING },
  { "ssh_key", BERTH_KEY_STRING },
  { "ssh_port", BERTH_KEY_INT, 1, 65535 },
  { "ssh_options", BERTH_KEY_OPTIONS, .expect = "ssh options: [Key=Value, ...], {Key: Value, ...} or one Key=Value" },
  { "ssh_connect_timeout", BERTH_KEY_INT, 1, 3600 },
  { "ssh_control_persist", BERTH_KEY_INT, 1, 604800 },
  { "ssh_direct_bash", BERTH_KEY_BOOL },
  { NULL },
};

const berth_provider_ops berth_ssh_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "ssh",
  .display_name = "SSH",
  .description = "Run commands on a remote host over OpenSSH (one multiplexed connection per environment)",
  .env_description = "Commands run on a remote host over SSH; paths refer to the remote filesystem and ~ is the remote home.",
  .flags = BERTH_FLAG_IS_REMOTE | BERTH_FLAG_SUPPORTS_STREAMS,
  .default_cwd = "~",
  .cache_path_base = "~/.berth",
  .probe = ssh_probe,
  .doctor = ssh_doctor,
  .setup_instructions = ssh_setup,
  .config_keys = ssh_config_keys,
  .env_data_size = sizeof (ssh_env),
  .attach = ssh_attach,
  .ensure = ssh_ensure,
  .stop = ssh_stop,
  .remove = ssh_remove,
  .release = ssh_release,
  .exec_prefix = ssh_exec_prefix,
  .terminal_prefix = ssh_terminal_prefix,
  .start = ssh_start,
  .gc = ssh_gc,
  .agent_socket = ssh_agent_socket,
};

BERTH_PROVIDER_EXPORT (berth_ssh_provider)
