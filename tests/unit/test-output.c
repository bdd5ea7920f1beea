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
  berth_output_init (&o, 100, tmpdir);
  for (int i = 0; i < 1000; i++)
    {
      char line[16];
      snprintf (line, sizeof line, "%04d\n", i);
      assert_int_equal (berth_output_add (&o, line, 5), 0);
    }
  char *s = berth_output_finish (&o, &len);
  assert_true (o.overflow);
  assert_int_equal (o.total_bytes, 5000);
  /* 40 bytes of head, 60 of tail.  */
  assert_memory_equal (s, "0000\n0001\n", 10);
  assert_non_null (strstr (s, "[OUTPUT TRUNCATED - 4900 chars omitted out of 5000 total]"));
  assert_non_null (strstr (s, "0999\n"));
  assert_int_equal (strncmp (s + len - 60, "0988\n", 5), 0);
  struct stat st;
  assert_non_null (o.spill_path);
  assert_int_equal (stat (o.spill_path, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  assert_int_equal (st.st_size, 5000);
  unlink (o.spill_path);
  free (s);
  berth_output_free (&o);
}

static void
test_cut_never_splits_a_character (void **state)
{
  berth_output o;
  size_t len;
  berth_output_init (&o, 16, tmpdir);
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

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_small_output_is_kept_verbatim),
    cmocka_unit_test (test_invalid_utf8_becomes_replacement),
    cmocka_unit_test (test_multibyte_split_across_every_boundary),
    cmocka_unit_test (test_dangling_lead_byte_at_end),
    cmocka_unit_test (test_overflow_keeps_head_and_tail_and_spills),
    cmocka_unit_test (test_cut_never_splits_a_character),
    cmocka_unit_test (test_memory_is_bounded),
  };
  if (mkdtemp (tmpdir) == NULL)
    return 99;
  int r = cmocka_run_group_tests (tests, NULL, NULL);
  rmdir (tmpdir);
  return r;
}
