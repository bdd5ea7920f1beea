/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the slurm backend's pure helpers: salloc's messages,
   squeue rows, the allocation's comment, the srun prefix.  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "slurm-private.h"

static void
test_alloc_id (void **state)
{
  char *s;
  (void) state;
  s = slurm_parse_alloc_id ("salloc: Pending job allocation 41\nsalloc: job 41 queued and waiting for resources\n"
                            "salloc: Granted job allocation 41\n");
  assert_string_equal (s, "41");
  free (s);
  s = slurm_parse_alloc_id ("salloc: Granted job allocation 123456\n");
  assert_string_equal (s, "123456");
  free (s);
  assert_null (slurm_parse_alloc_id ("salloc: error: Job submit/allocate failed: Invalid partition name specified\n"));
  assert_null (slurm_parse_alloc_id ("job allocation x"));
  assert_null (slurm_parse_alloc_id (NULL));
}

static void
test_job_row (void **state)
{
  char l1[] = "17|berth-demo|berth named 0a1b2c3d|RUNNING\n";
  char l2[] = "17|berth-demo|RUNNING";
  char l3[] = "x7|a|b|RUNNING";
  char l4[] = "18|n|c|PENDING|extra";
  slurm_job_row r;
  (void) state;
  assert_int_equal (slurm_parse_job_row (l1, &r), 0);
  assert_string_equal (r.id, "17");
  assert_string_equal (r.name, "berth-demo");
  assert_string_equal (r.comment, "berth named 0a1b2c3d");
  assert_string_equal (r.state, "RUNNING");
  assert_int_equal (slurm_parse_job_row (l2, &r), -EINVAL);
  assert_int_equal (slurm_parse_job_row (l3, &r), -EINVAL);
  assert_int_equal (slurm_parse_job_row (l4, &r), -EINVAL);
  assert_true (slurm_state_is_live ("RUNNING"));
  assert_true (slurm_state_is_live ("CONFIGURING"));
  assert_false (slurm_state_is_live ("PENDING"));
  assert_false (slurm_state_is_live ("COMPLETING"));
  assert_false (slurm_state_is_live ("CANCELLED"));
}

static void
test_comments (void **state)
{
  char *a = slurm_comment_named ("/home/u/.local/state/berth/envs/demo");
  char *b = slurm_comment_named ("/tmp/other/envs/demo");
  char *t = slurm_comment_tmp (0xdeadbeefu, 4242, 987654321ULL);
  uint32_t host;
  pid_t pid;
  unsigned long long start;
  (void) state;
  assert_int_equal (strncmp (a, "berth named ", 12), 0);
  assert_int_equal (strlen (a), 12 + 8);
  assert_string_not_equal (a, b);
  assert_string_equal (t, "berth tmp deadbeef 4242 987654321");
  assert_int_equal (slurm_parse_comment_tmp (t, &host, &pid, &start), 0);
  assert_int_equal (host, 0xdeadbeefu);
  assert_int_equal (pid, 4242);
  assert_true (start == 987654321ULL);
  assert_int_equal (slurm_parse_comment_tmp (a, &host, &pid, &start), -EINVAL);
  assert_int_equal (slurm_parse_comment_tmp ("berth tmp deadbeef 0 1", &host, &pid, &start), -EINVAL);
  assert_int_equal (slurm_parse_comment_tmp ("berth tmp deadbeef 12 1 trailing", &host, &pid, &start), -EINVAL);
  assert_int_equal (slurm_parse_comment_tmp ("(null)", &host, &pid, &start), -EINVAL);
  free (a);
  free (b);
  free (t);
}

static void
test_last_line (void **state)
{
  char *s;
  (void) state;
  s = slurm_last_line ("salloc: error: invalid partition specified: nope\n"
                       "salloc: error: Job submit/allocate failed: Invalid partition name specified\n\n  \n", 300);
  assert_string_equal (s, "salloc: error: Job submit/allocate failed: Invalid partition name specified");
  free (s);
  s = slurm_last_line ("", 10);
  assert_string_equal (s, "");
  free (s);
  s = slurm_last_line ("0123456789abcdef", 4);
  assert_string_equal (s, "cdef");
  free (s);
}

static void
assert_argv (char **got, const char *const *want)
{
  size_t i;
  assert_non_null (got);
  for (i = 0; want[i] != NULL; i++)
    {
      assert_non_null (got[i]);
      assert_string_equal (got[i], want[i]);
    }
  assert_null (got[i]);
  berth_strv_free (got);
}

static void
test_prefix (void **state)
{
  (void) state;
  const char *plain[] = { "/usr/bin/srun", "--jobid=7", "--overlap", "--ntasks=1", "--nodes=1", "--quiet", "--quiet",
                          "--unbuffered", "bash", "-c", slurm_shim_script (false), "berth", NULL };
  assert_argv (slurm_prefix_argv ("/usr/bin/srun", "7", 0, false, false, false, NULL, NULL), plain);
  const char *pty[] = { "srun", "--jobid=7", "--overlap", "--ntasks=1", "--nodes=1", "--quiet", "--quiet",
                        "--cpus-per-task=4", "--pty",
                        "/opt/apptainer", "exec", "img.sif", NULL };
  assert_argv (slurm_prefix_argv ("srun", "7", 4, true, false, false, "/opt/apptainer", "img.sif"), pty);
  /* the marker shim prints the step first, and keeps the status */
  assert_non_null (strstr (slurm_shim_script (true), SLURM_STEP_MARKER));
  assert_non_null (strstr (slurm_shim_script (true), "PIPESTATUS[0]"));
  assert_null (strstr (slurm_shim_script (false), SLURM_STEP_MARKER));
  /* the runtime's scripts keep srun's errors (one --quiet) */
  char **m = slurm_prefix_argv ("srun", "7", 0, false, true, true, NULL, NULL);
  assert_string_equal (m[5], "--quiet");
  assert_string_equal (m[6], "--unbuffered");
  berth_strv_free (m);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_alloc_id), cmocka_unit_test (test_job_row), cmocka_unit_test (test_comments),
    cmocka_unit_test (test_last_line), cmocka_unit_test (test_prefix),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
