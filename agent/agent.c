/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth-agent: the in-environment agent (DESIGN 2.1).  A small,
   single-threaded, statically linked program that berth places in an
   environment and starts once through the backend's own transport; it
   then runs every command of that environment over one stream of frames
   (agent/proto.h), multiplexed by channel id.
 *
 *   berth-agent --stdio [--socket PATH]   serve the controller on stdin/stdout
 *   berth-agent --stdio --serve [--detach] --socket PATH
 *                                         the same, and keep serving PATH when
 *                                         no controller is left: a named
 *                                         environment's agent, which every
 *                                         later berth process reaches at
 *                                         PATH; --detach: leave the process
 *                                         that started us (a local berth,
 *                                         which kills its child when it lets
 *                                         go of the stream)
 *   BERTH_AGENT_SERVE=1 berth-agent --stdio --socket PATH
 *                                         a detached start (slurm's own
 *                                         step): make sure an agent serves
 *                                         PATH, print its HELLO
 *   berth-agent --version                 print the version and exit
 *
 * With --socket, the first agent of an environment also listens on PATH
 * (a UNIX socket inside the environment) for later controllers; a second
 * `--stdio --socket PATH` finding an agent there only relays its stdio to
 * it, so every berth process of one environment shares one agent.
 *
 * Processes: each in its own session (setsid; process group = pid), in a
 * cgroup v2 sub-group when the agent may create one.  A kill takes the
 * whole tree: the sub-group, the process group, and a /proc scan for the
 * same session, descendants and the job token (BERTH_JOB=) that setsid
 * escapees keep.  The agent is a child subreaper, so orphans are reaped
 * here.
 *
 * Supervision, kept simple: a controller that goes (EOF, error) takes its
 * foreground processes with it after GRACE_MS; detached ones live on,
 * their output kept in a bounded buffer (HISTORY_MAX, oldest dropped with
 * a marker) for a later ATTACH.  The agent exits when no controller is
 * left and it has no detached process running -- unless it serves
 * (--serve): then it lives as long as its socket, until a signal ends it
 * (the slurm backend runs it so, as a step of the allocation that outlives
 * every berth process, so that what they start in the background does
 * too).  */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "proto.h"
#include "pty-run.h"

/* A test build (tests/integration/berth-agent-other) says another version.  */
#ifdef BERTH_AGENT_TEST_VERSION
#define AGENT_VERSION BERTH_AGENT_TEST_VERSION
#else
#define AGENT_VERSION BERTH_AGENT_VERSION
#endif
#define GRACE_MS 300
#define HISTORY_MAX (1u << 20)
#define TX_HIGH (4u << 20) /* stop reading children while a controller lags */
#define MAX_CTL 64
#define MAX_CHAN 1024
#define MARK_VAR "BERTH_AGENT_PROC"

typedef struct ctl
{
  int in, out;
  berth_agent_buf rx, tx;
  uint32_t fd3_chan; /* FD3 bytes collected for this channel's RUN */
  berth_agent_buf fd3;
  bool hello, closing, dead;
} ctl;

typedef struct chan
{
  uint32_t id;  /* the owner's name for it (ids are per controller) */
  uint32_t gid; /* the agent's (LIST, ATTACH) */
  ctl *owner;
  pid_t pid;
  uint32_t flags;
  int in, out, err;
  berth_agent_buf inq;
  bool close_stdin, stdin_broken;
  uint32_t credit;
  bool reaped, exit_sent, released, kill_pending;
  int wstatus;
  uint64_t kill_at; /* ms: an orphaned foreground tree goes at this time */
  berth_agent_buf hist;
  size_t dropped;
  char cg[PATH_MAX];
  unsigned long long oom_before;
  char *argv0;
  bool wrapper;     /* the runtime's `bash -c '. /dev/fd/3'`: a spare follows it */
  char **spare_env; /* its environment (NULL: inherited) */
} chan;

static ctl *ctls[MAX_CTL];
static chan *chans[MAX_CHAN];
static int listen_fd = -1;
static char *socket_path;
static bool serve_socket; /* --serve: no controller left is no reason to exit */
static dev_t socket_dev; /* the socket file we bound (check_socket) */
static ino_t socket_ino;
#define SOCKET_CHECK_MS 10000
static char cg_base[PATH_MAX]; /* "" when no sub-groups */
static uint32_t mark_gid; /* the gid the next child marks itself with (child_exec) */
static unsigned cg_seq;

static _Noreturn void shutdown_all (int code);

static void
die (const char *msg)
{
  fprintf (stderr, "berth-agent: %s\n", msg);
  exit (125);
}

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static void
set_nonblock (int fd)
{
  int fl = fcntl (fd, F_GETFL);
  if (fl >= 0)
    fcntl (fd, F_SETFL, fl | O_NONBLOCK);
  fcntl (fd, F_SETFD, FD_CLOEXEC);
}

static void
xput (int r)
{
  if (r < 0)
    die ("out of memory");
}

/* ---- cgroups ---- */

/* The cgroup v1 memory controller's directory of ours ("" none): where a
   host without cgroup v2 (or a container on one) counts OOM kills.  */
static char cg_mem_v1[PATH_MAX];

static bool
read_oom_kill (const char *file, unsigned long long *v)
{
  char line[256];
  FILE *f = fopen (file, "re");
  bool found = false;
  if (f == NULL)
    return false;
  while (!found && fgets (line, sizeof line, f))
    found = sscanf (line, "oom_kill %llu", v) == 1;
  fclose (f);
  return found;
}

/* OOM kills so far in DIR (cgroup v2: memory.events), else in our v1
   memory group (memory.oom_control): compared before and after a
   command.  */
static unsigned long long
oom_kills (const char *dir)
{
  char p[PATH_MAX + 32];
  unsigned long long v = 0;
  snprintf (p, sizeof p, "%s/memory.events", dir);
  if (dir[0] && read_oom_kill (p, &v))
    return v;
  snprintf (p, sizeof p, "%s/memory.oom_control", cg_mem_v1);
  if (cg_mem_v1[0] && read_oom_kill (p, &v))
    return v;
  return 0;
}

static char cg_self[PATH_MAX];

/* Sub-groups only where the agent may make them: cgroup v2, and our own
   group is ours (delegated to our uid) or the root of a private cgroup
   namespace (a container with a writable cgroupfs).  */
static void
cgroup_setup (void)
{
  char line[PATH_MAX];
  FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return;
  bool v2 = false;
  while (fgets (line, sizeof line, f))
    {
      line[strcspn (line, "\n")] = '\0';
      char *sub = strchr (line, ':'), *path = sub ? strchr (sub + 1, ':') : NULL;
      if (strncmp (line, "0::", 3) == 0)
        v2 = (size_t) snprintf (cg_self, sizeof cg_self, "/sys/fs/cgroup%s", line + 3) < sizeof cg_self;
      else if (sub && path && (size_t) (path - sub - 1) == strlen ("memory") && strncmp (sub + 1, "memory", 6) == 0)
        {
          /* v1: our group, else the mount's root (a container's own group
             seen from inside it) */
          struct stat mst;
          if ((size_t) snprintf (cg_mem_v1, sizeof cg_mem_v1, "/sys/fs/cgroup/memory%s", path + 1) >= sizeof cg_mem_v1 || stat (cg_mem_v1, &mst) < 0)
            snprintf (cg_mem_v1, sizeof cg_mem_v1, "/sys/fs/cgroup/memory");
        }
    }
  fclose (f);
  if (!v2)
    return;
  struct stat st;
  if (stat (cg_self, &st) < 0)
    return;
  bool mine = geteuid () != 0 && st.st_uid == geteuid ();
  bool ns_root = geteuid () == 0 && strcmp (cg_self, "/sys/fs/cgroup/") == 0;
  if (!(mine || ns_root) || access (cg_self, W_OK) < 0)
    return;
  if ((size_t) snprintf (cg_base, sizeof cg_base, "%s/berth-agent.%ld", cg_self, (long) getpid ()) >= sizeof cg_base)
    {
      cg_base[0] = '\0';
      return;
    }
  size_t n = strlen (cg_base);
  if (n > 1 && cg_base[n - 1] == '/')
    cg_base[n - 1] = '\0';
  if (mkdir (cg_base, 0755) < 0 && errno != EEXIST)
    cg_base[0] = '\0';
}

static void
cgroup_kill (const char *dir)
{
  char p[PATH_MAX + 32];
  snprintf (p, sizeof p, "%s/cgroup.kill", dir);
  int fd = open (p, O_WRONLY | O_CLOEXEC);
  if (fd >= 0)
    {
      if (write (fd, "1", 1) == 1)
        {
          close (fd);
          return;
        }
      close (fd);
    }
  snprintf (p, sizeof p, "%s/cgroup.procs", dir);
  FILE *f = fopen (p, "re");
  long pid;
  if (f == NULL)
    return;
  while (fscanf (f, "%ld", &pid) == 1)
    kill ((pid_t) pid, SIGKILL);
  fclose (f);
}

/* ---- process trees ---- */

typedef struct pinfo
{
  pid_t pid, ppid, pgrp, sid;
} pinfo;

static bool
read_stat (pid_t pid, pinfo *pi)
{
  char p[64], buf[1024];
  snprintf (p, sizeof p, "/proc/%ld/stat", (long) pid);
  int fd = open (p, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  char *e = strrchr (buf, ')');
  char state;
  long ppid, pgrp, sid;
  if (e == NULL || sscanf (e + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &sid) != 4 || state == 'Z')
    return false;
  *pi = (pinfo){ pid, (pid_t) ppid, (pid_t) pgrp, (pid_t) sid };
  return true;
}

static bool
has_token (pid_t pid, const char *needle, size_t nlen, const char *mark, size_t mlen)
{
  char p[64];
  static char buf[256 << 10];
  snprintf (p, sizeof p, "/proc/%ld/environ", (long) pid);
  int fd = open (p, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf);
  close (fd);
  for (ssize_t i = 0; n > 0 && i < n;)
    {
      size_t l = strnlen (buf + i, (size_t) (n - i));
      if ((nlen && l == nlen && memcmp (buf + i, needle, nlen) == 0) || (mlen && l == mlen && memcmp (buf + i, mark, mlen) == 0))
        return true;
      i += (ssize_t) l + 1;
    }
  return false;
}

/* One round: SIGKILL every process of the tree rooted at ROOT (its
   session, its process group, its descendants) and every process with
   TOKEN in its environment.  Returns how many were signalled.  */
static unsigned
kill_round (pid_t root, const char *token, uint32_t gid)
{
  char needle[128] = "", mark[64] = "";
  size_t nlen = 0, mlen = 0;
  if (token && *token)
    nlen = (size_t) snprintf (needle, sizeof needle, "BERTH_JOB=%s", token);
  if (gid)
    mlen = (size_t) snprintf (mark, sizeof mark, "%s=%ld.%u", MARK_VAR, (long) getpid (), gid);
  if (root > 0)
    kill (-root, SIGKILL);
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return 0;
  static pinfo ps[65536];
  size_t np = 0;
  struct dirent *de;
  pid_t self = getpid ();
  while ((de = readdir (d)) && np < sizeof ps / sizeof ps[0])
    {
      char *end;
      long v = strtol (de->d_name, &end, 10);
      if (*end || v <= 0 || v == self)
        continue;
      if (read_stat ((pid_t) v, &ps[np]))
        np++;
    }
  closedir (d);
  unsigned n = 0;
  for (size_t i = 0; i < np; i++)
    {
      bool hit = false;
      if (root > 0 && (ps[i].pid == root || ps[i].sid == root || ps[i].pgrp == root))
        hit = true;
      /* descendants: walk the parent chain (bounded) */
      for (pid_t p = ps[i].ppid, depth = 0; root > 0 && !hit && p > 1 && p != self && depth < 256; depth++)
        {
          if (p == root)
            {
              hit = true;
              break;
            }
          size_t j;
          for (j = 0; j < np && ps[j].pid != p; j++)
            ;
          p = j < np ? ps[j].ppid : 0;
        }
      if (!hit && (nlen || mlen) && has_token (ps[i].pid, needle, nlen, mark, mlen))
        hit = true;
      if (hit && kill (ps[i].pid, SIGKILL) == 0)
        n++;
    }
  return n;
}

static void reap (void);

/* Kill a whole tree and wait (bounded) until nothing of it is left.  */
static unsigned
kill_tree (chan *c, pid_t pid, const char *token)
{
  unsigned total = 0;
  /* After the leader was reaped its session and group ids still name
     what is left of the tree.  */
  pid_t root = c ? c->pid : pid;
  if (c && c->cg[0])
    cgroup_kill (c->cg);
  for (int round = 0; round < 200; round++)
    {
      unsigned n = kill_round (root, token, c ? c->gid : 0);
      total += n;
      reap ();
      if (n == 0)
        break;
      struct timespec ts = { 0, 10 * 1000 * 1000 };
      nanosleep (&ts, NULL);
    }
  return total;
}

/* ---- channels ---- */

static uint32_t next_gid;

static chan *
chan_find (const ctl *k, uint32_t id)
{
  for (size_t i = 0; i < MAX_CHAN; i++)
    if (chans[i] && chans[i]->owner == k && chans[i]->id == id)
      return chans[i];
  return NULL;
}

static bool
chan_alive (const chan *c)
{
  for (size_t i = 0; i < MAX_CHAN; i++)
    if (chans[i] == c)
      return true;
  return false;
}

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/* ---- a warm bash ----
 * The runtime runs every command as the same `bash -c '. /dev/fd/3'`,
 * only the script on fd 3 differs.  After such a command ends, the agent
 * forks and execs the next bash ahead of time, with the same environment,
 * blocked reading its script from a pipe on fd 3; the next matching RUN
 * takes it (its script written into the pipe), so bash's start is off
 * the command's path.  Anything else is started as usual.  */
typedef struct spare
{
  pid_t pid; /* 0: none */
  uint32_t gid; /* its mark (the channel that takes it gets it) */
  int in, out, err, fd3, rep;
  char **env;
  char cg[PATH_MAX + 64];
} spare;
static spare sp;
static uint32_t sp_taken_gid;
static bool spare_next; /* make one after the next flush, with: */
static char **spare_next_env;

static void child_exec (const berth_agent_run *run, int in, int out, int err, int pty_slave, int fd3, const char *cg, int report);

static const char *const wrapper_argv[] = { "bash", "-c", ". /dev/fd/3", NULL };

static bool
is_wrapper (const berth_agent_run *run)
{
  if ((run->flags & ~(uint32_t) BERTH_AGENT_RUN_STDIN) != BERTH_AGENT_RUN_FD3 || run->cwd)
    return false;
  for (size_t i = 0; i < 4; i++)
    if ((run->argv[i] == NULL) != (wrapper_argv[i] == NULL) || (run->argv[i] && strcmp (run->argv[i], wrapper_argv[i]) != 0))
      return false;
  return true;
}

static void
strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

static char **
strv_dup (char *const *v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  char **c = calloc (n + 1, sizeof *c);
  if (c == NULL)
    die ("out of memory");
  for (size_t i = 0; i < n; i++)
    if ((c[i] = strdup (v[i])) == NULL)
      die ("out of memory");
  return c;
}

static bool
strv_equal (char *const *a, char *const *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  size_t i;
  for (i = 0; a[i] && b[i]; i++)
    if (strcmp (a[i], b[i]) != 0)
      return false;
  return a[i] == b[i];
}

static void
spare_close (void)
{
  close_fd (&sp.in);
  close_fd (&sp.out);
  close_fd (&sp.err);
  close_fd (&sp.fd3);
  close_fd (&sp.rep);
  strv_free (sp.env);
  sp.env = NULL;
  sp.pid = 0;
}

/* The spare bash goes (it is its own session).  */
static void
spare_drop (void)
{
  if (sp.pid > 0)
    kill (-sp.pid, SIGKILL);
  spare_close ();
}

/* A command's output pipe holds OUT_READ bytes, read at once into one
   frame: bulk output takes a quarter of the wakeups and frames of the
   default 64 KiB (best effort: over the user's pipe quota it stays).  */
#define OUT_READ (256u << 10)
static void
pipe_widen (int fd)
{
  (void) fcntl (fd, F_SETPIPE_SZ, (int) OUT_READ);
}

static void
spare_make (char **env, bool inherit)
{
  if (sp.pid > 0)
    return;
  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, p3[2] = { -1, -1 }, rep[2] = { -1, -1 };
  if (pipe2 (pin, O_CLOEXEC) < 0 || pipe2 (pout, O_CLOEXEC) < 0 || pipe2 (perr, O_CLOEXEC) < 0 || pipe2 (p3, O_CLOEXEC) < 0
      || pipe2 (rep, O_CLOEXEC) < 0)
    goto fail;
  pipe_widen (pout[0]);
  sp.cg[0] = '\0';
  if (cg_base[0] && ((size_t) snprintf (sp.cg, sizeof sp.cg, "%s/c%u", cg_base, ++cg_seq) >= sizeof sp.cg || mkdir (sp.cg, 0755) < 0))
    sp.cg[0] = '\0';
  berth_agent_run run = { .flags = BERTH_AGENT_RUN_FD3, .argv = (char **) wrapper_argv, .env = inherit ? NULL : env };
  sp.gid = mark_gid = ++next_gid;
  pid_t pid = fork ();
  if (pid < 0)
    goto fail;
  if (pid == 0)
    child_exec (&run, pin[0], pout[1], perr[1], -1, p3[0], sp.cg, rep[1]);
  sp.pid = pid;
  sp.in = pin[1], sp.out = pout[0], sp.err = perr[0], sp.fd3 = p3[1], sp.rep = rep[0];
  sp.env = inherit ? NULL : strv_dup (env);
  close (pin[0]), close (pout[1]), close (perr[1]), close (p3[0]), close (rep[1]);
  return;
fail:
  close_fd (&pin[0]), close_fd (&pin[1]), close_fd (&pout[0]), close_fd (&pout[1]), close_fd (&perr[0]), close_fd (&perr[1]);
  close_fd (&p3[0]), close_fd (&p3[1]), close_fd (&rep[0]), close_fd (&rep[1]);
}

/* Hand the spare to channel C for RUN with its script (DATA, LEN):
   true when taken.  */
static bool
spare_take (chan *c, const berth_agent_run *run, const uint8_t *data, size_t len)
{
  if (sp.pid <= 0 || !is_wrapper (run) || !strv_equal (sp.env, run->env))
    {
      if (sp.pid > 0 && is_wrapper (run))
        spare_drop (); /* another environment now: a new spare later */
      return false;
    }
  /* It exec'd bash (the report pipe closed), or it failed.  */
  int e = 0;
  ssize_t n;
  while ((n = read (sp.rep, &e, sizeof e)) < 0 && errno == EINTR)
    ;
  if (n != 0)
    {
      spare_drop ();
      return false;
    }
  /* The script into its fd 3 (bash reads it to the end, then runs it).  */
  for (size_t off = 0; off < len;)
    {
      ssize_t w = write (sp.fd3, data + off, len - off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        {
          spare_drop ();
          return false;
        }
      off += (size_t) w;
    }
  close_fd (&sp.fd3);
  if (!(run->flags & BERTH_AGENT_RUN_STDIN))
    close_fd (&sp.in); /* no stdin: end of file at once */
  c->pid = sp.pid;
  sp_taken_gid = sp.gid;
  c->in = sp.in, c->out = sp.out, c->err = sp.err;
  sp.in = sp.out = sp.err = -1;
  snprintf (c->cg, sizeof c->cg, "%s", sp.cg);
  c->oom_before = oom_kills (c->cg[0] ? c->cg : cg_self);
  spare_close ();
  return true;
}

static void
chan_free (chan *c)
{
  for (size_t i = 0; i < MAX_CHAN; i++)
    if (chans[i] == c)
      chans[i] = NULL;
  close_fd (&c->in);
  close_fd (&c->out);
  close_fd (&c->err);
  berth_agent_buf_free (&c->inq);
  berth_agent_buf_free (&c->hist);
  if (c->cg[0])
    rmdir (c->cg);
  free (c->argv0);
  strv_free (c->spare_env);
  free (c);
}

static int
send_ctl (ctl *k, int r)
{
  if (r < 0 && k)
    k->dead = true;
  return r;
}

static void
history_add (chan *c, const uint8_t *data, size_t len)
{
  /* Keep the newest HISTORY_MAX bytes.  */
  if (len >= HISTORY_MAX)
    {
      c->dropped += berth_agent_buf_pending (&c->hist) + (len - HISTORY_MAX);
      c->hist.off = c->hist.len = 0;
      data += len - HISTORY_MAX;
      len = HISTORY_MAX;
    }
  size_t have = berth_agent_buf_pending (&c->hist);
  if (have + len > HISTORY_MAX)
    {
      size_t drop = have + len - HISTORY_MAX;
      berth_agent_buf_consume (&c->hist, drop);
      c->dropped += drop;
    }
  xput (berth_agent_buf_add (&c->hist, data, len));
}

/* Read what a child printed on *FD (stream TYPE) and pass it on.  */
static void
chan_read (chan *c, int *fd, uint8_t type)
{
  static uint8_t spare_buf[OUT_READ];
  uint8_t *buf = spare_buf;
  size_t want = sizeof spare_buf;
  if (c->owner && want > c->credit)
    want = c->credit;
  if (want == 0)
    return;
  /* straight into the controller's queue, as a frame */
  if (c->owner)
    xput (berth_agent_frame_begin (&c->owner->tx, want, &buf));
  ssize_t n = read (*fd, buf, want);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      close_fd (fd);
      if (c->owner)
        send_ctl (c->owner, berth_agent_put_eof (&c->owner->tx, c->id, type == BERTH_AGENT_OUT ? BERTH_AGENT_STREAM_OUT : BERTH_AGENT_STREAM_ERR));
      if (c->out < 0 && c->err < 0)
        reap (); /* it is probably gone too: its exit leaves with the EOFs */
      return;
    }
  if (c->owner)
    {
      c->credit -= (uint32_t) n;
      berth_agent_frame_commit (&c->owner->tx, type, c->id, (size_t) n);
    }
  /* A detached process keeps its newest output for the next ATTACH.  */
  if (type == BERTH_AGENT_OUT && (c->flags & BERTH_AGENT_RUN_DETACHED))
    history_add (c, buf, (size_t) n);
}

static void
chan_write_stdin (chan *c)
{
  size_t n = berth_agent_buf_pending (&c->inq);
  if (c->in >= 0 && n > 0)
    {
      ssize_t w = write (c->in, c->inq.data + c->inq.off, n);
      if (w < 0 && errno != EAGAIN && errno != EINTR)
        {
          c->stdin_broken = true; /* the command stopped reading: no error */
          close_fd (&c->in);
        }
      if (w > 0)
        {
          berth_agent_buf_consume (&c->inq, (size_t) w);
          if (c->owner)
            send_ctl (c->owner, berth_agent_put_u32 (&c->owner->tx, BERTH_AGENT_WINDOW_FRAME, c->id, (uint32_t) w));
        }
    }
  if (c->in < 0 && berth_agent_buf_pending (&c->inq) > 0)
    {
      /* nobody reads it any more: acknowledge and drop */
      if (c->owner)
        send_ctl (c->owner, berth_agent_put_u32 (&c->owner->tx, BERTH_AGENT_WINDOW_FRAME, c->id, (uint32_t) berth_agent_buf_pending (&c->inq)));
      c->inq.off = c->inq.len = 0;
    }
  if (c->close_stdin && berth_agent_buf_pending (&c->inq) == 0)
    close_fd (&c->in);
}

static bool
limited (int resource)
{
  struct rlimit rl;
  return getrlimit (resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
}

static void
chan_exit_frame (chan *c)
{
  int st = c->wstatus;
  uint8_t cause = BERTH_AGENT_CAUSE_EXITED;
  uint32_t value = 0;
  if (WIFEXITED (st))
    {
      value = (uint32_t) WEXITSTATUS (st);
      /* The runtime's wrapper (a shell) reports a command killed by a
         signal as 128+N: named only with evidence of our own -- the OOM
         killer's count rose in the command's cgroup (else the agent's:
         a container's own), or a limit is set whose signal it is.  */
      if (value == 128 + SIGKILL && !c->kill_pending && oom_kills (c->cg[0] ? c->cg : cg_self) > c->oom_before)
        cause = BERTH_AGENT_CAUSE_OOM, value = SIGKILL;
      else if ((value == 128 + SIGXCPU && limited (RLIMIT_CPU)) || (value == 128 + SIGXFSZ && limited (RLIMIT_FSIZE)))
        cause = BERTH_AGENT_CAUSE_LIMIT, value -= 128;
    }
  else if (WIFSIGNALED (st))
    {
      value = (uint32_t) WTERMSIG (st);
      cause = BERTH_AGENT_CAUSE_SIGNALED;
      if (value == SIGXCPU || value == SIGXFSZ)
        cause = BERTH_AGENT_CAUSE_LIMIT;
      else if (value == SIGKILL && !c->kill_pending && oom_kills (c->cg[0] ? c->cg : cg_self) > c->oom_before)
        cause = BERTH_AGENT_CAUSE_OOM;
    }
  send_ctl (c->owner, berth_agent_put_exit (&c->owner->tx, c->id, cause, value, ""));
  c->exit_sent = true;
  /* The next command's bash, while the controller reads this result
     (made after this frame is written).  */
  if (c->wrapper && sp.pid <= 0)
    {
      strv_free (spare_next_env);
      spare_next_env = c->spare_env;
      c->spare_env = NULL;
      spare_next = true;
    }
}

/* Reap children (ours and orphans reparented to us).  */
static void
reap (void)
{
  int st;
  pid_t pid;
  while ((pid = waitpid (-1, &st, WNOHANG)) > 0)
    if (pid == sp.pid)
      spare_close (); /* it died before use */
    else
      for (size_t i = 0; i < MAX_CHAN; i++)
      if (chans[i] && chans[i]->pid == pid && !chans[i]->reaped)
        {
          chans[i]->reaped = true;
          chans[i]->wstatus = st;
        }
}

/* The child: its own session, its streams, its cgroup, then exec.  */
static void
child_exec (const berth_agent_run *run, int in, int out, int err, int pty_slave, int fd3, const char *cg, int report)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++)
    signal (s, SIG_DFL);
  if (setsid () < 0)
    goto fail;
  if (cg && cg[0])
    {
      char p[PATH_MAX + 32];
      snprintf (p, sizeof p, "%s/cgroup.procs", cg);
      int fd = open (p, O_WRONLY | O_CLOEXEC);
      if (fd >= 0)
        {
          if (write (fd, "0", 1) < 0)
            {
              /* best effort: the process group and /proc scan remain */
            }
          close (fd);
        }
    }
  if (pty_slave >= 0)
    ioctl (pty_slave, TIOCSCTTY, 0);
  /* Every source above the targets first: one of them may itself be
     0-3 (fds the agent freed), and a dup2 must not clobber another.
     Close-on-exec copies: only the dup2'ed 0-3 reach the command (a copy
     left open held the command's output open after it ended).  */
  int *src[] = { &in, &out, &err, &fd3 };
  for (size_t i = 0; i < 4; i++)
    if (*src[i] >= 0 && *src[i] < 10 && (*src[i] = fcntl (*src[i], F_DUPFD_CLOEXEC, 10)) < 0)
      goto fail;
  if (dup2 (in, 0) < 0 || dup2 (out, 1) < 0 || dup2 (err, 2) < 0)
    goto fail;
  if (fd3 >= 0 && dup2 (fd3, 3) < 0)
    goto fail;
  if (run->cwd && chdir (run->cwd) < 0)
    goto fail;
  /* The tree's mark: what setsid escapees reparented to us still carry
     (kill_round).  */
  char mark[64];
  snprintf (mark, sizeof mark, "%s=%ld.%u", MARK_VAR, (long) getppid (), mark_gid);
  if (run->env)
    {
      size_t n = 0;
      while (run->env[n])
        n++;
      char **envp = calloc (n + 2, sizeof *envp);
      if (envp == NULL)
        goto fail;
      memcpy (envp, run->env, n * sizeof *envp);
      envp[n] = mark;
      execvpe (run->argv[0], run->argv, envp);
    }
  else
    {
      putenv (mark);
      execvp (run->argv[0], run->argv);
    }
fail:;
  int e = errno;
  if (write (report, &e, sizeof e) < 0)
    _exit (127);
  _exit (127);
}


static void
chan_run (ctl *k, uint32_t id, const berth_agent_frame *f)
{
  berth_agent_run run;
  char msg[256];
  if (id == 0 || chan_find (k, id))
    {
      send_ctl (k, berth_agent_put_error (&k->tx, 0, "run: channel 0 or in use"));
      k->closing = true;
      return;
    }
  if (berth_agent_run_decode (f->data, f->len, &run) < 0)
    {
      send_ctl (k, berth_agent_put_error (&k->tx, 0, "run: malformed request"));
      k->closing = true;
      return;
    }
  size_t slot;
  for (slot = 0; slot < MAX_CHAN && chans[slot]; slot++)
    ;
  if (slot == MAX_CHAN)
    {
      send_ctl (k, berth_agent_put_exit (&k->tx, id, BERTH_AGENT_CAUSE_FAILED, EAGAIN, "berth-agent: too many processes"));
      berth_agent_run_free (&run);
      return;
    }
  if (sp.pid > 0 || is_wrapper (&run))
    {
      chan *w = calloc (1, sizeof *w);
      if (w == NULL)
        die ("out of memory");
      const uint8_t *d = k->fd3_chan == id ? k->fd3.data + k->fd3.off : NULL;
      size_t dl = k->fd3_chan == id ? berth_agent_buf_pending (&k->fd3) : 0;
      w->in = w->out = w->err = -1;
      if (spare_take (w, &run, d, dl))
        {
          berth_agent_buf_free (&k->fd3);
          k->fd3_chan = 0;
          w->id = id;
          w->gid = sp_taken_gid;
          w->owner = k;
          w->flags = run.flags;
          w->credit = BERTH_AGENT_WINDOW;
          w->argv0 = strdup (run.argv[0]);
          w->wrapper = true;
          w->spare_env = run.env ? strv_dup (run.env) : NULL;
          set_nonblock (w->out);
          set_nonblock (w->err);
          if (w->in >= 0)
            set_nonblock (w->in);
          chans[slot] = w;
          send_ctl (k, berth_agent_put_u32 (&k->tx, BERTH_AGENT_STARTED, id, (uint32_t) w->pid));
          berth_agent_run_free (&run);
          return;
        }
      free (w);
    }
  int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, rep[2] = { -1, -1 };
  int master = -1, slave = -1, e = 0, fd3 = -1;
  if (run.flags & BERTH_AGENT_RUN_FD3)
    {
      /* The bytes sent before, as a file the command can open by path.  */
      fd3 = memfd_create ("berth-fd3", MFD_CLOEXEC);
      size_t off = k->fd3_chan == id ? k->fd3.off : 0, end = k->fd3_chan == id ? k->fd3.len : 0;
      while (fd3 >= 0 && off < end)
        {
          ssize_t n = write (fd3, k->fd3.data + off, end - off);
          if (n <= 0)
            break;
          off += (size_t) n;
        }
      if (fd3 < 0 || off < end || lseek (fd3, 0, SEEK_SET) < 0)
        e = errno ? errno : EIO;
      berth_agent_buf_free (&k->fd3);
      k->fd3_chan = 0;
    }
  if (e == 0 && (pipe2 (rep, O_CLOEXEC) < 0 || pipe2 (perr, O_CLOEXEC) < 0))
    e = errno;
  else if (run.flags & BERTH_AGENT_RUN_PTY)
    {
      int r = agent_open_pty (&master, &slave);
      if (r < 0)
        e = -r;
    }
  else if (pipe2 (pout, O_CLOEXEC) < 0)
    e = errno;
  else if ((run.flags & BERTH_AGENT_RUN_STDIN) && pipe2 (pin, O_CLOEXEC) < 0)
    e = errno;
  else if (!(run.flags & BERTH_AGENT_RUN_STDIN) && (pin[0] = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    e = errno;
  if (e == 0 && pout[0] >= 0)
    pipe_widen (pout[0]);
  chan *c = NULL;
  if (e == 0)
    {
      c = calloc (1, sizeof *c);
      if (c == NULL)
        die ("out of memory");
      c->id = id;
      c->gid = mark_gid = ++next_gid;
      c->owner = k;
      c->flags = run.flags;
      c->credit = BERTH_AGENT_WINDOW;
      c->in = c->out = c->err = -1;
      c->argv0 = strdup (run.argv[0]);
      if (cg_base[0])
        {
          if ((size_t) snprintf (c->cg, sizeof c->cg, "%s/c%u", cg_base, ++cg_seq) >= sizeof c->cg || mkdir (c->cg, 0755) < 0)
            c->cg[0] = '\0';
        }
      c->oom_before = oom_kills (c->cg[0] ? c->cg : cg_self);
      pid_t pid = fork ();
      if (pid < 0)
        e = errno;
      else if (pid == 0)
        {
          if (master >= 0)
            child_exec (&run, slave, slave, perr[1], slave, fd3, c->cg, rep[1]);
          child_exec (&run, pin[0], pout[1], perr[1], -1, fd3, c->cg, rep[1]);
        }
      else
        c->pid = pid;
    }
  close_fd (&rep[1]);
  close_fd (&perr[1]);
  close_fd (&pout[1]);
  close_fd (&slave);
  close_fd (&pin[0]);
  close_fd (&fd3);
  if (e == 0)
    {
      int ce = 0;
      ssize_t n;
      while ((n = read (rep[0], &ce, sizeof ce)) < 0 && errno == EINTR)
        ;
      if (n == sizeof ce)
        e = ce;
    }
  close_fd (&rep[0]);
  if (e != 0)
    {
      snprintf (msg, sizeof msg, "berth-agent: cannot run %s: %s", run.argv[0], strerror (e));
      send_ctl (k, berth_agent_put_exit (&k->tx, id, BERTH_AGENT_CAUSE_FAILED, (uint32_t) e, msg));
      close_fd (&pin[1]);
      close_fd (&pout[0]);
      close_fd (&perr[0]);
      close_fd (&master);
      if (c)
        {
          if (c->pid > 0)
            waitpid (c->pid, NULL, 0);
          if (c->cg[0])
            rmdir (c->cg);
          free (c->argv0);
          free (c);
        }
      berth_agent_run_free (&run);
      return;
    }
  if (master >= 0)
    {
      c->out = master;
      c->in = dup (master);
      if (c->in >= 0)
        set_nonblock (c->in);
    }
  else
    {
      c->out = pout[0];
      c->in = pin[1];
    }
  c->err = perr[0];
  set_nonblock (c->out);
  set_nonblock (c->err);
  if (c->in >= 0)
    set_nonblock (c->in);
  c->wrapper = is_wrapper (&run);
  c->spare_env = c->wrapper && run.env ? strv_dup (run.env) : NULL;
  chans[slot] = c;
  send_ctl (k, berth_agent_put_u32 (&k->tx, BERTH_AGENT_STARTED, id, (uint32_t) c->pid));
  berth_agent_run_free (&run);
}

/* ---- controllers ---- */

static void
ctl_add (int in, int out)
{
  for (size_t i = 0; i < MAX_CTL; i++)
    if (ctls[i] == NULL)
      {
        ctl *k = calloc (1, sizeof *k);
        if (k == NULL)
          die ("out of memory");
        k->in = in;
        k->out = out;
        set_nonblock (in);
        if (out != in)
          set_nonblock (out);
        xput (berth_agent_put_hello (&k->tx, AGENT_VERSION));
        /* what a RUN that inherits starts with: the controller leaves it
           out of the snapshots it sends (too big: it sends them whole) */
        int r = berth_agent_put_environ (&k->tx, environ);
        if (r != -E2BIG)
          xput (r);
        ctls[i] = k;
        return;
      }
  close (in);
  if (out != in)
    close (out);
}

/* A controller went: its foreground processes go after the grace, its
   detached ones keep running with their output kept.  */
static void
ctl_drop (ctl *k)
{
  for (size_t i = 0; i < MAX_CHAN; i++)
    {
      chan *c = chans[i];
      if (c == NULL || c->owner != k)
        continue;
      c->owner = NULL;
      if (c->flags & BERTH_AGENT_RUN_DETACHED)
        continue;
      if (c->reaped && c->out < 0 && c->err < 0)
        chan_free (c);
      else if (!c->reaped)
        c->kill_at = now_ms () + GRACE_MS;
      else
        c->released = true;
    }
  for (size_t i = 0; i < MAX_CTL; i++)
    if (ctls[i] == k)
      ctls[i] = NULL;
  if (k->in == 0)
    {
      /* Our stdio: keep fds 0 and 1 taken (on /dev/null), so no pipe
         or file of ours lands on them later.  */
      int nul = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (nul >= 0)
        {
          dup2 (nul, 0);
          dup2 (nul, 1);
          close (nul);
        }
    }
  else
    {
      close (k->in);
      if (k->out != k->in)
        close (k->out);
    }
  berth_agent_buf_free (&k->rx);
  berth_agent_buf_free (&k->tx);
  berth_agent_buf_free (&k->fd3);
  free (k);
}

static void
do_list (ctl *k)
{
  berth_agent_buf p = { 0 };
  uint32_t n = 0;
  uint8_t tmp[4];
  xput (berth_agent_buf_add (&p, tmp, 4));
  for (size_t i = 0; i < MAX_CHAN && n < BERTH_AGENT_MAX_LIST; i++)
    {
      chan *c = chans[i];
      if (c == NULL || c->released)
        continue;
      size_t l = strlen (c->argv0 ? c->argv0 : "");
      if (l > 256)
        l = 256;
      uint32_t v[3] = { htonl (c->gid), htonl ((uint32_t) c->pid), htonl (c->flags) };
      uint8_t running = !c->reaped;
      uint32_t sl = htonl ((uint32_t) l);
      if (berth_agent_buf_pending (&p) + 17 + l > BERTH_AGENT_MAX_PAYLOAD)
        break;
      xput (berth_agent_buf_add (&p, v, sizeof v));
      xput (berth_agent_buf_add (&p, &running, 1));
      xput (berth_agent_buf_add (&p, &sl, 4));
      xput (berth_agent_buf_add (&p, c->argv0 ? c->argv0 : "", l));
      n++;
    }
  uint32_t nn = htonl (n);
  memcpy (p.data, &nn, 4);
  send_ctl (k, berth_agent_put_frame (&k->tx, BERTH_AGENT_LIST_REPLY, 0, p.data, p.len));
  berth_agent_buf_free (&p);
}

static void
do_attach (ctl *k, uint32_t gid, berth_agent_rd *r)
{
  uint32_t id = berth_agent_get_u32 (r);
  chan *c = NULL;
  for (size_t i = 0; i < MAX_CHAN && c == NULL; i++)
    if (chans[i] && chans[i]->gid == gid)
      c = chans[i];
  if (r->bad || id == 0 || chan_find (k, id) || c == NULL || c->owner || c->released)
    {
      send_ctl (k, berth_agent_put_error (&k->tx, id, "attach: no such detached process, or it has a controller"));
      return;
    }
  c->id = id;
  c->owner = k;
  c->credit = BERTH_AGENT_WINDOW;
  c->kill_at = 0;
  if (c->dropped)
    {
      char m[96];
      int n = snprintf (m, sizeof m, "[berth-agent: %zu earlier bytes dropped]\n", c->dropped);
      send_ctl (k, berth_agent_put_frame (&k->tx, BERTH_AGENT_OUT, c->id, m, (size_t) n));
    }
  for (size_t off = c->hist.off; off < c->hist.len;)
    {
      size_t n = c->hist.len - off;
      if (n > BERTH_AGENT_CHUNK)
        n = BERTH_AGENT_CHUNK;
      send_ctl (k, berth_agent_put_frame (&k->tx, BERTH_AGENT_OUT, c->id, c->hist.data + off, n));
      off += n;
    }
}

static void
ctl_frame (ctl *k, const berth_agent_frame *f)
{
  berth_agent_rd r = berth_agent_rd_init (f);
  chan *c = f->chan ? chan_find (k, f->chan) : NULL;
  if (!k->hello && f->type != BERTH_AGENT_HELLO)
    {
      send_ctl (k, berth_agent_put_error (&k->tx, 0, "expected hello"));
      k->closing = true;
      return;
    }
  switch (f->type)
    {
    case BERTH_AGENT_HELLO:
      {
        uint32_t proto = berth_agent_get_u32 (&r);
        if (r.bad || proto != BERTH_AGENT_PROTO)
          {
            send_ctl (k, berth_agent_put_error (&k->tx, 0, "berth-agent " AGENT_VERSION ": protocol version mismatch"));
            k->closing = true;
          }
        k->hello = true;
        break;
      }
    case BERTH_AGENT_RUN:
      chan_run (k, f->chan, f);
      break;
    case BERTH_AGENT_FD3:
      if (f->chan == 0 || chan_find (k, f->chan))
        break;
      if (k->fd3_chan != f->chan)
        {
          berth_agent_buf_free (&k->fd3);
          k->fd3_chan = f->chan;
        }
      if (berth_agent_buf_pending (&k->fd3) + f->len > BERTH_AGENT_FD3_MAX)
        {
          send_ctl (k, berth_agent_put_error (&k->tx, 0, "fd3: over the bound"));
          k->closing = true;
          break;
        }
      xput (berth_agent_buf_add (&k->fd3, f->data, f->len));
      break;
    case BERTH_AGENT_STDIN:
      if (c == NULL || c->owner != k)
        break; /* a process that ended: drop */
      if (c->close_stdin || berth_agent_buf_pending (&c->inq) + f->len > BERTH_AGENT_WINDOW)
        {
          send_ctl (k, berth_agent_put_error (&k->tx, 0, "stdin over the window"));
          k->closing = true;
          break;
        }
      xput (berth_agent_buf_add (&c->inq, f->data, f->len));
      chan_write_stdin (c);
      break;
    case BERTH_AGENT_CLOSE_STDIN:
      if (c && c->owner == k)
        {
          c->close_stdin = true;
          chan_write_stdin (c);
        }
      break;
    case BERTH_AGENT_WINDOW_FRAME:
      {
        uint32_t n = berth_agent_get_u32 (&r);
        if (c && c->owner == k && !r.bad)
          c->credit = (uint64_t) c->credit + n > BERTH_AGENT_WINDOW ? BERTH_AGENT_WINDOW : c->credit + n;
        break;
      }
    case BERTH_AGENT_KILL:
      {
        uint32_t sig = berth_agent_get_u32 (&r), pid = berth_agent_get_u32 (&r);
        char *token = berth_agent_get_strdup (&r, 64);
        unsigned n = 0;
        if (r.bad || sig >= NSIG || pid > INT_MAX)
          {
            free (token);
            send_ctl (k, berth_agent_put_error (&k->tx, 0, "kill: malformed request"));
            k->closing = true;
            break;
          }
        if (c == NULL && pid > 0)
          for (size_t i = 0; i < MAX_CHAN && c == NULL; i++)
            if (chans[i] && chans[i]->pid == (pid_t) pid)
              c = chans[i];
        if (sig != 0 && c && !c->reaped)
          n = kill (-c->pid, (int) sig) == 0;
        else if (sig == 0)
          {
            if (c)
              c->kill_pending = true;
            n = kill_tree (c, c ? c->pid : (pid_t) pid, token);
          }
        free (token);
        send_ctl (k, berth_agent_put_u32 (&k->tx, BERTH_AGENT_KILLED, f->chan, n));
        break;
      }
    case BERTH_AGENT_RELEASE:
      if (c && c->owner == k)
        {
          /* Its controller let go: streams closed; a leader still
             running goes after the grace, as on a disconnect.  */
          c->owner = NULL;
          c->released = true;
          close_fd (&c->out);
          close_fd (&c->err);
          close_fd (&c->in);
          if (!c->reaped && !(c->flags & BERTH_AGENT_RUN_DETACHED))
            c->kill_at = now_ms () + GRACE_MS;
        }
      break;
    case BERTH_AGENT_LIST:
      do_list (k);
      break;
    case BERTH_AGENT_ATTACH:
      do_attach (k, f->chan, &r);
      break;
    case BERTH_AGENT_PING:
      {
        uint64_t v = berth_agent_get_u64 (&r);
        send_ctl (k, berth_agent_put_u64 (&k->tx, BERTH_AGENT_PONG, 0, v));
        break;
      }
    case BERTH_AGENT_QUIT:
      shutdown_all (0);
    default:
      send_ctl (k, berth_agent_put_error (&k->tx, 0, "unknown frame type"));
      k->closing = true;
    }
}

static void
ctl_read (ctl *k)
{
  xput (berth_agent_buf_reserve (&k->rx, BERTH_AGENT_CHUNK));
  ssize_t n = read (k->in, k->rx.data + k->rx.len, k->rx.cap - k->rx.len);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0)
    {
      k->dead = true;
      return;
    }
  k->rx.len += (size_t) n;
  for (;;)
    {
      berth_agent_frame f;
      int r = berth_agent_frame_parse (k->rx.data + k->rx.off, berth_agent_buf_pending (&k->rx), &f);
      if (r == 0)
        break;
      if (r < 0)
        {
          send_ctl (k, berth_agent_put_error (&k->tx, 0, "malformed frame"));
          k->closing = true;
          k->rx.off = k->rx.len = 0;
          break;
        }
      ctl_frame (k, &f);
      berth_agent_buf_consume (&k->rx, (size_t) r);
      if (k->closing)
        break;
    }
}

static void
ctl_flush (ctl *k)
{
  while (berth_agent_buf_pending (&k->tx))
    {
      ssize_t n = k->out == k->in ? send (k->out, k->tx.data + k->tx.off, berth_agent_buf_pending (&k->tx), MSG_NOSIGNAL | MSG_DONTWAIT)
                                  : write (k->out, k->tx.data + k->tx.off, berth_agent_buf_pending (&k->tx));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0)
        {
          k->dead = true;
          return;
        }
      berth_agent_buf_consume (&k->tx, (size_t) n);
    }
  if (k->closing)
    k->dead = true;
}

/* ---- the socket ---- */

static void
relay (int sock)
{
  /* Another agent serves this environment: carry our stdio to it.  */
  char buf[BERTH_AGENT_CHUNK];
  struct pollfd p[2] = { { 0, POLLIN, 0 }, { sock, POLLIN, 0 } };
  signal (SIGPIPE, SIG_IGN);
  for (;;)
    {
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          exit (125);
        }
      for (int i = 0; i < 2; i++)
        if (p[i].revents)
          {
            ssize_t n = read (p[i].fd, buf, sizeof buf);
            if (n <= 0)
              exit (0);
            int to = i == 0 ? sock : 1;
            for (ssize_t off = 0; off < n;)
              {
                ssize_t w = write (to, buf + off, (size_t) (n - off));
                if (w <= 0)
                  exit (0);
                off += w;
              }
          }
    }
}

/* The socket's directory must be ours alone: a real directory (not a
   symlink) of our uid that nobody else may write to.  Else another user
   of a shared /tmp could have made it, and a socket in it would hand
   them our commands.  */
static bool
sock_dir_is_ours (const char *path)
{
  char dir[PATH_MAX];
  const char *slash = strrchr (path, '/');
  struct stat st;
  if (slash == NULL)
    snprintf (dir, sizeof dir, ".");
  else if ((size_t) (slash - path) >= sizeof dir)
    return false;
  else
    snprintf (dir, sizeof dir, "%.*s", slash == path ? 1 : (int) (slash - path), path);
  return lstat (dir, &st) == 0 && S_ISDIR (st.st_mode) && st.st_uid == geteuid () && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* The process at the other end of S, when it runs as our uid.  */
static bool
peer_is_us (int s, pid_t *ret_pid)
{
  struct ucred cr;
  socklen_t n = sizeof cr;
  if (getsockopt (s, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0 || n != sizeof cr || cr.uid != geteuid ())
    return false;
  *ret_pid = cr.pid;
  return true;
}

/* Read the listening agent's HELLO (the first frame it sends) into BUF:
   its length, or 0 when none came within 5 s or it is not one.
   *RET_HAVE: the bytes read into BUF, frames after the HELLO too.  */
static size_t
read_hello (int s, uint8_t *buf, size_t cap, size_t *ret_have)
{
  size_t have = 0;
  *ret_have = 0;
  uint64_t end = now_ms () + 5000;
  for (;;)
    {
      berth_agent_frame f;
      int r = berth_agent_frame_parse (buf, have, &f);
      *ret_have = have;
      if (r > 0)
        return f.type == BERTH_AGENT_HELLO && f.chan == 0 ? (size_t) r : 0;
      if (r < 0 || have == cap)
        return 0;
      uint64_t now = now_ms ();
      struct pollfd p = { s, POLLIN, 0 };
      if (now >= end || poll (&p, 1, (int) (end - now)) <= 0)
        return 0;
      ssize_t n = read (s, buf + have, cap - have);
      if (n <= 0)
        return 0;
      have += (size_t) n;
    }
}

/* The agent listening at PATH (process PID) is another version: stop it
   (TERM, then KILL) and wait until its socket is gone or dead, so that
   its exit cannot unlink ours.  */
static void
stop_old_agent (const char *path, const struct sockaddr_un *sa, pid_t pid)
{
  for (int round = 0; round < 2; round++)
    {
      if (pid > 0)
        kill (pid, round == 0 ? SIGTERM : SIGKILL);
      for (int i = 0; i < 60; i++)
        {
          struct stat st;
          if (lstat (path, &st) < 0)
            return;
          int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
          if (s < 0)
            return;
          int r = connect (s, (const struct sockaddr *) sa, sizeof *sa);
          close (s);
          if (r < 0)
            return; /* nobody listens any more */
          usleep (50 * 1000);
        }
    }
}

static void
socket_setup (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return; /* no reconnects, still an agent */
  if (!sock_dir_is_ours (path))
    {
      fprintf (stderr, "berth-agent: not using %s: its directory is not private to this user\n", path);
      return; /* no reconnects, still an agent */
    }
  strcpy (sa.sun_path, path);
  struct stat st;
  /* Only a socket of ours is connected to (never one another user made
     and moved here), and only an agent of our uid is relayed to.  */
  if (lstat (path, &st) == 0 && S_ISSOCK (st.st_mode) && st.st_uid == geteuid ())
    {
      int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (s < 0)
        die ("cannot create a socket");
      pid_t peer = 0;
      if (connect (s, (struct sockaddr *) &sa, sizeof sa) == 0 && peer_is_us (s, &peer))
        {
          /* An agent of this version is relayed to; another is stopped
             and replaced by this one (berth never speaks to a mismatch).  */
          static uint8_t hello[BERTH_AGENT_HDR + 512];
          size_t have = 0, n = read_hello (s, hello, sizeof hello, &have);
          berth_agent_frame f;
          if (n > 0 && berth_agent_frame_parse (hello, n, &f) > 0)
            {
              berth_agent_rd r = berth_agent_rd_init (&f);
              uint32_t proto = berth_agent_get_u32 (&r);
              size_t vlen = 0;
              const char *v = berth_agent_get_str (&r, 256, &vlen);
              if (!r.bad && proto == BERTH_AGENT_PROTO && v && vlen == strlen (AGENT_VERSION) && memcmp (v, AGENT_VERSION, vlen) == 0)
                {
                  /* the HELLO and what came with it (the stream goes on) */
                  for (size_t off = 0; off < have;)
                    {
                      ssize_t w = write (1, hello + off, have - off);
                      if (w <= 0)
                        exit (0);
                      off += (size_t) w;
                    }
                  relay (s);
                }
            }
          close (s);
          stop_old_agent (path, &sa, peer);
        }
      else
        close (s);
    }
  unlink (path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  mode_t old = umask (077);
  int r = bind (s, (struct sockaddr *) &sa, sizeof sa);
  umask (old);
  if (r < 0 || listen (s, 16) < 0)
    {
      close (s);
      return; /* no reconnects, still an agent */
    }
  listen_fd = s;
  socket_path = strdup (path);
  struct stat bound;
  if (lstat (path, &bound) == 0)
    socket_dev = bound.st_dev, socket_ino = bound.st_ino;
}

/* A serving agent whose socket was removed or replaced can no longer be
   reached -- nor stopped by `berth rm`: it ends (what runs detached lives
   on).  Checked every SOCKET_CHECK_MS.  */
static void
check_socket (void)
{
  struct stat st;
  if (!serve_socket || socket_path == NULL || socket_ino == 0)
    return;
  if (lstat (socket_path, &st) < 0 || st.st_ino != socket_ino || st.st_dev != socket_dev)
    {
      free (socket_path);
      socket_path = NULL; /* not ours to unlink any more */
      shutdown_all (0);
    }
}

/* ---- main loop ---- */

static bool
anything_left (void)
{
  if (serve_socket && listen_fd >= 0)
    return true;
  for (size_t i = 0; i < MAX_CTL; i++)
    if (ctls[i])
      return true;
  for (size_t i = 0; i < MAX_CHAN; i++)
    if (chans[i] && !chans[i]->reaped && !chans[i]->released)
      return true;
  return false;
}

static _Noreturn void
shutdown_all (int code)
{
  spare_drop ();
  for (size_t i = 0; i < MAX_CHAN; i++)
    if (chans[i] && !chans[i]->reaped && !(chans[i]->flags & BERTH_AGENT_RUN_DETACHED))
      kill_tree (chans[i], 0, NULL);
  if (socket_path)
    unlink (socket_path);
  if (cg_base[0])
    rmdir (cg_base);
  exit (code);
}

static _Noreturn void
serve (void)
{
  sigset_t mask;
  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  signal (SIGPIPE, SIG_IGN);
  int sfd = signalfd (-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (sfd < 0)
    die ("signalfd failed");
  /* A berth spawning us locally asks for SIGKILL when it dies: we
     outlive it long enough to take its commands with us.  */
  prctl (PR_SET_PDEATHSIG, 0);
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  cgroup_setup ();
  ctl_add (0, 1);

  static struct pollfd p[1 + 1 + MAX_CTL * 2 + MAX_CHAN * 3];
  static void *who[sizeof p / sizeof p[0]];
  static int what[sizeof p / sizeof p[0]];
  for (;;)
    {
      size_t np = 0;
      /* Exit frames first, so they leave with the output before them in
         one write.  */
      /* channels to let go: ended and told, or released and reaped */
      for (size_t i = 0; i < MAX_CHAN; i++)
        {
          chan *c = chans[i];
          if (c == NULL)
            continue;
          if (c->owner && c->reaped && c->out < 0 && c->err < 0 && !c->exit_sent)
            chan_exit_frame (c);
          if ((c->exit_sent || (c->released && c->reaped)) || (!c->owner && c->reaped && c->out < 0 && c->err < 0))
            chan_free (c);
        }
      /* Controllers that went: their orphans get a deadline the
         timeout below must see.  */
      for (size_t i = 0; i < MAX_CTL; i++)
        if (ctls[i])
          {
            ctl_flush (ctls[i]);
            if (ctls[i]->dead)
              ctl_drop (ctls[i]);
          }
      if (spare_next)
        {
          spare_make (spare_next_env, spare_next_env == NULL);
          strv_free (spare_next_env);
          spare_next_env = NULL;
          spare_next = false;
        }
      uint64_t now = now_ms ();
      int timeout = -1;
      /* orphaned foreground trees past their grace */
      for (size_t i = 0; i < MAX_CHAN; i++)
        {
          chan *c = chans[i];
          if (c && c->kill_at && c->reaped)
            c->kill_at = 0; /* it ended within the grace: what it left lives on */
          if (c && c->kill_at && !c->owner)
            {
              if (now >= c->kill_at)
                {
                  c->kill_at = 0;
                  c->kill_pending = true;
                  kill_tree (c, 0, NULL);
                  c->released = true;
                }
              else if (timeout < 0 || (int) (c->kill_at - now) < timeout)
                timeout = (int) (c->kill_at - now);
            }
        }
      if (!anything_left ())
        shutdown_all (0);

      p[np] = (struct pollfd){ sfd, POLLIN, 0 };
      who[np] = NULL, what[np++] = 0;
      if (listen_fd >= 0)
        {
          p[np] = (struct pollfd){ listen_fd, POLLIN, 0 };
          who[np] = NULL, what[np++] = 1;
        }
      for (size_t i = 0; i < MAX_CTL; i++)
        {
          ctl *k = ctls[i];
          if (k == NULL)
            continue;
          if (!k->closing)
            {
              p[np] = (struct pollfd){ k->in, POLLIN, 0 };
              who[np] = k, what[np++] = 2;
            }
          if (berth_agent_buf_pending (&k->tx))
            {
              p[np] = (struct pollfd){ k->out, POLLOUT, 0 };
              who[np] = k, what[np++] = 3;
            }
        }
      for (size_t i = 0; i < MAX_CHAN; i++)
        {
          chan *c = chans[i];
          if (c == NULL)
            continue;
          bool can_send = c->owner ? c->credit > 0 && berth_agent_buf_pending (&c->owner->tx) < TX_HIGH : true;
          if (c->out >= 0 && can_send)
            {
              p[np] = (struct pollfd){ c->out, POLLIN, 0 };
              who[np] = c, what[np++] = 4;
            }
          if (c->err >= 0 && can_send)
            {
              p[np] = (struct pollfd){ c->err, POLLIN, 0 };
              who[np] = c, what[np++] = 5;
            }
          if (c->in >= 0 && berth_agent_buf_pending (&c->inq))
            {
              p[np] = (struct pollfd){ c->in, POLLOUT, 0 };
              who[np] = c, what[np++] = 6;
            }
        }
      if (serve_socket && (timeout < 0 || timeout > SOCKET_CHECK_MS))
        timeout = SOCKET_CHECK_MS;
      int ready = poll (p, (nfds_t) np, timeout);
      if (ready == 0)
        check_socket ();
      if (ready < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll failed");
        }
      for (size_t i = 0; i < np; i++)
        {
          if (p[i].revents == 0)
            continue;
          switch (what[i])
            {
            case 0:
              {
                struct signalfd_siginfo si;
                while (read (sfd, &si, sizeof si) == sizeof si)
                  if (si.ssi_signo != SIGCHLD)
                    shutdown_all (0);
                reap ();
                break;
              }
            case 1:
              {
                int s = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                pid_t peer;
                /* only a controller of our own uid (the socket is 0600 in
                   a 0700 directory: this is the second lock) */
                if (s >= 0 && peer_is_us (s, &peer))
                  ctl_add (s, s);
                else if (s >= 0)
                  close (s);
                break;
              }
            case 2:
              ctl_read (who[i]);
              break;
            case 3:
              ctl_flush (who[i]);
              break;
            case 4:
              {
                chan *c = who[i];
                if (chan_alive (c) && c->out >= 0)
                  chan_read (c, &c->out, BERTH_AGENT_OUT);
                break;
              }
            case 5:
              {
                chan *c = who[i];
                if (chan_alive (c) && c->err >= 0)
                  chan_read (c, &c->err, BERTH_AGENT_ERR);
                break;
              }
            case 6:
              {
                chan *c = who[i];
                if (chan_alive (c))
                  chan_write_stdin (c);
                break;
              }
            }
        }
    }
}

/* --serve, and an agent serves SOCK already: pass on its HELLO (the
   caller's sign that one serves) and exit; none: return.  */
static void
serve_check (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return;
  strcpy (sa.sun_path, path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0 || connect (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      if (s >= 0)
        close (s);
      return;
    }
  uint8_t buf[BERTH_AGENT_CHUNK];
  size_t have = 0;
  berth_agent_frame f;
  struct pollfd p = { s, POLLIN, 0 };
  while (have < sizeof buf && poll (&p, 1, 10000) > 0)
    {
      ssize_t n = read (s, buf + have, sizeof buf - have);
      if (n <= 0)
        break;
      have += (size_t) n;
      int r = berth_agent_frame_parse (buf, have, &f);
      if (r < 0)
        break;
      if (r > 0)
        {
          ssize_t w = write (1, buf, (size_t) r);
          exit (w == r ? 0 : 125);
        }
    }
  exit (125); /* it did not say HELLO: a socket we cannot use */
}

int
main (int argc, char **argv)
{
  /* Not the agent: the helper of a background process run on a pty
     (pty-run.c), started by the process's start script.  */
  if (argc >= 3 && strcmp (argv[1], "--pty-run") == 0 && strcmp (argv[2], "--") == 0)
    return agent_pty_run (argv + 3);
  bool stdio = false, detached_start = false, detach = false;
  const char *sock = NULL;
  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--version") == 0)
        {
          printf ("berth-agent %s\n", AGENT_VERSION);
          return 0;
        }
      else if (strcmp (argv[i], "--stdio") == 0)
        stdio = true;
      else if (strcmp (argv[i], "--socket") == 0 && i + 1 < argc)
        sock = argv[++i];
      else if (strcmp (argv[i], "--serve") == 0)
        serve_socket = true;
      else if (strcmp (argv[i], "--detach") == 0)
        detach = true;
      else
        {
          fprintf (stderr, "usage: berth-agent --stdio [--serve [--detach]] [--socket PATH] | --pty-run -- COMMAND... | --version\n"
                           "berth-agent is started by berth inside an environment; it is not run by hand.\n");
          return 2;
        }
    }
  if (!stdio)
    {
      fprintf (stderr, "berth-agent: give --stdio (berth starts it that way)\n");
      return 2;
    }
  /* A start script that cannot take options says --serve this way (the
     commands do not inherit it).  */
  const char *e = getenv ("BERTH_AGENT_SERVE");
  if (e && strcmp (e, "1") == 0)
    serve_socket = detached_start = true;
  unsetenv ("BERTH_AGENT_SERVE");
  if (serve_socket && sock == NULL)
    {
      fprintf (stderr, "berth-agent: --serve needs --socket PATH\n");
      return 2;
    }
  if (detached_start)
    serve_check (sock);
  if (sock)
    socket_setup (sock);
  if (serve_socket && detach && !detached_start && listen_fd >= 0)
    {
      /* We serve the environment from now on: not a child of the local
         berth that started us (it kills its child when it lets go of the
         stream), nor in its session (its terminal's signals).  Its stdio
         stays our first controller.  Not for a remote start: sshd closes
         a session's input once the process it started exits.  */
      pid_t pid = fork ();
      if (pid < 0)
        die ("fork failed");
      if (pid > 0)
        _exit (0);
      setsid ();
    }
  serve ();
}
