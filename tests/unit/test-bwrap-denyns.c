/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-bwrap-denyns: run ARGV under a seccomp filter that denies new user
   namespaces with EPERM, as Docker's default profile does, so the tests
   can check that berth-jail fails closed with the right reason.  */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  scmp_filter_ctx ctx;
  struct scmp_arg_cmp nu = SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  if (argc < 2)
    {
      fputs ("usage: test-bwrap-denyns ARGV...\n", stderr);
      return 2;
    }
  ctx = seccomp_init (SCMP_ACT_ALLOW);
  if (ctx == NULL || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (unshare), 1, nu) < 0
      || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (EPERM), SCMP_SYS (clone), 1, nu) < 0
      || seccomp_rule_add (ctx, SCMP_ACT_ERRNO (ENOSYS), SCMP_SYS (clone3), 0) < 0
      || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_load (ctx) < 0)
    {
      perror ("test-bwrap-denyns: seccomp");
      return 2;
    }
  execvp (argv[1], argv + 1);
  perror (argv[1]);
  return 127;
}
