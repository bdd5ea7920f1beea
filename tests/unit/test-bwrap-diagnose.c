/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-diagnose: every fail-closed reason berth-jail can give, from
   facts read out of a fake /proc tree.  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "jail.h"

static char root[] = "/tmp/test-bwrap-diagnose.XXXXXX";

static void
put (const char *rel, const char *content)
{
  char path[4200], dir[4200];
  FILE *f;
  snprintf (path, sizeof path, "%s/%s", root, rel);
  snprintf (dir, sizeof dir, "%s", path);
  *strrchr (dir, '/') = '\0';
  assert_int_equal (mkdir_parents (dir, 0755), 0);
  f = fopen (path, "w");
  assert_non_null (f);
  fputs (content, f);
  fclose (f);
}

static void
reset (void)
{
  char cmd[4300];
  snprintf (cmd, sizeof cmd, "rm -rf %s/proc %s/.dockerenv", root, root);
  assert_int_equal (system (cmd), 0);
  put ("proc/self/ns/user", "");
  put ("proc/self/status", "Name:\tx\nSeccomp:\t0\nSeccomp_filters:\t0\n");
  put ("proc/sys/user/max_user_namespaces", "15000\n");
}

static char *
diag (int step, int err, uid_t uid)
{
  struct jail_host_facts f;
  jail_host_facts_read (root, &f);
  f.uid = uid;
  return jail_diagnose (&f, step, err);
}

static void
expect (int step, int err, uid_t uid, const char *needle)
{
  char *m = diag (step, err, uid);
  if (strstr (m, needle) == NULL)
    fail_msg ("expected '%s' in: %s", needle, m);
  free (m);
}

static void
test_facts (void **state)
{
  struct jail_host_facts f;
  reset ();
  put ("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
  put ("proc/self/status", "Name:\tx\nSeccomp:\t2\n");
  jail_host_facts_read (root, &f);
  assert_int_equal (f.max_user_namespaces, 15000);
  assert_int_equal (f.unprivileged_userns_clone, -1);
  assert_int_equal (f.apparmor_restrict_userns, 1);
  assert_int_equal (f.seccomp_mode, 2);
  assert_true (f.userns_supported);
  assert_false (f.in_container);
}

static void
test_userns_disabled (void **state)
{
  reset ();
  put ("proc/sys/user/max_user_namespaces", "0\n");
  expect (JAIL_STEP_USERNS, ENOSPC, 1000, "user.max_user_namespaces = 0");
  expect (JAIL_STEP_USERNS, EPERM, 0, "user.max_user_namespaces = 0");
}

static void
test_debian_sysctl (void **state)
{
  reset ();
  put ("proc/sys/kernel/unprivileged_userns_clone", "0\n");
  expect (JAIL_STEP_USERNS, EPERM, 1000, "kernel.unprivileged_userns_clone = 0");
  /* Root is not subject to it.  */
  expect (JAIL_STEP_USERNS, EPERM, 0, "cannot create the jail's namespaces");
}

static void
test_limit_reached (void **state)
{
  reset ();
  put ("proc/sys/user/max_user_namespaces", "3\n");
  expect (JAIL_STEP_USERNS, ENOSPC, 1000, "limit is reached (user.max_user_namespaces = 3)");
}

static void
test_container_seccomp (void **state)
{
  reset ();
  put ("proc/self/status", "Name:\tx\nSeccomp:\t2\n");
  expect (JAIL_STEP_USERNS, EPERM, 1000, "seccomp filter of the enclosing container");
  expect (JAIL_STEP_MOUNT, EPERM, 1000, "blocks mount(2)");
  put ("proc/self/status", "Name:\tx\nSeccomp:\t0\n");
  put (".dockerenv", "");
  expect (JAIL_STEP_USERNS, EPERM, 1000, "enclosing container forbids new user namespaces");
}

static void
test_apparmor (void **state)
{
  reset ();
  put ("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
  expect (JAIL_STEP_UIDMAP, EPERM, 1000, "AppArmor restricts unprivileged user namespaces");
  expect (JAIL_STEP_MOUNT, EACCES, 1000, "AppArmor");
  expect (JAIL_STEP_USERNS, EACCES, 1000, "AppArmor");
  put ("proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0\n");
  expect (JAIL_STEP_UIDMAP, EPERM, 1000, "cannot set up the uid/gid map");
}

static void
test_missing_features (void **state)
{
  char path[4200];
  reset ();
  snprintf (path, sizeof path, "%s/proc/self/ns/user", root);
  unlink (path);
  expect (JAIL_STEP_USERNS, EPERM, 1000, "no user namespace support");
  reset ();
  expect (JAIL_STEP_USERNS, EINVAL, 1000, "no user namespace support");
  expect (JAIL_STEP_MOUNT, ENOSYS, 1000, "lacks the mount API");
  expect (JAIL_STEP_SECCOMP, EINVAL, 1000, "CONFIG_SECCOMP_FILTER");
  expect (JAIL_STEP_PROC, EPERM, 1000, "/proc is masked");
  expect (JAIL_STEP_NET, EPERM, 1000, "loopback");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_facts),          cmocka_unit_test (test_userns_disabled),
    cmocka_unit_test (test_debian_sysctl),  cmocka_unit_test (test_limit_reached),
    cmocka_unit_test (test_container_seccomp), cmocka_unit_test (test_apparmor),
    cmocka_unit_test (test_missing_features),
  };
  int r;
  if (mkdtemp (root) == NULL)
    return 99;
  r = cmocka_run_group_tests (tests, NULL, NULL);
  {
    char cmd[4300];
    snprintf (cmd, sizeof cmd, "rm -rf %s", root);
    if (system (cmd) != 0)
      r = r ? r : 1;
  }
  return r;
}
