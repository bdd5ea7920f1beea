/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth-jail: a persistent, fail-closed host jail (the bwrap backend's
 * libexec helper).
 *
 *   berth-jail create --state DIR [--profile restricted|workspace|network]
 *       [--workspace DIR] [--bind SRC[:DEST[:ro|rw]]]... [--bind-to SRC DEST]...
 *       [--ro-bind-to SRC DEST]... [--hide PATH]... [--home DIR]
 *       [--owner-pid PID] [--memory-mb N] [--cpu-seconds N] [--max-procs N]
 *       [--legacy-mount]
 *     Start the jail: an init holding new user, mount, pid, ipc, uts,
 *     cgroup (and, unless the profile is network, net) namespaces, recorded
 *     in DIR.  Prints "created", "recreated" (a previous jail had died) or
 *     "running" (already there).  With --owner-pid the jail dies with PID.
 *   berth-jail exec --state DIR [--cwd D] [--keep-session] -- ARGV...
 *     Run ARGV in the jail with stdin/stdout/stderr, environment and file
 *     descriptors unchanged, all capabilities dropped, no_new_privs, a
 *     seccomp filter, the jail's rlimits and (unless --keep-session) a new
 *     session.  Exits with ARGV's status (re-raising its signal).
 *   berth-jail destroy --state DIR     kill the jail (idempotent)
 *   berth-jail status --state DIR      exit 0 when running, 1 when not
 *   berth-jail probe [--network] [--full]
 *     Check, in a throw-away child with the jail's namespaces, every step
 *     that fails where confinement is impossible (--full: build a real
 *     jail, run a command, tear it down); print "ok" or the reason.
 *
 * Exit status 125: berth-jail itself failed (one line on stderr).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/nsfs.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "proto.h"

#define NS_FLAGS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)

static _Noreturn void
usage (void)
{
  fputs ("usage: berth-jail create --state DIR [--profile restricted|workspace|network] [--workspace DIR]\n"
         "                         [--bind SRC[:DEST[:ro|rw]]]... [--hide PATH]... [--owner-pid PID]\n"
         "                         [--memory-mb N] [--cpu-seconds N] [--max-procs N]\n"
         "       berth-jail exec --state DIR [--cwd DIR] [--keep-session] -- ARGV...\n"
         "       berth-jail destroy --state DIR\n"
         "       berth-jail status --state DIR\n"
         "       berth-jail probe [--network] [--full]\n",
         stderr);
  exit (2);
}

static int64_t
arg_int (const char *opt, const char *v)
{
  int64_t n;
  if (parse_int64 (v, &n) < 0 || n < 0)
    die ("%s: '%s' is not a non-negative integer", opt, v ? v : "");
  return n;
}

static int
parse_profile (const char *s)
{
  if (strcmp (s, "restricted") == 0)
    return JAIL_PROFILE_RESTRICTED;
  if (strcmp (s, "workspace") == 0)
    return JAIL_PROFILE_WORKSPACE;
  if (strcmp (s, "network") == 0)
    return JAIL_PROFILE_NETWORK;
  die ("unknown profile '%s' (expected restricted, workspace or network)", s);
}

/* --bind SRC[:DEST[:ro|rw]]  (read-only unless :rw, like the operator
   binds of terminal.bwrap_binds).  */
static void
add_bind (struct jail_opts *o, const char *src, const char *dest, bool ro)
{
  if (o->n_binds >= JAIL_MAX_BINDS)
    die ("too many binds (at most %d)", JAIL_MAX_BINDS);
  o->binds[o->n_binds++] = (struct jail_bind) { .src = src, .dest = dest ? dest : src, .ro = ro };
}

static void
parse_bind_spec (struct jail_opts *o, const char *spec)
{
  char *s = xstrdup (spec), *dest = NULL, *mode = NULL;
  bool ro = true;
  dest = strchr (s, ':');
  if (dest)
    {
      *dest++ = '\0';
      mode = strchr (dest, ':');
      if (mode)
        *mode++ = '\0';
      if (*dest == '\0')
        dest = NULL;
    }
  if (mode)
    {
      if (strcmp (mode, "ro") == 0)
        ro = true;
      else if (strcmp (mode, "rw") == 0)
        ro = false;
      else
        die ("--bind %s: mode must be ro or rw", spec);
    }
  add_bind (o, s, dest, ro);
}

/* ---- the state directory ---- */

static void
check_state_dir (const char *dir, bool create)
{
  struct stat sb;
  if (dir == NULL)
    die ("--state DIR is required");
  if (dir[0] != '/')
    die ("--state %s: must be an absolute path", dir);
  if (create && mkdir (dir, 0700) < 0 && errno != EEXIST)
    die_errno (errno, "cannot create the state directory %s", dir);
  if (lstat (dir, &sb) < 0)
    die_errno (errno, "state directory %s", dir);
  if (!S_ISDIR (sb.st_mode))
    die ("state directory %s is not a directory", dir);
  if (sb.st_uid != geteuid ())
    die ("state directory %s is not owned by uid %u", dir, (unsigned) geteuid ());
  if (sb.st_mode & 077)
    die ("state directory %s must be mode 0700 (is %04o)", dir, (unsigned) (sb.st_mode & 07777));
}

static int
lock_state (const char *dir)
{
  char *path = xasprintf ("%s/" JAIL_LOCK_FILE, dir);
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    die_errno (errno, "cannot open %s", path);
  if (flock (fd, LOCK_EX) < 0)
    die_errno (errno, "cannot lock %s", path);
  free (path);
  return fd;
}

/* ---- create ---- */

static void
write_maps (uid_t uid, gid_t gid)
{
  char map[64];
  int r;
  struct jail_host_facts f;
  r = write_file ("/proc/self/setgroups", "deny");
  if (r < 0 && r != -ENOENT)
    goto fail;
  snprintf (map, sizeof map, "%u %u 1\n", (unsigned) uid, (unsigned) uid);
  if ((r = write_file ("/proc/self/uid_map", map)) < 0)
    goto fail;
  snprintf (map, sizeof map, "%u %u 1\n", (unsigned) gid, (unsigned) gid);
  if ((r = write_file ("/proc/self/gid_map", map)) < 0)
    goto fail;
  return;
fail:
  jail_host_facts_read ("/", &f);
  die ("%s", jail_diagnose (&f, JAIL_STEP_UIDMAP, -r));
}

static void
loopback_up (void)
{
  struct ifreq ifr = { 0 };
  int s = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct jail_host_facts f;
  strcpy (ifr.ifr_name, "lo");
  if (s < 0 || ioctl (s, SIOCGIFFLAGS, &ifr) < 0)
    goto fail;
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl (s, SIOCSIFFLAGS, &ifr) < 0)
    goto fail;
  close (s);
  return;
fail:
  jail_host_facts_read ("/", &f);
  die ("%s", jail_diagnose (&f, JAIL_STEP_NET, errno));
}

/* The jail's pid 1: reaps orphans; exits (taking every process of the
   pid namespace with it) when the owner exits.  */
static _Noreturn void
init_main (const struct jail_opts *o, bool netns, bool legacy, int status_fd, int owner_fd, uid_t uid, gid_t gid)
{
  sigset_t set;
  int sfd, devnull, lfd;
  struct sock_fprog prog;
  struct jail_serve_ctx ctx = { .memory_mb = o->memory_mb, .cpu_seconds = o->cpu_seconds, .max_procs = o->max_procs, .seccomp = &prog };
  char wsbuf[4096];

  jail_report_fd = status_fd;
  prctl (PR_SET_PDEATHSIG, SIGKILL); /* a half-built jail dies with create */
  write_maps (uid, gid);
  /* While the state directory is still visible: it is hidden later.  */
  lfd = jail_serve_bind (o->state);
  if (o->workspace && realpath (o->workspace, wsbuf))
    ctx.workspace = wsbuf;
  jail_setup_mounts (o, legacy);
  jail_build_seccomp (&prog);
  if (sethostname ("berth", 5) < 0)
    die_errno (errno, "sethostname");
  if (netns)
    loopback_up ();
  prctl (PR_SET_NAME, JAIL_INIT_NAME);
  /* Stays dumpable: exec (same uid, outside) must reach /proc/PID/ns.
     Jailed commands cannot ptrace or read it: their capability sets are
     not a superset of init's.  */

  devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || dup2 (devnull, 0) < 0 || dup2 (devnull, 1) < 0 || dup2 (devnull, 2) < 0)
    die_errno (errno, "cannot redirect the jail init's stdio to /dev/null");
  for (int fd = 3; fd < 1024; fd++)
    if (fd != status_fd && fd != owner_fd && fd != lfd)
      close (fd);
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0 || (sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
    die_errno (errno, "signalfd");
  setsid ();
  prctl (PR_SET_PDEATHSIG, 0);
  if (write (status_fd, "OK\n", 3) != 3)
    _exit (JAIL_EXIT_FAILURE);
  close (status_fd);
  jail_report_fd = -1;

  for (;;)
    {
      struct pollfd p[3] = { { .fd = sfd, .events = POLLIN }, { .fd = lfd, .events = POLLIN },
                             { .fd = owner_fd, .events = POLLIN } };
      struct signalfd_siginfo si;
      if (poll (p, owner_fd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
        _exit (1);
      if (owner_fd >= 0 && (p[2].revents & (POLLIN | POLLHUP)))
        _exit (0);
      if (p[1].revents & POLLIN)
        jail_serve_accept (lfd, &ctx);
      while (read (sfd, &si, sizeof si) == sizeof si)
        ;
      jail_serve_reap ();
    }
}

static int
cmd_create (struct jail_opts *o, bool legacy)
{
  struct jail_state st = { 0 }, old;
  int lockfd, status[2], owner_fd = -1, r;
  bool netns = o->profile != JAIL_PROFILE_NETWORK, had_jail;
  char msg[4200];
  ssize_t n = 0;
  pid_t pid;
  char nspath[64];
  struct stat sb;
  uid_t uid = getuid ();
  gid_t gid = getgid ();

  check_state_dir (o->state, true);
  if (o->workspace && strlen (o->workspace) >= sizeof st.workspace)
    die ("workspace path too long");
  lockfd = lock_state (o->state);
  r = jail_state_read (o->state, &old);
  had_jail = r == 0 || r == -EBADMSG;
  if (r == 0)
    {
      int fd = jail_state_open (&old);
      if (fd >= 0)
        {
          close (fd);
          puts ("running");
          return 0;
        }
    }

  if (o->owner > 0)
    {
      owner_fd = (int) syscall (SYS_pidfd_open, o->owner, 0);
      if (owner_fd < 0)
        die_errno (errno, "--owner-pid %d", (int) o->owner);
      /* Not CLOEXEC-sensitive: the init keeps it, nothing execs there.  */
    }
  if (pipe2 (status, O_CLOEXEC) < 0)
    die_errno (errno, "pipe");
  fflush (NULL);
  pid = (pid_t) syscall (SYS_clone, (unsigned long) (NS_FLAGS | (netns ? CLONE_NEWNET : 0) | SIGCHLD), NULL, NULL, NULL, 0);
  if (pid < 0)
    {
      struct jail_host_facts f;
      int e = errno;
      jail_host_facts_read ("/", &f);
      die ("%s", jail_diagnose (&f, JAIL_STEP_USERNS, e));
    }
  if (pid == 0)
    {
      close (status[0]);
      close (lockfd);
      init_main (o, netns, legacy, status[1], owner_fd, uid, gid);
    }
  close (status[1]);
  if (owner_fd >= 0)
    close (owner_fd);
  for (;;)
    {
      ssize_t k = read (status[0], msg + n, sizeof msg - 1 - n);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        break;
      n += k;
      if ((size_t) n >= sizeof msg - 1)
        break;
    }
  msg[n] = '\0';
  close (status[0]);
  if (strcmp (msg, "OK\n") != 0)
    {
      char *nl = strchr (msg, '\n');
      if (nl)
        *nl = '\0';
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      die ("%s", n > 0 ? msg : "the jail's init died during setup");
    }

  st.pid = pid;
  st.starttime = proc_starttime (pid);
  snprintf (nspath, sizeof nspath, "/proc/%d/ns/user", (int) pid);
  if (st.starttime == 0 || stat (nspath, &sb) < 0)
    {
      kill (pid, SIGKILL);
      die ("the jail's init exited right after setup");
    }
  st.userns = sb.st_ino;
  st.netns = netns;
  st.memory_mb = o->memory_mb;
  st.cpu_seconds = o->cpu_seconds;
  st.max_procs = o->max_procs;
  if (o->workspace)
    {
      char buf[4096];
      if (realpath (o->workspace, buf) && strlen (buf) < sizeof st.workspace)
        strcpy (st.workspace, buf);
    }
  if ((r = jail_state_write (o->state, &st)) < 0)
    {
      kill (pid, SIGKILL);
      die_errno (-r, "cannot record the jail in %s", o->state);
    }
  puts (had_jail ? "recreated" : "created");
  close (lockfd);
  return 0;
}

/* ---- exec ---- */

static void
verify_jail_init (const struct jail_state *st)
{
  char path[64], comm[64];
  struct stat self, parent;
  int fd, pfd;
  snprintf (path, sizeof path, "/proc/%d/comm", (int) st->pid);
  if (read_file_buf (path, comm, sizeof comm) <= 0 || strcmp (comm, JAIL_INIT_NAME "\n") != 0)
    die ("pid %d recorded in the state directory is not a berth jail", (int) st->pid);
  /* The jail's user namespace must be a child of ours: the record cannot
     point exec at a host process.  */
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) st->pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    die_errno (errno, "%s", path);
  pfd = ioctl (fd, NS_GET_PARENT);
  if (pfd < 0 || fstat (pfd, &parent) < 0 || stat ("/proc/self/ns/user", &self) < 0 || parent.st_ino != self.st_ino
      || parent.st_dev != self.st_dev)
    die ("pid %d recorded in the state directory is not a jail created by this user", (int) st->pid);
  close (pfd);
  close (fd);
}

static void
join (const struct jail_state *st, int pidfd)
{
  static const struct
  {
    int flag;
    const char *name;
  } order[] = { { CLONE_NEWUSER, "user" }, { CLONE_NEWNS, "mnt" },  { CLONE_NEWPID, "pid" },   { CLONE_NEWIPC, "ipc" },
                { CLONE_NEWUTS, "uts" },   { CLONE_NEWCGROUP, "cgroup" }, { CLONE_NEWNET, "net" } };
  int flags = NS_FLAGS | (st->netns ? CLONE_NEWNET : 0);
  /* One atomic setns on the pidfd (Linux >= 5.8)...  */
  if (setns (pidfd, flags) == 0)
    return;
  if (errno != EINVAL)
    die_errno (errno, "cannot join the jail (setns)");
  /* ...or namespace by namespace, user first.  */
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    {
      char path[64];
      int fd;
      if (!(flags & order[i].flag))
        continue;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) st->pid, order[i].name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns (fd, order[i].flag) < 0)
        die_errno (errno, "cannot join the jail's %s namespace", order[i].name);
      close (fd);
    }
}

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGALRM, SIGCONT };

static int
cmd_exec (const char *state, const char *cwd, bool keep_session, char **argv)
{
  struct jail_state st;
  char here[4096];
  int pidfd, r, errpipe[2], child_err = 0, status;
  sigset_t set, old;
  pid_t child;

  check_state_dir (state, false);
  r = jail_state_read (state, &st);
  if (r == -ENOENT)
    die ("no jail in %s (run berth-jail create first)", state);
  if (r < 0)
    die_errno (-r, "cannot read the jail record in %s", state);
  pidfd = jail_state_open (&st);
  if (pidfd < 0)
    die ("the jail in %s is not running (its init exited); create it again", state);
  verify_jail_init (&st);
  if (cwd == NULL)
    cwd = getcwd (here, sizeof here);

  join (&st, pidfd);
  close (pidfd);
  if (cwd == NULL || chdir (cwd) < 0)
    if (st.workspace[0] == '\0' || chdir (st.workspace) < 0)
      if (chdir ("/") < 0)
        die_errno (errno, "chdir /");

  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigprocmask (SIG_BLOCK, &set, &old);
  if (pipe2 (errpipe, O_CLOEXEC) < 0)
    die_errno (errno, "pipe");
  fflush (NULL);
  child = fork (); /* enters the jail's pid namespace */
  if (child < 0)
    die_errno (errno, "fork");
  if (child == 0)
    {
      int e;
      close (errpipe[0]);
      sigprocmask (SIG_SETMASK, &old, NULL);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (!keep_session)
        setsid ();
      jail_set_rlimits (st.memory_mb, st.cpu_seconds, st.max_procs);
      jail_drop_caps ();
      jail_set_no_new_privs ();
      jail_load_seccomp ();
      /* Agent sockets are masked in the jail; their variables go too.  */
      unsetenv ("SSH_AUTH_SOCK");
      unsetenv ("GPG_AGENT_INFO");
      unsetenv ("DBUS_SESSION_BUS_ADDRESS");
      execvp (argv[0], argv);
      e = errno;
      if (write (errpipe[1], &e, sizeof e) < 0)
        _exit (127);
      _exit (e == ENOENT ? 127 : 126);
    }
  close (errpipe[1]);
  {
    /* The parent stays outside the pid namespace; it needs no privilege.  */
    cap_t none = cap_init ();
    if (none)
      {
        cap_set_proc (none);
        cap_free (none);
      }
  }
  while ((r = read (errpipe[0], &child_err, sizeof child_err)) < 0 && errno == EINTR)
    ;
  close (errpipe[0]);
  if (r == sizeof child_err)
    {
      waitpid (child, &status, 0);
      fprintf (stderr, "berth-jail: cannot execute %s: %s\n", argv[0], strerror (child_err));
      return child_err == ENOENT ? 127 : 126;
    }

  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (&set, &si);
      if (sig < 0)
        continue;
      if (sig == SIGCHLD)
        {
          pid_t w = waitpid (child, &status, WNOHANG);
          if (w == child)
            break;
          continue;
        }
      kill (keep_session ? child : -child, sig);
    }
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    {
      int sig = WTERMSIG (status);
      struct rlimit zero = { 0, 0 };
      setrlimit (RLIMIT_CORE, &zero);
      signal (sig, SIG_DFL);
      sigemptyset (&set);
      sigaddset (&set, sig);
      sigprocmask (SIG_UNBLOCK, &set, NULL);
      raise (sig);
      return 128 + sig;
    }
  return JAIL_EXIT_FAILURE;
}

/* ---- destroy, status ---- */

static int
cmd_destroy (const char *state)
{
  struct jail_state st;
  char path[4200];
  int lockfd, pidfd, r;
  struct stat sb;
  if (lstat (state, &sb) < 0 && errno == ENOENT)
    return 0;
  check_state_dir (state, false);
  lockfd = lock_state (state);
  r = jail_state_read (state, &st);
  snprintf (path, sizeof path, "%s/" JAIL_STATE_FILE, state);
  if (r == 0 && (pidfd = jail_state_open (&st)) >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      /* pid 1 exits; the kernel kills the rest of its pid namespace before
         the pidfd reports the exit.  */
      if (syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno != ESRCH)
        die_errno (errno, "cannot kill the jail (pid %d)", (int) st.pid);
      if (poll (&p, 1, 10000) <= 0)
        die ("the jail (pid %d) did not exit within 10 s", (int) st.pid);
      close (pidfd);
    }
  if (unlink (path) < 0 && errno != ENOENT)
    die_errno (errno, "cannot remove %s", path);
  snprintf (path, sizeof path, "%s/" JAIL_SOCKET_FILE, state);
  unlink (path);
  close (lockfd);
  return 0;
}

static int
cmd_status (const char *state)
{
  struct jail_state st;
  int fd;
  if (jail_state_read (state, &st) < 0)
    return 1;
  fd = jail_state_open (&st);
  if (fd < 0)
    return 1;
  close (fd);
  printf ("running pid=%d netns=%d\n", (int) st.pid, st.netns ? 1 : 0);
  return 0;
}

/* ---- probe ---- */

/* Run this program with ARGS, collecting stdout+stderr; exit status.  */
static int
run_self (char *const args[], char *out, size_t outsz)
{
  int p[2], status;
  size_t n = 0;
  pid_t pid;
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  fflush (NULL);
  pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      int devnull = open ("/dev/null", O_RDONLY);
      dup2 (devnull, 0);
      dup2 (p[1], 1);
      dup2 (p[1], 2);
      execv ("/proc/self/exe", args);
      _exit (127);
    }
  close (p[1]);
  for (;;)
    {
      ssize_t k = read (p[0], out + n, outsz - 1 - n);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0 || (n += k) >= outsz - 1)
        break;
    }
  out[n] = '\0';
  close (p[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

/* The quick probe: in one throw-away child with the jail's namespaces,
   the steps that fail on hosts that cannot confine (maps, propagation,
   tmpfs, a fresh procfs, the mount API, loopback, seccomp).  */
static int
cmd_probe_quick (bool network)
{
  int p[2], status;
  char msg[4200];
  ssize_t n = 0;
  pid_t pid;
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  if (pipe2 (p, O_CLOEXEC) < 0)
    die_errno (errno, "pipe");
  fflush (NULL);
  pid = (pid_t) syscall (SYS_clone, (unsigned long) (NS_FLAGS | (network ? 0 : CLONE_NEWNET) | SIGCHLD), NULL, NULL, NULL, 0);
  if (pid < 0)
    {
      struct jail_host_facts f;
      int e = errno;
      jail_host_facts_read ("/", &f);
      printf ("%s\n", jail_diagnose (&f, JAIL_STEP_USERNS, e));
      return 1;
    }
  if (pid == 0)
    {
      struct jail_host_facts f;
      struct sock_fprog prog;
      int fd;
      close (p[0]);
      jail_report_fd = p[1];
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      write_maps (uid, gid);
      jail_host_facts_read ("/", &f);
      if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0 || mount ("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0
          || mkdir ("/tmp/proc", 0755) < 0)
        die ("%s", jail_diagnose (&f, JAIL_STEP_MOUNT, errno));
      if (mount ("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        die ("%s", jail_diagnose (&f, JAIL_STEP_PROC, errno));
      fd = open_tree (AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (fd >= 0)
        {
          struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                     .propagation = MS_PRIVATE };
          if (mount_setattr (fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0 && errno != ENOSYS)
            die ("%s", jail_diagnose (&f, JAIL_STEP_MOUNT, errno));
          close (fd);
        }
      else if (errno != ENOSYS)
        die ("%s", jail_diagnose (&f, JAIL_STEP_MOUNT, errno));
      if (!network)
        loopback_up ();
      jail_build_seccomp (&prog);
      if (write (p[1], "OK\n", 3) != 3)
        _exit (1);
      _exit (0);
    }
  close (p[1]);
  for (;;)
    {
      ssize_t k = read (p[0], msg + n, sizeof msg - 1 - n);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0 || (size_t) (n += k) >= sizeof msg - 1)
        break;
    }
  msg[n] = '\0';
  close (p[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (strcmp (msg, "OK\n") != 0)
    {
      printf ("%s%s", n > 0 ? msg : "the probe's namespace child died\n", n > 0 && msg[n - 1] != '\n' ? "\n" : "");
      return 1;
    }
  puts ("ok");
  return 0;
}

/* The full probe: a real jail, a command in it, torn down.  */
static int
cmd_probe (bool network)
{
  char dir[] = "/tmp/berth-jail-probe.XXXXXX", owner[32], out[4200];
  int r;
  if (mkdtemp (dir) == NULL)
    die_errno (errno, "mkdtemp");
  snprintf (owner, sizeof owner, "%d", (int) getpid ());
  {
    char *args[] = { "berth-jail", "create", "--state", dir, "--profile", network ? "network" : "workspace",
                     "--owner-pid", owner, NULL };
    r = run_self (args, out, sizeof out);
  }
  if (r == 0)
    {
      char *args[] = { "berth-jail", "exec", "--state", dir, "--", "true", NULL };
      r = run_self (args, out, sizeof out);
      if (r != 0 && out[0] == '\0')
        snprintf (out, sizeof out, "berth-jail: a trial command failed in the jail (status %d)\n", r);
    }
  {
    char *args[] = { "berth-jail", "destroy", "--state", dir, NULL };
    char ignored[256];
    run_self (args, ignored, sizeof ignored);
  }
  {
    char *p = xasprintf ("%s/" JAIL_LOCK_FILE, dir);
    unlink (p);
    free (p);
    rmdir (dir);
  }
  if (r != 0)
    {
      fputs (out, stdout);
      return 1;
    }
  puts ("ok");
  return 0;
}

int
main (int argc, char **argv)
{
  struct jail_opts o = { .profile = JAIL_PROFILE_WORKSPACE };
  const char *cmd, *cwd = NULL;
  bool legacy = getenv ("BERTH_JAIL_LEGACY_MOUNT") != NULL, keep_session = false, network = false, full = false;
  int i;

  if (argc < 2)
    usage ();
  cmd = argv[1];
  o.home = getenv ("HOME");
  for (i = 2; i < argc; i++)
    {
      const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die ("%s needs an argument", a), (char *) NULL))
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      else if (strcmp (a, "--state") == 0)
        o.state = NEXT ();
      else if (strcmp (a, "--profile") == 0)
        o.profile = parse_profile (NEXT ());
      else if (strcmp (a, "--workspace") == 0)
        o.workspace = NEXT ();
      else if (strcmp (a, "--bind") == 0)
        parse_bind_spec (&o, NEXT ());
      else if (strcmp (a, "--bind-to") == 0 || strcmp (a, "--ro-bind-to") == 0)
        {
          const char *src = NEXT ();
          add_bind (&o, src, NEXT (), strcmp (a, "--ro-bind-to") == 0);
        }
      else if (strcmp (a, "--hide") == 0)
        {
          if (o.n_hides >= JAIL_MAX_HIDES)
            die ("too many --hide (at most %d)", JAIL_MAX_HIDES);
          o.hides[o.n_hides++] = NEXT ();
        }
      else if (strcmp (a, "--home") == 0)
        o.home = NEXT ();
      else if (strcmp (a, "--owner-pid") == 0)
        o.owner = (pid_t) arg_int (a, NEXT ());
      else if (strcmp (a, "--memory-mb") == 0)
        o.memory_mb = arg_int (a, NEXT ());
      else if (strcmp (a, "--cpu-seconds") == 0)
        o.cpu_seconds = arg_int (a, NEXT ());
      else if (strcmp (a, "--max-procs") == 0)
        o.max_procs = arg_int (a, NEXT ());
      else if (strcmp (a, "--legacy-mount") == 0)
        legacy = true;
      else if (strcmp (a, "--cwd") == 0)
        cwd = NEXT ();
      else if (strcmp (a, "--keep-session") == 0)
        keep_session = true;
      else if (strcmp (a, "--network") == 0)
        network = true;
      else if (strcmp (a, "--full") == 0)
        full = true;
      else
        die ("unknown option %s (see berth-jail --help)", a);
#undef NEXT
    }

  if (strcmp (cmd, "create") == 0)
    return cmd_create (&o, legacy);
  if (strcmp (cmd, "exec") == 0)
    {
      if (i >= argc)
        die ("exec: no command after --");
      return cmd_exec (o.state, cwd, keep_session, argv + i);
    }
  if (strcmp (cmd, "destroy") == 0)
    {
      if (o.state == NULL)
        die ("--state DIR is required");
      return cmd_destroy (o.state);
    }
  if (strcmp (cmd, "status") == 0)
    {
      if (o.state == NULL)
        die ("--state DIR is required");
      return cmd_status (o.state);
    }
  if (strcmp (cmd, "probe") == 0)
    return full ? cmd_probe (network) : cmd_probe_quick (network);
  usage ();
}
