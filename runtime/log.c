/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c: the log callback, the BERTH_DEBUG mask and secret elision.  The
   library never prints: without a callback, messages are dropped.  */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "berth-private.h"

extern char **environ;

#define ELIDED "<elided>"

BERTH_EXPORT void
berth_ctx_set_log (berth_ctx *ctx, berth_log_fn fn, void *userdata)
{
  ctx->log_fn = fn;
  ctx->log_userdata = userdata;
}

/* BERTH_DEBUG=all or a comma list of areas (config, loader, session, a
   backend's or plugin's name) enables debug messages.  An unknown area
   enables nothing: a plugin's name is one only once it is loaded.  */
bool
berth_debug_enabled (const char *area)
{
  const char *mask = secure_getenv ("BERTH_DEBUG");
  size_t n = area ? strlen (area) : 0;
  if (mask == NULL || *mask == '\0' || n == 0)
    return false;
  for (const char *p = mask; p && *p;)
    {
      while (*p == ' ' || *p == ',')
        p++;
      size_t len = strcspn (p, ", ");
      if ((len == 3 && strncmp (p, "all", 3) == 0) || (len == n && strncmp (p, area, n) == 0))
        return true;
      p += len;
    }
  return false;
}

/* The ctx and area of the operation running on this thread, for the
   spawn helpers that have neither (berth_child_spawn).  */
static __thread berth_log_scope current;

berth_log_scope
berth_log_scope_enter (berth_ctx *ctx, const char *area)
{
  berth_log_scope saved = current;
  current = (berth_log_scope){ ctx, area };
  return saved;
}

void
berth_log_scope_leave (berth_log_scope *saved)
{
  current = *saved;
}

static bool
name_is_secret (const char *name, size_t len, const char *const *allow)
{
  char buf[256];
  if (len == 0 || len >= sizeof buf)
    return false;
  memcpy (buf, name, len);
  buf[len] = '\0';
  return berth_env_name_is_credential (buf) || berth_strv_contains (allow, buf);
}

/* Values that must never reach a log: those of credential-looking host
   variables and of the allow-listed terminal.env_passthrough ones, and the
   literal terminal.docker_env values.  */
static char **
secret_values (berth_ctx *ctx, const char *const *allow)
{
  char **v = NULL;
  _cleanup_strv_free_ char **denv = berth_config_strv (ctx->config, "terminal.docker_env");
  for (char **e = environ; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      if (eq && name_is_secret (*e, (size_t) (eq - *e), allow) && strlen (eq + 1) >= 3)
        berth_strv_push (&v, eq + 1);
    }
  for (size_t i = 0; denv && denv[i]; i++)
    {
      const char *eq = strchr (denv[i], '=');
      if (eq && strlen (eq + 1) >= 3)
        berth_strv_push (&v, eq + 1);
    }
  return v;
}

static bool
is_name_char (char c)
{
  return isalnum ((unsigned char) c) || c == '_';
}

/* MSG with every secret value, and the value of every NAME=VALUE whose
   NAME looks like a credential, replaced by <elided>.  */
static char *
elide (berth_ctx *ctx, const char *msg)
{
  _cleanup_strv_free_ char **allow = berth_config_strv (ctx->config, "terminal.env_passthrough");
  _cleanup_strv_free_ char **values = secret_values (ctx, (const char *const *) allow);
  berth_buf b = { 0 };
  const char *p = msg;
  while (*p)
    {
      size_t skip = 0;
      for (size_t i = 0; values && values[i]; i++)
        if (strncmp (p, values[i], strlen (values[i])) == 0)
          {
            skip = strlen (values[i]);
            break;
          }
      if (skip == 0 && *p == '=' && p > msg)
        {
          const char *s = p;
          while (s > msg && is_name_char (s[-1]))
            s--;
          if (name_is_secret (s, (size_t) (p - s), (const char *const *) allow))
            {
              berth_buf_puts (&b, "=");
              p++;
              skip = strcspn (p, " \t\n'\";&|");
            }
        }
      if (skip)
        {
          berth_buf_puts (&b, ELIDED);
          p += skip;
        }
      else
        berth_buf_append (&b, p++, 1);
    }
  berth_buf_append (&b, "", 1);
  return berth_buf_steal (&b);
}

static void
ctx_logv (berth_ctx *ctx, int level, const char *area, const char *fmt, va_list ap)
{
  _cleanup_free_ char *msg = NULL, *safe = NULL;
  if (ctx == NULL || ctx->log_fn == NULL)
    return;
  if (level >= BERTH_LOG_DEBUG && !berth_debug_enabled (area))
    return;
  if (vasprintf (&msg, fmt, ap) < 0)
    return;
  safe = elide (ctx, msg);
  ctx->log_fn (ctx->log_userdata, level, area, safe ? safe : msg);
}

void
berth_ctx_log (berth_ctx *ctx, int level, const char *area, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  ctx_logv (ctx, level, area, fmt, ap);
  va_end (ap);
}

BERTH_EXPORT void
berth_debugf (const char *area, const char *fmt, ...)
{
  va_list ap;
  if (current.ctx == NULL || !berth_debug_enabled (area))
    return;
  va_start (ap, fmt);
  ctx_logv (current.ctx, BERTH_LOG_DEBUG, area, fmt, ap);
  va_end (ap);
}

/* An option whose value is a secret: --password X, --token=X ...  */
static bool
option_is_secret (const char *w)
{
  return w[0] == '-' && (strcasestr (w, "password") || strcasestr (w, "passwd") || strcasestr (w, "token") || strcasestr (w, "secret"));
}

/* One debug line per spawned process, in the area of the operation that
   spawned it: its pid and argv, shell-quoted, secret values elided.  */
void
berth_log_spawn (const char *const *argv, long pid, int error)
{
  berth_ctx *ctx = current.ctx;
  const char *area = current.area ? current.area : "session";
  berth_buf b = { 0 };
  bool secret_next = false;
  if (ctx == NULL || ctx->log_fn == NULL || !berth_debug_enabled (area))
    return;
  for (size_t i = 0; argv && argv[i]; i++)
    {
      const char *w = argv[i];
      _cleanup_free_ char *q = NULL;
      const char *eq = strchr (w, '=');
      berth_buf_puts (&b, " ");
      if (secret_next)
        q = strdup (ELIDED);
      else if (option_is_secret (w) && eq)
        q = berth_strdup_printf ("%.*s=" ELIDED, (int) (eq - w), w);
      secret_next = option_is_secret (w) && !eq;
      /* --setenv NAME VALUE, --env NAME=VALUE: the name decides */
      if (i > 0 && (strcmp (argv[i - 1], "--setenv") == 0) && argv[i + 1])
        {
          _cleanup_strv_free_ char **allow = berth_config_strv (ctx->config, "terminal.env_passthrough");
          secret_next = name_is_secret (w, strlen (w), (const char *const *) allow);
        }
      if (q == NULL)
        q = berth_shell_quote (w);
      berth_buf_puts (&b, q ? q : "?");
    }
  berth_buf_append (&b, "", 1);
  if (error)
    berth_ctx_log (ctx, BERTH_LOG_DEBUG, area, "spawn failed (%s):%s", strerror (error), b.data ? b.data : "");
  else
    berth_ctx_log (ctx, BERTH_LOG_DEBUG, area, "spawn pid %ld:%s", pid, b.data ? b.data : "");
  berth_buf_free (&b);
}

BERTH_EXPORT void
berth_logf (berth_env *env, int level, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (msg)
    berth_ctx_log (env->ctx, level, env->provider->ops->name, "%s", msg);
  free (msg);
}
