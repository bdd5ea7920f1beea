/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* request.c: one request line of berth serve, checked (berth-serve(7)):
 * {"id": string|number, "method": string, "params": object (optional)}.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static const jv empty_object = { .type = JV_OBJECT };

static int
bad (serve_request *req, const char *code, const char *message)
{
  req->code = code;
  req->message = strdup (message);
  if (req->message == NULL)
    abort ();
  return -1;
}

int
serve_request_parse (const char *line, size_t len, serve_request *req)
{
  const char *err = NULL;
  size_t pos = 0;
  memset (req, 0, sizeof *req);
  if (jv_parse (line, len, &req->doc, &err, &pos) < 0)
    {
      char msg[200];
      snprintf (msg, sizeof msg, "the line is not JSON: %s at byte %zu (one request per line: {\"id\":1,\"method\":\"version\"})", err, pos);
      return bad (req, "parse_error", msg);
    }
  if (req->doc->type != JV_OBJECT)
    return bad (req, "invalid_request", "a request is an object: {\"id\":1,\"method\":\"version\",\"params\":{}}");
  const jv *id = jv_get (req->doc, "id");
  if (id == NULL || (id->type != JV_STRING && id->type != JV_NUMBER))
    return bad (req, "invalid_request", "a request needs an \"id\", a string or a number");
  sbuf b = { 0 };
  sb_value (&b, id);
  req->id = b.s;
  const jv *m = jv_get (req->doc, "method");
  if (m == NULL || m->type != JV_STRING || strlen (m->str) != m->len || m->len == 0)
    return bad (req, "invalid_request", "a request needs a \"method\", a non-empty string");
  req->method = m->str;
  const jv *p = jv_get (req->doc, "params");
  if (p == NULL || p->type == JV_NULL)
    p = &empty_object;
  else if (p->type != JV_OBJECT)
    return bad (req, "invalid_request", "\"params\" must be an object");
  req->params = p;
  return 0;
}

void
serve_request_clear (serve_request *req)
{
  jv_free (req->doc);
  free (req->id);
  free (req->message);
  memset (req, 0, sizeof *req);
}
