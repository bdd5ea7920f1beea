/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serve.c: berth serve (berth-serve(7)).  JSON lines over stdio or a UNIX
 * socket; each method a thin call into libberth; one thread and one poll
 * loop over every running execute (berth_exec_fd / berth_exec_step), so
 * many environments are served at once.  Public headers only.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <berth/berth.h>
#include <berth/plugins.h>
#include "../cli/cli.h"
#include "serve.h"
#include "serve-private.h"

/* A client whose unsent output passes this is not read from, and its
   executes are not stepped, until it reads: their output waits in the
   command's pipe (back-pressure), not in our memory.  */
#define SERVE_MAX_BACKLOG (1u << 20)
#define SERVE_MAX_EXECS 256
#define SERVE_MAX_ENVS 1024
#define SERVE_MAX_CLIENTS 64
#define SERVE_MAX_BYTES_MAX (1ull << 30)
#define SERVE_READ_CHUNK 65536


/* ---- signals: SIGINT, SIGTERM, SIGHUP end the server cleanly ---- */

static int sig_pipe[2] = { -1, -1 };

static void
on_signal (int sig)
{
  int saved = errno;
  (void) sig;
  if (write (sig_pipe[1], "x", 1) < 0)
    {
    }
  errno = saved;
}

/* ---- output ---- */

static size_t
backlog (const client *c)
{
  return c->out.len - c->out_off;
}

static void
flush_client (client *c)
{
  while (!c->dead && c->out_off < c->out.len)
    {
      ssize_t n = write (c->out_fd, c->out.s + c->out_off, c->out.len - c->out_off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n <= 0)
        {
          /* the reader is gone: what we owe it is dropped */
          c->dead = c->eof = true;
          break;
        }
      c->out_off += (size_t) n;
    }
  if (c->out_off == c->out.len || c->dead)
    c->out.len = c->out_off = 0;
  else if (c->out_off > (1u << 16) && c->out_off > c->out.len / 2)
    {
      memmove (c->out.s, c->out.s + c->out_off, c->out.len - c->out_off);
      c->out.len -= c->out_off;
      c->out_off = 0;
    }
}

void
reply_result (client *c, const char *id, const char *result_json)
{
  if (c->dead)
    return;
  sb_puts (&c->out, "{\"id\":");
  sb_puts (&c->out, id);
  sb_puts (&c->out, ",\"result\":");
  sb_puts (&c->out, result_json);
  sb_puts (&c->out, "}\n");
}

void
reply_error_full (client *c, const char *id, const char *code, const char *message, int berth_code, const char *output, size_t output_len)
{
  if (c->dead)
    return;
  sb_puts (&c->out, "{\"id\":");
  sb_puts (&c->out, id ? id : "null");
  sb_puts (&c->out, ",\"error\":{\"code\":");
  sb_string (&c->out, code);
  sb_puts (&c->out, ",\"message\":");
  sb_string (&c->out, message);
  if (berth_code)
    sb_printf (&c->out, ",\"berth_code\":%d", berth_code);
  if (output)
    {
      sb_puts (&c->out, ",\"output\":");
      sb_string_len (&c->out, output, output_len);
    }
  sb_puts (&c->out, "}}\n");
}

void
reply_error (client *c, const char *id, const char *code, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  reply_error_full (c, id, code, msg, 0, NULL, 0);
  free (msg);
}

/* The stable name of a libberth error code.  */
static const char *
code_name (int code)
{
  switch (code)
    {
    case BERTH_E_NO_PROVIDER: return "no_provider";
    case BERTH_E_ABI: return "abi";
    case BERTH_E_CONFIG: return "config";
    case BERTH_E_BACKEND: return "backend";
    case BERTH_E_PROTOCOL: return "protocol";
    case BERTH_E_UNAVAILABLE: return "unavailable";
    case BERTH_E_PLUGIN: return "plugin";
    case BERTH_E_ENV: return "env";
    case BERTH_E_SCOPE: return "scope";
    case BERTH_E_HOSTED: return "hosted";
    case ENOTSUP: return "not_supported";
    case EBUSY: return "busy";
    case EINVAL: return "invalid_params";
    case ENOENT: return "not_found";
    default: return "failed";
    }
}

/* Reply with a libberth error (and free it).  */
void
reply_berth_error (client *c, const char *id, berth_error *err, int r)
{
  int code = err ? berth_error_code (err) : -r;
  size_t len = 0;
  const char *out = err ? berth_error_output (err, &len) : NULL;
  reply_error_full (c, id, code_name (code), err ? berth_error_message (err) : strerror (-r), code, out, len);
  berth_error_free (err);
}

/* ---- parameters: each getter replies invalid_params and returns false
   on a wrong type ---- */


bool
get_string (req *r, const char *key, bool required, const char **ret)
{
  const jv *v = jv_get (r->params, key);
  *ret = NULL;
  if (v == NULL || v->type == JV_NULL)
    {
      if (!required)
        return true;
      reply_error (r->c, r->id, "invalid_params", "%s: \"%s\" is required (a string)", r->method, key);
      return false;
    }
  if (v->type != JV_STRING || strlen (v->str) != v->len)
    {
      reply_error (r->c, r->id, "invalid_params", "%s: \"%s\" must be a string without NUL bytes", r->method, key);
      return false;
    }
  *ret = v->str;
  return true;
}

bool
get_bool (req *r, const char *key, bool dflt, bool *ret)
{
  const jv *v = jv_get (r->params, key);
  *ret = dflt;
  if (v == NULL || v->type == JV_NULL)
    return true;
  if (v->type != JV_BOOL)
    {
      reply_error (r->c, r->id, "invalid_params", "%s: \"%s\" must be true or false", r->method, key);
      return false;
    }
  *ret = v->b;
  return true;
}

/* A number in [MIN, MAX]; absent or null: *RET untouched, *RET_SET false. */
bool
get_number (req *r, const char *key, double min, double max, double *ret, bool *ret_set)
{
  const jv *v = jv_get (r->params, key);
  *ret_set = false;
  if (v == NULL || v->type == JV_NULL)
    return true;
  if (v->type != JV_NUMBER || !(v->num >= min && v->num <= max))
    {
      reply_error (r->c, r->id, "invalid_params", "%s: \"%s\" must be a number from %.0f to %.0f", r->method, key, min, max);
      return false;
    }
  *ret = v->num;
  *ret_set = true;
  return true;
}

/* One context serves every client: each call runs under the scope its
   environment was opened under (libberth checks it on every call).  */
void
bind_scope (server *s, const senv *e)
{
  berth_ctx_set_scope (s->ctx, e ? e->tenant : NULL, e ? e->agent : NULL, NULL);
}

senv *
get_env (req *r)
{
  const char *h;
  if (!get_string (r, "env", true, &h))
    return NULL;
  for (senv *e = r->c->envs; e; e = e->next)
    if (strcmp (e->handle, h) == 0)
      {
        bind_scope (r->s, e);
        return e;
      }
  reply_error (r->c, r->id, "not_found", "%s: no open environment \"%s\" (open one first: {\"method\":\"open\"})", r->method, h);
  return NULL;
}

/* ---- providers ---- */


static void
render_flags (sbuf *b, berth_provider *p)
{
  sb_puts (b, "{");
  for (size_t i = 0; i < sizeof cli_all_flags / sizeof cli_all_flags[0]; i++)
    sb_printf (b, "%s\"%s\":%s", i ? "," : "", berth_flag_name (cli_all_flags[i]), berth_provider_flag (p, cli_all_flags[i]) ? "true" : "false");
  sb_puts (b, "}");
}

/* The fields of one element of `berth backends --json`.  */
static void
render_provider (sbuf *b, berth_provider *p)
{
  char *reason = NULL;
  int state = berth_provider_probe (p, &reason);
  sb_printf (b, "{\"schema_version\":%d,\"name\":", BERTH_SCHEMA_VERSION);
  sb_string (b, berth_provider_name (p));
  sb_puts (b, ",\"description\":");
  sb_string (b, berth_provider_description (p));
  sb_puts (b, ",\"origin\":");
  sb_string (b, berth_provider_origin (p));
  sb_printf (b, ",\"status\":\"%s\",\"reason\":", cli_probe_names[state >= 0 && state <= 2 ? state : 2]);
  sb_string (b, reason);
  sb_puts (b, ",\"default_cwd\":");
  sb_string (b, berth_provider_default_cwd (p));
  sb_puts (b, ",\"cache_path_base\":");
  sb_string (b, berth_provider_cache_path_base (p));
  sb_puts (b, ",\"flags\":");
  render_flags (b, p);
  sb_puts (b, ",\"strip_env_keys\":[");
  const char *const *keys = berth_provider_strip_env_keys (p);
  for (size_t i = 0; keys[i]; i++)
    {
      if (i)
        sb_puts (b, ",");
      sb_string (b, keys[i]);
    }
  sb_puts (b, "]}");
  free (reason);
}

/* ---- methods ---- */

static void
m_version (req *r);

static void
m_backends (req *r)
{
  sbuf b = { 0 };
  size_t cur = 0;
  berth_provider *p;
  berth_ctx_load_providers (r->s->ctx); /* a listing: every module and plugin */
  sb_puts (&b, "[");
  for (bool first = true; (p = berth_ctx_next_provider (r->s->ctx, &cur)); first = false)
    {
      if (!first)
        sb_puts (&b, ",");
      render_provider (&b, p);
    }
  sb_puts (&b, "]");
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
}

typedef struct doctor_state
{
  sbuf *b;
  bool first;
} doctor_state;

static void
doctor_check (void *userdata, const char *name, bool ok, const char *detail, const char *fix)
{
  doctor_state *d = userdata;
  sb_puts (d->b, d->first ? "{\"check\":" : ",{\"check\":");
  sb_string (d->b, name);
  sb_printf (d->b, ",\"ok\":%s,\"detail\":", ok ? "true" : "false");
  sb_string (d->b, detail);
  sb_puts (d->b, ",\"fix\":");
  sb_string (d->b, ok ? NULL : fix);
  sb_puts (d->b, "}");
  d->first = false;
}

static void
m_doctor (req *r)
{
  const char *only;
  if (!get_string (r, "backend", false, &only))
    return;
  if (!only)
    berth_ctx_load_providers (r->s->ctx);
  else if (berth_ctx_find_provider (r->s->ctx, only) == NULL)
    {
      reply_error (r->c, r->id, "no_provider", "unknown backend '%s' (available: %s)", only, berth_ctx_provider_names (r->s->ctx));
      return;
    }
  sbuf b = { 0 };
  doctor_state d = { &b, true };
  size_t cur = 0;
  berth_provider *p;
  bool first = true;
  sb_puts (&b, "[");
  while ((p = berth_ctx_next_provider (r->s->ctx, &cur)))
    {
      if (only && strcmp (only, berth_provider_name (p)) != 0)
        continue;
      sb_printf (&b, "%s{\"schema_version\":%d,\"backend\":", first ? "" : ",", BERTH_SCHEMA_VERSION);
      sb_string (&b, berth_provider_name (p));
      sb_puts (&b, ",\"checks\":[");
      d.first = true;
      berth_provider_doctor (p, doctor_check, &d);
      sb_puts (&b, "]}");
      first = false;
    }
  size_t pc = 0;
  const berth_plugin_info *pi;
  while (!only && (pi = berth_ctx_next_plugin (r->s->ctx, &pc)))
    {
      if (berth_plugin_loaded (pi) || !berth_plugin_enabled (pi))
        continue;
      sb_printf (&b, "%s{\"schema_version\":%d,\"plugin\":", first ? "" : ",", BERTH_SCHEMA_VERSION);
      sb_string (&b, berth_plugin_name (pi));
      sb_puts (&b, ",\"checks\":[");
      d.first = true;
      doctor_check (&d, berth_plugin_name (pi), false, berth_plugin_status (pi), "reinstall or disable it: berth plugins disable NAME");
      sb_puts (&b, "]}");
      first = false;
    }
  sb_puts (&b, "]");
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
}

static void
render_env (sbuf *b, berth_ctx *ctx, const senv *e)
{
  berth_provider *p = berth_ctx_find_provider (ctx, berth_env_backend (e->env));
  sb_printf (b, "{\"schema_version\":%d,\"env\":", BERTH_SCHEMA_VERSION);
  sb_string (b, e->handle);
  sb_puts (b, ",\"backend\":");
  sb_string (b, berth_env_backend (e->env));
  sb_puts (b, ",\"name\":");
  sb_string (b, berth_env_name (e->env));
  sb_puts (b, ",\"cwd\":");
  sb_string (b, berth_env_cwd (e->env));
  sb_puts (b, ",\"scope\":");
  if (e->tenant || e->agent)
    {
      sb_puts (b, "{\"tenant\":");
      sb_string (b, e->tenant);
      sb_puts (b, ",\"agent\":");
      sb_string (b, e->agent);
      sb_puts (b, "}");
    }
  else
    sb_puts (b, "null");
  if (p)
    {
      sb_puts (b, ",\"default_cwd\":");
      sb_string (b, berth_provider_default_cwd (p));
      sb_puts (b, ",\"cache_path_base\":");
      sb_string (b, berth_provider_cache_path_base (p));
      sb_puts (b, ",\"flags\":");
      render_flags (b, p);
    }
  sb_puts (b, "}");
}

/* A relative CWD for a host-side backend (local, bwrap: it runs on this
   host) is resolved against our own working directory, as berth exec -C
   does; others resolve it in the environment.  BACKEND NULL: the
   configured one.  Returns CWD or BUF.  */
static const char *
host_cwd (server *s, const char *backend, const char *cwd, char *buf, size_t size)
{
  char *dflt = NULL, here[PATH_MAX];
  if (cwd == NULL || cwd[0] == '/' || cwd[0] == '~' || cwd[0] == '\0')
    return cwd;
  if (backend == NULL && berth_ctx_config_get (s->ctx, "terminal.backend", &dflt, NULL) >= 0)
    {
      dflt[strcspn (dflt, " \t\r\n")] = '\0';
      backend = dflt;
    }
  berth_provider *p = berth_ctx_find_provider (s->ctx, backend ? backend : "local");
  bool host = p && (berth_provider_flag (p, BERTH_FLAG_USES_HOST_FILESYSTEM) || !berth_provider_flag (p, BERTH_FLAG_IS_REMOTE));
  free (dflt);
  if (!host || size < PATH_MAX)
    return cwd;
  if (realpath (cwd, buf))
    return buf;
  if (getcwd (here, sizeof here) && snprintf (buf, size, "%s/%s", here, cwd) < (int) size)
    return buf;
  return cwd;
}

static void
m_open (req *r)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  const char *tenant = NULL, *agent = NULL;
  double setup_timeout = 0;
  bool set;
  if (!get_string (r, "backend", false, &spec.backend) || !get_string (r, "name", false, &spec.name)
      || !get_string (r, "cwd", false, &spec.cwd) || !get_string (r, "image", false, &spec.image)
      || !get_string (r, "task_id", false, &spec.task_id)
      || !get_number (r, "setup_timeout", 0, BERTH_TIMEOUT_MAX, &setup_timeout, &set))
    return;
  spec.setup_timeout = setup_timeout;
  char abs_cwd[PATH_MAX];
  spec.cwd = host_cwd (r->s, spec.backend, spec.cwd, abs_cwd, sizeof abs_cwd);
  if (spec.image && spec.image[0] == '\0')
    spec.image = NULL; /* "": the backend's configured image (as Hermes passes it) */
  const jv *scope = jv_get (r->params, "scope");
  if (scope && scope->type != JV_NULL)
    {
      const jv *t = jv_get (scope, "tenant"), *a = jv_get (scope, "agent");
      if (scope->type != JV_OBJECT || (t && t->type != JV_STRING && t->type != JV_NULL) || (a && a->type != JV_STRING && a->type != JV_NULL))
        {
          reply_error (r->c, r->id, "invalid_params", "open: \"scope\" must be an object {\"tenant\": string, \"agent\": string}");
          return;
        }
      tenant = t && t->type == JV_STRING ? t->str : NULL;
      agent = a && a->type == JV_STRING ? a->str : NULL;
    }
  if (r->s->tenant && !scope && !tenant && !agent)
    {
      tenant = r->s->tenant;
      agent = r->s->agent;
    }
  else if (r->s->tenant && (!tenant || !agent || strcmp (tenant, r->s->tenant) != 0 || strcmp (agent, r->s->agent) != 0))
    {
      reply_error (r->c, r->id, "scope", "open: this server serves scope %s/%s only (berth --tenant %s --agent %s serve), not %s/%s", r->s->tenant,
                   r->s->agent, r->s->tenant, r->s->agent, tenant ? tenant : "(none)", agent ? agent : "(none)");
      return;
    }
  if (r->c->n_envs >= SERVE_MAX_ENVS)
    {
      reply_error (r->c, r->id, "busy", "open: this client has %d environments open already; clean some up first", SERVE_MAX_ENVS);
      return;
    }
  berth_env *env = NULL;
  berth_error *err = NULL;
  int rc = berth_ctx_set_scope (r->s->ctx, tenant, agent, &err);
  if (rc >= 0)
    rc = berth_env_open (r->s->ctx, &spec, &env, &err);
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return;
    }
  senv *e = calloc (1, sizeof *e);
  if (e == NULL)
    abort ();
  snprintf (e->handle, sizeof e->handle, "e%lu", ++r->s->next_handle);
  e->env = env;
  e->tenant = tenant ? strdup (tenant) : NULL;
  e->agent = agent ? strdup (agent) : NULL;
  e->next = r->c->envs;
  r->c->envs = e;
  r->c->n_envs++;
  sbuf b = { 0 };
  render_env (&b, r->s->ctx, e);
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
}

static void
emit_output_to (client *c, const char *id, const unsigned char *data, size_t len, bool b64)
{
  if (c->dead)
    return;
  sb_puts (&c->out, "{\"id\":");
  sb_puts (&c->out, id);
  if (b64)
    {
      sb_puts (&c->out, ",\"event\":\"output\",\"data_b64\":");
      sb_base64 (&c->out, data, len);
    }
  else
    {
      sb_puts (&c->out, ",\"event\":\"output\",\"data\":");
      sb_string_len (&c->out, (const char *) data, len);
    }
  sb_puts (&c->out, "}\n");
}

static void
emit_output (sexec *x, const unsigned char *data, size_t len, bool b64)
{
  emit_output_to (x->c, x->id, data, len, b64);
}

void
emit_output_event (client *c, const char *id, const unsigned char *data, size_t len)
{
  bool partial;
  emit_output_to (c, id, data, len, utf8_valid_prefix (data, len, &partial) != len);
}

/* Output as it arrives: "data" while it is UTF-8 (a sequence cut between
   two chunks waits for its end), "data_b64" for a chunk that is not.  */
static int
on_output (void *userdata, const char *data, size_t len)
{
  sexec *x = userdata;
  unsigned char *buf = malloc (x->carry_len + len);
  size_t n = x->carry_len + len;
  bool partial;
  if (buf == NULL)
    abort ();
  memcpy (buf, x->carry, x->carry_len);
  memcpy (buf + x->carry_len, data, len);
  x->carry_len = 0;
  size_t ok = utf8_valid_prefix (buf, n, &partial);
  if (ok == n || (partial && n - ok < sizeof x->carry))
    {
      if (ok)
        emit_output (x, buf, ok, false);
      memcpy (x->carry, buf + ok, n - ok);
      x->carry_len = n - ok;
    }
  else
    emit_output (x, buf, n, true);
  free (buf);
  return 0;
}

static void step_exec (server *s, sexec *x);

static sexec *
find_exec (server *s, client *c, const char *id)
{
  for (sexec *x = s->execs; x; x = x->next)
    if (x->c == c && strcmp (x->id, id) == 0)
      return x;
  return NULL;
}

static void
m_execute (req *r)
{
  senv *e = get_env (r);
  const char *command, *cwd;
  double timeout = 0, max_bytes = 0;
  bool timeout_set, max_set, stream;
  if (e == NULL || !get_string (r, "command", true, &command) || !get_string (r, "cwd", false, &cwd)
      || !get_number (r, "timeout", 0, BERTH_TIMEOUT_MAX, &timeout, &timeout_set)
      || !get_number (r, "max_bytes", 1, (double) SERVE_MAX_BYTES_MAX, &max_bytes, &max_set)
      || !get_bool (r, "stream", true, &stream))
    return;
  const jv *in = jv_get (r->params, "stdin"), *in64 = jv_get (r->params, "stdin_b64");
  if (in && in->type == JV_NULL)
    in = NULL;
  if (in64 && in64->type == JV_NULL)
    in64 = NULL;
  if ((in && in->type != JV_STRING) || (in64 && in64->type != JV_STRING) || (in && in64))
    {
      reply_error (r->c, r->id, "invalid_params", "execute: give \"stdin\" (a string) or \"stdin_b64\" (base64), not both");
      return;
    }
  if (find_exec (r->s, r->c, r->id))
    {
      reply_error (r->c, r->id, "invalid_request", "execute: id %s is running already (ids of running executes must differ: cancel uses them)", r->id);
      return;
    }
  if (e->running)
    {
      reply_error (r->c, r->id, "busy", "execute: environment %s is running a command (id %s); one at a time per environment, open another for more", e->handle, e->running->id);
      return;
    }
  /* Two commands of one named environment in one thread would wait for
     each other's lock forever: refuse the second.  */
  const char *name = berth_env_name (e->env);
  for (sexec *o = r->s->execs; name && o; o = o->next)
    {
      const char *oname = berth_env_name (o->env->env);
      if (oname && strcmp (oname, name) == 0)
        {
          reply_error (r->c, r->id, "busy", "execute: named environment '%s' is running a command already (one at a time per named environment)", name);
          return;
        }
    }
  if (r->s->n_execs >= SERVE_MAX_EXECS)
    {
      reply_error (r->c, r->id, "busy", "execute: %d commands are running already; wait for one to end", SERVE_MAX_EXECS);
      return;
    }
  unsigned char *stdin_bytes = NULL;
  size_t stdin_len = 0;
  if (in64 && base64_decode (in64->str, in64->len, &stdin_bytes, &stdin_len) < 0)
    {
      reply_error (r->c, r->id, "invalid_params", "execute: \"stdin_b64\" is not base64 (RFC 4648)");
      return;
    }
  sexec *x = calloc (1, sizeof *x);
  if (x == NULL || (x->id = strdup (r->id)) == NULL)
    abort ();
  x->env = e;
  x->c = r->c;
  x->stream = stream;

  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_error *err = NULL;
  char abs_cwd[PATH_MAX];
  spec.command = command;
  spec.cwd = host_cwd (r->s, berth_env_backend (e->env), cwd, abs_cwd, sizeof abs_cwd);
  spec.timeout = !timeout_set ? 0 : timeout == 0 ? BERTH_TIMEOUT_NONE : timeout;
  spec.max_bytes = max_set ? (size_t) max_bytes : 0;
  if (in)
    spec.stdin_data = in->str, spec.stdin_len = in->len, spec.has_stdin = true;
  else if (in64)
    spec.stdin_data = stdin_bytes, spec.stdin_len = stdin_len, spec.has_stdin = true;
  if (stream)
    {
      spec.on_output = on_output;
      spec.userdata = x;
    }
  int rc = berth_env_exec_begin (e->env, &spec, &x->x, &err);
  free (stdin_bytes); /* read in begin */
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      free (x->id);
      free (x);
      return;
    }
  e->running = x;
  x->next = r->s->execs;
  r->s->execs = x;
  r->s->n_execs++;
  /* The first step comes before any wait (as in berth_env_execute): what
     begin read already is handled now; later steps follow the fd.  */
  step_exec (r->s, x);
}

static void
m_cancel (req *r)
{
  const jv *id = jv_get (r->params, "id");
  if (id == NULL || (id->type != JV_STRING && id->type != JV_NUMBER))
    {
      reply_error (r->c, r->id, "invalid_params", "cancel: \"id\" must be the id of a running execute (a string or a number)");
      return;
    }
  sbuf b = { 0 };
  sb_value (&b, id);
  sexec *x = find_exec (r->s, r->c, b.s);
  if (x == NULL)
    {
      if (!sproc_cancel (r->s, r->c, b.s))
        reply_error (r->c, r->id, "not_found", "cancel: no running execute or attach has id %s (it may have ended)", b.s);
      else
        reply_result (r->c, r->id, "{\"cancelled\":true}");
    }
  else
    {
      berth_exec_interrupt (x->x); /* its reply: the interrupted result (130) */
      reply_result (r->c, r->id, "{\"cancelled\":true}");
    }

  sb_free (&b);
}

static void
m_exec_prefix (req *r)
{
  senv *e = get_env (r);
  const char *user;
  bool interactive;
  char **argv = NULL;
  berth_error *err = NULL;
  if (e == NULL || !get_string (r, "user", false, &user) || !get_bool (r, "interactive", true, &interactive))
    return;
  int rc = berth_env_exec_prefix (e->env, user, interactive, &argv, &err);
  if (rc < 0)
    {
      reply_berth_error (r->c, r->id, err, rc);
      return;
    }
  sbuf b = { 0 };
  sb_puts (&b, "{\"argv\":[");
  for (size_t i = 0; argv[i]; i++)
    {
      if (i)
        sb_puts (&b, ",");
      sb_string (&b, argv[i]);
    }
  sb_puts (&b, "]}");
  berth_strv_free (argv);
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
}

/* Release E (cleaned up per its persistence) and forget it.  */
static int
close_env (server *s, client *c, senv *e, berth_error **reterr)
{
  bind_scope (s, e);
  int rc = berth_env_cleanup (e->env, reterr);
  if (rc < 0)
    return rc;
  for (senv **pp = &c->envs; *pp; pp = &(*pp)->next)
    if (*pp == e)
      {
        *pp = e->next;
        break;
      }
  c->n_envs--;
  berth_env_unref (e->env);
  free (e->tenant);
  free (e->agent);
  free (e);
  return 0;
}

static void
m_cleanup (req *r)
{
  senv *e = get_env (r);
  berth_error *err = NULL;
  if (e == NULL)
    return;
  if (e->running)
    {
      reply_error (r->c, r->id, "busy", "cleanup: environment %s is running a command (id %s); cancel it first", e->handle, e->running->id);
      return;
    }
  int rc = close_env (r->s, r->c, e, &err);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, "{}");
}

static void
m_remove (req *r)
{
  const char *name;
  berth_error *err = NULL;
  if (!get_string (r, "name", true, &name))
    return;
  for (senv *e = r->c->envs; e; e = e->next)
    if (e->running && berth_env_name (e->env) && strcmp (berth_env_name (e->env), name) == 0)
      {
        reply_error (r->c, r->id, "busy", "remove: environment '%s' is running a command (id %s); cancel it first", name, e->running->id);
        return;
      }
  /* this client's handles on it go first */
  for (senv *e = r->c->envs, *next; e; e = next)
    {
      next = e->next;
      if (berth_env_name (e->env) && strcmp (berth_env_name (e->env), name) == 0)
        close_env (r->s, r->c, e, NULL);
    }
  int rc = berth_env_remove (r->s->ctx, name, &err);
  if (rc < 0)
    reply_berth_error (r->c, r->id, err, rc);
  else
    reply_result (r->c, r->id, "{}");
}

typedef void (*method_fn) (req *r);

/* Every method of berth-serve(7).  A NULL function is a method whose
   runtime API does not exist yet: it answers not_supported, naming
   itself; when the runtime gains it, its row gets its function.  */
static const struct
{
  const char *name;
  method_fn fn;
} methods[] = {
  { "version", m_version },
  { "backends", m_backends },
  { "doctor", m_doctor },
  { "open", m_open },
  { "execute", m_execute },
  { "cancel", m_cancel },
  { "exec_prefix", m_exec_prefix },
  { "cleanup", m_cleanup },
  { "remove", m_remove },
  /* processes (the runtime's process API is to come) */
  { "start_process", m_start_process },
  { "attach_process", m_attach_process },
  { "write", m_write },
  { "close_stdin", m_close_stdin },
  { "poll", m_poll },
  { "stop_process", m_stop_process },
  { "list_processes", m_list_processes },
  /* files (the runtime's file API is to come) */
  { "read_file", m_read_file },
  { "write_file", m_write_file },
  { "realpath", m_realpath },
  { "temp_dir", m_temp_dir },
  /* idle suspension (to come) */
  { "stop_idle", m_stop_idle },
};

static void
method_list (sbuf *b, bool supported)
{
  bool first = true;
  sb_puts (b, "[");
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if ((methods[i].fn != NULL) == supported)
      {
        sb_puts (b, first ? "" : ",");
        sb_string (b, methods[i].name);
        first = false;
      }
  sb_puts (b, "]");
}

static void
m_version (req *r)
{
  sbuf b = { 0 };
  sb_printf (&b, "{\"schema_version\":%d,\"version\":", BERTH_SCHEMA_VERSION);
  sb_string (&b, berth_version ());
  sb_printf (&b, ",\"max_line_bytes\":%u,\"methods\":", SERVE_MAX_LINE);
  method_list (&b, true);
  sb_puts (&b, ",\"not_supported\":");
  method_list (&b, false);
  sb_puts (&b, "}");
  reply_result (r->c, r->id, b.s);
  sb_free (&b);
}

static void
handle_line (server *s, client *c, const char *line, size_t len)
{
  serve_request rq;
  c->line_no++;
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
    i++;
  if (i == len)
    return; /* blank lines are allowed */
  if (serve_request_parse (line, len, &rq) < 0)
    {
      reply_error (c, rq.id ? rq.id : "null", rq.code, "line %lu: %s", c->line_no, rq.message);
      serve_request_clear (&rq);
      return;
    }
  req r = { s, c, rq.id, rq.method, rq.params };
  size_t m;
  for (m = 0; m < sizeof methods / sizeof methods[0]; m++)
    if (strcmp (methods[m].name, rq.method) == 0)
      break;
  if (m == sizeof methods / sizeof methods[0])
    {
      sbuf names = { 0 };
      method_list (&names, true);
      reply_error (c, rq.id, "unknown_method", "no method '%s' (methods: %s)", rq.method, names.s);
      sb_free (&names);
    }
  else if (methods[m].fn == NULL)
    reply_error (c, rq.id, "not_supported", "%s is not supported yet by this berth serve (its runtime API is to come; see berth-serve(7), METHODS)", rq.method);
  else
    methods[m].fn (&r);
  serve_request_clear (&rq);
}

/* ---- input ---- */

static void
read_client (server *s, client *c)
{
  if (c->in_cap - c->in_len < SERVE_READ_CHUNK)
    {
      /* geometric growth: a long line costs O(its length) copies */
      c->in_cap = c->in_len + SERVE_READ_CHUNK > 2 * c->in_cap ? c->in_len + SERVE_READ_CHUNK : 2 * c->in_cap;
      c->in = realloc (c->in, c->in_cap);
      if (c->in == NULL)
        abort ();
    }
  ssize_t n = read (c->in_fd, c->in + c->in_len, c->in_cap - c->in_len);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
    return;
  if (n <= 0)
    {
      if (c->in_len && !c->discarding)
        handle_line (s, c, c->in, c->in_len); /* a last line without its newline */
      c->in_len = 0;
      c->eof = true;
      return;
    }
  size_t start = c->in_len, begin = 0;
  c->in_len += (size_t) n;
  for (size_t i = start; i < c->in_len; i++)
    if (c->in[i] == '\n')
      {
        if (c->discarding)
          c->discarding = false, c->line_no++;
        else
          handle_line (s, c, c->in + begin, i - begin);
        begin = i + 1;
      }
  memmove (c->in, c->in + begin, c->in_len - begin);
  c->in_len -= begin;
  if (c->in_len > SERVE_MAX_LINE)
    {
      if (!c->discarding)
        reply_error (c, "null", "too_large", "line %lu: longer than %u bytes; it is skipped (send large stdin in pieces through a file, or lower it)", c->line_no + 1, SERVE_MAX_LINE);
      c->discarding = true;
      c->in_len = 0;
    }
}

/* ---- executes ---- */

static void
finish_exec (server *s, sexec *x, int rc, berth_result *res, berth_error *err)
{
  if (x->carry_len)
    emit_output (x, x->carry, x->carry_len, true);
  if (rc == 0)
    {
      size_t len;
      char *json = berth_result_json (res, &len);
      reply_result (x->c, x->id, json);
      free (json);
      berth_result_free (res);
    }
  else
    reply_berth_error (x->c, x->id, err, rc);
  bind_scope (s, x->env);
  berth_exec_free (x->x);
  x->env->running = NULL;
  for (sexec **pp = &s->execs; *pp; pp = &(*pp)->next)
    if (*pp == x)
      {
        *pp = x->next;
        break;
      }
  s->n_execs--;
  free (x->id);
  free (x);
}

static void
step_exec (server *s, sexec *x)
{
  berth_result *res = NULL;
  berth_error *err = NULL;
  bind_scope (s, x->env);
  int rc = berth_exec_step (x->x, &res, &err);
  if (rc <= 0)
    finish_exec (s, x, rc, res, err);
}

/* ---- clients ---- */

static client *
add_client (server *s, int in_fd, int out_fd)
{
  client *c = calloc (1, sizeof *c);
  if (c == NULL)
    abort ();
  c->in_fd = in_fd;
  c->out_fd = out_fd;
  c->in_flags = c->out_flags = -1;
  c->next = s->clients;
  s->clients = c;
  s->n_clients++;
  return c;
}

static bool
client_has_execs (server *s, client *c)
{
  for (sexec *x = s->execs; x; x = x->next)
    if (x->c == c)
      return true;
  return false;
}

/* Its input ended: stop what it runs (each execute ends interrupted, 130,
   and its reply is still sent), then let it go.  */
static void
interrupt_client (server *s, client *c)
{
  for (sexec *x = s->execs; x; x = x->next)
    if (x->c == c && !x->interrupted)
      {
        berth_exec_interrupt (x->x);
        x->interrupted = true;
      }
}

static void
drop_client (server *s, client *c)
{
  sproc_cancel (s, c, NULL);
  /* throw-away environments are cleaned up, named ones persist */
  while (c->envs)
    {
      senv *e = c->envs;
      berth_error *err = NULL;
      if (close_env (s, c, e, &err) < 0)
        {
          fprintf (stderr, "berth serve: cleaning up %s: %s\n", e->handle, berth_error_message (err));
          berth_error_free (err);
          c->envs = e->next;
          c->n_envs--;
          berth_env_unref (e->env);
          free (e->tenant);
          free (e->agent);
          free (e);
        }
    }
  for (client **pp = &s->clients; *pp; pp = &(*pp)->next)
    if (*pp == c)
      {
        *pp = c->next;
        break;
      }
  s->n_clients--;
  if (c->in_flags >= 0)
    fcntl (c->in_fd, F_SETFL, c->in_flags);
  if (c->out_flags >= 0)
    fcntl (c->out_fd, F_SETFL, c->out_flags);
  if (s->listen_fd >= 0)
    close (c->in_fd); /* a connection (in_fd == out_fd) */
  free (c->in);
  sb_free (&c->out);
  free (c);
}

/* Set O_NONBLOCK on a pipe or socket FD (a terminal or file is left as it
   is); returns the flags to restore, or -1.  */
static int
make_nonblocking (int fd)
{
  struct stat st;
  int fl;
  if (fstat (fd, &st) < 0 || !(S_ISFIFO (st.st_mode) || S_ISSOCK (st.st_mode)))
    return -1;
  if ((fl = fcntl (fd, F_GETFL)) < 0 || fcntl (fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return -1;
  return fl;
}

/* ---- the socket ---- */

/* cli_fail's line, and -1.  */
#define fail_socket(...) (cli_fail (__VA_ARGS__), -1)

static int
open_socket (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  struct stat st;
  if (strlen (path) >= sizeof sa.sun_path)
    return fail_socket ("serve: socket path %s is too long (at most %zu bytes)", path, sizeof sa.sun_path - 1);
  char *dir = strdup (path), *slash = strrchr (dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash)
    *slash = '\0';
  else
    strcpy (dir, ".");
  /* Only a directory of our own that others cannot write to: nobody can
     swap the socket under us.  */
  if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
    {
      int r = fail_socket ("serve: cannot use socket %s: its directory %s does not exist", path, dir);
      free (dir);
      return r;
    }
  if (st.st_uid != geteuid () || (st.st_mode & 022))
    {
      int r = fail_socket ("serve: refusing socket %s: its directory %s is %s; use a directory of your own that only you can write to (mode 0700)", path, dir,
                        st.st_uid != geteuid () ? "not yours" : "writable by others");
      free (dir);
      return r;
    }
  free (dir);
  if (lstat (path, &st) == 0)
    {
      if (!S_ISSOCK (st.st_mode) || st.st_uid != geteuid ())
        return fail_socket ("serve: refusing socket %s: it exists and is not a socket of yours; remove it or choose another path", path);
      /* a live server answers: leave it alone; a stale socket goes */
      int probe = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      strcpy (sa.sun_path, path);
      if (probe >= 0 && connect (probe, (struct sockaddr *) &sa, sizeof sa) == 0)
        {
          close (probe);
          return fail_socket ("serve: another berth serve is listening on %s; stop it or choose another path", path);
        }
      if (probe >= 0)
        close (probe);
      unlink (path);
    }
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return fail_socket ("serve: socket: %s", strerror (errno));
  strcpy (sa.sun_path, path);
  mode_t old = umask (0177);
  int r = bind (fd, (struct sockaddr *) &sa, sizeof sa);
  umask (old);
  if (r < 0 || chmod (path, 0600) < 0 || listen (fd, 16) < 0)
    {
      int e = errno;
      close (fd);
      return fail_socket ("serve: cannot listen on %s: %s", path, strerror (e));
    }
  return fd;
}

static void
accept_client (server *s)
{
  int fd = accept4 (s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0)
    return;
  struct ucred cred;
  socklen_t len = sizeof cred;
  /* the socket is 0600 already; a peer of another user is refused too */
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid () || s->n_clients >= SERVE_MAX_CLIENTS)
    {
      close (fd);
      return;
    }
  add_client (s, fd, fd);
}

/* ---- the loop ---- */

static void
serve_loop (server *s)
{
  struct pollfd *pfd = NULL;
  sexec **px = NULL;
  sproc **pq = NULL;
  size_t cap = 0;
  for (;;)
    {
      /* clients that are done: input ended, nothing running, output sent */
      for (client *c = s->clients, *next; c; c = next)
        {
          next = c->next;
          if (c->eof || s->stop)
            {
              if (client_has_execs (s, c))
                interrupt_client (s, c);
              else if (backlog (c) == 0 || c->dead)
                drop_client (s, c);
            }
        }
      if (s->listen_fd < 0 && s->clients == NULL)
        break; /* stdio: the client went */
      if (s->stop && s->clients == NULL)
        break;

      size_t need = 2 + s->n_clients * 2 + s->n_execs + s->n_procs;
      if (need > cap)
        {
          cap = need * 2;
          pfd = realloc (pfd, cap * sizeof *pfd);
          px = realloc (px, cap * sizeof *px);
          pq = realloc (pq, cap * sizeof *pq);
          if (pfd == NULL || px == NULL || pq == NULL)
            abort ();
        }
      size_t n = 0;
      pfd[n++] = (struct pollfd){ sig_pipe[0], POLLIN, 0 };
      pfd[n++] = (struct pollfd){ s->listen_fd >= 0 && !s->stop ? s->listen_fd : -1, POLLIN, 0 };
      size_t first_exec = n;
      for (sexec *x = s->execs; x; x = x->next)
        if (backlog (x->c) < SERVE_MAX_BACKLOG || x->c->dead)
          {
            px[n] = x;
            pfd[n++] = (struct pollfd){ berth_exec_fd (x->x), POLLIN, 0 };
          }
      size_t first_proc = n;
      for (sproc *p = s->procs; p; p = sproc_next (p))
        if (sproc_fd (p) >= 0 && backlog (sproc_client (p)) < SERVE_MAX_BACKLOG)
          {
            pq[n] = p;
            pfd[n++] = (struct pollfd){ sproc_fd (p), POLLIN, 0 };
          }
      size_t first_client = n;
      for (client *c = s->clients; c; c = c->next)
        {
          bool want_in = !c->eof && !s->stop && backlog (c) < SERVE_MAX_BACKLOG;
          pfd[n++] = (struct pollfd){ want_in ? c->in_fd : -1, POLLIN, 0 };
          pfd[n++] = (struct pollfd){ backlog (c) && !c->dead ? c->out_fd : -1, POLLOUT, 0 };
        }
      if (poll (pfd, (nfds_t) n, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          fprintf (stderr, "berth serve: poll: %s\n", strerror (errno));
          s->stop = true;
          continue;
        }
      if (pfd[0].revents)
        {
          char buf[16];
          while (read (sig_pipe[0], buf, sizeof buf) > 0)
            {
            }
          s->stop = true;
        }
      for (size_t i = first_exec; i < first_proc; i++)
        if (pfd[i].revents)
          step_exec (s, px[i]);
      for (size_t i = first_proc; i < first_client; i++)
        if (pfd[i].revents)
          sproc_step (s, pq[i]);
      /* clients: those polled are in list order, two entries each */
      size_t i = first_client;
      for (client *c = s->clients; c && i < n; c = c->next, i += 2)
        {
          if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
            read_client (s, c);
          if (pfd[i + 1].revents & (POLLERR | POLLHUP))
            c->dead = c->eof = true;
        }
      if (pfd[1].revents & POLLIN)
        accept_client (s);
      for (client *c = s->clients; c; c = c->next)
        flush_client (c);
    }
  free (pfd);
  free (px);
  free (pq);
}

/* New clients are added at the head: the poll entries are built from the
   list after each change, so the order above always matches.  */

static int
serve_main (berth_ctx *ctx, const cli_opts *o, const char *socket_path)
{
  server s = { .ctx = ctx, .listen_fd = -1, .socket_path = socket_path, .tenant = o->tenant, .agent = o->agent };
  struct rlimit rl;
  /* each running execute holds a few fds: allow what the hard limit does */
  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }
  if (pipe2 (sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    return cli_fail ("serve: pipe: %s", strerror (errno));
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
  signal (SIGPIPE, SIG_IGN);
  if (socket_path)
    {
      s.listen_fd = open_socket (socket_path);
      if (s.listen_fd < 0)
        return EXIT_BERTH;
    }
  else
    {
      client *c = add_client (&s, STDIN_FILENO, STDOUT_FILENO);
      c->in_flags = make_nonblocking (STDIN_FILENO);
      c->out_flags = make_nonblocking (STDOUT_FILENO);
    }
  serve_loop (&s);
  if (s.listen_fd >= 0)
    {
      close (s.listen_fd);
      unlink (socket_path);
    }
  close (sig_pipe[0]);
  close (sig_pipe[1]);
  return 0;
}


int
cmd_serve (const cli_opts *o, int argc, char **argv)
{
  const char *path = NULL;
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "serve") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    if (c == CLI_OPT_SOCKET)
      path = g.arg;
  if (c == -2)
    return exit_code;
  if (g.ind < argc)
    return cli_fail ("serve: unexpected argument '%s' (see berth serve --help)", argv[g.ind]);
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  int r = serve_main (ctx, o, path);
  berth_ctx_unref (ctx);
  return r;
}
