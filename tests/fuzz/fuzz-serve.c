/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: berth serve's request parser (serve/request.c) and
   its JSON reader and writer (serve/json.c).  Any bytes: parsed as one
   request line; whatever parses is written back, and that text must
   parse again to the same text (the writer's output is always valid
   JSON); base64 and UTF-8 checks on the same bytes.
   Built with libFuzzer by tests/fuzz/run-fuzz-serve.sh; without
   -DBERTH_LIBFUZZER it is a replay driver (make check runs it): the files
   named on its command line, else built-in seeds and a deterministic
   stream of their mutations.  */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
#include "replay.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  serve_request rq;
  const char *text = (const char *) data;
  if (serve_request_parse (text, size, &rq) == 0)
    {
      if (rq.id == NULL || rq.method == NULL || rq.params == NULL || rq.params->type != JV_OBJECT)
        abort ();
    }
  else if (rq.code == NULL || rq.message == NULL)
    abort ();
  serve_request_clear (&rq);

  jv *v = NULL;
  const char *err;
  size_t pos;
  if (jv_parse (text, size, &v, &err, &pos) == 0)
    {
      sbuf a = { 0 }, b = { 0 };
      jv *again = NULL;
      sb_value (&a, v);
      if (jv_parse (a.s, a.len, &again, &err, &pos) < 0)
        abort (); /* what the writer writes must read back */
      sb_value (&b, again);
      if (a.len != b.len || memcmp (a.s, b.s, a.len) != 0)
        abort ();
      jv_free (again);
      sb_free (&a);
      sb_free (&b);
      jv_free (v);
    }
  else if (err == NULL || pos > size)
    abort ();

  /* any bytes as a JSON string: always valid UTF-8 JSON */
  sbuf s = { 0 };
  sb_string_len (&s, text, size);
  bool partial;
  if (utf8_valid_prefix ((const unsigned char *) s.s, s.len, &partial) != s.len)
    abort ();
  if (jv_parse (s.s, s.len, &v, &err, &pos) < 0)
    abort ();
  jv_free (v);
  sb_free (&s);

  unsigned char *bytes;
  size_t n;
  if (base64_decode (text, size, &bytes, &n) == 0)
    {
      sbuf e = { 0 };
      sb_base64 (&e, bytes, n);
      free (bytes);
      sb_free (&e);
    }
  return 0;
}

#ifndef BERTH_LIBFUZZER
static const char *const seeds[] = {
  "{\"id\":1,\"method\":\"version\"}",
  "{\"id\":\"x\",\"method\":\"execute\",\"params\":{\"env\":\"e1\",\"command\":\"echo hi\",\"timeout\":1.5e0,\"stdin_b64\":\"AP8K\"}}",
  "{\"id\":-0.5e-3,\"method\":\"open\",\"params\":{\"scope\":{\"tenant\":\"local\",\"agent\":null},\"x\":[true,false,null,[],{}]}}",
  "{\"id\":\"\\ud83d\\ude00\\u00e9\\n\\\"\\\\\\/\",\"method\":\"cancel\",\"params\":{\"id\":\"c1\"}}",
  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
  "{\"id\":1,\"method\":\"v\",\"params\":[]}",
  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
  "\"\xed\xa0\x80\xc0\xaf\xf4\x90\x80\x80\"",
  "QUJD",
  "{\"a\":1,\"a\":2}",
};



int
main (int argc, char **argv)
{
  static const char alphabet[] = "{}[]\":,\\u0123456789abcdefABCDEF-+.eE tnrfl\xc3\xa9\xff\x80\n\t";
  size_t runs = 0;
  if (argc > 1)
    {
      for (int i = 1; i < argc; i++)
        if (fuzz_replay_file (argv[i]))
          return 1;
      printf ("replayed %d inputs\n", argc - 1);
      return 0;
    }
  for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
    {
      size_t len = strlen (seeds[s]);
      LLVMFuzzerTestOneInput ((const uint8_t *) seeds[s], len);
      runs++;
      for (int m = 0; m < 4000; m++)
        {
          char buf[512];
          size_t n = len < sizeof buf ? len : sizeof buf;
          memcpy (buf, seeds[s], n);
          for (int k = 1 + (int) (next () % 4); k > 0 && n; k--)
            {
              size_t at = next () % n;
              switch (next () % 3)
                {
                case 0: buf[at] = alphabet[next () % (sizeof alphabet - 1)]; break;
                case 1: n = at; break;  /* cut */
                default: memmove (buf + at, buf + at + 1, n - at - 1), n--; break;
                }
            }
          LLVMFuzzerTestOneInput ((const uint8_t *) buf, n);
          runs++;
        }
    }
  printf ("%zu inputs: no crash, every parsed value read back\n", runs);
  return 0;
}
#endif
