/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc.c: the start transport.  A command is one job step, `srun
   --jobid=J --overlap --ntasks=1 -u bash -c SHIM berth ARGV...`, spawned
   locally.  The shim first prints which step it is on stderr (taken out
   of the stream here), so that:
   - a command killed by berth (timeout, interrupt, a process stopped)
     gets its step cancelled too (scancel --signal=KILL J.S), besides the
     runtime's kill script that kills its tree on the node;
   - srun failing before the step started (slurmctld gone, the
     allocation gone) is an error naming srun, never an exit status;
   - a command whose allocation ended under it (scancel from outside,
     the time limit, a node failure) is an error, never a result.
   berth-agent's start (BERTH_START_AGENT) is one such step too, whose
   stream carries every command of the berth process; agent.c first
   starts the agent that serves a named environment in a step of its
   own.  That stream ending with the allocation is the same error.  */
#include "config.h"

#include "slurm-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX 256
#define ERRTAIL_MAX 512
static const char ec_record[] = "\0BERTH:ec:"; /* the runtime wrapper's exit record */
#define EC_LEN (sizeof ec_record - 1)

typedef struct slurm_proc
{
  berth_proc inner;
  slurm_bins bins; /* scancel, squeue, scontrol: copies */
  char *job;
  char step[64]; /* "J.S" once the shim said so */
  bool marker_done, reaped;
  char head[HEAD_MAX]; /* stderr until the marker line */
  size_t head_len;
  bool watch_ec, saw_ec; /* the runtime's wrapper: its exit record seen */
  char tail[EC_LEN];
  size_t tail_len;
  char errtail[ERRTAIL_MAX + 1]; /* srun's own lines before the step */
  size_t errtail_len;
  slurm_shared *shared;
  bool sig_checked, dropping; /* the wrapper died of a signal: see forward_err */
  bool agent; /* the agent's stream (BERTH_START_AGENT): see agent.c */
  bool tcp_tried;
  int tcp[4]; /* srun's connections to the step (agent_tcp_setup) */
  size_t n_tcp;
} slurm_proc;

slurm_shared *
slurm_shared_ref (slurm_shared *sh)
{
  if (sh)
    sh->refs++;
  return sh;
}

void
slurm_shared_unref (slurm_shared *sh)
{
  if (sh && --sh->refs == 0)
    free (sh);
}

typedef struct sink_ctx
{
  slurm_proc *p;
  berth_sink_fn sink;
  void *userdata;
} sink_ctx;

static void
errtail_add (slurm_proc *p, const char *data, size_t len)
{
  if (len >= ERRTAIL_MAX)
    {
      data += len - ERRTAIL_MAX;
      len = ERRTAIL_MAX;
    }
  if (p->errtail_len + len > ERRTAIL_MAX)
    {
      size_t drop = p->errtail_len + len - ERRTAIL_MAX;
      memmove (p->errtail, p->errtail + drop, p->errtail_len - drop);
      p->errtail_len -= drop;
    }
  memcpy (p->errtail + p->errtail_len, data, len);
  p->errtail_len += len;
  p->errtail[p->errtail_len] = '\0';
}

/* Look for the exit record, also across chunk boundaries: TAIL keeps
   the last EC_LEN - 1 bytes seen.  */
static void
watch_ec (slurm_proc *p, const char *data, size_t len)
{
  char buf[2 * EC_LEN];
  size_t n, m;

  if (!p->watch_ec || p->saw_ec || len == 0)
    return;
  n = len < EC_LEN - 1 ? len : EC_LEN - 1;
  memcpy (buf, p->tail, p->tail_len);
  memcpy (buf + p->tail_len, data, n);
  if (memmem (buf, p->tail_len + n, ec_record, EC_LEN) != NULL || memmem (data, len, ec_record, EC_LEN) != NULL)
    {
      p->saw_ec = true;
      return;
    }
  if (len >= EC_LEN - 1)
    {
      memcpy (p->tail, data + len - (EC_LEN - 1), EC_LEN - 1);
      p->tail_len = EC_LEN - 1;
      return;
    }
  m = p->tail_len + len; /* all of it fits in BUF */
  memcpy (buf, p->tail, p->tail_len);
  memcpy (buf + p->tail_len, data, len);
  if (m > EC_LEN - 1)
    {
      memmove (buf, buf + m - (EC_LEN - 1), EC_LEN - 1);
      m = EC_LEN - 1;
    }
  memcpy (p->tail, buf, m);
  p->tail_len = m;
}

static const char sig_record[] = "\0BERTH:sig:";
#define SIG_LEN (sizeof sig_record - 1)

static void
forward_err (sink_ctx *c, const char *data, size_t len)
{
  slurm_proc *p = c->p;
  const char *sig;

  if (p->dropping)
    return;
  /* The runtime's wrapper reports that it died of a signal (its exit
     record follows).  When that signal is Slurm ending the allocation
     (scancel, the time limit: SIGTERM to every task), the record is no
     result: it is left out, and wait says what happened.  slurmctld
     marks the job ended before it signals the tasks.  */
  if (p->watch_ec && !p->sig_checked && (sig = memmem (data, len, sig_record, SIG_LEN)) != NULL)
    {
      slurm_env s = { .bins = p->bins };
      size_t before = (size_t) (sig - data);
      p->sig_checked = true;
      if (before > 0)
        c->sink (c->userdata, BERTH_STREAM_ERR, data, before);
      if (slurm_job_alive (&s, p->job, SLURM_STEP_KILL_TIMEOUT, NULL) == 0)
        {
          p->dropping = true;
          if (p->shared)
            p->shared->gone = true;
          return;
        }
      data += before;
      len -= before;
    }
  watch_ec (p, data, len);
  if (len > 0)
    c->sink (c->userdata, BERTH_STREAM_ERR, data, len);
}

/* One complete line of stderr before the marker: srun's own (kept for a
   message, passed on), the marker (taken out), or the command's.  */
static void
head_line (sink_ctx *c)
{
  slurm_proc *p = c->p;
  size_t ml = strlen (SLURM_STEP_MARKER);

  if (p->head_len >= ml && memcmp (p->head, SLURM_STEP_MARKER, ml) == 0)
    {
      size_t n = strcspn (p->head + ml, "\n");
      if (n > 0 && n < sizeof p->step)
        {
          memcpy (p->step, p->head + ml, n);
          p->step[n] = '\0';
        }
      p->marker_done = true;
      p->head_len = 0;
      return;
    }
  if (p->head_len >= 6 && memcmp (p->head, "srun: ", 6) == 0)
    errtail_add (p, p->head, p->head_len);
  else
    p->marker_done = true; /* no marker: the shim did not run first */
  forward_err (c, p->head, p->head_len);
  p->head_len = 0;
}

static void
my_sink (void *userdata, int stream, const char *data, size_t len)
{
  sink_ctx *c = userdata;
  slurm_proc *p = c->p;

  if (stream != BERTH_STREAM_ERR)
    {
      c->sink (c->userdata, stream, data, len);
      return;
    }
  while (len > 0 && !p->marker_done)
    {
      const char *nl = memchr (data, '\n', len);
      size_t take = nl ? (size_t) (nl - data) + 1 : len;
      size_t room = HEAD_MAX - p->head_len;
      if (take > room)
        take = room;
      memcpy (p->head + p->head_len, data, take);
      p->head_len += take;
      data += take;
      len -= take;
      if (p->head[p->head_len - 1] == '\n' || p->head_len == HEAD_MAX)
        head_line (c);
    }
  if (len > 0)
    forward_err (c, data, len);
}

/* The agent's stream crosses srun's I/O connection to slurmstepd in
   messages of at most 1 KiB; Slurm (22.05) leaves Nagle's algorithm on
   for it, so the second message of a burst waits for the peer's delayed
   ACK: 44 ms for each frame of more than 1 KiB either way (a command's
   script, its environment), 0.2 ms with TCP_NODELAY.  srun is our child:
   its sockets are reachable (pidfd_getfd), and a socket's options are the
   socket's.  Ours: TCP_NODELAY (what we send), and TCP_QUICKACK each
   time its output was read (what slurmstepd sends waits for no delayed
   ACK of ours).  Where the kernel does not allow it, frames are slower,
   nothing else.  */
/* Our child srun behind proc P: its stdout is one of the pipes P's
   epoll set (P->inner.fd) watches, which /proc/self/fdinfo lists.  */
static pid_t
child_of_proc (const slurm_proc *p)
{
  char path[300], link[64], buf[512], want[4][64];
  size_t n_want = 0;
  pid_t found = 0;
  FILE *f;
  DIR *d;
  struct dirent *e;

  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", p->inner.fd);
  if ((f = fopen (path, "re")) == NULL)
    return 0;
  while (n_want < 4 && fgets (buf, sizeof buf, f))
    {
      int tfd;
      struct stat st;
      if (sscanf (buf, "tfd: %d", &tfd) == 1 && fstat (tfd, &st) == 0 && S_ISFIFO (st.st_mode))
        snprintf (want[n_want++], sizeof want[0], "pipe:[%lu]", (unsigned long) st.st_ino);
    }
  fclose (f);
  if (n_want == 0 || (d = opendir ("/proc")) == NULL)
    return 0;
  while (found == 0 && (e = readdir (d)) != NULL)
    {
      if (e->d_name[0] < '1' || e->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/stat", e->d_name);
      if ((f = fopen (path, "re")) == NULL)
        continue;
      size_t n = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      buf[n] = '\0';
      char *rp = strrchr (buf, ')');
      long ppid = 0;
      if (rp == NULL || sscanf (rp + 1, " %*c %ld", &ppid) != 1 || ppid != (long) getpid ())
        continue;
      snprintf (path, sizeof path, "/proc/%s/fd/1", e->d_name);
      ssize_t k = readlink (path, link, sizeof link - 1);
      if (k <= 0)
        continue;
      link[k] = '\0';
      for (size_t i = 0; i < n_want && found == 0; i++)
        if (strcmp (link, want[i]) == 0)
          found = (pid_t) atol (e->d_name);
    }
  closedir (d);
  return found;
}

static void
agent_tcp_setup (slurm_proc *p)
{
  p->tcp_tried = true;
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
  pid_t pid = child_of_proc (p);
  char path[64], link[64];
  if (pid <= 0)
    return;
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return;
  snprintf (path, sizeof path, "/proc/%ld/fd", (long) pid);
  DIR *d = opendir (path);
  struct dirent *e;
  while (d && (e = readdir (d)) != NULL && p->n_tcp < sizeof p->tcp / sizeof p->tcp[0])
    {
      char fdpath[384];
      snprintf (fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
      ssize_t k = readlink (fdpath, link, sizeof link - 1);
      if (k <= 0 || strncmp (link, "socket:", 7) != 0)
        continue;
      int fd = (int) syscall (SYS_pidfd_getfd, pidfd, atoi (e->d_name), 0);
      if (fd < 0)
        continue;
      struct sockaddr_storage sa;
      socklen_t len = sizeof sa;
      int type = 0, one = 1;
      socklen_t tl = sizeof type;
      if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM
          && getpeername (fd, (struct sockaddr *) &sa, &len) == 0 && (sa.ss_family == AF_INET || sa.ss_family == AF_INET6)
          && setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0)
        {
          fcntl (fd, F_SETFD, FD_CLOEXEC);
          p->tcp[p->n_tcp++] = fd;
        }
      else
        close (fd);
    }
  if (d)
    closedir (d);
  close (pidfd);
  berth_debugf ("slurm", "the agent's stream: TCP_NODELAY on %zu connection(s) of srun (pid %ld)", p->n_tcp, (long) pid);
#endif
}

static int
sp_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  slurm_proc *p = proc;
  sink_ctx c = { p, sink, userdata };
  int r = p->inner.ops->pump (p->inner.proc, my_sink, &c);
  if (p->agent)
    {
      /* the step runs once the shim said which it is: its connection is up */
      if (!p->tcp_tried && p->step[0] != '\0')
        agent_tcp_setup (p);
      int one = 1;
      for (size_t i = 0; i < p->n_tcp; i++)
        setsockopt (p->tcp[i], IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
  if (r == 0 && p->head_len > 0)
    {
      /* the stream ended inside an unfinished line */
      if (p->head_len >= 6 && memcmp (p->head, "srun: ", 6) == 0)
        errtail_add (p, p->head, p->head_len);
      forward_err (&c, p->head, p->head_len);
      p->head_len = 0;
      p->marker_done = true;
    }
  return r;
}

static ssize_t
sp_write_stdin (void *proc, const void *buf, size_t len)
{
  slurm_proc *p = proc;
  return p->inner.ops->write_stdin (p->inner.proc, buf, len);
}

static int
sp_close_stdin (void *proc)
{
  slurm_proc *p = proc;
  return p->inner.ops->close_stdin (p->inner.proc);
}

int
slurm_job_alive (const slurm_env *s, const char *job, double timeout, berth_error **reterr)
{
  slurm_job_row *rows = NULL;
  char *buf = NULL;
  size_t n = 0;
  int r = slurm_squeue (&s->bins, NULL, job, timeout, &rows, &n, &buf, reterr);
  if (r < 0)
    return r;
  r = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp (rows[i].id, job) == 0 && slurm_state_is_live (rows[i].state))
      r = 1;
  free (rows);
  free (buf);
  return r;
}

static int
sp_wait (void *proc, int *ret_status, berth_error **reterr)
{
  slurm_proc *p = proc;
  int r = p->inner.ops->wait (p->inner.proc, ret_status, reterr);

  p->reaped = true;
  /* The agent's stream ended (with any status): the allocation may have
     ended under it, which only Slurm can say.  */
  if (r < 0 || (*ret_status == 0 && !p->agent))
    return r;
  if (p->step[0] == '\0' && *ret_status != 0)
    {
      /* srun gave up before the step ran anything */
      char *last = slurm_last_line (p->errtail, 300), *ping = NULL;
      slurm_env s = { .bins = p->bins };
      int alive = slurm_job_alive (&s, p->job, SLURM_STEP_KILL_TIMEOUT, NULL);
      if (p->shared && alive == 0)
        p->shared->gone = true;
      if (alive < 0)
        slurm_ping (p->bins.scontrol, SLURM_PING_TIMEOUT, &ping);
      r = berth_error_set (reterr, BERTH_E_BACKEND,
                           "slurm: 'srun --jobid=%s' could not start the command (exit %d): %s; %s", p->job, *ret_status,
                           last && *last ? last : alive == 0 ? "the allocation has ended" : ping ? ping : "(srun said nothing)",
                           alive == 0 ? "the next command allocates a new one"
                                      : "check that slurmctld answers (scontrol ping) and that the allocation still runs (squeue)");
      free (ping);
      free (last);
      return r;
    }
  /* A failing command, or an allocation that ended under it.  */
  {
    slurm_env s = { .bins = p->bins };
    if (slurm_job_alive (&s, p->job, SLURM_STEP_KILL_TIMEOUT, NULL) == 0)
      {
        if (p->shared)
          p->shared->gone = true;
        return berth_error_set (reterr, BERTH_E_BACKEND,
                              "slurm: the allocation %s ended while the command ran (scancel, its time limit or a "
                              "node failure: scontrol show job %s says which); the next command allocates a new one",
                              p->job, p->job);
      }
  }
  return 0;
}

static void
sink_drop (void *userdata, int stream, const char *data, size_t len)
{
  (void) userdata, (void) stream, (void) data, (void) len;
}

/* The agent's stream let go of: its stdin closed, its relay ends and the
   step with it, srun reporting the end (within BOUND_MS; a killed srun
   leaves its slurmstepd waiting to tell it, and the job COMPLETING, for
   seconds: no new allocation on the node meanwhile).  */
static void
agent_stream_end (slurm_proc *p, int bound_ms)
{
  if (p->inner.ops->close_stdin)
    p->inner.ops->close_stdin (p->inner.proc);
  uint64_t end = berth_monotonic_usec () + (uint64_t) bound_ms * 1000u;
  for (;;)
    {
      uint64_t now = berth_monotonic_usec ();
      int left = now >= end ? 0 : (int) ((end - now) / 1000) + 1;
      struct pollfd pf = { p->inner.fd, POLLIN, 0 };
      if (left <= 0 || poll (&pf, 1, left) < 0 || p->inner.ops->pump (p->inner.proc, sink_drop, NULL) <= 0)
        break;
    }
}

static void
sp_free (void *proc)
{
  slurm_proc *p = proc;
  if (p == NULL)
    return;
  if (p->agent && !p->reaped && p->inner.ops && p->inner.fd >= 0)
    agent_stream_end (p, 1000);
  /* Let go before the command ended, and not after the wrapper reported
     its exit (then background children hold the streams, and they stay):
     the step goes too.  */
  if (!p->reaped && p->step[0] != '\0' && !p->saw_ec && !p->agent)
    {
      berth_error *err = NULL;
      if (slurm_scancel (&p->bins, p->step, true, SLURM_STEP_KILL_TIMEOUT, &err) < 0)
        berth_debugf ("slurm", "cancelling step %s: %s", p->step, berth_error_message (err));
      berth_error_free (err);
    }
  for (size_t i = 0; i < p->n_tcp; i++)
    close (p->tcp[i]);
  if (p->inner.ops && p->inner.ops->free)
    p->inner.ops->free (p->inner.proc);
  slurm_bins_clear (&p->bins);
  slurm_shared_unref (p->shared);
  free (p->job);
  free (p);
}

static const berth_proc_ops slurm_proc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = sp_pump,
  .write_stdin = sp_write_stdin,
  .close_stdin = sp_close_stdin,
  .wait = sp_wait,
  .free = sp_free,
};

static bool
is_invoking_user (const char *user)
{
  char buf[32];
  struct passwd *pw;
  snprintf (buf, sizeof buf, "%lu", (unsigned long) getuid ());
  if (strcmp (user, buf) == 0)
    return true;
  pw = getpwuid (getuid ());
  return pw != NULL && strcmp (pw->pw_name, user) == 0;
}

int
slurm_proc_start_cmd (berth_env *env, slurm_env *s, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  slurm_proc *p;
  char **argv;
  int r;

  if (s == NULL || s->job == NULL)
    return berth_error_set (reterr, ESRCH, "slurm: the environment has no allocation (it was removed)");
  if (s->shared && s->shared->gone)
    return berth_error_set (reterr, ESRCH, "slurm: the allocation %s has ended", s->job);
  if (req->user != NULL && *req->user != '\0' && !is_invoking_user (req->user))
    return berth_error_set (reterr, ENOTSUP, "slurm: commands run as the user who holds the allocation; cannot switch to '%s'",
                            req->user);
  bool script = BERTH_HAS_FIELD (req, berth_start_req, flags) && (req->flags & BERTH_START_SHELL_SCRIPT);
  bool agent = BERTH_HAS_FIELD (req, berth_start_req, flags) && (req->flags & BERTH_START_AGENT);
  /* The agent's start: in a named environment, one that serves the
     socket in a step of its own first (agent.c); this one relays.  */
  if (agent && slurm_agent_serve (env, s, req) < 0)
    return berth_error_set (reterr, ENOMEM, "slurm: out of memory");
  argv = slurm_prefix_argv (s->bins.srun, s->job, s->cpus, false, true, script, s->apptainer, s->image);
  for (size_t i = 0; argv && req->argv[i]; i++)
    if (berth_strv_push (&argv, req->argv[i]) < 0)
      argv = berth_strv_free (argv);
  p = calloc (1, sizeof *p);
  if (argv == NULL || p == NULL)
    {
      berth_strv_free (argv);
      free (p);
      return berth_error_set (reterr, ENOMEM, "slurm: out of memory");
    }
  p->job = strdup (s->job);
  p->shared = slurm_shared_ref (s->shared);
  p->bins.scancel = strdup (s->bins.scancel);
  p->bins.squeue = strdup (s->bins.squeue);
  p->bins.scontrol = strdup (s->bins.scontrol);
  p->watch_ec = script;
  p->agent = agent;
  if (p->job == NULL || p->bins.scancel == NULL || p->bins.squeue == NULL || p->bins.scontrol == NULL)
    {
      berth_strv_free (argv);
      sp_free (p);
      return berth_error_set (reterr, ENOMEM, "slurm: out of memory");
    }
  /* srun exports its environment to the step: the scrubbed host one.  */
  r = berth_proc_spawn ((const char *const *) argv, berth_env_host_environ (env), req->has_stdin, &p->inner, reterr);
  berth_strv_free (argv);
  if (r < 0)
    {
      p->reaped = true;
      sp_free (p);
      return r;
    }
  *ret = (berth_proc){ .size = sizeof *ret, .fd = p->inner.fd, .stdin_fd = p->inner.stdin_fd, .ops = &slurm_proc_ops, .proc = p };
  return 0;
}
