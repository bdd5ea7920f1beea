/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* log.c: the log callback and the BERTH_DEBUG mask.  The library never
   prints: without a callback, messages are dropped.  */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "berth-private.h"

BERTH_EXPORT void
berth_ctx_set_log (berth_ctx *ctx, berth_log_fn fn, void *userdata)
{
  ctx->log_fn = fn;
  ctx->log_userdata = userdata;
}

/* BERTH_DEBUG=all or a comma list of areas enables debug messages.  */
static bool
debug_enabled (const char *area)
{
  const char *mask = secure_getenv ("BERTH_DEBUG");
  size_t n = strlen (area);
  if (mask == NULL || *mask == '\0')
    return false;
  if (strcmp (mask, "all") == 0)
    return true;
  for (const char *p = mask; p && *p;)
    {
      if (strncmp (p, area, n) == 0 && (p[n] == ',' || p[n] == '\0'))
        return true;
      p = strchr (p, ',');
      if (p)
        p++;
    }
  return false;
}

static void
ctx_logv (berth_ctx *ctx, int level, const char *area, const char *fmt, va_list ap)
{
  char *msg = NULL;
  if (ctx == NULL || ctx->log_fn == NULL)
    return;
  if (level >= BERTH_LOG_DEBUG && !debug_enabled (area))
    return;
  if (vasprintf (&msg, fmt, ap) < 0)
    return;
  ctx->log_fn (ctx->log_userdata, level, area, msg);
  free (msg);
}

void
berth_ctx_log (berth_ctx *ctx, int level, const char *area, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  ctx_logv (ctx, level, area, fmt, ap);
  va_end (ap);
}
