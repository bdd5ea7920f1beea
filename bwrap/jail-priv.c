/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-priv.c: what a command gives up before it runs in the jail --
 * every capability (bounding and ambient sets included, securebits locked,
 * verified afterwards), no_new_privs, a seccomp filter, rlimits.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <linux/securebits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

#include "jail.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

void
jail_drop_caps (void)
{
  cap_t caps;
  int last = (int) cap_max_bits ();
  unsigned secbits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED
                     | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

  /* Needs CAP_SETPCAP, so before the capability sets are cleared.  */
  if (prctl (PR_SET_SECUREBITS, secbits) < 0)
    die_errno (errno, "cannot lock securebits");
  for (int i = 0; i < last; i++)
    if (prctl (PR_CAPBSET_DROP, i, 0, 0, 0) < 0 && errno != EINVAL)
      die_errno (errno, "cannot drop capability %d from the bounding set", i);
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    die_errno (errno, "cannot clear the ambient capabilities");
  caps = cap_init ();
  if (caps == NULL || cap_set_proc (caps) < 0)
    die_errno (errno, "cannot drop capabilities");
  cap_free (caps);

  /* Verify: a silent partial drop would be an unconfined command.  */
  caps = cap_get_proc ();
  if (caps == NULL)
    die_errno (errno, "cannot read capabilities back");
  for (int i = 0; i < last; i++)
    {
      cap_flag_value_t e = CAP_CLEAR, p = CAP_CLEAR, h = CAP_CLEAR;
      cap_get_flag (caps, i, CAP_EFFECTIVE, &e);
      cap_get_flag (caps, i, CAP_PERMITTED, &p);
      cap_get_flag (caps, i, CAP_INHERITABLE, &h);
      /* Ambient needs no check: the kernel keeps it within permitted and
         inheritable, both verified empty here.  */
      if (e || p || h || prctl (PR_CAPBSET_READ, i, 0, 0, 0) == 1)
        die ("capability %d is still set after dropping all capabilities", i);
    }
  cap_free (caps);
}

void
jail_set_no_new_privs (void)
{
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die_errno (errno, "cannot set no_new_privs");
  if (prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
    die ("no_new_privs did not stick");
}

/* Syscalls the jail never needs and that widen the kernel attack surface
   (mount API after setup, keyrings, bpf, io_uring which bypasses other
   filtering, module and kexec loading...).  All get EPERM.  */
static const char *const denied_syscalls[] = {
  "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
  "fspick", "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
  "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load",
  "kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
  "acct", "swapon", "swapoff", "reboot", "syslog", "setns", "lookup_dcookie", "quotactl",
  "quotactl_fd", NULL,
};

static void
rule (scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n, const struct scmp_arg_cmp *args)
{
  int nr = seccomp_syscall_resolve_name (name);
  int r;
  if (nr == __NR_SCMP_ERROR)
    return; /* not on this architecture */
  r = seccomp_rule_add_array (ctx, action, nr, n, args);
  if (r < 0 && r != -EDOM)
    die_errno (-r, "cannot add the seccomp rule for %s", name);
}

/* Build the filter once (libseccomp) and keep the compiled cBPF: a
   command only has to load it (the jail's init forks many).  */
void
jail_build_seccomp (struct sock_fprog *ret)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  uint32_t eperm = SCMP_ACT_ERRNO (EPERM);
  int r, p[2];
  char *buf;
  ssize_t n, got = 0;
  const size_t max = 1 << 20;
  if (ctx == NULL)
    die ("cannot initialise the seccomp filter");
  /* 32-bit x86 programs keep working with the same rules; any other
     foreign architecture (x32 included) is killed by libseccomp's default
     bad-arch action.  */
#if defined(__x86_64__)
  r = seccomp_arch_add (ctx, SCMP_ARCH_X86);
  if (r < 0 && r != -EEXIST)
    die_errno (-r, "cannot add the x86 architecture to the seccomp filter");
#endif

  /* TIOCSTI and TIOCLINUX, compared on the low 32 bits only: the kernel
     truncates the ioctl number, so TIOCSTI | 1 << 32 must not slip
     through (CVE-2019-10063).  */
  {
    struct scmp_arg_cmp sti = SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
    struct scmp_arg_cmp lnx = SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
    rule (ctx, eperm, "ioctl", 1, &sti);
    rule (ctx, eperm, "ioctl", 1, &lnx);
  }
  /* No nested user namespaces: they would hand the command a full set of
     capabilities again.  clone3 hides its flags in memory, so it reports
     ENOSYS and libc falls back to clone.  */
  {
    struct scmp_arg_cmp nu = SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
    rule (ctx, eperm, "unshare", 1, &nu);
    rule (ctx, eperm, "clone", 1, &nu);
    rule (ctx, SCMP_ACT_ERRNO (ENOSYS), "clone3", 0, NULL);
  }
  for (size_t i = 0; denied_syscalls[i]; i++)
    rule (ctx, eperm, denied_syscalls[i], 0, NULL);

  if (pipe2 (p, O_CLOEXEC) < 0)
    die_errno (errno, "pipe");
  buf = malloc (max);
  if (buf == NULL)
    die ("out of memory");
  /* The program is far below a pipe's capacity.  */
  r = seccomp_export_bpf (ctx, p[1]);
  close (p[1]);
  if (r < 0)
    die_errno (-r, "cannot compile the seccomp filter");
  while ((n = read (p[0], buf + got, max - got)) > 0)
    got += n;
  close (p[0]);
  if (got <= 0 || got % sizeof (struct sock_filter) != 0)
    die ("the compiled seccomp filter is malformed (%zd bytes)", got);
  ret->len = got / sizeof (struct sock_filter);
  ret->filter = (struct sock_filter *) buf;
  seccomp_release (ctx);
}

void
jail_load_seccomp_prog (const struct sock_fprog *prog)
{
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) < 0)
    {
      struct jail_host_facts f;
      int e = errno;
      jail_host_facts_read ("/", &f);
      die ("%s", jail_diagnose (&f, JAIL_STEP_SECCOMP, e));
    }
}

void
jail_load_seccomp (void)
{
  struct sock_fprog prog;
  jail_build_seccomp (&prog);
  jail_load_seccomp_prog (&prog);
  free (prog.filter);
}

/* Soft limit VALUE, hard limit VALUE + GRACE (never above what the
   caller already had).  */
static void
limit (int resource, const char *name, uint64_t value, uint64_t grace)
{
  struct rlimit rl;
  if (getrlimit (resource, &rl) < 0)
    die_errno (errno, "getrlimit %s", name);
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < value)
    value = rl.rlim_max;
  rl.rlim_cur = value;
  if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > value + grace)
    rl.rlim_max = value + grace;
  if (setrlimit (resource, &rl) < 0)
    die_errno (errno, "setrlimit %s", name);
}

void
jail_set_rlimits (int64_t memory_mb, int64_t cpu_seconds, int64_t max_procs)
{
  if (memory_mb > 0)
    limit (RLIMIT_AS, "RLIMIT_AS", (uint64_t) memory_mb * 1024 * 1024, 0);
  /* SIGXCPU at the limit, SIGKILL a little later: the shell then says
     "CPU time limit exceeded" (status 152) instead of a silent 137.  */
  if (cpu_seconds > 0)
    limit (RLIMIT_CPU, "RLIMIT_CPU", (uint64_t) cpu_seconds, 5);
  /* Counted per user in the jail's user namespace (Linux >= 5.14); +2 for
     the jail's init and the command's own shell.  */
  if (max_procs > 0)
    limit (RLIMIT_NPROC, "RLIMIT_NPROC", (uint64_t) max_procs + 2, 0);
}
