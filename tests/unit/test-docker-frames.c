/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the Docker stream demuxer: every split point of a sample
   stream, random chunking, malformed headers.  */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "docker/frames.h"

typedef struct sinkbuf
{
  char out[65536];
  size_t out_len;
  char err[65536];
  size_t err_len;
  char sys[1024];
  size_t sys_len;
  size_t calls;
} sinkbuf;

static void
sink (void *userdata, int stream, const char *data, size_t len)
{
  sinkbuf *s = userdata;
  s->calls++;
  assert_true (len > 0);
  switch (stream)
    {
    case DOCKER_FRAME_STDOUT:
      assert_true (s->out_len + len <= sizeof s->out);
      memcpy (s->out + s->out_len, data, len);
      s->out_len += len;
      break;
    case DOCKER_FRAME_STDERR:
      assert_true (s->err_len + len <= sizeof s->err);
      memcpy (s->err + s->err_len, data, len);
      s->err_len += len;
      break;
    case DOCKER_FRAME_SYSTEMERR:
      assert_true (s->sys_len + len <= sizeof s->sys);
      memcpy (s->sys + s->sys_len, data, len);
      s->sys_len += len;
      break;
    default:
      fail_msg ("bad stream %d", stream);
    }
}

static size_t
put_frame (unsigned char *buf, int stream, const char *data, uint32_t len)
{
  buf[0] = (unsigned char)stream;
  buf[1] = buf[2] = buf[3] = 0;
  buf[4] = (unsigned char)(len >> 24);
  buf[5] = (unsigned char)(len >> 16);
  buf[6] = (unsigned char)(len >> 8);
  buf[7] = (unsigned char)len;
  memcpy (buf + 8, data, len);
  return 8 + len;
}

/* The sample: out1\nno-newline / err1\n / empty frame / stdin-typed frame
   / a binary payload with NULs / systemerr.  */
static size_t
sample (unsigned char *buf)
{
  size_t n = 0;
  n += put_frame (buf + n, 1, "out1\nno-newline", 15);
  n += put_frame (buf + n, 2, "err1\n", 5);
  n += put_frame (buf + n, 1, "", 0);
  n += put_frame (buf + n, 0, "in", 2);
  n += put_frame (buf + n, 2, "\0\x01\x02\xff", 4);
  n += put_frame (buf + n, 3, "boom", 4);
  return n;
}

static void
check_sample (const sinkbuf *s)
{
  assert_int_equal (s->out_len, 17);
  assert_memory_equal (s->out, "out1\nno-newlinein", 17);
  assert_int_equal (s->err_len, 9);
  assert_memory_equal (s->err, "err1\n\0\x01\x02\xff", 9);
  assert_int_equal (s->sys_len, 4);
  assert_memory_equal (s->sys, "boom", 4);
}

static void
test_whole (void **state)
{
  unsigned char buf[256];
  size_t n = sample (buf);
  docker_frames d = DOCKER_FRAMES_INIT;
  sinkbuf s = { 0 };
  assert_int_equal (docker_frames_feed (&d, buf, n, sink, &s), 0);
  check_sample (&s);
  assert_true (docker_frames_at_boundary (&d));
  assert_int_equal (d.frames, 6);
}

static void
test_every_split (void **state)
{
  unsigned char buf[256];
  size_t n = sample (buf);
  for (size_t i = 0; i <= n; i++)
    for (size_t j = i; j <= n; j++)
      {
        docker_frames d = DOCKER_FRAMES_INIT;
        sinkbuf s = { 0 };
        assert_int_equal (docker_frames_feed (&d, buf, i, sink, &s), 0);
        assert_int_equal (docker_frames_feed (&d, buf + i, j - i, sink, &s), 0);
        assert_int_equal (docker_frames_feed (&d, buf + j, n - j, sink, &s), 0);
        check_sample (&s);
        assert_true (docker_frames_at_boundary (&d));
      }
}

static void
test_byte_by_byte (void **state)
{
  unsigned char buf[256];
  size_t n = sample (buf);
  docker_frames d = DOCKER_FRAMES_INIT;
  sinkbuf s = { 0 };
  for (size_t i = 0; i < n; i++)
    {
      assert_int_equal (docker_frames_feed (&d, buf + i, 1, sink, &s), 0);
      if (i + 1 < n)
        assert_false (docker_frames_at_boundary (&d) && i == 3);
    }
  check_sample (&s);
}

static void
test_random_chunks (void **state)
{
  /* Many frames of random sizes, split at random points.  */
  static unsigned char buf[1 << 20];
  static char want_out[1 << 20], want_err[1 << 20];
  static sinkbuf s;
  size_t n = 0, wo = 0, we = 0;
  unsigned seed = 12345;
  srand (seed);
  while (n < sizeof buf - 70000)
    {
      int stream = 1 + rand () % 2;
      uint32_t len = (uint32_t)(rand () % 3 == 0 ? rand () % 4000 : rand () % 20);
      char payload[4000];
      for (uint32_t k = 0; k < len; k++)
        payload[k] = (char)(rand () & 0xff);
      if (stream == 1 && wo + len > 60000)
        break;
      if (stream == 2 && we + len > 60000)
        break;
      n += put_frame (buf + n, stream, payload, len);
      memcpy (stream == 1 ? want_out + wo : want_err + we, payload, len);
      if (stream == 1)
        wo += len;
      else
        we += len;
    }
  for (int round = 0; round < 50; round++)
    {
      docker_frames d = DOCKER_FRAMES_INIT;
      memset (&s, 0, sizeof s);
      size_t off = 0;
      while (off < n)
        {
          size_t chunk = (size_t)(rand () % (round < 25 ? 16 : 9000)) + 1;
          if (chunk > n - off)
            chunk = n - off;
          assert_int_equal (docker_frames_feed (&d, buf + off, chunk, sink, &s), 0);
          off += chunk;
        }
      assert_true (docker_frames_at_boundary (&d));
      assert_int_equal (s.out_len, wo);
      assert_int_equal (s.err_len, we);
      assert_memory_equal (s.out, want_out, wo);
      assert_memory_equal (s.err, want_err, we);
    }
}

static void
test_malformed (void **state)
{
  sinkbuf s = { 0 };
  {
    docker_frames d = DOCKER_FRAMES_INIT;
    unsigned char bad[] = { 4, 0, 0, 0, 0, 0, 0, 1, 'x' };
    assert_int_equal (docker_frames_feed (&d, bad, sizeof bad, sink, &s), -EPROTO);
    /* Sticky.  */
    assert_int_equal (docker_frames_feed (&d, "x", 1, sink, &s), -EPROTO);
    assert_false (docker_frames_at_boundary (&d));
  }
  {
    docker_frames d = DOCKER_FRAMES_INIT;
    unsigned char bad[] = { 1, 0, 1, 0, 0, 0, 0, 1, 'x' };
    assert_int_equal (docker_frames_feed (&d, bad, 4, sink, &s), 0);
    assert_int_equal (docker_frames_feed (&d, bad + 4, sizeof bad - 4, sink, &s), -EPROTO);
  }
  {
    /* Not a frame stream at all: an HTTP error text.  */
    docker_frames d = DOCKER_FRAMES_INIT;
    const char *t = "OCI runtime exec failed";
    assert_int_equal (docker_frames_feed (&d, t, strlen (t), sink, &s), -EPROTO);
  }
  {
    /* Truncated in the middle of a frame.  */
    docker_frames d = DOCKER_FRAMES_INIT;
    unsigned char buf[64];
    size_t n = put_frame (buf, 1, "hello", 5);
    assert_int_equal (docker_frames_feed (&d, buf, n - 2, sink, &s), 0);
    assert_false (docker_frames_at_boundary (&d));
  }
  assert_int_equal (s.calls, 1);
}

static void
test_large_frame_size (void **state)
{
  /* A header announcing 4 GiB - 1 must not allocate anything.  */
  docker_frames d = DOCKER_FRAMES_INIT;
  sinkbuf s = { 0 };
  unsigned char hdr[] = { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
  assert_int_equal (docker_frames_feed (&d, hdr, sizeof hdr, sink, &s), 0);
  assert_int_equal (d.remaining, 0xffffffffu);
  assert_int_equal (docker_frames_feed (&d, "abc", 3, sink, &s), 0);
  assert_int_equal (s.out_len, 3);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_whole),
    cmocka_unit_test (test_every_split),
    cmocka_unit_test (test_byte_by_byte),
    cmocka_unit_test (test_random_chunks),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_large_frame_size),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
