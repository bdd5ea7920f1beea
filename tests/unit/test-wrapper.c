/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The wrapper script, the state channel parser (adversarial input) and
   the snapshot filter.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "snapshot.h"
#include "wrapper.h"

static void
feed_all_splits (const char *data, size_t len, void (*check) (berth_state *))
{
  for (size_t a = 0; a <= len; a++)
    {
      berth_state st = { 0 };
      berth_state_feed (&st, data, a);
      berth_state_feed (&st, data + a, len - a);
      berth_state_end (&st);
      check (&st);
      berth_state_free (&st);
    }
}

static const char records[] = "warning: junk\0BERTH:pid:42\0\0BERTH:cwd:/tmp/a b\n\0BERTH:env:declare -x A=\"1\"\n\0BERTH:fn:f () \n{ \n    :\n}\n\0BERTH:ec:3\0";

static void
check_records (berth_state *st)
{
  assert_true (st->have_pid);
  assert_int_equal (st->pid, 42);
  assert_true (st->have_ec);
  assert_int_equal (st->ec, 3);
  assert_string_equal (st->cwd, "/tmp/a b");
  assert_string_equal (st->env, "declare -x A=\"1\"\n");
  assert_non_null (strstr (st->fn, "f ()"));
  assert_string_equal (st->diag.data, "warning: junk");
}

static void
test_state_records_at_every_split (void **state)
{
  feed_all_splits (records, sizeof records - 1, check_records);
}

static void
check_nothing (berth_state *st)
{
  assert_false (st->have_ec);
  assert_false (st->have_cwd);
}

static void
test_text_without_nul_framing_is_not_a_record (void **state)
{
  static const char junk[] = "BERTH:ec:9 BERTH:cwd:/etc\nssh: connect to host x port 22: Connection refused\n";
  feed_all_splits (junk, sizeof junk - 1, check_nothing);
}

/* The signal the command's shell died of (issue 12.9): a name, never
   anything else.  */
static const char sig_records[] = "x\0BERTH:pid:7\0BERTH:sig:SEGV\0BERTH:ec:139\0";

static void
check_sig (berth_state *st)
{
  assert_true (st->have_sig);
  assert_string_equal (st->sig, "SEGV");
  assert_int_equal (st->ec, 139);
}

static void
test_state_signal_record (void **state)
{
  feed_all_splits (sig_records, sizeof sig_records - 1, check_sig);
  static const char bad[] = "x\0BERTH:sig:seg v;rm\0BERTH:sig:AAAAAAAAAAAAAAAAAAAAAAAAAA\0BERTH:sig:\0BERTH:ec:139\0";
  berth_state st = { 0 };
  berth_state_feed (&st, bad, sizeof bad - 1);
  berth_state_end (&st);
  assert_false (st.have_sig);
  berth_state_free (&st);
}

/* The script names a trapped signal for the exit record.  */
static void
test_script_records_trapped_signal (void **state)
{
  berth_script_spec ss = { .command = "true", .job = "0123" };
  char *s = berth_script_build (&ss);
  assert_non_null (strstr (s, "__berth_sig=$__berth_s;"));
  assert_non_null (strstr (s, "BERTH:sig:%s"));
  free (s);
}

static void
test_state_channel_is_bounded (void **state)
{
  berth_state st = { 0 };
  char *big = malloc (BERTH_STATE_MAX + 10);
  memset (big, 'x', BERTH_STATE_MAX + 10);
  assert_int_equal (berth_state_feed (&st, big, BERTH_STATE_MAX + 10), -EFBIG);
  assert_true (st.overflow);
  assert_true (st.raw.len < BERTH_STATE_MAX);
  free (big);
  berth_state_free (&st);
}

static void
test_quote_cwd (void **state)
{
  char *q;
  q = berth_quote_cwd ("~");
  assert_string_equal (q, "\"$HOME\"");
  free (q);
  q = berth_quote_cwd ("~/my repo");
  assert_string_equal (q, "\"$HOME\"/'my repo'");
  free (q);
  q = berth_quote_cwd ("-demo");
  assert_string_equal (q, "'-demo'");
  free (q);
  q = berth_quote_cwd ("/it's");
  assert_string_equal (q, "'/it'\\''s'");
  free (q);
}

static void
test_script_embeds_command_quoted (void **state)
{
  const char *exports[] = { "TOK=a'b", NULL };
  berth_script_spec spec = { .command = "echo 'hi' $HOME", .cwd = "-demo", .job = "abc", .exports = exports };
  char *s = berth_script_build (&spec);
  assert_non_null (strstr (s, "eval 'echo '\\''hi'\\'' $HOME' 9>&-"));
  assert_non_null (strstr (s, "__berth_cwd='-demo'"));
  assert_non_null (strstr (s, "builtin cd -- \"$__berth_cwd\""));
  assert_non_null (strstr (s, "export TOK='a'\\''b'"));
  assert_non_null (strstr (s, "export BERTH_JOB=abc"));
  assert_null (strstr (s, "source")); /* no snapshot yet */
  free (s);
}

static void
test_kill_script_names_job (void **state)
{
  char *s = berth_kill_script ("0123abcd", 77);
  assert_non_null (strstr (s, "__w=77 __t='BERTH_JOB=0123abcd'"));
  assert_non_null (strstr (s, "kill -9"));
  free (s);
}

static bool
drop_secret (void *userdata, const char *name)
{
  return strstr (name, "SECRET") != NULL || strcmp (name, "BERTH_JOB") == 0;
}

static void
test_snapshot_filter_drops_names_across_lines (void **state)
{
  static const char in[] =
    "declare -x A=\"1\"\n"
    "declare -x MY_SECRET=\"line1\n"
    "declare -x FAKE=\\\"injected\\\"\n"
    "end\"\n"
    "declare -x B\n"
    "declare -rx C=$'x\\'y\\nz'\n"
    "declare -x BERTH_JOB=\"j\"\n"
    "declare -x D=\"2\"\n";
  char *out = berth_snapshot_filter (in, sizeof in - 1, drop_secret, NULL);
  assert_string_equal (out, "declare -x A=\"1\"\ndeclare -x B\ndeclare -rx C=$'x\\'y\\nz'\ndeclare -x D=\"2\"\n");
  free (out);
}

static void
test_snapshot_filter_fails_closed (void **state)
{
  static const char in[] = "declare -x A=\"1\"\nrm -rf /\ndeclare -x B=\"2\"\n";
  char *out = berth_snapshot_filter (in, sizeof in - 1, drop_secret, NULL);
  assert_string_equal (out, "declare -x A=\"1\"\n");
  free (out);
  static const char open_quote[] = "declare -x A=\"never closed\n";
  out = berth_snapshot_filter (open_quote, sizeof open_quote - 1, drop_secret, NULL);
  assert_string_equal (out, "");
  free (out);
}

static void
test_snapshot_minus_environ (void **state)
{
  /* the entries the starting environment gives exactly go; other values,
     other quoting, other flags, what follows the entries (functions,
     whose lines may look like entries) stay */
  static const char *const env[] = { "A=1", "Q=a\"b\\c$d`e", "B=2", "N=x\ny", "R=r", NULL };
  static const char in[] = "declare -x A=\"1\"\n"
                           "declare -x Q=\"a\\\"b\\\\c\\$d\\`e\"\n"
                           "declare -x B=\"3\"\n"
                           "declare -x N=$'x\\ny'\n"
                           "declare -rx R=\"r\"\n"
                           "declare -x U\n"
                           "f () \n{ \n    declare -x A=\"1\"\n}\n";
  char *out = berth_snapshot_minus_environ (in, env);
  assert_string_equal (out, "declare -x B=\"3\"\n"
                            "declare -x N=$'x\\ny'\n"
                            "declare -rx R=\"r\"\n"
                            "declare -x U\n"
                            "f () \n{ \n    declare -x A=\"1\"\n}\n");
  free (out);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_state_records_at_every_split),
    cmocka_unit_test (test_text_without_nul_framing_is_not_a_record),
    cmocka_unit_test (test_state_channel_is_bounded),
    cmocka_unit_test (test_state_signal_record),
    cmocka_unit_test (test_script_records_trapped_signal),
    cmocka_unit_test (test_quote_cwd),
    cmocka_unit_test (test_script_embeds_command_quoted),
    cmocka_unit_test (test_kill_script_names_job),
    cmocka_unit_test (test_snapshot_filter_drops_names_across_lines),
    cmocka_unit_test (test_snapshot_filter_fails_closed),
    cmocka_unit_test (test_snapshot_minus_environ),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
