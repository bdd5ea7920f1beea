/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-diagnose.c: turn "clone: Operation not permitted" into the actual
 * reason the jail cannot be built, and what to do about it.
 *
 * Pure functions over facts read from a (possibly fake) root, so the unit
 * test can cover every branch.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"

static long
read_long (const char *root, const char *rel)
{
  char path[4200], buf[64], *end;
  long v;
  snprintf (path, sizeof path, "%s/%s", strcmp (root, "/") == 0 ? "" : root, rel);
  if (read_file_buf (path, buf, sizeof buf) <= 0)
    return -1;
  v = strtol (buf, &end, 10);
  if (end == buf)
    return -1;
  return v;
}

static bool
exists (const char *root, const char *rel)
{
  char path[4200];
  snprintf (path, sizeof path, "%s/%s", strcmp (root, "/") == 0 ? "" : root, rel);
  return access (path, F_OK) == 0;
}

void
jail_host_facts_read (const char *root, struct jail_host_facts *f)
{
  char path[4200], buf[8192];
  memset (f, 0, sizeof *f);
  f->max_user_namespaces = read_long (root, "proc/sys/user/max_user_namespaces");
  f->unprivileged_userns_clone = read_long (root, "proc/sys/kernel/unprivileged_userns_clone");
  f->apparmor_restrict_userns = read_long (root, "proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  f->userns_supported = exists (root, "proc/self/ns/user");
  f->in_container = exists (root, ".dockerenv") || exists (root, "run/.containerenv");
  f->seccomp_mode = -1;
  snprintf (path, sizeof path, "%s/proc/self/status", strcmp (root, "/") == 0 ? "" : root);
  if (read_file_buf (path, buf, sizeof buf) > 0)
    {
      char *p = strstr (buf, "\nSeccomp:");
      if (p)
        f->seccomp_mode = atoi (p + strlen ("\nSeccomp:"));
    }
  f->uid = getuid ();
}

static const char apparmor_fix[]
  = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1): "
    "the jail's namespace has no capabilities.  Install an AppArmor profile that grants `userns,` to "
    "berth-jail (e.g. /etc/apparmor.d/berth-jail: abi <abi/4.0>, include <tunables/global> "
    "profile berth-jail " BERTH_LIBEXECDIR "/berth-jail flags=(unconfined) { userns, }) and run "
    "apparmor_parser -r on it, or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";

static const char seccomp_fix[]
  = "a seccomp filter of the enclosing container blocks user namespaces (Seccomp: 2 in /proc/self/status, "
    "unshare(CLONE_NEWUSER) denied): run the container with --security-opt seccomp=unconfined "
    "--security-opt apparmor=unconfined, or use the docker backend";

char *
jail_diagnose (const struct jail_host_facts *f, int step, int err)
{
  switch (step)
    {
    case JAIL_STEP_USERNS:
      if (!f->userns_supported || err == EINVAL || err == ENOSYS)
        return xasprintf ("the kernel has no user namespace support (CONFIG_USER_NS, %s): "
                          "the bwrap backend cannot confine commands here; use the docker backend",
                          strerror (err));
      if (f->max_user_namespaces == 0)
        return xstrdup ("user namespaces are disabled (user.max_user_namespaces = 0): "
                        "enable them with sysctl -w user.max_user_namespaces=15000");
      if (f->uid != 0 && f->unprivileged_userns_clone == 0)
        return xstrdup ("unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0): "
                        "enable them with sysctl -w kernel.unprivileged_userns_clone=1");
      if (err == ENOSPC || err == EUSERS)
        return xasprintf ("the user namespace limit is reached (user.max_user_namespaces = %ld): "
                          "raise it with sysctl -w user.max_user_namespaces=15000",
                          f->max_user_namespaces);
      if (err == EPERM && f->seccomp_mode == 2)
        return xstrdup (seccomp_fix);
      if (err == EPERM && f->in_container)
        return xstrdup ("the enclosing container forbids new user namespaces (unshare(CLONE_NEWUSER): "
                        "Operation not permitted): run it with --security-opt seccomp=unconfined "
                        "--security-opt apparmor=unconfined, or use the docker backend");
      if ((err == EPERM || err == EACCES) && f->apparmor_restrict_userns == 1)
        return xstrdup (apparmor_fix);
      return xasprintf ("cannot create the jail's namespaces (user, mount, pid, ipc, uts, cgroup): %s",
                        strerror (err));
    case JAIL_STEP_UIDMAP:
      if ((err == EPERM || err == EACCES) && f->apparmor_restrict_userns == 1)
        return xstrdup (apparmor_fix);
      return xasprintf ("cannot set up the uid/gid map of the jail's user namespace: %s", strerror (err));
    case JAIL_STEP_MOUNT:
      if ((err == EPERM || err == EACCES) && f->apparmor_restrict_userns == 1)
        return xstrdup (apparmor_fix);
      if (err == EPERM && f->seccomp_mode == 2)
        return xstrdup ("a seccomp filter of the enclosing container blocks mount(2) in the jail "
                        "(Seccomp: 2): run the container with --security-opt seccomp=unconfined, "
                        "or use the docker backend");
      if (err == ENOSYS)
        return xstrdup ("the kernel lacks the mount API the jail needs (open_tree/move_mount, Linux >= 5.2)");
      return xasprintf ("cannot build the jail's filesystem view: %s", strerror (err));
    case JAIL_STEP_PROC:
      if (err == EPERM || err == EACCES)
        return xasprintf ("cannot mount a fresh /proc for the jail's pid namespace (%s): /proc is masked or "
                          "partly overmounted, as in a container; run the container with "
                          "--security-opt systempaths=unconfined, or use the docker backend",
                          strerror (err));
      return xasprintf ("cannot mount a fresh /proc for the jail: %s", strerror (err));
    case JAIL_STEP_NET:
      return xasprintf ("cannot bring up the loopback interface of the jail's network namespace: %s",
                        strerror (err));
    case JAIL_STEP_SECCOMP:
      if (err == EINVAL || err == ENOSYS)
        return xasprintf ("the kernel lacks seccomp filter support (CONFIG_SECCOMP_FILTER, %s)", strerror (err));
      return xasprintf ("cannot load the jail's seccomp filter: %s", strerror (err));
    }
  return xasprintf ("jail setup failed: %s", strerror (err));
}
