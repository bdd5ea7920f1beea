/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-system-trees.c: which host directories a jail never makes
 * writable (bwrap/system-trees.c).  */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "system-trees.h"

static void
test_root_and_relative (void **state)
{
  (void) state;
  assert_string_equal (jail_system_tree ("/", NULL), "/");
  assert_string_equal (jail_system_tree ("", NULL), "/");
  assert_string_equal (jail_system_tree ("etc", NULL), "/");
  assert_string_equal (jail_system_tree (NULL, NULL), "/");
}

static void
test_system_trees (void **state)
{
  static const char *const refused[][2] = {
    { "/etc", "/etc" },         { "/etc/cron.d", "/etc" },      { "/usr", "/usr" },       { "/usr/local", "/usr" },
    { "/usr/local/src/p", "/usr" }, { "/bin", "/bin" },         { "/sbin", "/sbin" },     { "/lib", "/lib" },
    { "/lib64", "/lib64" },     { "/libx32/x", "/libx32" },     { "/boot", "/boot" },     { "/var", "/var" },
    { "/var/lib", "/var" },     { "/var/lib/docker", "/var" },  { "/opt/app", "/opt" },   { "/srv", "/srv" },
    { "/proc/1", "/proc" },     { "/sys", "/sys" },             { "/dev/shm", "/dev" },   { "/run/user/1000", "/run" },
    { "/root", "/root" },       { "/libfoo", "/lib*" },
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    assert_string_equal (jail_system_tree (refused[i][0], "/home/u"), refused[i][1]);
}

static void
test_allowed (void **state)
{
  (void) state;
  assert_null (jail_system_tree ("/home/u/proj", "/home/u"));
  assert_null (jail_system_tree ("/var/tmp", NULL));
  assert_null (jail_system_tree ("/var/tmp/build", NULL));
  assert_null (jail_system_tree ("/tmp/x", NULL));
  assert_null (jail_system_tree ("/work/main", NULL));
  /* a prefix of a tree's name is not the tree */
  assert_null (jail_system_tree ("/etcetera", NULL));
  assert_null (jail_system_tree ("/usrdata", NULL));
  assert_null (jail_system_tree ("/variables", NULL));
  assert_string_equal (jail_system_tree ("/var/tmpfoo", NULL), "/var");
}

static void
test_root_home (void **state)
{
  (void) state;
  /* /root is a system tree unless it is the caller's own HOME */
  assert_null (jail_system_tree ("/root", "/root"));
  assert_null (jail_system_tree ("/root/proj", "/root"));
  assert_string_equal (jail_system_tree ("/root/proj", "/home/u"), "/root");
  assert_string_equal (jail_system_tree ("/root/proj", NULL), "/root");
  assert_string_equal (jail_system_tree ("/root", "/root/sub"), "/root");
  /* a HOME inside a system tree does not open that tree */
  assert_string_equal (jail_system_tree ("/var/lib/svc", "/var/lib/svc"), "/var");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_root_and_relative),
    cmocka_unit_test (test_system_trees),
    cmocka_unit_test (test_allowed),
    cmocka_unit_test (test_root_home),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
