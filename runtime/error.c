/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <berth/provider.h>
#include "berth-private.h"

struct berth_error
{
  int code;
  char *message;
  char *output; /* what a failed command printed before it failed, or NULL */
  size_t output_len;
};

BERTH_EXPORT int
berth_error_code (const berth_error *e)
{
  return e ? e->code : 0;
}

BERTH_EXPORT const char *
berth_error_message (const berth_error *e)
{
  return e && e->message ? e->message : "unknown error";
}

BERTH_EXPORT berth_error *
berth_error_free (berth_error *e)
{
  if (e)
    {
      free (e->message);
      free (e->output);
      free (e);
    }
  return NULL;
}

BERTH_EXPORT const char *
berth_error_output (const berth_error *e, size_t *ret_len)
{
  if (ret_len)
    *ret_len = e && e->output ? e->output_len : 0;
  return e ? e->output : NULL;
}

void
berth_error_take_output (berth_error *e, char *output, size_t len)
{
  if (e == NULL)
    {
      free (output);
      return;
    }
  free (e->output);
  e->output = output;
  e->output_len = output ? len : 0;
}

__attribute__ ((format (printf, 4, 0))) static int
error_setv (berth_error **reterr, int code, int errnum, const char *fmt, va_list ap)
{
  if (code < 0)
    code = -code;
  if (reterr == NULL)
    return -code;
  berth_error *e = calloc (1, sizeof *e);
  char *msg = NULL;
  if (e == NULL)
    return -code;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  if (msg && errnum > 0)
    {
      char *full = berth_strdup_printf ("%s: %s", msg, strerror (errnum));
      free (msg);
      msg = full;
    }
  e->code = code;
  e->message = msg;
  /* Keep the first error: it is the cause.  */
  if (*reterr)
    berth_error_free (e);
  else
    *reterr = e;
  return -code;
}

BERTH_EXPORT int
berth_error_set (berth_error **reterr, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = error_setv (reterr, code, 0, fmt, ap);
  va_end (ap);
  return r;
}

BERTH_EXPORT int
berth_error_errno (berth_error **reterr, int errnum, const char *fmt, ...)
{
  va_list ap;
  if (errnum < 0)
    errnum = -errnum;
  va_start (ap, fmt);
  int r = error_setv (reterr, errnum, errnum < 4096 ? errnum : 0, fmt, ap);
  va_end (ap);
  return r;
}
