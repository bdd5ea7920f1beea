/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serve.h: berth serve -- JSON lines over stdio or a UNIX socket
 * (berth-serve(7)).  One thread, one poll loop over libberth's
 * non-blocking execute.  */
#ifndef BERTH_SERVE_H
#define BERTH_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

/* The longest request line (bytes, newline excluded); longer lines get a
   "too_large" error and are skipped.  */
#define SERVE_MAX_LINE (8u << 20)

/* A parsed request line: what the fuzzer drives and the server acts on.
   On success ID is the request's id rendered as JSON (a string or a
   number), METHOD its method and PARAMS its params object (an empty one
   when absent; borrowed from DOC).  On failure CODE and MESSAGE say why
   (ID is "null" unless the id could be read).  */
typedef struct serve_request
{
  jv *doc;
  char *id;
  const char *method;
  const jv *params;
  const char *code;
  char *message;
} serve_request;

/* 0: a request; -1: a line to answer with CODE/MESSAGE.  Free with
   serve_request_clear either way.  */
int serve_request_parse (const char *line, size_t len, serve_request *req);
void serve_request_clear (serve_request *req);


#endif
