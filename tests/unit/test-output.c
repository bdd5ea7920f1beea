/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Output cap, spill file and UTF-8 repair.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "output.h"

static char tmpdir[] = "/tmp/berth-test-output.XXXXXX";

static char *
run (const char *const *chunks, const size_t *lens, size_t max, berth_output *o, size_t *ret_len)
{
  berth_output_init (o, max, tmpdir);
  for (size_t i = 0; chunks[i]; i++)
    assert_int_equal (berth_output_add (o, chunks[i], lens ? lens[i] : strlen (chunks[i])), 0);
  return berth_output_finish (o, ret_len);
}

static void
test_small_output_is_kept_verbatim (void **state)
{
  berth_output o;
  size_t len;
  const char *chunks[] = { "hello ", "world", NULL };
  char *s = run (chunks, NULL, 100, &o, &len);
  assert_string_equal (s, "hello world");
  assert_int_equal (len, 11);
  assert_false (o.overflow);
  assert_null (o.spill_path);
  free (s);
  berth_output_free (&o);
}

static void
test_invalid_utf8_becomes_replacement (void **state)
{
  berth_output o;
  size_t len;
  const char *chunks[] = { "a\xff" "b\xc3(\xed\xa0\x80z", NULL };
  char *s = run (chunks, NULL, 100, &o, &len);
  /* 0xff, a truncated 2-byte sequence, and a surrogate are invalid.  */
  assert_string_equal (s, "a\xef\xbf\xbd" "b\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz");
  free (s);
  berth_output_free (&o);
}

static void
test_multibyte_split_across_every_boundary (void **state)
{
  const char *text = "x\xe2\x82\xac" "y\xf0\x9f\x98\x80z"; /* x€y😀z */
  size_t n = strlen (text);
  for (size_t a = 0; a <= n; a++)
    for (size_t b = a; b <= n; b++)
      {
        berth_output o;
        size_t len;
        char p1[16] = { 0 }, p2[16] = { 0 }, p3[16] = { 0 };
        memcpy (p1, text, a);
        memcpy (p2, text + a, b - a);
        memcpy (p3, text + b, n - b);
        const char *chunks[] = { p1, p2, p3, NULL };
        size_t lens[] = { a, b - a, n - b };
        char *s = run (chunks, lens, 100, &o, &len);
        assert_string_equal (s, text);
        free (s);
        berth_output_free (&o);
      }
}

static void
test_dangling_lead_byte_at_end (void **state)
{
  berth_output o;
  size_t len;
  const char *chunks[] = { "ok\xe2\x82", NULL };
  char *s = run (chunks, NULL, 100, &o, &len);
  assert_string_equal (s, "ok\xef\xbf\xbd");
  free (s);
  berth_output_free (&o);
}

static void
test_overflow_keeps_head_and_tail_and_spills (void **state)
{
  berth_output o;
  size_t len;
  berth_output_init (&o, 1000, tmpdir);
  for (int i = 0; i < 1000; i++)
    {
      char line[16];
      snprintf (line, sizeof line, "%04d\n", i);
      assert_int_equal (berth_output_add (&o, line, 5), 0);
    }
  char *s = berth_output_finish (&o, &len);
  assert_true (o.overflow);
  assert_int_equal (o.total_bytes, 5000);
  /* Within the cap, the notice included: of the 1000 bytes, the notice
     takes 69 (its longest: the omitted count has at most 4 digits), the
     head 40 % of the other 931 (372 bytes), the tail the remaining 559.  */
  assert_int_equal (len, 1000);
  assert_memory_equal (s, "0000\n0001\n", 10);
  assert_memory_equal (s + 370, "00\n\n... [OUTPUT TRUNCATED - 4069 chars omitted out of 5000 total] ...\n\n888\n0889\n", 80);
  assert_string_equal (s + len - 5, "0999\n");
  assert_memory_equal (s + len - 559, "888\n0889\n", 9);
  struct stat st;
  assert_non_null (o.spill_path);
  assert_int_equal (stat (o.spill_path, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  assert_int_equal (st.st_size, 5000);
  unlink (o.spill_path);
  free (s);
  berth_output_free (&o);
}

/* Characters are counted right at every alignment (the count goes eight
   bytes at a time): 1-, 2-, 3- and 4-byte characters in chunks of every
   length, ASCII-only chunks (added without a copy) among them.  */
static void
test_chars_counted_at_every_alignment (void **state)
{
  static const char *const chars[] = { "a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80" };
  char text[4096];
  size_t len = 0, nchars = 0;
  for (size_t i = 0; len + 4 < sizeof text; i++, nchars++)
    {
      const char *c = chars[(i * 7 + i / 5) % 4 == 0 || i % 3 ? 0 : (i * 7 + i / 5) % 4];
      memcpy (text + len, c, strlen (c));
      len += strlen (c);
    }
  for (size_t step = 1; step <= 17; step++)
    {
      berth_output o;
      berth_output_init (&o, 1 << 20, tmpdir);
      for (size_t off = 0; off < len; off += step)
        assert_int_equal (berth_output_add (&o, text + off, off + step <= len ? step : len - off), 0);
      assert_int_equal (o.total_bytes, len);
      assert_int_equal (o.total_chars, nchars);
      size_t out_len;
      char *s = berth_output_finish (&o, &out_len);
      assert_int_equal (out_len, len);
      assert_memory_equal (s, text, len);
      free (s);
      berth_output_free (&o);
    }
}

static void
test_cut_never_splits_a_character (void **state)
{
  berth_output o;
  size_t len;
  berth_output_init (&o, 120, tmpdir);
  for (int i = 0; i < 200; i++)
    assert_int_equal (berth_output_add (&o, "\xe2\x82\xac", 3), 0); /* € */
  char *s = berth_output_finish (&o, &len);
  berth_buf clean = { 0 };
  char pend[4];
  size_t npend = 0;
  berth_utf8_sanitize (&clean, s, len, pend, &npend);
  /* Valid UTF-8 in, identical out, nothing pending.  */
  assert_int_equal (clean.len, len);
  assert_int_equal (npend, 0);
  assert_non_null (strstr (s, "out of 200 total"));
  if (o.spill_path)
    unlink (o.spill_path);
  berth_buf_free (&clean);
  free (s);
  berth_output_free (&o);
}

static void
test_memory_is_bounded (void **state)
{
  berth_output o;
  size_t len;
  char chunk[65536];
  memset (chunk, 'a', sizeof chunk);
  berth_output_init (&o, 50000, tmpdir);
  for (int i = 0; i < 2000; i++) /* 128 MiB */
    assert_int_equal (berth_output_add (&o, chunk, sizeof chunk), 0);
  assert_true (o.head.cap <= 2 * 65536 + 50000);
  assert_int_equal (o.ring_cap, 30000);
  char *s = berth_output_finish (&o, &len);
  assert_true (len < 50200);
  struct stat st;
  assert_int_equal (stat (o.spill_path, &st), 0);
  assert_true ((size_t) st.st_size <= BERTH_SPILL_MAX + 64);
  unlink (o.spill_path);
  free (s);
  berth_output_free (&o);
}

/* Valid UTF-8 (the whole of S).  */
static bool
valid_utf8 (const char *s, size_t len)
{
  berth_buf clean = { 0 };
  char pend[4];
  size_t npend = 0;
  berth_utf8_sanitize (&clean, s, len, pend, &npend);
  bool ok = npend == 0 && clean.len == len && (len == 0 || memcmp (clean.data, s, len) == 0);
  berth_buf_free (&clean);
  return ok;
}

/* Feed N lines "line <i> ...€\n" (multibyte, so cuts can land inside a
   character).  */
static void
feed_lines (berth_output *o, int n)
{
  for (int i = 0; i < n; i++)
    {
      char line[64];
      int k = snprintf (line, sizeof line, "line %d ..........\xe2\x82\xac\n", i);
      assert_int_equal (berth_output_add (o, line, (size_t) k), 0);
    }
}

static void
finish_and_check (berth_output *o, const char *note, size_t max, bool want_truncated)
{
  size_t len;
  char *s = berth_output_finish_note (o, note, &len);
  assert_non_null (s);
  if (len > max)
    fail_msg ("max %zu, %zu bytes in: output is %zu bytes", max, (size_t) o->total_bytes, len);
  assert_int_equal (strlen (s), len);
  assert_true (valid_utf8 (s, len));
  assert_int_equal (o->overflow, want_truncated);
  if (want_truncated && max >= 200)
    {
      assert_non_null (strstr (s, "[OUTPUT TRUNCATED - "));
      assert_int_equal (strncmp (s, "line 0 ", 7), 0);
    }
  if (note && max >= 200)
    {
      /* the note ends the text, whole */
      assert_true (len >= strlen (note) - 1);
      assert_string_equal (s + len - (strlen (note) - 1), note + 1);
    }
  if (o->spill_path)
    unlink (o->spill_path);
  free (s);
  berth_output_free (o);
}

/* The cap is hard: the truncation notice is inside it (issue 11.6:
   max_bytes 10000 used to give 10075).  */
static void
test_truncated_output_stays_within_cap (void **state)
{
  const size_t maxes[] = { 100, 256, 1000, 10000, 50000 };
  const int lines[] = { 50, 500, 5000, 100000 };
  for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++)
    for (size_t l = 0; l < sizeof lines / sizeof lines[0]; l++)
      {
        berth_output o;
        size_t len;
        berth_output_init (&o, maxes[m], tmpdir);
        feed_lines (&o, lines[l]);
        bool over = o.total_bytes > maxes[m];
        char *s = berth_output_finish (&o, &len);
        if (len > maxes[m])
          fail_msg ("max_bytes %zu, %llu bytes in: %zu bytes out", maxes[m], (unsigned long long) o.total_bytes, len);
        assert_int_equal (o.overflow, over);
        assert_true (valid_utf8 (s, len));
        if (over && maxes[m] >= 256)
          {
            char tail[32];
            snprintf (tail, sizeof tail, "line %d ..........\xe2\x82\xac\n", lines[l] - 1);
            assert_non_null (strstr (s, "[OUTPUT TRUNCATED - "));
            assert_int_equal (strncmp (s, "line 0 ", 7), 0);
            assert_string_equal (s + len - strlen (tail), tail);
          }
        if (o.spill_path)
          unlink (o.spill_path);
        free (s);
        berth_output_free (&o);
      }
}

/* The timeout and interrupt notes are inside the cap too, truncated or
   not.  */
static void
test_notes_stay_within_cap (void **state)
{
  static const char *const notes[] = { "\n[Command timed out after 5s]", "\n[Command interrupted]" };
  for (size_t n = 0; n < 2; n++)
    {
      berth_output o;
      /* truncated and timed out */
      berth_output_init (&o, 10000, tmpdir);
      feed_lines (&o, 5000);
      finish_and_check (&o, notes[n], 10000, true);
      /* small output: kept whole, note appended */
      berth_output_init (&o, 10000, tmpdir);
      feed_lines (&o, 3);
      finish_and_check (&o, notes[n], 10000, false);
      /* empty output: the note alone, without its leading newline */
      size_t len;
      berth_output_init (&o, 10000, tmpdir);
      char *s = berth_output_finish_note (&o, notes[n], &len);
      assert_string_equal (s, notes[n] + 1);
      free (s);
      berth_output_free (&o);
    }
  /* Output just under the cap: with the note it would not fit, so it is
     truncated (and spilled whole) to make room.  */
  size_t nl = strlen (notes[0]);
  for (size_t fill = 10000 - nl - 2; fill <= 10000; fill++)
    {
      berth_output o;
      size_t len;
      berth_output_init (&o, 10000, tmpdir);
      char *buf = malloc (fill);
      memcpy (buf, "line 0 ", 7);
      memset (buf + 7, 'x', fill - 7);
      assert_int_equal (berth_output_add (&o, buf, fill), 0);
      free (buf);
      char *s = berth_output_finish_note (&o, notes[0], &len);
      assert_true (len <= 10000);
      if (fill + nl <= 10000)
        {
          /* it fits exactly: nothing is cut */
          assert_false (o.overflow);
          assert_int_equal (len, fill + nl);
          free (s);
          berth_output_free (&o);
          continue;
        }
      assert_true (o.overflow);
      assert_non_null (strstr (s, "[OUTPUT TRUNCATED - "));
      assert_non_null (o.spill_path);
      struct stat st;
      assert_int_equal (stat (o.spill_path, &st), 0);
      assert_int_equal ((size_t) st.st_size, fill);
      unlink (o.spill_path);
      free (s);
      berth_output_free (&o);
    }
}

/* A cap smaller than the notices themselves still holds.  */
static void
test_tiny_cap_holds (void **state)
{
  for (size_t max = 1; max <= 130; max++)
    {
      berth_output o;
      berth_output_init (&o, max, tmpdir);
      feed_lines (&o, 100);
      finish_and_check (&o, "\n[Command timed out after 1s]", max, true);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_small_output_is_kept_verbatim),
    cmocka_unit_test (test_invalid_utf8_becomes_replacement),
    cmocka_unit_test (test_multibyte_split_across_every_boundary),
    cmocka_unit_test (test_dangling_lead_byte_at_end),
    cmocka_unit_test (test_overflow_keeps_head_and_tail_and_spills),
    cmocka_unit_test (test_chars_counted_at_every_alignment),
    cmocka_unit_test (test_cut_never_splits_a_character),
    cmocka_unit_test (test_memory_is_bounded),
    cmocka_unit_test (test_truncated_output_stays_within_cap),
    cmocka_unit_test (test_notes_stay_within_cap),
    cmocka_unit_test (test_tiny_cap_holds),
  };
  if (mkdtemp (tmpdir) == NULL)
    return 99;
  int r = cmocka_run_group_tests (tests, NULL, NULL);
  rmdir (tmpdir);
  return r;
}
