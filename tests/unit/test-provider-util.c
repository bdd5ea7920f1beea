/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the services of <berth/provider-util.h> that backends use
   instead of their own copies (program lookup, clock, hash, directory
   trees, state files).  The berth_env_state_* wrappers are exercised by
   the backends' integration tests (docker-settings, bwrap-workspace).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <berth/provider-util.h>

static char dir[64];

static int
setup (void **state)
{
  (void) state;
  snprintf (dir, sizeof dir, "/tmp/berth-test-putil-XXXXXX");
  return mkdtemp (dir) ? 0 : -1;
}

static int
teardown (void **state)
{
  (void) state;
  return berth_remove_tree (dir);
}

static void
touch (const char *path, mode_t mode)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  assert_true (fd >= 0);
  close (fd);
  assert_int_equal (chmod (path, mode), 0);
}

static void
test_fnv1a64 (void **state)
{
  (void) state;
  /* the published FNV-1a 64 test vectors: names on disk depend on them */
  assert_true (berth_fnv1a64 ("", 0) == 0xcbf29ce484222325ULL);
  assert_true (berth_fnv1a64 ("a", 1) == 0xaf63dc4c8601ec8cULL);
  assert_true (berth_fnv1a64 ("foobar", 6) == 0x85944171f73967e8ULL);
}

static void
test_monotonic (void **state)
{
  (void) state;
  uint64_t a = berth_monotonic_usec ();
  usleep (2000);
  uint64_t b = berth_monotonic_usec ();
  assert_true (a > 0 && b >= a + 1000);
}

static void
test_find_program (void **state)
{
  char bin[128], path[256], *p;
  (void) state;
  snprintf (bin, sizeof bin, "%s/bin", dir);
  assert_int_equal (berth_mkdir_parents (bin, 0700), 0);
  snprintf (path, sizeof path, "%s/tool", bin);
  touch (path, 0755);
  snprintf (path, sizeof path, "%s/plain", bin);
  touch (path, 0644);
  snprintf (path, sizeof path, "%s/adir", bin);
  assert_int_equal (mkdir (path, 0755), 0);

  char *saved = getenv ("PATH") ? strdup (getenv ("PATH")) : NULL;
  snprintf (path, sizeof path, "::/nonexistent:%s", bin);
  setenv ("PATH", path, 1);
  p = berth_find_program ("tool");
  snprintf (path, sizeof path, "%s/tool", bin);
  assert_non_null (p);
  assert_string_equal (p, path);
  free (p);
  assert_null (berth_find_program ("plain")); /* not executable */
  assert_null (berth_find_program ("adir"));  /* not a regular file */
  assert_null (berth_find_program ("absent"));
  assert_null (berth_find_program (""));
  /* a name with a slash is taken as is, and made absolute */
  p = berth_find_program (path);
  assert_non_null (p);
  assert_string_equal (p, path);
  free (p);
  /* unset PATH: the usual directories */
  unsetenv ("PATH");
  p = berth_find_program ("sh");
  assert_non_null (p);
  assert_true (p[0] == '/');
  free (p);
  if (saved)
    setenv ("PATH", saved, 1);
  free (saved);
}

static void
test_trees (void **state)
{
  char outside[128], tree[128], path[256];
  struct stat st;
  (void) state;
  snprintf (outside, sizeof outside, "%s/outside", dir);
  assert_int_equal (berth_mkdir_parents (outside, 0700), 0);
  snprintf (path, sizeof path, "%s/keep", outside);
  touch (path, 0600);

  snprintf (tree, sizeof tree, "%s/a/b/c", dir);
  assert_int_equal (berth_mkdir_parents (tree, 0700), 0);
  assert_int_equal (berth_mkdir_parents (tree, 0700), 0); /* exists: fine */
  assert_int_equal (stat (tree, &st), 0);
  assert_true (S_ISDIR (st.st_mode) && (st.st_mode & 0777) == 0700);
  snprintf (path, sizeof path, "%s/file", tree);
  touch (path, 0600);
  snprintf (path, sizeof path, "%s/a/link", dir);
  assert_int_equal (symlink (outside, path), 0);

  snprintf (tree, sizeof tree, "%s/a", dir);
  assert_int_equal (berth_remove_tree (tree), 0);
  assert_int_equal (lstat (tree, &st), -1);
  assert_int_equal (berth_remove_tree (tree), 0); /* absent: fine */
  /* the link went, never what it points to */
  snprintf (path, sizeof path, "%s/keep", outside);
  assert_int_equal (stat (path, &st), 0);
}

static void
test_state_files (void **state)
{
  char path[128], link[128], *data = NULL;
  struct stat st;
  (void) state;
  snprintf (path, sizeof path, "%s/state", dir);
  assert_int_equal (berth_state_file_read (path, &data), -ENOENT);
  assert_int_equal (berth_state_file_write (path, "abc\n", 4), 0);
  assert_int_equal (stat (path, &st), 0);
  assert_int_equal (st.st_mode & 0777, 0600);
  assert_int_equal (berth_state_file_read (path, &data), 4);
  assert_string_equal (data, "abc\n");
  free (data);
  data = NULL;
  assert_int_equal (berth_state_file_read (path, NULL), 0); /* exists */
  /* replaced whole, empty is a content too */
  assert_int_equal (berth_state_file_write (path, "", 0), 0);
  assert_int_equal (berth_state_file_read (path, &data), 0);
  assert_string_equal (data, "");
  free (data);
  data = NULL;
  /* never read through a symbolic link */
  snprintf (link, sizeof link, "%s/link", dir);
  assert_int_equal (symlink (path, link), 0);
  assert_int_equal (berth_state_file_read (link, &data), -ELOOP);
  assert_null (data);
  /* a write replaces the link itself, not its target */
  assert_int_equal (berth_state_file_write (link, "x", 1), 0);
  assert_int_equal (lstat (link, &st), 0);
  assert_true (S_ISREG (st.st_mode));
  assert_int_equal (berth_state_file_read (path, &data), 0);
  free (data);
  /* bad state names of an environment are refused without one */
  assert_int_equal (berth_env_state_read (NULL, "x", NULL), -EINVAL);
}

static void
test_proc_start_time (void **state)
{
  (void) state;
  unsigned long long me = berth_proc_start_time (getpid ());
  assert_true (me > 0);
  assert_true (me == berth_proc_start_time (getpid ()));
  /* an older process started no later */
  assert_true (berth_proc_start_time (1) <= me);
  /* a zombie counts as gone, and so does a reaped child */
  pid_t child = fork ();
  assert_true (child >= 0);
  if (child == 0)
    _exit (0);
  unsigned long long c = 0;
  for (int i = 0; i < 200 && (c = berth_proc_start_time (child)) != 0; i++)
    usleep (5000);
  assert_int_equal (c, 0);
  assert_int_equal (waitpid (child, NULL, 0), child);
  assert_int_equal (berth_proc_start_time (child), 0);
  assert_int_equal (berth_proc_start_time (-1), 0);
}

static void
test_lock_file (void **state)
{
  (void) state;
  char path[128];
  pid_t holder = -1;
  snprintf (path, sizeof path, "%s/x.lock", dir);
  int fd = berth_lock_file (path, 0, NULL);
  assert_true (fd >= 0);
  /* a second open file description conflicts, in this process too */
  uint64_t t0 = berth_monotonic_usec ();
  assert_int_equal (berth_lock_file (path, t0 + 100000, &holder), -ETIMEDOUT);
  assert_true (berth_monotonic_usec () - t0 >= 100000);
  assert_true (berth_monotonic_usec () - t0 < 2000000);
  assert_int_equal (holder, getpid ());
  close (fd);
  fd = berth_lock_file (path, berth_monotonic_usec () + 100000, &holder);
  assert_true (fd >= 0);
  assert_int_equal (holder, 0);
  close (fd);
  /* never through a symbolic link */
  char link[128];
  snprintf (link, sizeof link, "%s/l.lock", dir);
  assert_int_equal (symlink (path, link), 0);
  assert_int_equal (berth_lock_file (link, 0, NULL), -ELOOP);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_fnv1a64),
    cmocka_unit_test (test_monotonic),
    cmocka_unit_test_setup_teardown (test_find_program, setup, teardown),
    cmocka_unit_test_setup_teardown (test_trees, setup, teardown),
    cmocka_unit_test_setup_teardown (test_state_files, setup, teardown),
    cmocka_unit_test_setup_teardown (test_lock_file, setup, teardown),
    cmocka_unit_test (test_proc_start_time),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
