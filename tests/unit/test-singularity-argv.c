/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the singularity backend's argv builders, instance names,
   SIF cache naming, bind parsing and `instance list --json` parsing.  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "argv.h"

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
test_sif_name (void **state)
{
  char *s;
  (void) state;
  /* Scenario 66: docker://a/b:c -> <cache>/a-b-c.sif */
  s = sing_sif_name ("docker://a/b:c");
  assert_string_equal (s, "a-b-c.sif");
  free (s);
  s = sing_sif_name ("docker://nikolaik/python-nodejs:python3.11-nodejs20");
  assert_string_equal (s, "nikolaik-python-nodejs-python3.11-nodejs20.sif");
  free (s);
  s = sing_sif_name ("docker://localhost:5000/x/y@sha256:abc");
  assert_string_equal (s, "localhost-5000-x-y-sha256-abc.sif");
  free (s);
  /* Nothing that escapes the directory or hides the file.  */
  s = sing_sif_name ("docker://../../etc/passwd");
  assert_non_null (s);
  assert_null (strchr (s, '/'));
  assert_true (s[0] != '.');
  free (s);
  s = sing_sif_name ("docker://a b$c\n");
  assert_string_equal (s, "a_b_c_.sif");
  free (s);
  /* Not docker://: used as is, no cache name.  */
  assert_null (sing_sif_name ("/images/x.sif"));
  assert_null (sing_sif_name ("library://x/y"));
  assert_null (sing_sif_name ("docker://"));
  assert_null (sing_sif_name (NULL));
}

static void
test_sif_name_long (void **state)
{
  char ref[400], ref2[400];
  char *a, *b;
  (void) state;
  strcpy (ref, "docker://");
  memset (ref + 9, 'x', 300);
  ref[309] = '\0';
  strcpy (ref2, ref);
  ref2[308] = 'y';
  a = sing_sif_name (ref);
  b = sing_sif_name (ref2);
  assert_non_null (a);
  assert_non_null (b);
  assert_true (strlen (a) < 200);
  assert_string_not_equal (a, b); /* the hash keeps them apart */
  assert_int_equal (strlen (a), 160 + 1 + 16 + 4);
  free (a);
  free (b);
}

static void
test_instance_names (void **state)
{
  char *a, *b, *t;
  (void) state;
  a = sing_instance_name ("myenv", true, 0, "/state/one/envs/myenv");
  b = sing_instance_name ("myenv", true, 0, "/state/two/envs/myenv");
  assert_non_null (a);
  assert_true (strncmp (a, "berth-env-myenv-", 16) == 0);
  assert_int_equal (strlen (a), strlen ("berth-env-myenv-") + 8);
  assert_string_not_equal (a, b);
  assert_true (sing_valid_instance_name (a));
  /* Stable: a restart finds it again.  */
  t = sing_instance_name ("myenv", true, 0, "/state/one/envs/myenv");
  assert_string_equal (a, t);
  free (t);
  assert_int_equal (sing_instance_creator (a), -1);
  free (a);
  free (b);

  t = sing_instance_name ("0123abcd4567", false, 4242, NULL);
  assert_string_equal (t, "berth-tmp-4242-0123abcd4567");
  assert_int_equal (sing_instance_creator (t), 4242);
  free (t);

  t = sing_instance_name ("Web_1.x", true, 0, "/s");
  assert_non_null (t);
  free (t);
  assert_null (sing_instance_name ("bad/name", true, 0, "/s"));
  assert_null (sing_instance_name ("", false, 1, NULL));
  assert_null (sing_instance_name (NULL, false, 1, NULL));

  assert_int_equal (sing_instance_creator ("berth-tmp-x-abc"), -1);
  assert_int_equal (sing_instance_creator ("berth-tmp-12-"), -1);
  assert_int_equal (sing_instance_creator ("berth-tmp-12"), -1);
  assert_int_equal (sing_instance_creator ("berth-tmp-99999999999-a"), -1);
  assert_int_equal (sing_instance_creator ("other-tmp-12-a"), -1);
  assert_false (sing_valid_instance_name ("a b"));
  assert_false (sing_valid_instance_name (""));
  assert_true (sing_valid_instance_name ("hermes_0123abcd4567"));
}

static void
test_start_argv (void **state)
{
  (void) state;
  /* Scenario 65: non-persistent uses --writable-tmpfs.  */
  sing_start_opts o = { .bin = "/usr/bin/apptainer", .image = "/c/x.sif", .name = "berth-tmp-1-ab",
                        .memory_mb = 5120, .cpus = 1 };
  const char *want1[] = { "/usr/bin/apptainer", "instance", "start", "--containall", "--no-home",
                          "--writable-tmpfs", "--memory", "5120M", "--cpus", "1", "/c/x.sif", "berth-tmp-1-ab", NULL };
  assert_argv (sing_start_argv (&o), want1);

  /* Persistent: --overlay DIR; binds in order; 0 disables limits.  */
  const char *binds[] = { "/src:/dst:ro", "/data:/data", NULL };
  sing_start_opts p = { .bin = "apptainer", .image = "docker://a/b:c", .name = "berth-env-e-1",
                        .overlay = "/state/e/overlay", .binds = binds, .memory_mb = 0, .cpus = 1.5 };
  const char *want2[] = { "apptainer", "instance", "start", "--containall", "--no-home", "--overlay",
                          "/state/e/overlay", "--bind", "/src:/dst:ro", "--bind", "/data:/data", "--cpus", "1.5",
                          "docker://a/b:c", "berth-env-e-1", NULL };
  assert_argv (sing_start_argv (&p), want2);

  sing_start_opts bad = { .bin = "apptainer", .image = NULL, .name = "x" };
  assert_null (sing_start_argv (&bad));
  assert_null (sing_start_argv (NULL));
}

static void
test_exec_prefix_argv (void **state)
{
  (void) state;
  const char *want1[] = { "apptainer", "exec", "--cleanenv", "--pwd", "/root", "instance://berth-tmp-1-ab", NULL };
  assert_argv (sing_exec_prefix_argv ("apptainer", "/root", "berth-tmp-1-ab"), want1);
  const char *want2[] = { "/x/singularity", "exec", "--cleanenv", "instance://n", NULL };
  assert_argv (sing_exec_prefix_argv ("/x/singularity", NULL, "n"), want2);
  assert_null (sing_exec_prefix_argv (NULL, NULL, "n"));
}

static void
test_other_argv (void **state)
{
  (void) state;
  const char *stop[] = { "a", "instance", "stop", "n", NULL };
  assert_argv (sing_stop_argv ("a", "n", false), stop);
  const char *force[] = { "a", "instance", "stop", "--force", "n", NULL };
  assert_argv (sing_stop_argv ("a", "n", true), force);
  const char *list[] = { "a", "instance", "list", "--json", NULL };
  assert_argv (sing_list_argv ("a", NULL), list);
  const char *list1[] = { "a", "instance", "list", "--json", "berth-tmp-*", NULL };
  assert_argv (sing_list_argv ("a", "berth-tmp-*"), list1);
  const char *build[] = { "a", "build", "/c/x.sif.building", "docker://a/b:c", NULL };
  assert_argv (sing_build_argv ("a", "/c/x.sif.building", "docker://a/b:c"), build);
}

static void
check_bind (const char *spec, const char *want)
{
  char *out = NULL;
  berth_error *err = NULL;
  int r = sing_parse_bind (spec, &out, &err);
  if (want == NULL)
    {
      assert_int_equal (r, -BERTH_E_CONFIG);
      assert_non_null (err);
      assert_non_null (strstr (berth_error_message (err), "singularity_binds"));
      assert_null (out);
      berth_error_free (err);
      return;
    }
  assert_int_equal (r, 0);
  assert_string_equal (out, want);
  free (out);
}

static void
test_binds (void **state)
{
  (void) state;
  check_bind ("/a", "/a:/a");
  check_bind ("/a:/b", "/a:/b");
  check_bind ("/a:/b:ro", "/a:/b:ro");
  check_bind ("/a:/b:rw", "/a:/b");
  check_bind ("/a::ro", "/a:/a:ro");
  check_bind ("a:/b", NULL);
  check_bind ("/a:b", NULL);
  check_bind ("/a,/c:/b", NULL);
  check_bind ("/a:/b:rx", NULL);
  check_bind ("", NULL);
  assert_true (sing_bind_is_writable ("/a:/b"));
  assert_false (sing_bind_is_writable ("/a:/b:ro"));
}

static void
test_parse_instances (void **state)
{
  sing_instance *v = NULL;
  size_t n = 0;
  (void) state;
  /* Apptainer's indented output, with a log line in front (merged
     stderr).  */
  const char *json = "INFO:    something\n"
                     "{\n\t\"instances\": [\n"
                     "\t\t{\n\t\t\t\"instance\": \"berth-tmp-12-abc\",\n\t\t\t\"pid\": 12345,\n"
                     "\t\t\t\"img\": \"/path/image.sif\",\n\t\t\t\"ip\": \"\",\n"
                     "\t\t\t\"logErrPath\": \"/x.err\",\n\t\t\t\"logOutPath\": \"/x.out\"\n\t\t},\n"
                     "\t\t{\"img\": \"/i\", \"instance\": \"other\", \"ip\": \"\"},\n"
                     "\t\t{\"instance\": \"bad name\", \"pid\": 7},\n"
                     "\t\t{\"instance\": \"esc\\\"aped\", \"pid\": 8},\n"
                     "\t\t{\"instance\":\"compact\",\"pid\":99}\n"
                     "\t]\n}\n";
  assert_int_equal (sing_parse_instances (json, &v, &n), 3);
  assert_int_equal (n, 3);
  assert_string_equal (v[0].name, "berth-tmp-12-abc");
  assert_int_equal (v[0].pid, 12345);
  assert_string_equal (v[1].name, "other");
  assert_int_equal (v[1].pid, -1);
  assert_string_equal (v[2].name, "compact");
  assert_int_equal (v[2].pid, 99);
  sing_instances_free (v, n);

  assert_int_equal (sing_parse_instances ("{\n\t\"instances\": []\n}\n", &v, &n), 0);
  assert_int_equal (n, 0);
  sing_instances_free (v, n);
  assert_int_equal (sing_parse_instances ("garbage \"instance\" : ", &v, &n), 0);
  sing_instances_free (v, n);
  assert_int_equal (sing_parse_instances ("\"instance\":\"unterminated", &v, &n), 0);
  sing_instances_free (v, n);
  assert_int_equal (sing_parse_instances (NULL, &v, &n), 0);
}

/* Random and truncated inputs: no crash, no over-read (run under ASan
   with --enable-asan), every name returned is valid.  */
static void
test_parse_instances_robust (void **state)
{
  static const char alphabet[] = "{}[]\":, \t\n\\instancepid0123456789-_.ab";
  const char *good = "{\"instances\": [{\"instance\": \"n1\", \"pid\": 5}]}";
  char buf[256];
  unsigned seed = 12345;
  (void) state;
  for (int iter = 0; iter < 20000; iter++)
    {
      size_t len = (size_t) (rand_r (&seed) % (sizeof buf - 1));
      sing_instance *v = NULL;
      size_t n = 0;
      if (iter % 4 == 0)
        {
          /* A prefix of a valid document, with some bytes flipped.  */
          len = len % (strlen (good) + 1);
          memcpy (buf, good, len);
          if (len > 0)
            buf[rand_r (&seed) % len] = alphabet[rand_r (&seed) % (sizeof alphabet - 1)];
        }
      else
        for (size_t i = 0; i < len; i++)
          buf[i] = alphabet[rand_r (&seed) % (sizeof alphabet - 1)];
      buf[len] = '\0';
      assert_true (sing_parse_instances (buf, &v, &n) >= 0);
      for (size_t i = 0; i < n; i++)
        assert_true (sing_valid_instance_name (v[i].name));
      sing_instances_free (v, n);
    }
}

static void
test_tail (void **state)
{
  char *t;
  (void) state;
  t = sing_tail ("INFO: a\n\nFATAL: b\n", 100);
  assert_string_equal (t, "INFO: a; FATAL: b");
  free (t);
  t = sing_tail ("line1\nline2\nlast line\n", 12);
  assert_string_equal (t, "last line");
  free (t);
  t = sing_tail (NULL, 10);
  assert_string_equal (t, "");
  free (t);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sif_name),
    cmocka_unit_test (test_sif_name_long),
    cmocka_unit_test (test_instance_names),
    cmocka_unit_test (test_start_argv),
    cmocka_unit_test (test_exec_prefix_argv),
    cmocka_unit_test (test_other_argv),
    cmocka_unit_test (test_binds),
    cmocka_unit_test (test_parse_instances),
    cmocka_unit_test (test_parse_instances_robust),
    cmocka_unit_test (test_tail),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
