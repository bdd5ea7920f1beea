/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-state: the jail record -- round trip, rejection of damaged
   records, and that a pid is trusted only with its start time and user
   namespace.  */
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

static char dir[] = "/tmp/test-bwrap-state.XXXXXX";

static void
write_raw (const char *content)
{
  char path[4200];
  FILE *f;
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, dir);
  f = fopen (path, "w");
  assert_non_null (f);
  fputs (content, f);
  fclose (f);
}

static struct jail_state
self_state (void)
{
  struct jail_state st = { 0 };
  struct stat sb;
  assert_int_equal (stat ("/proc/self/ns/user", &sb), 0);
  st.pid = getpid ();
  st.starttime = proc_starttime (getpid ());
  st.userns = sb.st_ino;
  st.netns = true;
  st.memory_mb = 256;
  st.cpu_seconds = 30;
  st.max_procs = 7;
  strcpy (st.workspace, "/work/some dir");
  return st;
}

static void
test_roundtrip (void **state)
{
  struct jail_state st = self_state (), back;
  char path[4200];
  struct stat sb;
  assert_true (st.starttime > 0);
  assert_int_equal (jail_state_write (dir, &st), 0);
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, dir);
  assert_int_equal (stat (path, &sb), 0);
  assert_int_equal (sb.st_mode & 0777, 0600);
  assert_int_equal (jail_state_read (dir, &back), 0);
  assert_int_equal (back.pid, st.pid);
  assert_true (back.starttime == st.starttime);
  assert_true (back.userns == st.userns);
  assert_true (back.netns);
  assert_int_equal (back.memory_mb, 256);
  assert_int_equal (back.cpu_seconds, 30);
  assert_int_equal (back.max_procs, 7);
  assert_string_equal (back.workspace, "/work/some dir");
}

static void
test_damaged (void **state)
{
  struct jail_state back;
  char path[4200];
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, dir);
  unlink (path);
  assert_int_equal (jail_state_read (dir, &back), -ENOENT);
  write_raw ("version=1\npid=12x\nstarttime=5\nuserns=6\n");
  assert_int_equal (jail_state_read (dir, &back), -EBADMSG);
  write_raw ("version=2\npid=12\nstarttime=5\nuserns=6\n");
  assert_int_equal (jail_state_read (dir, &back), -EBADMSG);
  write_raw ("version=1\npid=1\nstarttime=5\nuserns=6\n"); /* never pid 1 */
  assert_int_equal (jail_state_read (dir, &back), -EBADMSG);
  write_raw ("version=1\npid=12\nstarttime=5\n"); /* no userns */
  assert_int_equal (jail_state_read (dir, &back), -EBADMSG);
  write_raw ("garbage");
  assert_int_equal (jail_state_read (dir, &back), -EBADMSG);
}

static void
test_identity (void **state)
{
  struct jail_state st = self_state ();
  int fd = jail_state_open (&st);
  assert_true (fd >= 0);
  close (fd);
  st.starttime++; /* a reused pid */
  assert_int_equal (jail_state_open (&st), -ESRCH);
  st = self_state ();
  st.userns++; /* another namespace */
  assert_int_equal (jail_state_open (&st), -ESRCH);
  st = self_state ();
  st.pid = 4194304 + 1; /* above pid_max */
  assert_true (jail_state_open (&st) < 0);
}

static void
test_starttime_parsing (void **state)
{
  /* comm with spaces and parentheses does not shift the fields.  */
  assert_true (proc_starttime (getpid ()) > 0);
  assert_int_equal (proc_starttime (4194304 + 1), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_roundtrip),
    cmocka_unit_test (test_damaged),
    cmocka_unit_test (test_identity),
    cmocka_unit_test (test_starttime_parsing),
  };
  int r;
  if (mkdtemp (dir) == NULL)
    return 99;
  r = cmocka_run_group_tests (tests, NULL, NULL);
  {
    char cmd[4300];
    snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
    if (system (cmd) != 0)
      r = r ? r : 1;
  }
  return r;
}
