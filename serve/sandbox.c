/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sandbox.c: berth serve's methods on what lives in an environment --
   background processes (start, attach with streamed output, stdin, poll,
   stop, list), files (read, write, realpath, the temp dir) and idle
   suspension -- each a thin call into libberth under the environment's
   scope (berth-serve(7)).  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"
#include "serve-private.h"

#define SERVE_FILE_MAX (64u << 20)

/* An attach_process stream: output events with the request's id, then
   its reply with the process's end.  */
struct sproc
{
  char *id; /* the request's id, as JSON */
  client *c;
  senv *env;
  berth_process *p;
  sproc *next;
};

int
sproc_fd (const sproc *p)
{
  return berth_process_fd (p->p, NULL);
}

sproc *
sproc_next (const sproc *p)
{
  return p->next;
}

client *
sproc_client (const sproc *p)
{
  return p->c;
}

static void
sproc_drop (server *s, sproc *p)
{
  for (sproc **pp = &s->procs; *pp; pp = &(*pp)->next)
    if (*pp == p)
      {
        *pp = p->next;
        break;
      }
  s->n_procs--;
  bind_scope (s, p->env);
  berth_process_unref (p->p);
  free (p->id);
  free (p);
}

/* {"process", "state", "exit_code", "termination" -- without the closing
   brace: a listing appends to it.  */
static void
render_state_fields (sbuf *b, const char *id, int state, int ec, const char *how)
{
  sb_puts (b, "{\"process\":");
  sb_string (b, id);
  sb_printf (b, ",\"state\":\"%s\",\"exit_code\":", state == BERTH_PROCESS_RUNNING ? "running" : state == BERTH_PROCESS_LOST ? "lost" : "exited");
  if (state == BERTH_PROCESS_EXITED)
    sb_printf (b, "%d", ec);
  else
    sb_puts (b, "null");
  sb_puts (b, ",\"termination\":");
  if (how)
    sb_string (b, how);
  else
    sb_puts (b, "null");
}

static void
render_state (sbuf *b, berth_process *p, int state, int ec, const char *how)
{
  render_state_fields (b, berth_process_id (p), state, ec, how);
  sb_puts (b, "}");
}

/* Reply to request ID with P's state (it ended, or a poll).  */
static void
reply_state (server *s, client *c, const char *id, senv *e, berth_process *p)
{
  berth_error *err = NULL;
  int ec = -1;
  const char *how = NULL;
  bind_scope (s, e);
  int state = berth_process_poll (p, &ec, &how, &err);
  if (state < 0)
    {
      reply_berth_error (c, id, err, state);
      return;
    }
  sbuf b = { 0 };
  render_state (&b, p, state, ec, how);
  reply_result (c, id, b.s);
  sb_free (&b);
}

void
sproc_step (server *s, sproc *p)
{
  unsigned char buf[65536];
  berth_error *err = NULL;
  bind_scope (s, p->env);
  for (int rounds = 0; rounds < 16; rounds++)
    {
      ssize_t n = berth_process_read (p->p, buf, sizeof buf, NULL, &err);
      if (n == -EAGAIN)
        return;
      if (n < 0)
        {
          reply_berth_error (p->c, p->id, err, (int) n);
          sproc_drop (s, p);
          return;
        }
      if (n == 0)
        {
          reply_state (s, p->c, p->id, p->env, p->p);
          sproc_drop (s, p);
          return;
        }
      emit_output_event (p->c, p->id, buf, (size_t) n);
    }
}

bool
sproc_cancel (server *s, client *c, const char *id)
{
  bool any = false;
  for (sproc *p = s->procs, *next; p; p = next)
    {
      next = p->next;
      if (p->c == c && (id == NULL || strcmp (p->id, id) == 0))
        {
          /* the process keeps running: only the stream ends */
          if (id)
            reply_state (s, p->c, p->id, p->env, p->p);
          sproc_drop (s, p);
          any = true;
        }
    }
  return any;
}

/* The process named by "process" in the request's environment.  */
static berth_process *
get_process (req *r, senv **ret_env)
{
  const char *id;
  berth_error *err = NULL;
  berth_process *p = NULL;
  senv *e = get_env (r);
  if (e == NULL || !get_string (r, "process", true, &id))
    return NULL;
  int rc = berth_env_attach_process (e->env, id, &p, &err);
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return NULL;
    }
  *ret_env = e;
  return p;
}

void
m_start_process (req *r)
{
  senv *e = get_env (r);
  berth_process_spec spec = BERTH_PROCESS_SPEC_INIT;
  berth_process *p = NULL;
  berth_error *err = NULL;
  if (e == NULL || !get_string (r, "command", true, &spec.command) || !get_string (r, "cwd", false, &spec.cwd)
      || !get_bool (r, "stdin", false, &spec.has_stdin) || !get_bool (r, "pty", false, &spec.pty))
    return;
  int rc = berth_env_start_process (e->env, &spec, &p, &err);
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return;
    }
  sbuf b = { 0 };
  sb_puts (&b, "{\"process\":");
  sb_string (&b, berth_process_id (p));
  sb_puts (&b, "}");
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
  berth_process_unref (p);
}

void
m_attach_process (req *r)
{
  senv *e = NULL;
  berth_process *p = get_process (r, &e);
  if (p == NULL)
    return;
  for (sproc *o = r->s->procs; o; o = o->next)
    if (o->c == r->c && strcmp (o->id, r->id) == 0)
      {
        berth_process_unref (p);
        reply_error (r->c, r->id, "invalid_request", "attach_process: id %s streams already (ids of running requests must differ: cancel uses them)", r->id);
        return;
      }
  berth_error *err = NULL;
  if (berth_process_fd (p, &err) < 0)
    {
      /* nothing to follow (lost): its state is the answer */
      berth_error_free (err);
      reply_state (r->s, r->c, r->id, e, p);
      berth_process_unref (p);
      return;
    }
  sproc *sp = calloc (1, sizeof *sp);
  if (sp == NULL || (sp->id = strdup (r->id)) == NULL)
    abort ();
  sp->c = r->c;
  sp->env = e;
  sp->p = p;
  sp->next = r->s->procs;
  r->s->procs = sp;
  r->s->n_procs++;
}

/* "data" (a string) or "data_b64" (base64): the bytes (malloc'd).  */
static bool
get_data (req *r, unsigned char **ret, size_t *ret_len)
{
  const jv *d = jv_get (r->params, "data"), *d64 = jv_get (r->params, "data_b64");
  if (d && d->type == JV_NULL)
    d = NULL;
  if (d64 && d64->type == JV_NULL)
    d64 = NULL;
  if ((d == NULL) == (d64 == NULL) || (d && d->type != JV_STRING) || (d64 && d64->type != JV_STRING))
    {
      reply_error (r->c, r->id, "invalid_params", "%s: give \"data\" (a string) or \"data_b64\" (base64), one of them", r->method);
      return false;
    }
  if (d64)
    {
      if (base64_decode (d64->str, d64->len, ret, ret_len) < 0)
        {
          reply_error (r->c, r->id, "invalid_params", "%s: \"data_b64\" is not base64 (RFC 4648)", r->method);
          return false;
        }
      return true;
    }
  *ret = malloc (d->len + 1);
  if (*ret == NULL)
    abort ();
  memcpy (*ret, d->str, d->len);
  *ret_len = d->len;
  return true;
}

void
m_write (req *r)
{
  senv *e = NULL;
  unsigned char *data = NULL;
  size_t len = 0;
  berth_error *err = NULL;
  berth_process *p = get_process (r, &e);
  if (p == NULL)
    return;
  if (get_data (r, &data, &len))
    {
      int rc = berth_process_write (p, data, len, &err);
      if (rc < 0)
        reply_berth_error (r->c, r->id, err, rc);
      else
        reply_result (r->c, r->id, "{}");
    }
  free (data);
  berth_process_unref (p);
}

void
m_close_stdin (req *r)
{
  senv *e = NULL;
  berth_error *err = NULL;
  berth_process *p = get_process (r, &e);
  if (p == NULL)
    return;
  int rc = berth_process_close_stdin (p, &err);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, "{}");
  berth_process_unref (p);
}

void
m_poll (req *r)
{
  senv *e = NULL;
  berth_process *p = get_process (r, &e);
  if (p == NULL)
    return;
  reply_state (r->s, r->c, r->id, e, p);
  berth_process_unref (p);
}

void
m_stop_process (req *r)
{
  senv *e = NULL;
  berth_error *err = NULL;
  berth_process *p = get_process (r, &e);
  if (p == NULL)
    return;
  int rc = berth_process_stop (p, &err);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_state (r->s, r->c, r->id, e, p);
  berth_process_unref (p);
}

typedef struct list_state
{
  sbuf b;
  bool first;
} list_state;

static void
list_one (void *userdata, const char *id, const char *command, int64_t started, int state, int ec, const char *how)
{
  list_state *l = userdata;
  if (!l->first)
    sb_puts (&l->b, ",");
  l->first = false;
  render_state_fields (&l->b, id, state, ec, how);
  sb_printf (&l->b, ",\"started\":%lld,\"command\":", (long long) started);
  sb_string (&l->b, command);
  sb_puts (&l->b, "}");
}

void
m_list_processes (req *r)
{
  senv *e = get_env (r);
  berth_error *err = NULL;
  list_state l = { .first = true };
  if (e == NULL)
    return;
  sb_puts (&l.b, "{\"processes\":[");
  int rc = berth_env_list_processes (e->env, list_one, &l, &err);
  sb_puts (&l.b, "]}");
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, l.b.s);
  sb_free (&l.b);
}

/* ---- files ---- */

void
m_read_file (req *r)
{
  senv *e = get_env (r);
  const char *path;
  double max = 0;
  bool set, fetch;
  void *data = NULL;
  size_t len = 0;
  berth_error *err = NULL;
  if (e == NULL || !get_string (r, "path", true, &path) || !get_number (r, "max_bytes", 1, SERVE_FILE_MAX, &max, &set)
      || !get_bool (r, "regular_only", false, &fetch))
    return;
  int rc = (fetch ? berth_env_fetch_file : berth_env_read_file) (e->env, path, set ? (size_t) max : SERVE_FILE_MAX, &data, &len, &err);
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return;
    }
  bool partial;
  sbuf b = { 0 };
  if (utf8_valid_prefix (data, len, &partial) == len)
    {
      sb_puts (&b, "{\"data\":");
      sb_string_len (&b, data, len);
    }
  else
    {
      sb_puts (&b, "{\"data_b64\":");
      sb_base64 (&b, data, len);
    }
  sb_printf (&b, ",\"size\":%zu}", len);
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
  free (data);
}

void
m_write_file (req *r)
{
  senv *e = get_env (r);
  const char *path;
  double mode = 0;
  bool set;
  unsigned char *data = NULL;
  size_t len = 0;
  berth_error *err = NULL;
  if (e == NULL || !get_string (r, "path", true, &path) || !get_number (r, "mode", 0, 07777, &mode, &set) || !get_data (r, &data, &len))
    return;
  int rc = berth_env_write_file (e->env, path, data, len, set ? (mode_t) mode : 0, &err);
  free (data);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, "{}");
}

static void
reply_path (req *r, int rc, char *path, berth_error *err)
{
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return;
    }
  sbuf b = { 0 };
  sb_puts (&b, "{\"path\":");
  sb_string (&b, path);
  sb_puts (&b, "}");
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
  free (path);
}

void
m_realpath (req *r)
{
  senv *e = get_env (r);
  const char *path;
  char *out = NULL;
  berth_error *err = NULL;
  if (e == NULL || !get_string (r, "path", true, &path))
    return;
  int rc = berth_env_realpath (e->env, path, &out, &err);
  reply_path (r, rc, out, err);
}

void
m_temp_dir (req *r)
{
  senv *e = get_env (r);
  char *out = NULL;
  berth_error *err = NULL;
  if (e == NULL)
    return;
  int rc = berth_env_temp_dir (e->env, &out, &err);
  reply_path (r, rc, out, err);
}

/* ---- idle ---- */

void
m_stop_idle (req *r)
{
  senv *e = get_env (r);
  berth_error *err = NULL;
  if (e == NULL)
    return;
  if (e->running)
    {
      reply_error (r->c, r->id, "busy", "stop_idle: environment %s is running a command (id %s)", e->handle, e->running->id);
      return;
    }
  int rc = berth_env_stop_idle (e->env, &err);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, "{}");
}
