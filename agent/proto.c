/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proto.c: the berth-agent frame codec (see proto.h).  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

static uint32_t
rd32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void
wr32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

int
berth_agent_frame_parse (const uint8_t *buf, size_t len, berth_agent_frame *f)
{
  if (len < BERTH_AGENT_HDR)
    return 0;
  uint32_t plen = rd32 (buf);
  if (buf[5] != 0 || buf[6] != 0 || buf[7] != 0 || buf[4] == 0)
    return -EBADMSG;
  if (plen > BERTH_AGENT_MAX_PAYLOAD)
    return -EMSGSIZE;
  if (len - BERTH_AGENT_HDR < plen)
    return 0;
  f->len = plen;
  f->type = buf[4];
  f->chan = rd32 (buf + 8);
  f->data = buf + BERTH_AGENT_HDR;
  return (int) (BERTH_AGENT_HDR + plen);
}

int
berth_agent_buf_reserve (berth_agent_buf *b, size_t more)
{
  if (b->off > 0 && b->off == b->len)
    b->off = b->len = 0;
  if (b->cap - b->len >= more)
    return 0;
  /* Move the unsent bytes down before growing.  */
  if (b->off > 0)
    {
      memmove (b->data, b->data + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
      if (b->cap - b->len >= more)
        return 0;
    }
  if (more > SIZE_MAX / 2 - b->len)
    return -ENOMEM;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->len < more)
    cap *= 2;
  uint8_t *d = realloc (b->data, cap);
  if (d == NULL)
    return -ENOMEM;
  b->data = d;
  b->cap = cap;
  return 0;
}

int
berth_agent_buf_add (berth_agent_buf *b, const void *data, size_t len)
{
  int r = berth_agent_buf_reserve (b, len);
  if (r < 0)
    return r;
  if (len)
    memcpy (b->data + b->len, data, len);
  b->len += len;
  return 0;
}

void
berth_agent_buf_consume (berth_agent_buf *b, size_t n)
{
  b->off += n;
  if (b->off >= b->len)
    b->off = b->len = 0;
}

void
berth_agent_buf_free (berth_agent_buf *b)
{
  free (b->data);
  *b = (berth_agent_buf){ 0 };
}

static void
encode_header (uint8_t *h, uint8_t type, uint32_t chan, size_t len)
{
  memset (h, 0, BERTH_AGENT_HDR);
  wr32 (h, (uint32_t) len);
  h[4] = type;
  wr32 (h + 8, chan);
}

/* The header of a frame of LEN payload bytes; the caller appends them.  */
static int
put_header (berth_agent_buf *b, uint8_t type, uint32_t chan, size_t len)
{
  uint8_t h[BERTH_AGENT_HDR];
  if (len > BERTH_AGENT_MAX_PAYLOAD)
    return -EMSGSIZE;
  int r = berth_agent_buf_reserve (b, BERTH_AGENT_HDR + len);
  if (r < 0)
    return r;
  encode_header (h, type, chan, len);
  return berth_agent_buf_add (b, h, sizeof h);
}

int
berth_agent_frame_begin (berth_agent_buf *b, size_t max, uint8_t **ret)
{
  if (max > BERTH_AGENT_MAX_PAYLOAD)
    return -EMSGSIZE;
  int r = berth_agent_buf_reserve (b, BERTH_AGENT_HDR + max);
  if (r < 0)
    return r;
  *ret = b->data + b->len + BERTH_AGENT_HDR;
  return 0;
}

void
berth_agent_frame_commit (berth_agent_buf *b, uint8_t type, uint32_t chan, size_t len)
{
  encode_header (b->data + b->len, type, chan, len);
  b->len += BERTH_AGENT_HDR + len;
}

static void
add32 (berth_agent_buf *b, uint32_t v)
{
  uint8_t p[4];
  wr32 (p, v);
  berth_agent_buf_add (b, p, 4); /* reserved by put_header */
}

static void
addstr (berth_agent_buf *b, const char *s, size_t n)
{
  add32 (b, (uint32_t) n);
  berth_agent_buf_add (b, s, n);
}

int
berth_agent_put_frame (berth_agent_buf *b, uint8_t type, uint32_t chan, const void *data, size_t len)
{
  int r = put_header (b, type, chan, len);
  if (r < 0)
    return r;
  return berth_agent_buf_add (b, data, len);
}

int
berth_agent_put_u32 (berth_agent_buf *b, uint8_t type, uint32_t chan, uint32_t v)
{
  int r = put_header (b, type, chan, 4);
  if (r == 0)
    add32 (b, v);
  return r;
}

int
berth_agent_put_u64 (berth_agent_buf *b, uint8_t type, uint32_t chan, uint64_t v)
{
  int r = put_header (b, type, chan, 8);
  if (r == 0)
    {
      add32 (b, (uint32_t) (v >> 32));
      add32 (b, (uint32_t) v);
    }
  return r;
}

static size_t
bounded_len (const char *s)
{
  size_t n = s ? strlen (s) : 0;
  return n > BERTH_AGENT_MAX_STR ? BERTH_AGENT_MAX_STR : n;
}

int
berth_agent_put_hello (berth_agent_buf *b, const char *version)
{
  size_t n = bounded_len (version);
  int r = put_header (b, BERTH_AGENT_HELLO, 0, 8 + n);
  if (r == 0)
    {
      add32 (b, BERTH_AGENT_PROTO);
      addstr (b, version, n);
    }
  return r;
}

int
berth_agent_put_eof (berth_agent_buf *b, uint32_t chan, uint8_t stream)
{
  return berth_agent_put_frame (b, BERTH_AGENT_EOF, chan, &stream, 1);
}

int
berth_agent_put_exit (berth_agent_buf *b, uint32_t chan, uint8_t cause, uint32_t value, const char *message)
{
  size_t n = bounded_len (message);
  int r = put_header (b, BERTH_AGENT_EXIT, chan, 9 + n);
  if (r == 0)
    {
      berth_agent_buf_add (b, &cause, 1);
      add32 (b, value);
      addstr (b, message, n);
    }
  return r;
}

int
berth_agent_put_error (berth_agent_buf *b, uint32_t chan, const char *message)
{
  size_t n = bounded_len (message);
  int r = put_header (b, BERTH_AGENT_ERROR, chan, 4 + n);
  if (r == 0)
    addstr (b, message, n);
  return r;
}

int
berth_agent_put_kill (berth_agent_buf *b, uint32_t chan, uint32_t sig, uint32_t pid, const char *token)
{
  size_t n = bounded_len (token);
  int r = put_header (b, BERTH_AGENT_KILL, chan, 12 + n);
  if (r == 0)
    {
      add32 (b, sig);
      add32 (b, pid);
      addstr (b, token, n);
    }
  return r;
}

int
berth_agent_put_run (berth_agent_buf *b, uint32_t chan, const berth_agent_run *run)
{
  size_t argc = 0, envc = 0, total = 12 + 4 + (run->cwd ? strlen (run->cwd) : 0);
  for (; run->argv && run->argv[argc]; argc++)
    total += 4 + strlen (run->argv[argc]);
  for (; run->env && run->env[envc]; envc++)
    total += 4 + strlen (run->env[envc]);
  if (argc == 0 || argc > BERTH_AGENT_MAX_ARGS || envc > BERTH_AGENT_MAX_ENV)
    return -E2BIG;
  if (total > BERTH_AGENT_MAX_PAYLOAD)
    return -E2BIG;
  for (size_t i = 0; i < argc; i++)
    if (strlen (run->argv[i]) > BERTH_AGENT_MAX_STR)
      return -E2BIG;
  for (size_t i = 0; i < envc; i++)
    if (strlen (run->env[i]) > BERTH_AGENT_MAX_STR)
      return -E2BIG;
  if (run->cwd && strlen (run->cwd) > BERTH_AGENT_MAX_STR)
    return -E2BIG;
  int r = put_header (b, BERTH_AGENT_RUN, chan, total);
  if (r < 0)
    return r;
  add32 (b, run->flags);
  add32 (b, (uint32_t) argc);
  add32 (b, run->env ? (uint32_t) envc : BERTH_AGENT_ENV_INHERIT);
  addstr (b, run->cwd ? run->cwd : "", run->cwd ? strlen (run->cwd) : 0);
  for (size_t i = 0; i < argc; i++)
    addstr (b, run->argv[i], strlen (run->argv[i]));
  for (size_t i = 0; i < envc; i++)
    addstr (b, run->env[i], strlen (run->env[i]));
  return 0;
}

int
berth_agent_put_environ (berth_agent_buf *b, char *const *env)
{
  size_t n = 0, total = 4;
  for (; env && env[n]; n++)
    {
      size_t l = strlen (env[n]);
      if (l > BERTH_AGENT_MAX_STR)
        return -E2BIG;
      total += 4 + l;
    }
  if (n > BERTH_AGENT_MAX_ENV || total > BERTH_AGENT_MAX_PAYLOAD)
    return -E2BIG;
  int r = put_header (b, BERTH_AGENT_ENVIRON, 0, total);
  if (r < 0)
    return r;
  add32 (b, (uint32_t) n);
  for (size_t i = 0; i < n; i++)
    addstr (b, env[i], strlen (env[i]));
  return 0;
}

uint8_t
berth_agent_get_u8 (berth_agent_rd *r)
{
  if (r->bad || r->left < 1)
    {
      r->bad = true;
      return 0;
    }
  r->left--;
  return *r->p++;
}

uint32_t
berth_agent_get_u32 (berth_agent_rd *r)
{
  if (r->bad || r->left < 4)
    {
      r->bad = true;
      return 0;
    }
  uint32_t v = rd32 (r->p);
  r->p += 4;
  r->left -= 4;
  return v;
}

uint64_t
berth_agent_get_u64 (berth_agent_rd *r)
{
  uint64_t hi = berth_agent_get_u32 (r);
  return hi << 32 | berth_agent_get_u32 (r);
}

const char *
berth_agent_get_str (berth_agent_rd *r, size_t max, size_t *len)
{
  uint32_t n = berth_agent_get_u32 (r);
  if (r->bad || n > max || n > r->left || memchr (r->p, '\0', n))
    {
      r->bad = true;
      *len = 0;
      return NULL;
    }
  const char *s = (const char *) r->p;
  r->p += n;
  r->left -= n;
  *len = n;
  return s;
}

char *
berth_agent_get_strdup (berth_agent_rd *r, size_t max)
{
  size_t n;
  const char *s = berth_agent_get_str (r, max, &n);
  if (s == NULL)
    return NULL;
  char *c = malloc (n + 1);
  if (c == NULL)
    {
      r->bad = true;
      return NULL;
    }
  memcpy (c, s, n);
  c[n] = '\0';
  return c;
}

static void
strv_free (char **v)
{
  for (size_t i = 0; v && v[i]; i++)
    free (v[i]);
  free (v);
}

void
berth_agent_run_free (berth_agent_run *run)
{
  free (run->cwd);
  strv_free (run->argv);
  strv_free (run->env);
  *run = (berth_agent_run){ 0 };
}

static char **
get_strv (berth_agent_rd *r, uint32_t n)
{
  char **v = calloc ((size_t) n + 1, sizeof *v);
  if (v == NULL)
    {
      r->bad = true;
      return NULL;
    }
  for (uint32_t i = 0; i < n && !r->bad; i++)
    v[i] = berth_agent_get_strdup (r, BERTH_AGENT_MAX_STR);
  return v;
}

static bool
env_entries_ok (char *const *env)
{
  for (size_t i = 0; env && env[i]; i++)
    if (strchr (env[i], '=') == NULL || env[i][0] == '=')
      return false;
  return true;
}

int
berth_agent_environ_decode (const berth_agent_frame *f, char ***ret)
{
  berth_agent_rd r = berth_agent_rd_init (f);
  uint32_t n = berth_agent_get_u32 (&r);
  *ret = NULL;
  if (r.bad || n > BERTH_AGENT_MAX_ENV || n > r.left / 4)
    return -EBADMSG;
  char **env = get_strv (&r, n);
  if (r.bad || r.left != 0 || !env_entries_ok (env))
    {
      strv_free (env);
      return -EBADMSG;
    }
  *ret = env;
  return 0;
}

int
berth_agent_run_decode (const uint8_t *p, size_t len, berth_agent_run *run)
{
  berth_agent_rd r = { p, len, false };
  *run = (berth_agent_run){ 0 };
  run->flags = berth_agent_get_u32 (&r);
  uint32_t argc = berth_agent_get_u32 (&r), envc = berth_agent_get_u32 (&r);
  if (r.bad || (run->flags & ~(uint32_t) BERTH_AGENT_RUN_KNOWN) || argc == 0 || argc > BERTH_AGENT_MAX_ARGS
      || (envc != BERTH_AGENT_ENV_INHERIT && envc > BERTH_AGENT_MAX_ENV))
    return -EBADMSG;
  /* Each string takes at least its 4-byte length: reject counts the
     payload cannot hold before allocating for them.  */
  if ((size_t) argc + (envc == BERTH_AGENT_ENV_INHERIT ? 0 : envc) > r.left / 4)
    return -EBADMSG;
  size_t n;
  const char *cwd = berth_agent_get_str (&r, BERTH_AGENT_MAX_STR, &n);
  if (cwd && n > 0)
    {
      run->cwd = strndup (cwd, n);
      if (run->cwd == NULL)
        r.bad = true;
    }
  if (!r.bad)
    run->argv = get_strv (&r, argc);
  if (!r.bad && envc != BERTH_AGENT_ENV_INHERIT)
    run->env = get_strv (&r, envc);
  if (!r.bad && !env_entries_ok (run->env))
    r.bad = true;
  if (r.bad || r.left != 0)
    {
      berth_agent_run_free (run);
      return -EBADMSG;
    }
  return 0;
}

int
berth_agent_exit_decode (const berth_agent_frame *f, berth_agent_exit *e)
{
  berth_agent_rd r = berth_agent_rd_init (f);
  e->cause = berth_agent_get_u8 (&r);
  e->value = berth_agent_get_u32 (&r);
  e->message = berth_agent_get_strdup (&r, BERTH_AGENT_MAX_STR);
  if (r.bad || r.left != 0 || e->cause < BERTH_AGENT_CAUSE_EXITED || e->cause > BERTH_AGENT_CAUSE_FAILED)
    {
      free (e->message);
      e->message = NULL;
      return -EBADMSG;
    }
  return 0;
}

const char *
berth_agent_type_name (uint8_t type)
{
  static const char *const names[] = {
    [BERTH_AGENT_HELLO] = "hello",      [BERTH_AGENT_RUN] = "run",         [BERTH_AGENT_STDIN] = "stdin",
    [BERTH_AGENT_CLOSE_STDIN] = "close-stdin", [BERTH_AGENT_WINDOW_FRAME] = "window", [BERTH_AGENT_KILL] = "kill",
    [BERTH_AGENT_RELEASE] = "release",  [BERTH_AGENT_LIST] = "list",       [BERTH_AGENT_ATTACH] = "attach",
    [BERTH_AGENT_PING] = "ping",        [BERTH_AGENT_FD3] = "fd3", [BERTH_AGENT_QUIT] = "quit",        [BERTH_AGENT_STARTED] = "started", [BERTH_AGENT_OUT] = "out",
    [BERTH_AGENT_ERR] = "err",          [BERTH_AGENT_EOF] = "eof",         [BERTH_AGENT_EXIT] = "exit",
    [BERTH_AGENT_KILLED] = "killed",    [BERTH_AGENT_LIST_REPLY] = "list-reply", [BERTH_AGENT_ERROR] = "error",
    [BERTH_AGENT_PONG] = "pong",        [BERTH_AGENT_ENVIRON] = "environ",
  };
  return type < sizeof names / sizeof names[0] && names[type] ? names[type] : "unknown";
}
