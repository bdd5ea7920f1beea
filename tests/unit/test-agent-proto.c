/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the berth-agent frame codec (agent/proto.c): every
   encoder parsed back, every split point of a stream, malformed and
   over-bound input rejected.  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/proto.h"

static berth_agent_frame
parse_one (const berth_agent_buf *b, size_t *off)
{
  berth_agent_frame f;
  int n = berth_agent_frame_parse (b->data + *off, b->len - *off, &f);
  assert_true (n > 0);
  *off += (size_t) n;
  return f;
}

static void
test_roundtrip (void **state)
{
  berth_agent_buf b = { 0 };
  char *argv[] = { "bash", "-c", "echo hi", NULL }, *env[] = { "A=1", "B=", NULL };
  berth_agent_run run = { .flags = BERTH_AGENT_RUN_STDIN | BERTH_AGENT_RUN_DETACHED, .cwd = "/tmp", .argv = argv, .env = env };
  assert_int_equal (berth_agent_put_hello (&b, "0.1.0/1"), 0);
  assert_int_equal (berth_agent_put_run (&b, 5, &run), 0);
  assert_int_equal (berth_agent_put_frame (&b, BERTH_AGENT_STDIN, 5, "abc", 3), 0);
  assert_int_equal (berth_agent_put_u32 (&b, BERTH_AGENT_WINDOW_FRAME, 5, 4096), 0);
  assert_int_equal (berth_agent_put_exit (&b, 5, BERTH_AGENT_CAUSE_SIGNALED, 9, "killed"), 0);
  assert_int_equal (berth_agent_put_kill (&b, 0, 0, 1234, "tok"), 0);
  assert_int_equal (berth_agent_put_u64 (&b, BERTH_AGENT_PING, 0, 0x0102030405060708ull), 0);
  assert_int_equal (berth_agent_put_eof (&b, 5, BERTH_AGENT_STREAM_ERR), 0);

  size_t off = 0;
  berth_agent_frame f = parse_one (&b, &off);
  berth_agent_rd r = berth_agent_rd_init (&f);
  size_t n;
  assert_int_equal (f.type, BERTH_AGENT_HELLO);
  assert_int_equal (berth_agent_get_u32 (&r), BERTH_AGENT_PROTO);
  const char *v = berth_agent_get_str (&r, 64, &n);
  assert_non_null (v);
  assert_int_equal (n, 7);
  assert_memory_equal (v, "0.1.0/1", 7);
  assert_false (r.bad);

  f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_RUN);
  assert_int_equal (f.chan, 5);
  berth_agent_run got;
  assert_int_equal (berth_agent_run_decode (f.data, f.len, &got), 0);
  assert_int_equal (got.flags, run.flags);
  assert_string_equal (got.cwd, "/tmp");
  assert_string_equal (got.argv[2], "echo hi");
  assert_null (got.argv[3]);
  assert_string_equal (got.env[1], "B=");
  assert_null (got.env[2]);
  berth_agent_run_free (&got);

  f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_STDIN);
  assert_int_equal (f.len, 3);
  assert_memory_equal (f.data, "abc", 3);

  f = parse_one (&b, &off);
  r = berth_agent_rd_init (&f);
  assert_int_equal (berth_agent_get_u32 (&r), 4096);

  f = parse_one (&b, &off);
  berth_agent_exit e;
  assert_int_equal (berth_agent_exit_decode (&f, &e), 0);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_SIGNALED);
  assert_int_equal (e.value, 9);
  assert_string_equal (e.message, "killed");
  free (e.message);

  f = parse_one (&b, &off);
  r = berth_agent_rd_init (&f);
  assert_int_equal (berth_agent_get_u32 (&r), 0);
  assert_int_equal (berth_agent_get_u32 (&r), 1234);
  char *tok = berth_agent_get_strdup (&r, 64);
  assert_string_equal (tok, "tok");
  free (tok);

  f = parse_one (&b, &off);
  r = berth_agent_rd_init (&f);
  assert_true (berth_agent_get_u64 (&r) == 0x0102030405060708ull);

  f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_EOF);
  assert_int_equal (f.data[0], BERTH_AGENT_STREAM_ERR);
  assert_int_equal (off, b.len);
  berth_agent_buf_free (&b);
}

static void
test_inherit_env (void **state)
{
  berth_agent_buf b = { 0 };
  char *argv[] = { "true", NULL };
  berth_agent_run run = { .argv = argv };
  assert_int_equal (berth_agent_put_run (&b, 1, &run), 0);
  size_t off = 0;
  berth_agent_frame f = parse_one (&b, &off);
  berth_agent_run got;
  assert_int_equal (berth_agent_run_decode (f.data, f.len, &got), 0);
  assert_null (got.env);
  assert_null (got.cwd);
  berth_agent_run_free (&got);
  berth_agent_buf_free (&b);
}

/* Every prefix of a stream is "need more" until the frame is whole.  */
static void
test_every_split (void **state)
{
  berth_agent_buf b = { 0 };
  char payload[300];
  memset (payload, 'x', sizeof payload);
  assert_int_equal (berth_agent_put_frame (&b, BERTH_AGENT_OUT, 3, payload, sizeof payload), 0);
  for (size_t cut = 0; cut < b.len; cut++)
    {
      berth_agent_frame f;
      assert_int_equal (berth_agent_frame_parse (b.data, cut, &f), 0);
    }
  berth_agent_frame f;
  assert_int_equal (berth_agent_frame_parse (b.data, b.len, &f), (int) b.len);
  assert_int_equal (f.len, sizeof payload);
  berth_agent_buf_free (&b);
}

static void
test_malformed_header (void **state)
{
  berth_agent_frame f;
  uint8_t h[BERTH_AGENT_HDR] = { 0, 0, 0, 0, BERTH_AGENT_PING, 0, 0, 0, 0, 0, 0, 0 };
  assert_int_equal (berth_agent_frame_parse (h, sizeof h, &f), (int) sizeof h);
  h[5] = 1; /* reserved byte */
  assert_int_equal (berth_agent_frame_parse (h, sizeof h, &f), -EBADMSG);
  h[5] = 0;
  h[4] = 0; /* type 0 */
  assert_int_equal (berth_agent_frame_parse (h, sizeof h, &f), -EBADMSG);
  h[4] = BERTH_AGENT_OUT;
  h[1] = 0x10; /* 1 MiB + 1: over the bound, before any payload came */
  h[3] = 1;
  assert_int_equal (berth_agent_frame_parse (h, sizeof h, &f), -EMSGSIZE);
  h[0] = 0xff;
  assert_int_equal (berth_agent_frame_parse (h, sizeof h, &f), -EMSGSIZE);
}

/* RUN payloads built by hand, each broken one way.  */
static size_t
put32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24), p[1] = (uint8_t) (v >> 16), p[2] = (uint8_t) (v >> 8), p[3] = (uint8_t) v;
  return 4;
}

static size_t
putstr (uint8_t *p, const char *s, size_t n)
{
  size_t o = put32 (p, (uint32_t) n);
  memcpy (p + o, s, n);
  return o + n;
}

static int
decode (const uint8_t *p, size_t n)
{
  berth_agent_run run;
  int r = berth_agent_run_decode (p, n, &run);
  if (r == 0)
    berth_agent_run_free (&run);
  return r;
}

static void
test_run_rejects (void **state)
{
  uint8_t p[256];
  size_t n;
  /* a good one first */
  n = put32 (p, 0) + put32 (p + 4, 1) + put32 (p + 8, 1);
  n += putstr (p + n, "", 0);
  n += putstr (p + n, "true", 4);
  n += putstr (p + n, "A=1", 3);
  assert_int_equal (decode (p, n), 0);
  /* trailing bytes */
  p[n] = 0;
  assert_int_equal (decode (p, n + 1), -EBADMSG);
  /* truncated anywhere */
  for (size_t cut = 0; cut < n; cut++)
    assert_int_equal (decode (p, cut), -EBADMSG);
  /* an environment entry without '=' */
  memcpy (p + n - 3, "A_1", 3);
  assert_int_equal (decode (p, n), -EBADMSG);
  memcpy (p + n - 3, "=11", 3);
  assert_int_equal (decode (p, n), -EBADMSG);
  memcpy (p + n - 3, "A=1", 3);
  /* a NUL inside a string */
  p[n - 10] = '\0';
  assert_int_equal (decode (p, n), -EBADMSG);
  p[n - 10] = 'r';
  assert_int_equal (decode (p, n), 0);
  /* unknown flags */
  put32 (p, 1u << 20);
  assert_int_equal (decode (p, n), -EBADMSG);
  put32 (p, 0);
  /* no argv */
  put32 (p + 4, 0);
  assert_int_equal (decode (p, n), -EBADMSG);
  /* counts the payload cannot hold (no allocation for them) */
  put32 (p + 4, BERTH_AGENT_MAX_ARGS);
  assert_int_equal (decode (p, n), -EBADMSG);
  put32 (p + 4, BERTH_AGENT_MAX_ARGS + 1);
  assert_int_equal (decode (p, n), -EBADMSG);
  put32 (p + 4, 1);
  put32 (p + 8, 0x7fffffff);
  assert_int_equal (decode (p, n), -EBADMSG);
  /* a string length past the end */
  put32 (p + 8, 1);
  put32 (p + 16, 0xffffffff);
  assert_int_equal (decode (p, n), -EBADMSG);
}

static void
test_exit_rejects (void **state)
{
  berth_agent_buf b = { 0 };
  berth_agent_exit e;
  assert_int_equal (berth_agent_put_exit (&b, 1, 0, 0, ""), 0); /* cause 0 */
  size_t off = 0;
  berth_agent_frame f = parse_one (&b, &off);
  assert_int_equal (berth_agent_exit_decode (&f, &e), -EBADMSG);
  f.len = 3; /* short */
  assert_int_equal (berth_agent_exit_decode (&f, &e), -EBADMSG);
  berth_agent_buf_free (&b);
}

static void
test_encoder_bounds (void **state)
{
  berth_agent_buf b = { 0 };
  char *big = malloc (BERTH_AGENT_MAX_PAYLOAD + 1);
  assert_non_null (big);
  memset (big, 'a', BERTH_AGENT_MAX_PAYLOAD);
  big[BERTH_AGENT_MAX_PAYLOAD] = '\0';
  assert_int_equal (berth_agent_put_frame (&b, BERTH_AGENT_OUT, 1, big, BERTH_AGENT_MAX_PAYLOAD + 1), -EMSGSIZE);
  assert_int_equal (berth_agent_put_frame (&b, BERTH_AGENT_OUT, 1, big, BERTH_AGENT_MAX_PAYLOAD), 0);
  char *argv[] = { big, NULL };
  berth_agent_run run = { .argv = argv };
  assert_int_equal (berth_agent_put_run (&b, 1, &run), -E2BIG);
  char *none[] = { NULL };
  run.argv = none;
  assert_int_equal (berth_agent_put_run (&b, 1, &run), -E2BIG);
  free (big);
  berth_agent_buf_free (&b);
}

/* A frame filled in place parses like one put whole.  */
static void
test_frame_in_place (void **state)
{
  berth_agent_buf b = { 0 };
  uint8_t *p = NULL;
  size_t off = 0;
  assert_int_equal (berth_agent_put_eof (&b, 1, BERTH_AGENT_STREAM_OUT), 0);
  assert_int_equal (berth_agent_frame_begin (&b, BERTH_AGENT_CHUNK, &p), 0);
  memcpy (p, "hello", 5);
  berth_agent_frame_commit (&b, BERTH_AGENT_OUT, 9, 5);
  assert_int_equal (berth_agent_frame_begin (&b, BERTH_AGENT_CHUNK, &p), 0);
  berth_agent_frame_commit (&b, BERTH_AGENT_ERR, 9, 0);
  assert_int_equal (berth_agent_frame_begin (&b, BERTH_AGENT_MAX_PAYLOAD + 1, &p), -EMSGSIZE);
  berth_agent_frame f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_EOF);
  f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_OUT);
  assert_int_equal (f.chan, 9);
  assert_int_equal (f.len, 5);
  assert_memory_equal (f.data, "hello", 5);
  f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_ERR);
  assert_int_equal (f.len, 0);
  assert_int_equal (off, b.len);
  berth_agent_buf_free (&b);
}

/* ENVIRON: what the agent's commands inherit, and what is refused.  */
static void
test_environ (void **state)
{
  berth_agent_buf b = { 0 };
  char *env[] = { "A=1", "B=", "C==x", NULL }, **got = NULL;
  size_t off = 0;
  assert_int_equal (berth_agent_put_environ (&b, env), 0);
  berth_agent_frame f = parse_one (&b, &off);
  assert_int_equal (f.type, BERTH_AGENT_ENVIRON);
  assert_int_equal (f.chan, 0);
  assert_int_equal (berth_agent_environ_decode (&f, &got), 0);
  for (size_t i = 0; i < 3; i++)
    assert_string_equal (got[i], env[i]);
  assert_null (got[3]);
  for (size_t i = 0; got[i]; i++)
    free (got[i]);
  free (got);
  berth_agent_buf_free (&b);

  /* an entry without a name, a count the payload cannot hold, bytes left over */
  static const uint8_t noname[] = { 0, 0, 0, 1, 0, 0, 0, 2, '=', 'x' };
  static const uint8_t toomany[] = { 0, 0, 0, 9, 0, 0, 0, 1, 'a' };
  static const uint8_t trailing[] = { 0, 0, 0, 1, 0, 0, 0, 3, 'a', '=', 'b', 0 };
  const struct { const uint8_t *p; size_t n; } bad[] = { { noname, sizeof noname }, { toomany, sizeof toomany }, { trailing, sizeof trailing } };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      berth_agent_frame g = { .type = BERTH_AGENT_ENVIRON, .data = bad[i].p, .len = (uint32_t) bad[i].n };
      got = (char **) 1;
      assert_int_equal (berth_agent_environ_decode (&g, &got), -EBADMSG);
      assert_null (got);
    }
  /* over a RUN's bounds: not sent */
  char **many = calloc (BERTH_AGENT_MAX_ENV + 2, sizeof *many);
  assert_non_null (many);
  for (size_t i = 0; i <= BERTH_AGENT_MAX_ENV; i++)
    many[i] = "K=V";
  assert_int_equal (berth_agent_put_environ (&b, many), -E2BIG);
  assert_int_equal (berth_agent_buf_pending (&b), 0);
  free (many);
  berth_agent_buf_free (&b);
}

/* The queue: consumed bytes are reclaimed before it grows.  */
static void
test_buf (void **state)
{
  berth_agent_buf b = { 0 };
  char chunk[1000];
  memset (chunk, 'q', sizeof chunk);
  for (int i = 0; i < 100; i++)
    {
      assert_int_equal (berth_agent_buf_add (&b, chunk, sizeof chunk), 0);
      berth_agent_buf_consume (&b, sizeof chunk - 10);
    }
  assert_int_equal (berth_agent_buf_pending (&b), 1000);
  assert_true (b.cap <= 8192);
  berth_agent_buf_consume (&b, 1000);
  assert_int_equal (berth_agent_buf_pending (&b), 0);
  berth_agent_buf_free (&b);
  assert_string_equal (berth_agent_type_name (BERTH_AGENT_RUN), "run");
  assert_string_equal (berth_agent_type_name (200), "unknown");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_roundtrip),     cmocka_unit_test (test_inherit_env),  cmocka_unit_test (test_every_split),
    cmocka_unit_test (test_malformed_header), cmocka_unit_test (test_run_rejects), cmocka_unit_test (test_exit_rejects),
    cmocka_unit_test (test_encoder_bounds), cmocka_unit_test (test_buf), cmocka_unit_test (test_environ),
    cmocka_unit_test (test_frame_in_place),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
