/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent-client.c: the agent transport (agent-client.h).
 *
 * One stream per environment: berth-agent started through the
 * environment's fallback transport (a berth_job like any command), its
 * stdout carrying frames (agent/proto.h).  Each command is a channel of
 * that stream, seen by the session layer as a berth_proc:
 *   - fd: an epoll set of the stream's fd and the channel's eventfd, so
 *     it is readable when the stream has bytes (for any channel: whoever
 *     pumps first sorts them out) or when frames for this channel wait in
 *     its queue;
 *   - stdin_fd: an eventfd that is writable while the channel's stdin
 *     window has room (it is filled to its maximum to make it block);
 *   - pump delivers the channel's queued OUT/ERR frames and grants the
 *     agent that much window again; wait waits for its EXIT frame.
 * Several executes in flight on one environment share the stream this
 * way, each polling its own fd (berth_env_exec_begin/step).  */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../agent/proto.h"
#include "agent-client.h"
#include "provider-call.h"
#include "wrapper.h"

/* Bounds: the agent's stderr kept for messages, a start or upload, the
   binary's size, a blocked write into the stream.  */
#define DIAG_MAX 4096
#define HANDSHAKE_S 30
#define DIRECT_HANDSHAKE_S 2
#define UPLOAD_S 120
#define BINARY_MAX (64u << 20)
#define FLUSH_S 30
#define EVENTFD_FULL 0xfffffffffffffffeULL

typedef struct agent_chan agent_chan;

typedef struct berth_agent_mux
{
  unsigned n_ref; /* the environment's, one per channel */
  berth_env *env; /* NULL once the environment let go */
  const berth_transport_ops *fallback;
  uint32_t flags; /* BERTH_PREFIX_* for the session */
  bool pass_env;  /* RUN carries the host environment (PASSES_ENV) */
  berth_job job;  /* the agent's stream */
  bool job_open;
  bool direct; /* the stream is a socket to a serving agent (agent-reach.c), at AT */
  int direct_fd; /* that socket (the proc's, borrowed) */
  berth_agent_buf rx, tx;
  berth_buf diag;
  bool hello, dead, unavailable;
  bool mismatch; /* the agent that answered is another version */
  bool why_is_backend; /* WHY is the transport's own message */
  char *why; /* dead: what happened; unavailable: why exec-per-command */
  char *at;  /* where the agent serves a named environment (its socket inside it) */
  char **environ; /* what its commands inherit (ENVIRON), or NULL */
  uint32_t next_id;
  agent_chan *chans;
  unsigned killed; /* KILLED replies seen */
  unsigned long long started; /* channels opened (debug) */
} berth_agent_mux;

struct agent_chan
{
  berth_agent_mux *mux;
  agent_chan *next;
  uint32_t id;
  int ep, evfd, wfd;
  bool signalled, saturated;
  berth_agent_buf q; /* queued records: u8 stream, u32 len, bytes */
  uint32_t window;   /* stdin bytes the agent still takes */
  size_t unacked;    /* output delivered, not yet granted back */
  bool eof_out, eof_err, exited, lost, has_stdin;
  bool runs_bash; /* argv[0] is bash: its ENOENT means the environment has none */
  berth_agent_exit exit;
  char *error; /* ERROR frame for this channel */
  long pid;
};

static void mux_die (berth_agent_mux *m, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void mux_lost (berth_agent_mux *m, int r);

static berth_agent_mux *
mux_ref (berth_agent_mux *m)
{
  m->n_ref++;
  return m;
}

static void
mux_close_stream (berth_agent_mux *m)
{
  if (m->job_open)
    berth_job_finish (&m->job, BERTH_JOB_KILL);
  m->job_open = false;
}

static void
mux_unref (berth_agent_mux *m)
{
  if (m == NULL || --m->n_ref > 0)
    return;
  mux_close_stream (m);
  berth_agent_buf_free (&m->rx);
  berth_agent_buf_free (&m->tx);
  berth_buf_free (&m->diag);
  free (m->why);
  free (m->at);
  berth_strv_free (m->environ);
  free (m);
}

static void
chan_signal (agent_chan *c)
{
  if (c->signalled)
    return;
  uint64_t one = 1;
  if (write (c->evfd, &one, sizeof one) == sizeof one)
    c->signalled = true;
}

static void
chan_unsaturate (agent_chan *c)
{
  uint64_t v;
  if (c->saturated && read (c->wfd, &v, sizeof v) == sizeof v)
    c->saturated = false;
}

static void
chan_saturate (agent_chan *c)
{
  uint64_t v = EVENTFD_FULL;
  if (!c->saturated && write (c->wfd, &v, sizeof v) == sizeof v)
    c->saturated = true;
}

static void
mux_die (berth_agent_mux *m, const char *fmt, ...)
{
  if (m->dead)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  /* What the agent said on stderr, when it said anything.  */
  const char *d = m->diag.data && m->diag.len && !m->why_is_backend ? m->diag.data : NULL;
  free (m->why);
  m->why = d ? berth_strdup_printf ("%s (%.*s)", msg ? msg : "the agent failed", (int) strcspn (d, "\n"), d) : msg ? strdup (msg) : NULL;
  free (msg);
  m->dead = true;
  if (m->env)
    berth_ctx_log (m->env->ctx, BERTH_LOG_DEBUG, "agent", "the agent stream of %s ended: %s", m->env->id, m->why ? m->why : "?");
  for (agent_chan *c = m->chans; c; c = c->next)
    {
      c->lost = true;
      chan_signal (c);
      chan_unsaturate (c);
    }
  mux_close_stream (m);
}

/* The stream ended (R: 0 at its end, else -errno): what the transport
   under it says (the connection, daemon or jail that died), else how
   the agent ended.  */
static void
mux_lost (berth_agent_mux *m, int r)
{
  berth_error *err = NULL;
  int st = -1;
  m->job_open = false;
  berth_job_end_status (&m->job, BERTH_JOB_WAIT, &st, &err);
  /* A socket says nothing of why: the backend, asked how it reaches the
     agent, may (the container, master or jail is gone).  */
  if (err == NULL && m->direct && m->env && m->at)
    berth_agent_lost_why (m->env, m->at, &err);
  if (err)
    {
      /* The backend's own words, as exec-per-command reports them.  */
      free (m->why);
      m->why = strdup (berth_error_message (err));
      m->why_is_backend = true;
      berth_error_free (err);
      mux_die (m, "%s", m->why ? m->why : "the transport failed");
    }
  else if (st > 128)
    mux_die (m, "the agent was killed (signal %d)", st - 128);
  else if (st >= 0)
    mux_die (m, "the agent exited with status %d", st);
  else if (r < 0)
    mux_die (m, "the agent's stream failed: %s", strerror (-r));
  else
    mux_die (m, "the agent's stream ended");
}

static agent_chan *
chan_find (berth_agent_mux *m, uint32_t id)
{
  for (agent_chan *c = m->chans; c; c = c->next)
    if (c->id == id)
      return c;
  return NULL;
}

static void
chan_queue (agent_chan *c, uint8_t stream, const uint8_t *data, size_t len)
{
  uint8_t h[5] = { stream, (uint8_t) (len >> 24), (uint8_t) (len >> 16), (uint8_t) (len >> 8), (uint8_t) len };
  if (berth_agent_buf_add (&c->q, h, sizeof h) < 0 || berth_agent_buf_add (&c->q, data, len) < 0)
    abort (); /* small allocations abort (DESIGN 4); bounded by the window */
  chan_signal (c);
}

static void
dispatch (berth_agent_mux *m, const berth_agent_frame *f)
{
  berth_agent_rd r = berth_agent_rd_init (f);
  agent_chan *c = f->chan ? chan_find (m, f->chan) : NULL;
  switch (f->type)
    {
    case BERTH_AGENT_HELLO:
      {
        uint32_t proto = berth_agent_get_u32 (&r);
        size_t n;
        const char *v = berth_agent_get_str (&r, 256, &n);
        if (r.bad || proto != BERTH_AGENT_PROTO || v == NULL || n != strlen (BERTH_AGENT_VERSION) || memcmp (v, BERTH_AGENT_VERSION, n) != 0)
          m->mismatch = true, mux_die (m, "the agent in the environment is version %.*s (protocol %u), berth needs %s", v ? (int) n : 1, v ? v : "?", proto,
                   BERTH_AGENT_VERSION);
        else
          m->hello = true;
        return;
      }
    case BERTH_AGENT_ENVIRON:
      {
        /* a hint only: without it, the snapshot is sent whole */
        char **e = NULL;
        if (f->chan == 0 && berth_agent_environ_decode (f, &e) == 0)
          {
            berth_strv_free (m->environ);
            m->environ = e;
          }
        return;
      }
    case BERTH_AGENT_STARTED:
      if (c)
        c->pid = berth_agent_get_u32 (&r);
      return;
    case BERTH_AGENT_OUT:
    case BERTH_AGENT_ERR:
      if (c)
        chan_queue (c, f->type == BERTH_AGENT_OUT ? BERTH_STREAM_OUT : BERTH_STREAM_ERR, f->data, f->len);
      return;
    case BERTH_AGENT_EOF:
      if (c)
        {
          uint8_t s = berth_agent_get_u8 (&r);
          if (s == BERTH_AGENT_STREAM_OUT)
            c->eof_out = true;
          else if (s == BERTH_AGENT_STREAM_ERR)
            c->eof_err = true;
          chan_signal (c);
        }
      return;
    case BERTH_AGENT_WINDOW_FRAME:
      if (c)
        {
          uint32_t n = berth_agent_get_u32 (&r);
          c->window = (uint64_t) c->window + n > BERTH_AGENT_WINDOW ? BERTH_AGENT_WINDOW : c->window + n;
          if (c->window > 0)
            chan_unsaturate (c);
        }
      return;
    case BERTH_AGENT_EXIT:
      if (c && !c->exited)
        {
          if (berth_agent_exit_decode (f, &c->exit) < 0)
            {
              mux_die (m, "the agent sent a malformed exit frame");
              return;
            }
          c->exited = true;
          chan_signal (c);
          chan_unsaturate (c);
        }
      return;
    case BERTH_AGENT_KILLED:
      m->killed++;
      return;
    case BERTH_AGENT_ERROR:
      {
        _cleanup_free_ char *msg = berth_agent_get_strdup (&r, 1024);
        if (c == NULL)
          mux_die (m, "the agent refused the connection: %s", msg ? msg : "?");
        else if (c->error == NULL)
          {
            c->error = msg ? strdup (msg) : strdup ("the agent refused the request");
            c->lost = true;
            chan_signal (c);
          }
        return;
      }
    default:
      return; /* PONG, LIST_REPLY: not asked for here */
    }
}

static void
mux_sink (void *userdata, int stream, const char *data, size_t len)
{
  berth_agent_mux *m = userdata;
  if (stream == BERTH_STREAM_OUT)
    {
      if (berth_agent_buf_add (&m->rx, data, len) < 0)
        abort ();
    }
  else if (m->diag.len < DIAG_MAX)
    berth_buf_append (&m->diag, data, len < DIAG_MAX - m->diag.len ? len : DIAG_MAX - m->diag.len);
}

static void
mux_parse (berth_agent_mux *m)
{
  while (!m->dead)
    {
      berth_agent_frame f;
      int r = berth_agent_frame_parse (m->rx.data + m->rx.off, berth_agent_buf_pending (&m->rx), &f);
      if (r == 0)
        break;
      if (r < 0)
        {
          mux_die (m, "the agent's stream is damaged (%s)", strerror (-r));
          break;
        }
      dispatch (m, &f);
      berth_agent_buf_consume (&m->rx, (size_t) r);
    }
}

/* A serving agent's socket: read straight into the frame buffer (bulk
   output crosses one copy less), in big reads.  1: read (or nothing
   there yet), 0: its end, < 0: an error.  */
static int
mux_read_socket (berth_agent_mux *m)
{
  enum { SOCKET_READ = 256u << 10 };
  if (berth_agent_buf_reserve (&m->rx, SOCKET_READ) < 0)
    abort ();
  ssize_t n;
  while ((n = recv (m->direct_fd, m->rx.data + m->rx.len, SOCKET_READ, MSG_DONTWAIT)) < 0 && errno == EINTR)
    ;
  if (n > 0)
    {
      m->rx.len += (size_t) n;
      return 1;
    }
  if (n == 0)
    {
      m->job.eof = true;
      return 0;
    }
  return errno == EAGAIN ? 1 : -errno;
}

/* Read what the stream has, waiting up to TIMEOUT_MS for it, and sort
   the frames into their channels.  1: read something, 0: nothing came,
   < 0: the stream is dead.  */
static int
mux_read (berth_agent_mux *m, int timeout_ms)
{
  if (m->dead)
    return -EPIPE;
  bool pending = berth_transport_data_pending (&m->job);
  if (!pending)
    {
      struct pollfd p = { m->job.proc.fd, POLLIN, 0 };
      int n = poll (&p, 1, timeout_ms);
      if (n < 0)
        return errno == EINTR ? 0 : -errno;
      if (n == 0)
        return 0;
    }
  int r;
  if (m->direct)
    r = mux_read_socket (m);
  else
    do
      r = berth_job_pump_output (&m->job, mux_sink, m);
    while (r > 0 && berth_transport_data_pending (&m->job));
  mux_parse (m);
  if (r <= 0 && !m->dead)
    mux_lost (m, r);
  return m->dead ? -EPIPE : 1;
}

/* Write the queued frames into the stream, reading it meanwhile (the
   agent never stops reading its input, so this ends quickly).  */
static int
mux_flush (berth_agent_mux *m)
{
  uint64_t deadline = berth_now_usec () + FLUSH_S * 1000000ull;
  while (!m->dead && berth_agent_buf_pending (&m->tx))
    {
      ssize_t n = berth_job_write (&m->job, m->tx.data + m->tx.off, berth_agent_buf_pending (&m->tx));
      if (n > 0)
        {
          berth_agent_buf_consume (&m->tx, (size_t) n);
          continue;
        }
      if (n != -EAGAIN && n != -EINTR)
        {
          mux_die (m, "cannot write to the agent: %s", strerror (n < 0 ? (int) -n : EPIPE));
          break;
        }
      if (berth_now_usec () > deadline)
        {
          mux_die (m, "the agent took no input for %ds", FLUSH_S);
          break;
        }
      struct pollfd p[2] = { { m->job.proc.stdin_fd, POLLOUT, 0 }, { m->job.proc.fd, POLLIN, 0 } };
      if (poll (p, 2, 100) > 0 && p[1].revents)
        mux_read (m, 0);
    }
  return m->dead ? -EPIPE : 0;
}

/* ---- a channel as a berth_proc ---- */

static int
chan_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  agent_chan *c = proc;
  berth_agent_mux *m = c->mux;
  uint64_t v;
  if (c->signalled && read (c->evfd, &v, sizeof v) == sizeof v)
    c->signalled = false;
  for (int i = 0; i < 4 && !m->dead && mux_read (m, 0) > 0; i++)
    ;
  /* Deliver what is queued (it may grow while the sink runs: no).  */
  size_t delivered = 0;
  while (berth_agent_buf_pending (&c->q) >= 5)
    {
      const uint8_t *h = c->q.data + c->q.off;
      size_t len = (size_t) h[1] << 24 | (size_t) h[2] << 16 | (size_t) h[3] << 8 | h[4];
      sink (userdata, h[0], (const char *) h + 5, len);
      delivered += len;
      berth_agent_buf_consume (&c->q, 5 + len);
    }
  /* The agent may send as much again: granted in quarters of the
     window (a small output costs no frame back).  */
  c->unacked += delivered;
  if (c->unacked >= BERTH_AGENT_WINDOW / 4 && !m->dead && !c->exited)
    {
      if (berth_agent_put_u32 (&m->tx, BERTH_AGENT_WINDOW_FRAME, c->id, (uint32_t) c->unacked) < 0)
        abort ();
      c->unacked = 0;
      mux_flush (m);
    }
  if ((c->eof_out && c->eof_err) || (c->exited && c->exit.cause == BERTH_AGENT_CAUSE_FAILED))
    return 0;
  if (c->exited && !(c->eof_out && c->eof_err))
    return 1;
  /* The stream died: end of output, and wait says what happened.  */
  if (c->lost)
    return 0;
  return 1;
}

static ssize_t
chan_write_stdin (void *proc, const void *buf, size_t len)
{
  agent_chan *c = proc;
  berth_agent_mux *m = c->mux;
  if (m->dead || c->lost || c->exited)
    return -EPIPE;
  if (c->window == 0)
    {
      chan_saturate (c);
      return -EAGAIN;
    }
  size_t n = len;
  if (n > c->window)
    n = c->window;
  if (n > BERTH_AGENT_CHUNK)
    n = BERTH_AGENT_CHUNK;
  if (berth_agent_put_frame (&m->tx, BERTH_AGENT_STDIN, c->id, buf, n) < 0)
    abort ();
  c->window -= (uint32_t) n;
  if (c->window == 0)
    chan_saturate (c);
  if (mux_flush (m) < 0)
    return -EPIPE;
  return (ssize_t) n;
}

static int
chan_close_stdin (void *proc)
{
  agent_chan *c = proc;
  berth_agent_mux *m = c->mux;
  if (!c->has_stdin || m->dead)
    return 0;
  c->has_stdin = false;
  if (berth_agent_put_frame (&m->tx, BERTH_AGENT_CLOSE_STDIN, c->id, NULL, 0) < 0)
    abort ();
  return mux_flush (m);
}

/* A command stopped by SIGXCPU (its shell's status 152, or the agent saw
   the signal itself: SURE): name the limit, and the key that set it when
   the backend has one (terminal.<backend>_cpu_seconds).  */
static void
cpu_limit_note (berth_agent_mux *m, bool sure)
{
  if (m->env == NULL)
    return;
  _cleanup_free_ char *key = berth_strdup_printf ("terminal.%s_cpu_seconds", berth_env_backend (m->env));
  const char *v = key ? berth_config_string (m->env->ctx->config, key, NULL) : NULL;
  if (v && strcmp (v, "0") != 0)
    berth_logf (m->env, BERTH_LOG_WARNING, "the command was stopped by the environment's CPU time limit (%s s, %s; 0 disables it)", v, key);
  else if (sure)
    berth_logf (m->env, BERTH_LOG_WARNING, "the command was stopped by a CPU time limit (SIGXCPU)");
}

static void
chan_wait_exit (agent_chan *c)
{
  while (!c->exited && !c->lost && !c->mux->dead)
    if (mux_read (c->mux, 1000) < 0)
      break;
}

static int
chan_wait (void *proc, int *ret_status, berth_error **reterr)
{
  agent_chan *c = proc;
  berth_agent_mux *m = c->mux;
  *ret_status = -1;
  chan_wait_exit (c);
  if (c->exited)
    switch (c->exit.cause)
      {
      case BERTH_AGENT_CAUSE_EXITED:
        *ret_status = (int) (c->exit.value & 0xff);
        if (*ret_status == 128 + SIGXCPU)
          cpu_limit_note (m, false);
        return 0;
      case BERTH_AGENT_CAUSE_FAILED:
        if (c->runs_bash && c->exit.value == ENOENT && m->env)
          return berth_no_bash_error (m->env, reterr);
        return berth_error_set (reterr, BERTH_E_BACKEND, "%s", c->exit.message && *c->exit.message ? c->exit.message : "the agent could not start the command");
      default:
        *ret_status = 128 + (int) (c->exit.value & 0x7f);
        if (c->exit.cause == BERTH_AGENT_CAUSE_LIMIT && c->exit.value == SIGXCPU)
          cpu_limit_note (m, true);
        return 0;
      }
  if (c->error)
    return berth_error_set (reterr, BERTH_E_BACKEND, "the agent refused the command: %s", c->error);
  if (m->why_is_backend)
    return berth_error_set (reterr, BERTH_E_BACKEND, "%s", m->why);
  return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the agent of this environment is gone (%s): the command's outcome is unknown; the next command starts a new one",
                          m->env ? berth_env_backend (m->env) : "agent", m->why ? m->why : "its stream ended");
}

/* The agent's cause (agent.c:chan_exit_frame): an OOM kill seen in the
   cgroup's memory.events, a limit's signal.  */
static berth_termination
chan_termination (void *proc, int *ret_signal)
{
  agent_chan *c = proc;
  chan_wait_exit (c);
  if (!c->exited)
    return BERTH_TERMINATION_EXITED;
  *ret_signal = (int) (c->exit.value & 0x7f);
  if (c->exit.cause == BERTH_AGENT_CAUSE_OOM)
    return BERTH_TERMINATION_OOM;
  if (c->exit.cause == BERTH_AGENT_CAUSE_LIMIT)
    return BERTH_TERMINATION_LIMIT;
  return BERTH_TERMINATION_EXITED;
}

static void
chan_free (void *proc)
{
  agent_chan *c = proc;
  berth_agent_mux *m = c->mux;
  if (!m->dead && !c->exited && !c->lost)
    {
      /* Let go of it: the agent closes its streams; a leader still
         running goes after the agent's grace (a kill follows from the
         session when it wants one now).  */
      if (berth_agent_put_frame (&m->tx, BERTH_AGENT_RELEASE, c->id, NULL, 0) == 0)
        mux_flush (m);
    }
  for (agent_chan **p = &m->chans; *p; p = &(*p)->next)
    if (*p == c)
      {
        *p = c->next;
        break;
      }
  if (c->ep >= 0)
    close (c->ep);
  if (c->evfd >= 0)
    close (c->evfd);
  if (c->wfd >= 0)
    close (c->wfd);
  berth_agent_buf_free (&c->q);
  free (c->exit.message);
  free (c->error);
  free (c);
  mux_unref (m);
}

static bool
chan_data_pending (const berth_proc *proc)
{
  const agent_chan *c = proc->proc;
  return berth_agent_buf_pending (&c->q) > 0 || c->signalled;
}

static const berth_proc_ops chan_ops = {
  .size = sizeof chan_ops,
  .pump = chan_pump,
  .write_stdin = chan_write_stdin,
  .close_stdin = chan_close_stdin,
  .wait = chan_wait,
  .free = chan_free,
  .termination = chan_termination,
};

/* ---- running short scripts through the fallback ---- */

typedef struct capture
{
  berth_buf out;
} capture;

static void
capture_sink (void *userdata, int stream, const char *data, size_t len)
{
  capture *cap = userdata;
  if (stream == BERTH_STREAM_OUT && cap->out.len < DIAG_MAX)
    berth_buf_append (&cap->out, data, len < DIAG_MAX - cap->out.len ? len : DIAG_MAX - cap->out.len);
}

/* Run ARGV through the fallback with IN (LEN bytes, may be 0) on its
   stdin, its stdout in *OUT (bounded), within TIMEOUT seconds.  */
static int
run_via_fallback (berth_env *env, const berth_transport_ops *fb, const char *const *argv, uint32_t start_flags, const void *in, size_t len, double timeout,
                  berth_buf *out, int *ret_status, berth_error **reterr)
{
  _cleanup_ (berth_transport_call_free) berth_transport_call call = { 0 };
  berth_job job;
  berth_feed feed;
  capture cap = { { 0 } };
  uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
  if (env->deadline_usec && env->deadline_usec < deadline)
    deadline = env->deadline_usec;
  int r = fb->prepare (env, &call, reterr);
  if (r < 0)
    return r;
  r = berth_transport_start_via (fb, env, &call, argv, start_flags, len > 0, -1, deadline, &job, reterr);
  if (r < 0)
    return r;
  berth_feed_init (&feed, in, len, -1);
  while ((r = berth_job_pump_feed (&job, len > 0 ? &feed : NULL, 100, -1, NULL, capture_sink, &cap)) > 0)
    if (berth_now_usec () > deadline)
      {
        berth_job_finish (&job, BERTH_JOB_KILL);
        berth_feed_free (&feed);
        berth_buf_free (&cap.out);
        return berth_error_set (reterr, ETIMEDOUT, "%s: placing the agent took longer than %gs", berth_env_backend (env), timeout);
      }
  berth_feed_free (&feed);
  r = berth_job_end_status (&job, BERTH_JOB_WAIT, ret_status, reterr);
  if (out)
    *out = cap.out;
  else
    berth_buf_free (&cap.out);
  return r;
}

/* ---- an environment without bash ---- */

int
berth_no_bash_error (berth_env *env, berth_error **reterr)
{
  const char *b = berth_env_backend (env);
  _cleanup_free_ char *key = berth_strdup_printf ("terminal.%s_image", b);
  const char *image = env->image ? env->image : key ? berth_config_string (env->ctx->config, key, NULL) : NULL;
  if (image)
    return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the image %s has no bash; berth runs commands with bash: use an image that has it (%s)", b, image, key);
  return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the environment has no bash; berth runs commands with bash: install it there", b);
}

bool
berth_env_lacks_bash (berth_env *env)
{
  /* sh answers where bash is missing: exit 3 says so; anything else
     (sh missing too, the environment gone) is not this error.  */
  const char *argv[] = { "sh", "-c", "command -v bash >/dev/null 2>&1 || exit 3", NULL };
  berth_error *err = NULL;
  int st = -1;
  int r = run_via_fallback (env, berth_transport_fallback (env), argv, 0, NULL, 0, 10, NULL, &st, &err);
  berth_error_free (err);
  return r >= 0 && st == 3;
}

/* ---- starting the agent ---- */

static char *
read_binary (const char *path, size_t *ret_len)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size <= 0 || (uint64_t) st.st_size > BINARY_MAX)
    return NULL;
  char *data = malloc ((size_t) st.st_size);
  size_t off = 0;
  while (data && off < (size_t) st.st_size)
    {
      ssize_t n = read (fd, data + off, (size_t) st.st_size - off);
      if (n <= 0)
        {
          free (data);
          return NULL;
        }
      off += (size_t) n;
    }
  *ret_len = off;
  return data;
}

/* The agent program's SHA-256 (the tag of its directories and sockets,
   the check of an uploaded copy) in HASH, remembered in the user's
   runtime directory (private, 0700) by the file's identity -- device,
   inode, size, modification time: hashing the 1 MiB static binary was
   ~7 ms of every berth process, most of a local command through the CLI.
   The binary itself is read only to upload it.  */
static int
agent_hash (const berth_env *env, const char *helper, char hash[65])
{
  struct stat st;
  if (stat (helper, &st) < 0 || !S_ISREG (st.st_mode))
    return -1;
  _cleanup_free_ char *id = berth_strdup_printf ("%ju %ju %jd %jd.%09ld ", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino, (intmax_t) st.st_size,
                                                 (intmax_t) st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  _cleanup_free_ char *cache = env->ctx->runtime_dir ? berth_strdup_printf ("%s/agent-hash", env->ctx->runtime_dir) : NULL;
  _cleanup_free_ char *line = NULL;
  size_t idlen = strlen (id);
  if (cache && berth_state_file_read (cache, &line) == (ssize_t) (idlen + 65) && strncmp (line, id, idlen) == 0 && line[idlen + 64] == '\n')
    {
      memcpy (hash, line + idlen, 64);
      hash[64] = '\0';
      if (strspn (hash, "0123456789abcdef") == 64)
        return 0;
    }
  size_t len = 0;
  _cleanup_free_ char *bin = read_binary (helper, &len);
  if (bin == NULL)
    return -1;
  berth_sha256_hex (bin, len, hash);
  if (cache)
    {
      _cleanup_free_ char *rec = berth_strdup_printf ("%s%s\n", id, hash);
      (void) berth_state_file_write (cache, rec, strlen (rec)); /* a cache: a failure costs the next berth a hash */
    }
  return 0;
}

/* The outcome of one start attempt.  */
enum
{
  START_OK,
  START_NEED, /* the binary is not there: upload */
  START_NO,   /* it cannot run there: *WHY */
  START_TIMEOUT, /* the environment did not answer by the command's deadline */
  START_MISMATCH, /* another version answered: *WHY; start again */
};

/* Read the start script's answer: a text line, or the agent's HELLO.  */
static int
handshake (berth_agent_mux *m, int limit_s, char **why, berth_error **reterr)
{
  uint64_t deadline = berth_now_usec () + (uint64_t) limit_s * 1000000ull;
  bool eof = false;
  if (m->env->deadline_usec && m->env->deadline_usec < deadline)
    deadline = m->env->deadline_usec;
  while (!m->hello)
    {
      size_t have = berth_agent_buf_pending (&m->rx);
      const char *p = (const char *) m->rx.data + m->rx.off;
      if (have > 0 && p[0] == 'B')
        {
          const char *nl = memchr (p, '\n', have);
          if (nl == NULL && have < 1024 && !eof)
            goto more;
          size_t n = nl ? (size_t) (nl - p) : have;
          if (nl && n > 15 && memcmp (p, "BERTH-AGENT-AT:", 15) == 0)
            {
              /* where it serves: its HELLO follows */
              free (m->at);
              m->at = strndup (p + 15, n - 15);
              berth_agent_buf_consume (&m->rx, n + 1);
              continue;
            }
          if (n >= 16 && memcmp (p, "BERTH-AGENT-NEED", 16) == 0)
            return START_NEED;
          if (n > 15 && memcmp (p, "BERTH-AGENT-NO:", 15) == 0)
            *why = strndup (p + 15, n - 15);
          else
            *why = berth_strdup_printf ("it printed %.*s", (int) (n > 200 ? 200 : n), p);
          return START_NO;
        }
      /* A frame: HELLO sets m->hello.  */
      if (have > 0)
        mux_parse (m);
      if (m->hello)
        break;
      if (m->dead || eof)
        {
          if (!m->dead)
            mux_die (m, "the agent exited at once");
          *why = strdup (m->why ? m->why : "the agent did not start");
          return m->mismatch ? START_MISMATCH : START_NO;
        }
    more:
      if (berth_now_usec () > deadline)
        {
          if (m->env->deadline_usec && deadline == m->env->deadline_usec)
            return START_TIMEOUT; /* the command's time is up: not the agent's fault */
          *why = berth_strdup_printf ("the agent did not answer within %ds", limit_s);
          return START_NO;
        }
      /* Raw bytes first: the script's answer may be a line.  */
      struct pollfd pf = { m->job.proc.fd, POLLIN, 0 };
      if (berth_transport_data_pending (&m->job) || poll (&pf, 1, 100) > 0)
        if (berth_job_pump_output (&m->job, mux_sink, m) <= 0)
          eof = true;
    }
  if (berth_agent_put_hello (&m->tx, BERTH_AGENT_VERSION) < 0)
    abort ();
  if (mux_flush (m) < 0)
    {
      *why = strdup (m->why ? m->why : "the agent stopped");
      return START_NO;
    }
  return START_OK;
}

static void
sanitize (char *s)
{
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
      *s = '_';
}

/* The environment did not answer by the command's deadline while its
   agent started (or answered at its socket); T0: when that began.  */
static int
start_timeout_error (berth_env *env, uint64_t t0, berth_error **reterr)
{
  return berth_error_set (reterr, ETIMEDOUT,
                          "%s: the command did not start within %.0fs: the environment stopped answering while its agent started (check the network "
                          "and that the host is up, or run berth doctor -b %s)",
                          berth_env_backend (env), (double) (env->deadline_usec - t0) / 1e6, berth_env_backend (env));
}

static berth_agent_mux *
mux_new (berth_env *env, const berth_transport_ops *fb, uint32_t call_flags)
{
  berth_agent_mux *m = calloc (1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->n_ref = 1;
  m->env = env;
  m->fallback = fb;
  /* Locally each RUN carries this berth's environment (the agent may be
     an earlier berth's); elsewhere the agent started through the
     backend's own transport, whose prefix may shape the environment (a
     plugin's HOME): its children inherit that.  */
  m->pass_env = strcmp (berth_env_backend (env), "local") == 0 && (call_flags & BERTH_PREFIX_PASSES_ENV) != 0;
  /* fd 3 (the script) is carried as FD3 frames: the command's bash opens
     it by path instead of reading its stdin byte by byte.  This berth's
     environment reaches the command only when RUN carries it: the agent
     may be another berth's (it serves a named environment), so elsewhere
     the script brings the passthrough values.  */
  m->flags = (m->pass_env ? BERTH_PREFIX_PASSES_ENV : 0) | BERTH_PREFIX_PASSES_FDS;
  return m;
}

/* The stream over S, a socket connected to the agent serving ENV
   (agent-reach.c): 0, -ENOEXEC when it did not answer as our agent
   (start one through the transport), < 0 with *RETERR when the
   environment failed.  */
static int
mux_open_direct (berth_env *env, const berth_transport_ops *fb, int s, char *at, uint64_t t0, berth_agent_mux **ret, berth_error **reterr)
{
  _cleanup_free_ char *at_owned = at;
  _cleanup_ (berth_transport_call_free) berth_transport_call call = { 0 };
  int r = fb->prepare (env, &call, reterr);
  if (r < 0)
    {
      close (s);
      return r;
    }
  berth_agent_mux *m = mux_new (env, fb, call.flags);
  int in = m ? fcntl (s, F_DUPFD_CLOEXEC, 3) : -1;
  if (in < 0)
    {
      close (s);
      mux_unref (m);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  /* the proc owns both fds from here, on failure too */
  berth_fdproc_spec spec = { .size = sizeof spec, .in_fd = in, .out_fd = s, .err_fd = -1, .pid = -1 };
  if (berth_proc_from_fds (&spec, &m->job.proc, NULL) < 0)
    {
      mux_unref (m);
      return -ENOEXEC;
    }
  m->job_open = true;
  m->direct = true;
  m->direct_fd = s;
  m->at = at_owned;
  at_owned = NULL;
  _cleanup_free_ char *why = NULL;
  /* a serving agent says HELLO at once: a listener that does not (its
     process stopped) is no reason to wait */
  int h = handshake (m, DIRECT_HANDSHAKE_S, &why, reterr);
  if (h == START_OK)
    {
      berth_agent_buf_consume (&m->rx, 0);
      *ret = m;
      return 0;
    }
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "%s: the agent at its socket did not answer (%s): starting it through %s", env->id,
                 why ? why : "timeout", fb->via);
  mux_unref (m);
  return h == START_TIMEOUT ? start_timeout_error (env, t0, reterr) : -ENOEXEC;
}

/* Start the agent in ENV as *RET: 0, or < 0 with *WHY set when it cannot
   run there (exec-per-command then), or < 0 with *RETERR when the
   environment itself failed.  */
static int
mux_open (berth_env *env, berth_agent_mux **ret, char **why, berth_error **reterr)
{
  const berth_transport_ops *fb = berth_transport_fallback (env);
  _cleanup_free_ char *helper = berth_helper_path ("berth-agent");
  char hash[65], tag[64], sock[64];
  if (helper == NULL || agent_hash (env, helper, hash) < 0)
    {
      *why = berth_strdup_printf ("the agent program %s is missing or unreadable (reinstall berth, or set BERTH_LIBEXECDIR)", helper ? helper : "berth-agent");
      return -ENOENT;
    }
  struct utsname u;
  snprintf (tag, sizeof tag, "%s-%.12s", PACKAGE_VERSION, hash);
  snprintf (sock, sizeof sock, "s-%.40s", env->id ? env->id : "env");
  sanitize (sock);
  if (uname (&u) < 0)
    snprintf (u.machine, sizeof u.machine, "unknown");
  bool local = strcmp (berth_env_backend (env), "local") == 0;
  uint64_t t0 = berth_now_usec ();
  /* A named environment's agent serves it for every later berth process,
     where the backend can say how this host reaches its socket.  */
  const berth_provider_ops *ops = env->provider->ops;
  bool serve = env->name != NULL && BERTH_HAS_FIELD (ops, berth_provider_ops, agent_socket) && ops->agent_socket != NULL;
  if (serve)
    {
      char *at = NULL;
      int s = berth_agent_reach (env, tag, &at);
      if (s >= 0)
        {
          int r = mux_open_direct (env, fb, s, at, t0, ret, reterr);
          if (r == 0 || r != -ENOEXEC)
            return r;
          berth_agent_forget (env); /* it did not answer: start one through the transport */
        }
    }

  for (int attempt = 0; attempt < 3; attempt++)
    {
      _cleanup_ (berth_transport_call_free) berth_transport_call call = { 0 };
      int r = fb->prepare (env, &call, reterr);
      if (r < 0)
        return r;
      berth_agent_mux *m = mux_new (env, fb, call.flags);
      if (m == NULL)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
      _cleanup_free_ char *script = NULL, *lsock = NULL;
      const char *argv[7] = { 0 };
      if (local)
        {
          /* The host path itself; its socket with the environment's.  */
          lsock = berth_strdup_printf ("%s/agent-%s.sock", env->runtime_dir ? env->runtime_dir : "/nonexistent", tag);
          argv[0] = helper, argv[1] = "--stdio", argv[2] = "--socket", argv[3] = lsock, argv[4] = serve ? "--serve" : NULL, argv[5] = serve ? "--detach" : NULL;
          m->at = serve ? strdup (lsock) : NULL;
        }
      else
        {
          script = berth_agent_start_script (u.machine, hash, tag, sock, serve);
          argv[0] = "sh", argv[1] = "-c", argv[2] = script;
          call.start_flags = BERTH_START_AGENT; /* see provider.h */
        }
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "starting the agent in %s through %s", env->id, fb->via);
      r = berth_transport_start_via (fb, env, &call, argv, 0, true, -1, env->deadline_usec, &m->job, reterr);
      if (r < 0)
        {
          free (m);
          return r;
        }
      m->job_open = true;
      int h = handshake (m, HANDSHAKE_S, why, reterr);
      if (h == START_OK)
        {
          berth_agent_buf_consume (&m->rx, 0);
          if (serve && m->at)
            {
              /* It serves: this berth too goes to its socket, past the
                 transport (a container's engine, a jail join), like every
                 later one; the stream it started through is let go.  */
              berth_agent_record (env, tag, m->at);
              berth_agent_mux *d = NULL;
              char *at = NULL;
              int s = berth_agent_reach (env, tag, &at);
              if (s >= 0 && mux_open_direct (env, fb, s, at, t0, &d, NULL) == 0)
                {
                  mux_unref (m);
                  m = d;
                }
            }
          *ret = m;
          return 0;
        }
      /* Whatever ran ends here.  */
      berth_job_finish (&m->job, BERTH_JOB_KILL);
      m->job_open = false;
      mux_unref (m);
      if (h == START_MISMATCH && attempt < 2)
        {
          /* An agent of another version answered (our agent stops one it
             finds at the socket; this is the rare one it could not):
             start again, never fall back to exec for it.  */
          berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "%s: %s; starting it again", env->id, *why);
          free (*why);
          *why = NULL;
          continue;
        }
      if (h == START_NO || h == START_MISMATCH)
        return -ENOEXEC;
      if (h == START_TIMEOUT)
        return start_timeout_error (env, t0, reterr);
      /* Upload it (the script picks the directory).  */
      {
        _cleanup_free_ char *up = berth_agent_upload_script (hash, tag);
        const char *uargv[] = { "sh", "-c", up, NULL };
        berth_buf out = { 0 };
        int st = -1;
        size_t len = 0;
        _cleanup_free_ char *bin = read_binary (helper, &len);
        char now[65] = "";
        if (bin)
          berth_sha256_hex (bin, len, now);
        if (strcmp (now, hash) != 0)
          {
            /* replaced under the same identity (or unreadable now): the
               remembered hash goes, the next berth hashes it again */
            _cleanup_free_ char *cache = berth_strdup_printf ("%s/agent-hash", env->ctx->runtime_dir);
            unlink (cache);
            *why = berth_strdup_printf ("the agent program %s changed while berth started it (run the command again)", helper);
            return -ENOEXEC;
          }
        berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "uploading the agent (%zu bytes) into %s", len, env->id);
        r = run_via_fallback (env, fb, uargv, 0, bin, len, UPLOAD_S, &out, &st, reterr);
        if (r < 0)
          {
            berth_buf_free (&out);
            return r;
          }
        const char *no = out.data ? strstr (out.data, "BERTH-AGENT-NO:") : NULL;
        bool ok = out.data && strstr (out.data, "BERTH-AGENT-OK");
        if (!ok)
          *why = no ? strndup (no + 15, strcspn (no + 15, "\n")) : berth_strdup_printf ("the upload failed (exit status %d)", st);
        berth_buf_free (&out);
      }
      if (*why)
        return -ENOEXEC;
    }
  *why = strdup ("the agent was uploaded but is still not found");
  return -ENOEXEC;
}

/* ---- the transport ---- */

bool
berth_agent_wanted (berth_env *env)
{
  const char *t = getenv ("BERTH_TRANSPORT");
  if (t && strcmp (t, "exec") == 0)
    return false;
  const berth_provider_ops *ops = env->provider->ops;
  if (BERTH_HAS_FIELD (ops, berth_provider_ops, hints) && (ops->hints & BERTH_HINT_NO_AGENT))
    return false;
  const char *c = berth_config_string (env->ctx->config, "terminal.agent", "auto");
  return c == NULL || strcmp (c, "off") != 0;
}

/* The agent tried in a throw-away environment of BACKEND: "agent", or
   "exec: <why>" (malloc), or NULL when no environment could be opened
   (*WHY_NOT: that error).  */
static char *
doctor_try (berth_ctx *ctx, const char *backend, char **why_not)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  spec.backend = backend;
  spec.setup_timeout = 60;
  berth_env *env = NULL;
  berth_error *err = NULL;
  berth_result *res = NULL;
  char *status = NULL;
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    {
      *why_not = strdup (err ? berth_error_message (err) : "cannot open an environment");
      berth_error_free (err);
      return NULL;
    }
  berth_exec_spec x = BERTH_EXEC_SPEC_INIT;
  x.command = "true";
  x.timeout = 60;
  if (berth_env_execute (env, &x, &res, &err) < 0)
    *why_not = strdup (err ? berth_error_message (err) : "the command failed");
  else
    {
      const char *st = berth_agent_status (env);
      status = strdup (st ? st : berth_result_transport (res));
    }
  berth_result_free (res);
  berth_error_free (err);
  berth_env_unref (env);
  return status;
}

void
berth_agent_doctor (berth_ctx *ctx, const char *backend, bool ready, bool remote, berth_check_fn fn, void *userdata)
{
  const char *t = getenv ("BERTH_TRANSPORT");
  const char *c = berth_config_string (ctx->config, "terminal.agent", "auto");
  if ((t && strcmp (t, "exec") == 0) || (c && strcmp (c, "off") == 0))
    {
      fn (userdata, "berth-agent", true, t && strcmp (t, "exec") == 0 ? "switched off (BERTH_TRANSPORT=exec): one exec per command"
                                                                      : "switched off (terminal.agent: off): one exec per command", NULL);
      return;
    }
  _cleanup_free_ char *helper = berth_helper_path ("berth-agent");
  bool ok = helper && access (helper, X_OK) == 0;
  if (!ok)
    {
      _cleanup_free_ char *detail = berth_strdup_printf ("%s is missing: commands run one exec each", helper ? helper : "berth-agent");
      fn (userdata, "berth-agent", false, detail ? detail : "?", "reinstall berth, or set BERTH_LIBEXECDIR for an uninstalled build");
      return;
    }
  if (!ready)
    {
      _cleanup_free_ char *detail = berth_strdup_printf ("%s (not tried: the backend is not ready)", helper);
      fn (userdata, "berth-agent", true, detail ? detail : "?", NULL);
      return;
    }
  if (remote)
    {
      /* A trial would make a container (and pull its image), a
         connection or an allocation: doctor does not.  */
      _cleanup_free_ char *detail = berth_strdup_printf ("%s; whether an environment's commands run through it is decided by its first "
                                                         "command (berth exec --json says its transport; BERTH_DEBUG=agent why not)", helper);
      fn (userdata, "berth-agent", true, detail ? detail : "?", NULL);
      return;
    }
  /* Where it runs is the environment's to say: one throw-away
     environment runs `true`, and its transport (or why not) is the
     answer (here, on this host, that costs a bash or a jail).  */
  _cleanup_free_ char *why_not = NULL;
  _cleanup_free_ char *st = doctor_try (ctx, backend, &why_not);
  _cleanup_free_ char *detail = NULL;
  if (st && strcmp (st, "agent") == 0)
    detail = berth_strdup_printf ("commands run through the agent (%s; tried in a throw-away environment)", helper);
  else if (st)
    detail = berth_strdup_printf ("commands run one exec each here, not through the agent: %s", strncmp (st, "exec: ", 6) == 0 ? st + 6 : st);
  else
    detail = berth_strdup_printf ("not tried: a throw-away environment failed (%s)", why_not ? why_not : "?");
  /* Informational: commands work either way, and an environment that
     cannot be opened is the other checks' finding.  */
  fn (userdata, "berth-agent", true, detail ? detail : "?", NULL);
}

const char *
berth_agent_status (berth_env *env)
{
  berth_agent_mux *m = env->agent;
  if (m == NULL)
    return NULL;
  return m->unavailable ? m->why : "agent";
}

void
berth_agent_env_free (berth_env *env)
{
  berth_agent_mux *m = env->agent;
  if (m == NULL)
    return;
  env->agent = NULL;
  m->env = NULL;
  /* Channels still open keep the stream; our reference goes.  */
  if (m->n_ref == 1)
    mux_close_stream (m);
  mux_unref (m);
}

static int
agent_prepare (berth_env *env, berth_transport_call *call, berth_error **reterr)
{
  const char *conf = berth_config_string (env->ctx->config, "terminal.agent", "auto");
  if (conf && strcmp (conf, "auto") != 0 && strcmp (conf, "off") != 0)
    return berth_error_set (reterr, EINVAL, "terminal.agent must be auto or off (got %s): fix it with berth config set terminal.agent auto", conf);
  berth_agent_mux *m = env->agent;
  /* what its stream says already (an end: its environment was stopped
     under it, the reaper's suspension) before it is trusted again */
  if (m && !m->dead)
    mux_read (m, 0);
  if (m && m->dead && !m->unavailable)
    {
      /* The last one died (or was killed): a new one.  */
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "restarting the agent of %s (%s)", env->id, m->why ? m->why : "gone");
      berth_agent_env_free (env);
      m = NULL;
    }
  if (m == NULL)
    {
      char *why = NULL;
      int r = mux_open (env, &m, &why, reterr);
      if (r < 0 && why == NULL)
        return r;
      if (r < 0)
        {
          /* It cannot run here: exec-per-command, and say why.  */
          berth_agent_mux *u = calloc (1, sizeof *u);
          if (u == NULL)
            {
              free (why);
              return berth_error_errno (reterr, ENOMEM, "out of memory");
            }
          u->n_ref = 1;
          u->unavailable = u->dead = true;
          u->why = berth_strdup_printf ("exec: %s", why);
          free (why);
          berth_error_free (reterr ? *reterr : NULL);
          if (reterr)
            *reterr = NULL;
          berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "%s runs every command on its own (%s)", env->id, u->why);
          env->agent = u;
          env->transport = berth_transport_fallback (env);
          return env->transport->prepare (env, call, reterr);
        }
      env->agent = m;
    }
  call->prefix = NULL;
  call->flags = m->flags;
  call->start_environ = (const char *const *) m->environ; /* PASSES_ENV: the host's instead */
  return 0;
}

/* Queue FD's contents (a file: the session's script) as FD3 frames.  */
static int
send_fd3 (berth_agent_mux *m, uint32_t id, int fd)
{
  char buf[BERTH_AGENT_CHUNK];
  off_t off = 0;
  for (;;)
    {
      ssize_t n = pread (fd, buf, sizeof buf, off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        return 0;
      off += n;
      if ((uint64_t) off > BERTH_AGENT_FD3_MAX)
        return -E2BIG;
      if (berth_agent_put_frame (&m->tx, BERTH_AGENT_FD3, id, buf, (size_t) n) < 0)
        abort ();
    }
}

static int
agent_start (berth_env *env, const berth_transport_call *call, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  int r;
  berth_agent_mux *m = env->agent;
  if (m == NULL || m->dead)
    return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the agent of this environment is gone (%s); run the command again", berth_env_backend (env),
                            m && m->why ? m->why : "not started");
  agent_chan *c = calloc (1, sizeof *c);
  if (c == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  c->id = ++m->next_id;
  c->window = BERTH_AGENT_WINDOW;
  c->has_stdin = req->has_stdin;
  c->runs_bash = req->argv[0] && strcmp (req->argv[0], "bash") == 0;
  c->ep = epoll_create1 (EPOLL_CLOEXEC);
  c->evfd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  c->wfd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  c->mux = mux_ref (m);
  c->next = m->chans;
  m->chans = c;
  struct epoll_event ev = { .events = EPOLLIN };
  if (c->ep < 0 || c->evfd < 0 || c->wfd < 0 || epoll_ctl (c->ep, EPOLL_CTL_ADD, m->job.proc.fd, &ev) < 0
      || epoll_ctl (c->ep, EPOLL_CTL_ADD, c->evfd, &ev) < 0)
    {
      int e = errno;
      chan_free (c);
      return berth_error_errno (reterr, e, "cannot watch the agent's stream");
    }
  if (req->extra_fd >= 0 && (r = send_fd3 (m, c->id, req->extra_fd)) < 0)
    {
      chan_free (c);
      return berth_error_errno (reterr, -r, "cannot send the command's fd 3 to the agent");
    }
  berth_agent_run run = {
    .flags = (req->has_stdin ? BERTH_AGENT_RUN_STDIN : 0) | (req->extra_fd >= 0 ? BERTH_AGENT_RUN_FD3 : 0),
    .argv = (char **) req->argv,
    .env = m->pass_env ? env->host_environ : NULL,
  };
  r = berth_agent_put_run (&m->tx, c->id, &run);
  if (r < 0)
    {
      chan_free (c);
      return berth_error_errno (reterr, -r, "the command is too large for the agent");
    }
  m->started++;
  /* The argv as a spawn would log it (secrets elided); its pid is the
     agent's to know (0 here).  */
  berth_log_spawn (req->argv, 0, 0);
  if (mux_flush (m) < 0)
    {
      _cleanup_free_ char *why = strdup (m->why ? m->why : "its stream failed");
      chan_free (c);
      return berth_error_set (reterr, BERTH_E_BACKEND, "%s: the agent of this environment is gone (%s)", berth_env_backend (env), why ? why : "?");
    }
  *ret = (berth_proc){ .size = sizeof *ret, .fd = c->ep, .stdin_fd = req->has_stdin ? c->wfd : -1, .ops = &chan_ops, .proc = c };
  return 0;
}

static int
agent_kill (berth_env *env, const char *token, long pid, double timeout, int *ret_status, berth_error **reterr)
{
  berth_agent_mux *m = env->agent;
  if (m && !m->dead)
    {
      unsigned seen = m->killed;
      uint64_t deadline = berth_now_usec () + (uint64_t) (timeout * 1e6);
      if (berth_agent_put_kill (&m->tx, 0, 0, pid > 0 && pid <= INT32_MAX ? (uint32_t) pid : 0, token) < 0)
        abort ();
      if (mux_flush (m) == 0)
        while (m->killed == seen && !m->dead && berth_now_usec () < deadline)
          mux_read (m, 100);
      if (m->killed != seen)
        {
          if (ret_status) /* may be NULL (berth_transport_kill) */
            *ret_status = 0;
          return 0;
        }
    }
  /* The agent is gone (its processes may not be): the kill script
     through the fallback, as exec-per-command does.  */
  _cleanup_free_ char *ks = berth_kill_script (token, pid);
  if (ks == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  const char *argv[] = { "bash", "-c", ks, NULL };
  return run_via_fallback (env, berth_transport_fallback (env), argv, BERTH_START_SHELL_SCRIPT, NULL, 0, timeout, NULL, ret_status, reterr);
}

static bool
agent_data_pending (const berth_proc *proc)
{
  return proc->ops == &chan_ops && chan_data_pending (proc);
}

const berth_transport_ops berth_agent_transport = {
  .name = "agent",
  .via = "its agent",
  .prepare = agent_prepare,
  .start = agent_start,
  .kill = agent_kill,
  .data_pending = agent_data_pending,
};
