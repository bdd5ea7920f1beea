/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-argv.h: the ssh backend's settings and the ssh command lines built
   from them.  Pure functions (no I/O; of libberth only the hash of
   <berth/provider-util.h>), unit-tested.  */
#ifndef SSH_ARGV_H
#define SSH_ARGV_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct ssh_settings
{
  const char *ssh;          /* the client binary ("ssh" or a path) */
  const char *host;         /* terminal.ssh_host (required) */
  const char *user;         /* terminal.ssh_user (required) */
  const char *key;          /* terminal.ssh_key or NULL */
  int port;                 /* terminal.ssh_port, 0 when unset */
  const char *const *options; /* terminal.ssh_options: "Key=Value", or NULL */
  int connect_timeout;      /* seconds */
  int control_persist;      /* seconds the idle master stays */
  const char *control_path; /* the master's socket */
} ssh_settings;

/* Validate S.  Returns 0, or -EINVAL with a malloc'd one-line reason in
   *RET_REASON naming the configuration key.  */
int ssh_settings_check (const ssh_settings *s, char **ret_reason);

enum
{
  SSH_ARGV_CLIENT = 0,  /* a session over the master (no fallback master) */
  SSH_ARGV_MASTER = 1,  /* start the master: -M -N -f, ControlPersist */
  SSH_ARGV_CONTROL = 2, /* ssh -O CONTROL_CMD */
  SSH_ARGV_DIRECT = 3,  /* a plain connection that ignores any master */
  SSH_ARGV_TERMINAL = 4, /* CLIENT on a remote terminal (-tt for -T) */
};

/* Build the ssh argv (NULL-terminated, malloc'd strings) for MODE.  For
   CLIENT, NO_STDIN adds -n.  CONTROL_CMD is the -O command for CONTROL.
   The destination is the last word: callers append `--` and a command.
   Returns 0 or -ENOMEM.  Free with ssh_argv_free.  */
int ssh_build_argv (const ssh_settings *s, int mode, bool no_stdin, const char *control_cmd, char ***ret);
void ssh_argv_free (char **argv);

/* Where the control socket goes: RUNTIME_DIR/cm when that path is short
   (sun_path is 104 bytes on some systems and ssh binds PATH.<16 chars>
   first) and holds only plain characters; else
   /tmp/berth-ssh-UID/<16 hex digits of a hash of RUNTIME_DIR>.  *RET_DIR
   is the directory holding it (the caller creates the fallback one).  */
#define SSH_CONTROL_PATH_MAX 86
int ssh_control_path (const char *runtime_dir, uid_t uid, char **ret_path, char **ret_dir);

#endif
