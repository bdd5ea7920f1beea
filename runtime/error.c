/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <berth/provider.h>
#include "berth-private.h"

/* The secondary errors error_setv does not keep go to the debug log.
   Weak so that the configuration unit test, which links error.c
   without log.c, still links (there they are simply not logged).  */
#pragma weak berth_debugf

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

/* Codes are positive inside the error object; callers may pass either
   sign (ENOENT or -ENOENT, BERTH_E_BACKEND or -BERTH_E_BACKEND) and get
   -code back.  0 is not a failure code: it becomes BERTH_E_FAILED.  */
static int
normalise_code (int code)
{
  if (code < 0)
    code = -code;
  return code > 0 ? code : BERTH_E_FAILED;
}

/* "MSG: strerror (CODE)" for an errno value (< 4096), else MSG.  */
__attribute__ ((format (printf, 2, 0))) static char *
format_message (int code, const char *fmt, va_list ap)
{
  char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    return NULL;
  if (code < 4096)
    {
      char *full = berth_strdup_printf ("%s: %s", msg, strerror (code));
      free (msg);
      msg = full;
    }
  return msg;
}

__attribute__ ((format (printf, 4, 0))) static int
error_setv (berth_error **reterr, int code, bool with_errno, const char *fmt, va_list ap)
{
  code = normalise_code (code);
  if (reterr == NULL)
    return -code;
  char *msg = NULL;
  if (with_errno)
    msg = format_message (code, fmt, ap);
  else if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  /* An error is set already: this one is a second, independent failure
     (a cleanup failing after the failure that caused it).  The first is
     the cause and stays; the second goes to BERTH_DEBUG=error, not to
     nowhere.  Context for the error that is set goes through
     berth_error_wrap, never through a second berth_error_set.  */
  if (*reterr)
    {
      if (berth_debugf)
        berth_debugf ("error", "also failed (kept the first error, \"%s\"): %s", berth_error_message (*reterr), msg ? msg : "(no message)");
      free (msg);
      return -code;
    }
  berth_error *e = xcalloc (1, sizeof *e);
  e->code = code;
  e->message = msg;
  *reterr = e;
  return -code;
}

BERTH_EXPORT int
berth_error_set (berth_error **reterr, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = error_setv (reterr, code, false, fmt, ap);
  va_end (ap);
  return r;
}

BERTH_EXPORT int
berth_error_errno (berth_error **reterr, int errnum, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int r = error_setv (reterr, errnum, true, fmt, ap);
  va_end (ap);
  return r;
}

BERTH_EXPORT int
berth_error_wrap (berth_error **reterr, int code, const char *fmt, ...)
{
  va_list ap;
  int r;
  va_start (ap, fmt);
  if (reterr == NULL || *reterr == NULL)
    {
      /* Nothing below said why: CODE is the cause, with its strerror.  */
      r = error_setv (reterr, code, true, fmt, ap);
      va_end (ap);
      return r;
    }
  berth_error *e = *reterr;
  char *context = NULL;
  if (vasprintf (&context, fmt, ap) < 0)
    context = NULL;
  va_end (ap);
  if (context)
    {
      char *full = berth_strdup_printf ("%s: %s", context, berth_error_message (e));
      if (full)
        {
          free (e->message);
          e->message = full;
        }
      free (context);
    }
  return -e->code;
}
