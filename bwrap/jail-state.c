/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-state.c: the record `create` leaves for `exec` and `destroy`.
 *
 * DIR/jail holds "key=value" lines, written atomically 0600.  The pid is
 * trusted only together with its start time and the inode of its user
 * namespace, and exec checks that namespace is a child of its own, so a
 * reused pid or an edited record cannot make exec join a host process.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"

int
jail_state_write (const char *dir, const struct jail_state *st)
{
  char tmp[4200], path[4200], buf[8192];
  int fd, n;
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, dir);
  snprintf (tmp, sizeof tmp, "%s/." JAIL_STATE_FILE ".tmp", dir);
  n = snprintf (buf, sizeof buf,
                "version=1\npid=%d\nstarttime=%" PRIu64 "\nuserns=%" PRIu64 "\nnetns=%d\n"
                "memory_mb=%" PRId64 "\ncpu_seconds=%" PRId64 "\nmax_procs=%" PRId64 "\nworkspace=%s\n",
                (int) st->pid, st->starttime, st->userns, st->netns ? 1 : 0, st->memory_mb,
                st->cpu_seconds, st->max_procs, st->workspace);
  if (n < 0 || (size_t) n >= sizeof buf)
    return -ENAMETOOLONG;
  unlink (tmp);
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return -errno;
  if (write (fd, buf, n) != n || fsync (fd) < 0)
    {
      int e = errno ? errno : EIO;
      close (fd);
      unlink (tmp);
      return -e;
    }
  close (fd);
  if (rename (tmp, path) < 0)
    {
      int e = errno;
      unlink (tmp);
      return -e;
    }
  return 0;
}

int
jail_state_read (const char *dir, struct jail_state *st)
{
  char path[4200], buf[8192];
  struct jail_state s = { 0 };
  int version = 0;
  ssize_t n;
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, dir);
  n = read_file_buf (path, buf, sizeof buf);
  if (n < 0)
    return n;
  for (char *line = buf, *next; line && *line; line = next)
    {
      char *eq;
      int64_t v = 0;
      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      eq = strchr (line, '=');
      if (eq == NULL)
        return -EBADMSG;
      *eq++ = '\0';
      if (strcmp (line, "workspace") == 0)
        {
          if (strlen (eq) >= sizeof s.workspace)
            return -EBADMSG;
          strcpy (s.workspace, eq);
          continue;
        }
      if (parse_int64 (eq, &v) < 0)
        return -EBADMSG;
      if (strcmp (line, "version") == 0)
        version = (int) v;
      else if (strcmp (line, "pid") == 0)
        s.pid = (pid_t) v;
      else if (strcmp (line, "starttime") == 0)
        s.starttime = (uint64_t) v;
      else if (strcmp (line, "userns") == 0)
        s.userns = (uint64_t) v;
      else if (strcmp (line, "netns") == 0)
        s.netns = v != 0;
      else if (strcmp (line, "memory_mb") == 0)
        s.memory_mb = v;
      else if (strcmp (line, "cpu_seconds") == 0)
        s.cpu_seconds = v;
      else if (strcmp (line, "max_procs") == 0)
        s.max_procs = v;
    }
  if (version != 1 || s.pid <= 1 || s.starttime == 0 || s.userns == 0)
    return -EBADMSG;
  *st = s;
  return 0;
}

int
jail_state_open (const struct jail_state *st)
{
  char path[64];
  struct stat sb;
  int pidfd = (int) syscall (SYS_pidfd_open, st->pid, 0);
  if (pidfd < 0)
    return errno == ESRCH ? -ESRCH : -errno;
  /* Checked after opening the pidfd: if these still match, the pidfd
     refers to the init we recorded, whatever happens to the pid later.  */
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) st->pid);
  /* A zombie keeps its pid, start time and user namespace until reaped
     (slowly, by some container inits): it is not a running jail.  */
  if (proc_starttime (st->pid) != st->starttime || proc_state (st->pid) == 'Z' || proc_state (st->pid) == 'X'
      || stat (path, &sb) < 0 || (uint64_t) sb.st_ino != st->userns)
    {
      close (pidfd);
      return -ESRCH;
    }
  return pidfd;
}
