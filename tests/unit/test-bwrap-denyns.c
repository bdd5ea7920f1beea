/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-denyns: run ARGV under a seccomp filter that imitates a
   hostile or old host, so the tests can check that berth-jail fails closed
   with the right reason, or falls back correctly:
     test-bwrap-denyns ARGV...                   new user namespaces get EPERM
                                                 (Docker's default profile)
     test-bwrap-denyns --no-mount-setattr ARGV   mount_setattr is ENOSYS (< 5.12)
     test-bwrap-denyns --no-mount-api ARGV       open_tree, move_mount and
                                                 mount_setattr are ENOSYS (< 5.2) */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  scmp_filter_ctx ctx;
  struct scmp_arg_cmp nu = SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  int first = 1, r = 0;
  ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL)
    return 2;
  if (argc > 1 && strcmp (argv[1], "--no-mount-setattr") == 0)
    {
      r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (mount_setattr), 0);
      first = 2;
    }
  else if (argc > 1 && strcmp (argv[1], "--no-mount-api") == 0)
    {
      if (seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (mount_setattr), 0) < 0
          || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (open_tree), 0) < 0)
        r = -1;
      else
        r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (move_mount), 0);
      first = 2;
    }
  else if (seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (unshare), 1, nu) < 0
           || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1, nu) < 0)
    r = -1;
  else
    r = seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0);
  if (argc <= first)
    {
      fputs ("usage: test-bwrap-denyns [--no-mount-setattr|--no-mount-api] ARGV...\n", stderr);
      return 2;
    }
  if (r < 0 || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load (ctx) < 0)
    {
      perror ("test-bwrap-denyns: seccomp");
      return 2;
    }
  execvp (argv[first], argv + first);
  perror (argv[first]);
  return 127;
}
