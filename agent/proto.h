/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.h: the berth-agent wire protocol, the one frame codec compiled
   into both the agent (agent/berth-agent) and libberth
   (runtime/agent-client.c).  No allocation-failure policy and no
   dependency on either side: plain libc.
 *
 * A stream is a sequence of frames.  Every frame is a 12-byte header
 *   u32 payload length | u8 type | u8 0 | u16 0 | u32 channel
 * (integers big-endian) followed by the payload, at most
 * BERTH_AGENT_MAX_PAYLOAD bytes.  Channel 0 is the connection itself;
 * other ids are each controller's own (several may share one agent).
 * Strings in payloads are u32 length + bytes (no NUL inside).
 *
 * controller -> agent:
 *   HELLO    u32 proto, str client version
 *   RUN      u32 flags (BERTH_AGENT_RUN_*), u32 argc, u32 envc
 *            (BERTH_AGENT_ENV_INHERIT: the agent's own), str cwd ("" none),
 *            argc strs, envc strs ("K=V")
 *   FD3      bytes of the file the next RUN of this channel gets as fd 3
 *            (flag BERTH_AGENT_RUN_FD3; at most BERTH_AGENT_FD3_MAX in all)
 *   STDIN    bytes (counted against the channel's stdin window)
 *   CLOSE_STDIN
 *   WINDOW   u32 n: the controller took N more output bytes
 *   KILL     u32 signal (0: the whole tree, TERM then KILL), u32 pid, str
 *            job token: channel != 0 kills that channel's tree, else the
 *            channel whose process is PID, and every process whose
 *            environment has BERTH_JOB=token
 *   RELEASE  forget the channel: its streams are closed, nothing killed
 *   LIST     -> LIST_REPLY
 *   ATTACH   (channel: the agent's id from LIST) u32 id: take over a
 *            detached process as channel ID, its buffered output replayed
 *   PING     u64 cookie -> PONG u64 cookie
 *   QUIT     (channel 0) stop serving: the environment is removed; the
 *            agent kills its foreground trees and exits
 * agent -> controller:
 *   HELLO    u32 proto, str agent version
 *   STARTED  u32 pid
 *   OUT, ERR bytes of stdout, of stderr (the runtime's state channel)
 *   EOF      u8 stream (BERTH_AGENT_STREAM_*)
 *   WINDOW   u32 n: the agent took N more stdin bytes
 *   EXIT     u8 cause (BERTH_AGENT_CAUSE_*), u32 value (exit code,
 *            signal number), str message ("" none)
 *   KILLED   u32 processes signalled (reply to KILL, same channel)
 *   LIST_REPLY u32 n, n x (u32 channel, u32 pid, u32 flags, u8 running,
 *            str argv0)
 *   ERROR    str message (channel 0: the connection is closed after it)
 *   PONG     u64 cookie
 *   ENVIRON  (channel 0, right after HELLO) u32 n, n strs ("K=V"): the
 *            environment a RUN with BERTH_AGENT_ENV_INHERIT starts with
 *            (none when it is over the bounds of a RUN's env)
 */
#ifndef BERTH_AGENT_PROTO_H
#define BERTH_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BERTH_AGENT_PROTO 1
/* What HELLO says on both sides; a mismatch is never served.  */
#define BERTH_AGENT_VERSION PACKAGE_VERSION "/1"
#define BERTH_AGENT_MAGIC "BERTH-AGENT"
#define BERTH_AGENT_HDR 12u
#define BERTH_AGENT_MAX_PAYLOAD (1u << 20)
#define BERTH_AGENT_MAX_ARGS 4096u
#define BERTH_AGENT_MAX_ENV 4096u
#define BERTH_AGENT_MAX_STR (256u << 10)
#define BERTH_AGENT_MAX_LIST 4096u
/* Output a controller may have unacknowledged per channel, and stdin the
   agent buffers per channel.  */
#define BERTH_AGENT_WINDOW (1u << 20)
/* Largest stdin frame a controller sends (the agent's output frames
   are up to a pipe's worth, 256 KiB; any frame within
   BERTH_AGENT_MAX_PAYLOAD parses).  */
#define BERTH_AGENT_CHUNK (64u << 10)
#define BERTH_AGENT_ENV_INHERIT UINT32_MAX
#define BERTH_AGENT_FD3_MAX (16u << 20)

enum
{
  BERTH_AGENT_HELLO = 1,
  BERTH_AGENT_RUN = 2,
  BERTH_AGENT_STDIN = 3,
  BERTH_AGENT_CLOSE_STDIN = 4,
  BERTH_AGENT_WINDOW_FRAME = 5,
  BERTH_AGENT_KILL = 6,
  BERTH_AGENT_RELEASE = 7,
  BERTH_AGENT_LIST = 8,
  BERTH_AGENT_ATTACH = 9,
  BERTH_AGENT_PING = 10,
  BERTH_AGENT_FD3 = 11,
  BERTH_AGENT_QUIT = 12,
  BERTH_AGENT_STARTED = 20,
  BERTH_AGENT_OUT = 21,
  BERTH_AGENT_ERR = 22,
  BERTH_AGENT_EOF = 23,
  BERTH_AGENT_EXIT = 24,
  BERTH_AGENT_KILLED = 25,
  BERTH_AGENT_LIST_REPLY = 26,
  BERTH_AGENT_ERROR = 27,
  BERTH_AGENT_PONG = 28,
  BERTH_AGENT_ENVIRON = 29,
};

enum
{
  BERTH_AGENT_RUN_STDIN = 1u << 0,    /* a stdin stream (else /dev/null) */
  BERTH_AGENT_RUN_PTY = 1u << 1,      /* stdin and stdout on a terminal */
  BERTH_AGENT_RUN_DETACHED = 1u << 2, /* lives on without its controller */
  BERTH_AGENT_RUN_FD3 = 1u << 3,      /* fd 3: a file of the FD3 bytes sent before */
  BERTH_AGENT_RUN_KNOWN = (1u << 4) - 1,
};

enum
{
  BERTH_AGENT_STREAM_OUT = 1,
  BERTH_AGENT_STREAM_ERR = 2,
};

enum
{
  BERTH_AGENT_CAUSE_EXITED = 1,   /* value: the exit code */
  BERTH_AGENT_CAUSE_SIGNALED = 2, /* value: the signal */
  BERTH_AGENT_CAUSE_OOM = 3,      /* killed by the OOM killer (memory.events); value: the signal */
  BERTH_AGENT_CAUSE_LIMIT = 4,    /* killed by a limit (pids, CPU time); value: the signal */
  BERTH_AGENT_CAUSE_FAILED = 5,   /* could not start; value: errno, message why */
};

typedef struct berth_agent_frame
{
  uint8_t type;
  uint32_t chan;
  uint32_t len;
  const uint8_t *data; /* LEN bytes, inside the parsed buffer */
} berth_agent_frame;

/* Parse one frame at BUF (LEN bytes available).  Returns the bytes it
   takes (> 0) and fills *F, 0 when more bytes are needed, -EBADMSG for
   a malformed header, -EMSGSIZE for a payload over the bound.  */
int berth_agent_frame_parse (const uint8_t *buf, size_t len, berth_agent_frame *f);

/* A growable byte buffer (encoding; the agent's queues).  */
typedef struct berth_agent_buf
{
  uint8_t *data;
  size_t len, off, cap; /* unsent bytes are data[off..len) */
} berth_agent_buf;
/* 0, or -ENOMEM.  */
int berth_agent_buf_reserve (berth_agent_buf *b, size_t more);
int berth_agent_buf_add (berth_agent_buf *b, const void *data, size_t len);
void berth_agent_buf_consume (berth_agent_buf *b, size_t n);
void berth_agent_buf_free (berth_agent_buf *b);
static inline size_t
berth_agent_buf_pending (const berth_agent_buf *b)
{
  return b->len - b->off;
}

/* Encoders: append one whole frame to B.  0 or -ENOMEM / -EMSGSIZE.  */
int berth_agent_put_frame (berth_agent_buf *b, uint8_t type, uint32_t chan, const void *data, size_t len);
int berth_agent_put_u32 (berth_agent_buf *b, uint8_t type, uint32_t chan, uint32_t v);
/* A frame filled in place (a read straight into the queue, no copy):
   room for its header and up to MAX payload bytes at the end of B, the
   payload at *RET; then commit it with the LEN bytes written there.  */
int berth_agent_frame_begin (berth_agent_buf *b, size_t max, uint8_t **ret);
void berth_agent_frame_commit (berth_agent_buf *b, uint8_t type, uint32_t chan, size_t len);
int berth_agent_put_u64 (berth_agent_buf *b, uint8_t type, uint32_t chan, uint64_t v);
int berth_agent_put_hello (berth_agent_buf *b, const char *version);
int berth_agent_put_eof (berth_agent_buf *b, uint32_t chan, uint8_t stream);
int berth_agent_put_exit (berth_agent_buf *b, uint32_t chan, uint8_t cause, uint32_t value, const char *message);
int berth_agent_put_error (berth_agent_buf *b, uint32_t chan, const char *message);
int berth_agent_put_kill (berth_agent_buf *b, uint32_t chan, uint32_t sig, uint32_t pid, const char *token);

/* A RUN request.  */
typedef struct berth_agent_run
{
  uint32_t flags;
  char *cwd;   /* NULL: the agent's */
  char **argv; /* NULL-terminated, at least one */
  char **env;  /* NULL-terminated, or NULL: inherit */
} berth_agent_run;
int berth_agent_put_run (berth_agent_buf *b, uint32_t chan, const berth_agent_run *run);
/* Decode a RUN payload into *RUN (allocated; free with
   berth_agent_run_free).  0, -EBADMSG (malformed, over a bound), -ENOMEM.  */
int berth_agent_run_decode (const uint8_t *p, size_t len, berth_agent_run *run);
void berth_agent_run_free (berth_agent_run *run);

/* ENVIRON: 0, -E2BIG over the bounds, -ENOMEM; decoded into a
   NULL-terminated copy (free each and the vector), 0 or -EBADMSG.  */
int berth_agent_put_environ (berth_agent_buf *b, char *const *env);
int berth_agent_environ_decode (const berth_agent_frame *f, char ***ret);

/* Reading payloads: a cursor that turns bad (and stays bad) on any
   short or over-bound read.  */
typedef struct berth_agent_rd
{
  const uint8_t *p;
  size_t left;
  bool bad;
} berth_agent_rd;
static inline berth_agent_rd
berth_agent_rd_init (const berth_agent_frame *f)
{
  return (berth_agent_rd){ f->data, f->len, false };
}
uint8_t berth_agent_get_u8 (berth_agent_rd *r);
uint32_t berth_agent_get_u32 (berth_agent_rd *r);
uint64_t berth_agent_get_u64 (berth_agent_rd *r);
/* A string: a pointer into the payload and its length (*LEN), NULL when
   bad; at most MAX bytes, no NUL inside.  */
const char *berth_agent_get_str (berth_agent_rd *r, size_t max, size_t *len);
/* The same, copied with a NUL (malloc), NULL when bad or out of memory.  */
char *berth_agent_get_strdup (berth_agent_rd *r, size_t max);

/* The EXIT frame decoded.  */
typedef struct berth_agent_exit
{
  uint8_t cause;
  uint32_t value;
  char *message; /* malloc, "" none */
} berth_agent_exit;
int berth_agent_exit_decode (const berth_agent_frame *f, berth_agent_exit *e);

/* A name for a frame type ("run"), for messages.  */
const char *berth_agent_type_name (uint8_t type);

#endif
