/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-argv.c: settings validation and ssh command lines (see ssh-argv.h).
 *
 * Option order matters: ssh keeps the first value it sees for an option,
 * and command-line -o options come before ~/.ssh/config.  So berth's
 * mandatory options come first, then the user's terminal.ssh_options, then
 * berth's defaults that a user may override; Host/ProxyJump/Include and
 * everything else the user's config says keep working.  */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <berth/provider-util.h>
#include "ssh-argv.h"

static bool
has_bad_char (const char *s)
{
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if (*p <= ' ' || *p == 0x7f)
      return true;
  return false;
}

static int reason (char **ret, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
reason (char **ret, const char *fmt, ...)
{
  va_list ap;
  if (ret)
    {
      va_start (ap, fmt);
      if (vasprintf (ret, fmt, ap) < 0)
        *ret = NULL;
      va_end (ap);
    }
  return -EINVAL;
}

int
ssh_settings_check (const ssh_settings *s, char **ret_reason)
{
  bool no_host = s->host == NULL || *s->host == '\0';
  bool no_user = s->user == NULL || *s->user == '\0';

  if (no_host || no_user)
    return reason (ret_reason, "%sthe ssh backend needs ssh_host and ssh_user: "
                               "berth config set terminal.ssh_host HOST; berth config set terminal.ssh_user USER",
                   no_host && no_user ? "" : no_host ? "terminal.ssh_host is not set: " : "terminal.ssh_user is not set: ");
  if (*s->host == '-' || has_bad_char (s->host) || strchr (s->host, '@'))
    return reason (ret_reason, "terminal.ssh_host '%s' is not a host name (no leading '-', no spaces, the user goes in terminal.ssh_user)", s->host);
  if (*s->user == '-' || has_bad_char (s->user) || strchr (s->user, '@'))
    return reason (ret_reason, "terminal.ssh_user '%s' is not a user name", s->user);
  if (s->port < 0 || s->port > 65535)
    return reason (ret_reason, "terminal.ssh_port must be between 1 and 65535");
  if (s->key && (*s->key == '\0' || strchr (s->key, '\n')))
    return reason (ret_reason, "terminal.ssh_key must be a path to a private key");
  for (size_t i = 0; s->options && s->options[i]; i++)
    {
      const char *o = s->options[i];
      const char *eq = strchr (o, '=');
      if (*o == '-' || eq == NULL || eq == o || strchr (o, '\n'))
        return reason (ret_reason, "terminal.ssh_options: '%s' is not an ssh option of the form Key=Value", o);
    }
  if (s->control_path == NULL || strlen (s->control_path) > SSH_CONTROL_PATH_MAX)
    return reason (ret_reason, "the ssh control socket path is too long");
  return 0;
}

typedef struct
{
  char **v;
  size_t n;
  int err;
} argv_t;

static void
push (argv_t *a, const char *s)
{
  char **v;
  char *c;
  if (a->err)
    return;
  c = strdup (s);
  v = realloc (a->v, (a->n + 2) * sizeof (char *));
  if (c == NULL || v == NULL)
    {
      free (c);
      if (v)
        a->v = v;
      a->err = -ENOMEM;
      return;
    }
  v[a->n++] = c;
  v[a->n] = NULL;
  a->v = v;
}

static void
pushf (argv_t *a, const char *prefix, const char *value)
{
  size_t n = strlen (prefix) + strlen (value) + 1;
  char *s = malloc (n);
  if (s == NULL)
    {
      a->err = -ENOMEM;
      return;
    }
  snprintf (s, n, "%s%s", prefix, value);
  push (a, s);
  free (s);
}

static void
pushi (argv_t *a, const char *prefix, long value)
{
  char num[32];
  snprintf (num, sizeof num, "%ld", value);
  pushf (a, prefix, num);
}

/* ssh expands %-tokens in ControlPath: write a literal path.  */
static void
push_control_path (argv_t *a, const char *path)
{
  size_t n = strlen (path);
  char *e = malloc (2 * n + 1), *p = e;
  if (e == NULL)
    {
      a->err = -ENOMEM;
      return;
    }
  for (const char *q = path; *q; q++)
    {
      if (*q == '%')
        *p++ = '%';
      *p++ = *q;
    }
  *p = '\0';
  pushf (a, "-oControlPath=", e);
  free (e);
}

void
ssh_argv_free (char **argv)
{
  for (size_t i = 0; argv && argv[i]; i++)
    free (argv[i]);
  free (argv);
}

int
ssh_build_argv (const ssh_settings *s, int mode, bool no_stdin, const char *control_cmd, char ***ret)
{
  argv_t a = { 0 };

  push (&a, s->ssh ? s->ssh : "ssh");
  switch (mode)
    {
    case SSH_ARGV_CLIENT:
    case SSH_ARGV_TERMINAL:
      push (&a, mode == SSH_ARGV_TERMINAL ? "-tt" : "-T");
      if (no_stdin)
        push (&a, "-n");
      push_control_path (&a, s->control_path);
      push (&a, "-oControlMaster=no");
      break;
    case SSH_ARGV_MASTER:
      push (&a, "-M");
      push (&a, "-N");
      push (&a, "-f");
      push_control_path (&a, s->control_path);
      pushi (&a, "-oControlPersist=", s->control_persist > 0 ? s->control_persist : 1);
      break;
    case SSH_ARGV_CONTROL:
      push (&a, "-O");
      push (&a, control_cmd ? control_cmd : "check");
      push_control_path (&a, s->control_path);
      break;
    default:
      push (&a, "-T");
      if (no_stdin)
        push (&a, "-n");
      push (&a, "-oControlPath=none");
      push (&a, "-oControlMaster=no");
      break;
    }
  push (&a, "-oBatchMode=yes");
  for (size_t i = 0; s->options && s->options[i]; i++)
    pushf (&a, "-o", s->options[i]);
  push (&a, "-oStrictHostKeyChecking=accept-new");
  pushi (&a, "-oConnectTimeout=", s->connect_timeout > 0 ? s->connect_timeout : 10);
  push (&a, "-oServerAliveInterval=15");
  push (&a, "-oServerAliveCountMax=3");
  push (&a, "-oLogLevel=ERROR");
  if (s->key)
    {
      push (&a, "-oIdentitiesOnly=yes");
      push (&a, "-i");
      push (&a, s->key);
    }
  if (s->port > 0)
    {
      push (&a, "-p");
      pushi (&a, "", s->port);
    }
  push (&a, "-l");
  push (&a, s->user);
  push (&a, s->host);
  if (a.err)
    {
      ssh_argv_free (a.v);
      return a.err;
    }
  *ret = a.v;
  return 0;
}

static bool
path_is_plain (const char *p)
{
  for (; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
          || *p == '/' || *p == '.' || *p == '_' || *p == '-' || *p == '+'))
      return false;
  return true;
}

int
ssh_control_path (const char *runtime_dir, uid_t uid, char **ret_path, char **ret_dir)
{
  char *path = NULL, *dir = NULL;
  size_t n = strlen (runtime_dir);

  if (n > 0 && runtime_dir[0] == '/' && n + 3 <= SSH_CONTROL_PATH_MAX && path_is_plain (runtime_dir))
    {
      path = malloc (n + 4);
      dir = strdup (runtime_dir);
      if (path)
        snprintf (path, n + 4, "%s/cm", runtime_dir);
    }
  else
    {
      /* FNV-1a, 64 bits: stable, so a named environment finds its master */
      uint64_t h = berth_fnv1a64 (runtime_dir, strlen (runtime_dir));
      dir = malloc (64);
      path = malloc (96);
      if (dir && path)
        {
          snprintf (dir, 64, "/tmp/berth-ssh-%lu", (unsigned long) uid);
          snprintf (path, 96, "%s/%016llx", dir, (unsigned long long) h);
        }
    }
  if (path == NULL || dir == NULL)
    {
      free (path);
      free (dir);
      return -ENOMEM;
    }
  *ret_path = path;
  *ret_dir = dir;
  return 0;
}
