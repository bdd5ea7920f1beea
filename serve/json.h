/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.h: berth serve's JSON reader and writer (berth-serve(7)).  The
 * reader is bounded -- by the text it is given, by SERVE_JSON_MAX_DEPTH
 * and by SERVE_JSON_MAX_NODES -- accepts only RFC 8259 JSON in UTF-8, and
 * rejects, never crashes (tests/fuzz/fuzz-serve.c).  */
#ifndef BERTH_SERVE_JSON_H
#define BERTH_SERVE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define SERVE_JSON_MAX_DEPTH 32
#define SERVE_JSON_MAX_NODES 65536

typedef enum jv_type
{
  JV_NULL,
  JV_BOOL,
  JV_NUMBER,
  JV_STRING,
  JV_ARRAY,
  JV_OBJECT,
} jv_type;

typedef struct jv jv;
struct jv
{
  jv_type type;
  bool b;
  double num;
  char *str;       /* JV_STRING: decoded, NUL-terminated (may hold NULs: len) */
  size_t len;      /* JV_STRING: bytes; JV_ARRAY, JV_OBJECT: items */
  jv *items;       /* JV_ARRAY, JV_OBJECT */
  char **keys;     /* JV_OBJECT: the key of items[i] */
  char *raw;       /* JV_NUMBER: its text as written */
};

/* Parse TEXT (LEN bytes, one JSON value and nothing but whitespace after
   it).  On success *RET is set (free with jv_free) and 0 returned; on
   failure -1 and *ERRMSG (static text) says what and *ERRPOS where.  */
int jv_parse (const char *text, size_t len, jv **ret, const char **errmsg, size_t *errpos);
jv *jv_free (jv *v);
/* Member KEY of object O, or NULL (also when O is not an object).  */
const jv *jv_get (const jv *o, const char *key);

/* A growable output buffer.  Aborts when memory runs out.  */
typedef struct sbuf
{
  char *s;
  size_t len, cap;
} sbuf;
void sb_add (sbuf *b, const char *s, size_t n);
void sb_puts (sbuf *b, const char *s);
void sb_printf (sbuf *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
/* S as a JSON string ("null" for NULL).  Bytes that are not UTF-8 become
   U+FFFD: the line stays valid JSON.  */
void sb_string_len (sbuf *b, const char *s, size_t len);
void sb_string (sbuf *b, const char *s);
/* V rendered back as JSON (for echoing request ids).  */
void sb_value (sbuf *b, const jv *v);
void sb_base64 (sbuf *b, const void *data, size_t len);
void sb_free (sbuf *b);

/* How many leading bytes of S form complete, valid UTF-8 (at most LEN).
   *RET_PARTIAL: the rest is only the beginning of one valid sequence.  */
size_t utf8_valid_prefix (const unsigned char *s, size_t len, bool *ret_partial);
/* Decode base64 (RFC 4648, padding optional, no whitespace); -1 on a bad
   character.  *RET (caller frees) gets the bytes.  */
int base64_decode (const char *s, size_t len, unsigned char **ret, size_t *ret_len);

#endif
