/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.c: Docker API bodies with yajl (see json.h).  The only file that
   includes yajl.  */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "json.h"

/* ---- generation ---- */

#define G(call)                     \
  do                                \
    {                               \
      yajl_gen_status s_ = (call);  \
      if (s_ != yajl_gen_status_ok) \
        return gen_error (s_);      \
    }                               \
  while (0)

static int
gen_error (yajl_gen_status s)
{
  return s == yajl_gen_invalid_string ? -EILSEQ : -EINVAL;
}

static yajl_gen_status
gstr (yajl_gen g, const char *s)
{
  return yajl_gen_string (g, (const unsigned char *)s, strlen (s));
}

static yajl_gen_status
gstrn (yajl_gen g, const char *s, size_t n)
{
  return yajl_gen_string (g, (const unsigned char *)s, n);
}

static int
gkv_str (yajl_gen g, const char *k, const char *v)
{
  G (gstr (g, k));
  G (gstr (g, v));
  return 0;
}

static int
gkv_bool (yajl_gen g, const char *k, bool v)
{
  G (gstr (g, k));
  G (yajl_gen_bool (g, v));
  return 0;
}

static int
gkv_int (yajl_gen g, const char *k, long long v)
{
  G (gstr (g, k));
  G (yajl_gen_integer (g, v));
  return 0;
}

static int
gkv_strv (yajl_gen g, const char *k, const char *const *v)
{
  G (gstr (g, k));
  G (yajl_gen_array_open (g));
  for (; v && *v; v++)
    G (gstr (g, *v));
  G (yajl_gen_array_close (g));
  return 0;
}

static yajl_gen
gen_new (void)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g)
    yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  return g;
}

static int
gen_take (yajl_gen g, char **ret, size_t *ret_len)
{
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (g, &buf, &len) != yajl_gen_status_ok)
    return -EINVAL;
  char *s = malloc (len + 1);
  if (!s)
    return -ENOMEM;
  memcpy (s, buf, len);
  s[len] = '\0';
  *ret = s;
  if (ret_len)
    *ret_len = len;
  return 0;
}

#define R(call)        \
  do                   \
    {                  \
      int r_ = (call); \
      if (r_ < 0)      \
        return r_;     \
    }                  \
  while (0)

static int
build_create (yajl_gen g, const docker_create_opts *o)
{
  G (yajl_gen_map_open (g));
  R (gkv_str (g, "Image", o->image));
  R (gkv_strv (g, "Cmd", o->cmd));
  if (o->env)
    {
      G (gstr (g, "Env"));
      G (yajl_gen_array_open (g));
      for (const char *const *e = o->env; *e; e++)
        {
          const char *eq = strchr (*e, '=');
          if (o->redact_env)
            G (gstrn (g, *e, eq ? (size_t)(eq - *e) : strlen (*e)));
          else
            G (gstr (g, *e));
        }
      G (yajl_gen_array_close (g));
    }
  if (o->user)
    R (gkv_str (g, "User", o->user));
  if (o->working_dir)
    R (gkv_str (g, "WorkingDir", o->working_dir));
  G (gstr (g, "Labels"));
  G (yajl_gen_map_open (g));
  for (const char *const *l = o->labels; l && *l; l++)
    {
      const char *eq = strchr (*l, '=');
      if (!eq)
        return -EINVAL;
      G (gstrn (g, *l, (size_t)(eq - *l)));
      G (gstr (g, eq + 1));
    }
  G (yajl_gen_map_close (g));
  R (gkv_bool (g, "AttachStdin", false));
  R (gkv_bool (g, "AttachStdout", false));
  R (gkv_bool (g, "AttachStderr", false));
  R (gkv_bool (g, "OpenStdin", false));
  R (gkv_bool (g, "Tty", false));
  /* sleep under an init: SIGKILL is the only useful stop signal.  */
  R (gkv_str (g, "StopSignal", "SIGKILL"));

  G (gstr (g, "HostConfig"));
  G (yajl_gen_map_open (g));
  if (o->binds && o->binds[0])
    R (gkv_strv (g, "Binds", o->binds));
  G (gstr (g, "Tmpfs"));
  G (yajl_gen_map_open (g));
  R (gkv_str (g, "/tmp", "rw,nosuid,size=512m"));
  R (gkv_str (g, "/var/tmp", "rw,noexec,nosuid,size=256m"));
  R (gkv_str (g, "/run", o->run_exec ? "rw,exec,nosuid,size=64m" : "rw,noexec,nosuid,size=64m"));
  G (yajl_gen_map_close (g));
  static const char *const drop_all[] = { "ALL", NULL };
  R (gkv_strv (g, "CapDrop", drop_all));
  R (gkv_strv (g, "CapAdd", o->cap_add));
  if (o->no_new_privileges)
    {
      static const char *const nnp[] = { "no-new-privileges", NULL };
      R (gkv_strv (g, "SecurityOpt", nnp));
    }
  if (o->pids_limit > 0)
    R (gkv_int (g, "PidsLimit", o->pids_limit));
  if (o->memory > 0)
    R (gkv_int (g, "Memory", o->memory));
  if (o->nano_cpus > 0)
    R (gkv_int (g, "NanoCpus", o->nano_cpus));
  if (o->shm_size > 0)
    R (gkv_int (g, "ShmSize", o->shm_size));
  if (o->network_none)
    R (gkv_str (g, "NetworkMode", "none"));
  if (o->n_ulimits > 0)
    {
      G (gstr (g, "Ulimits"));
      G (yajl_gen_array_open (g));
      for (size_t i = 0; i < o->n_ulimits; i++)
        {
          G (yajl_gen_map_open (g));
          R (gkv_str (g, "Name", o->ulimits[i].name));
          R (gkv_int (g, "Soft", o->ulimits[i].soft));
          R (gkv_int (g, "Hard", o->ulimits[i].hard));
          G (yajl_gen_map_close (g));
        }
      G (yajl_gen_array_close (g));
    }
  R (gkv_bool (g, "Init", o->init));
  R (gkv_bool (g, "AutoRemove", false));
  G (yajl_gen_map_close (g));
  G (yajl_gen_map_close (g));
  return 0;
}

int
docker_json_container_create (const docker_create_opts *o, char **ret, size_t *ret_len)
{
  if (!o->image || !o->cmd)
    return -EINVAL;
  yajl_gen g = gen_new ();
  if (!g)
    return -ENOMEM;
  int r = build_create (g, o);
  if (r == 0)
    r = gen_take (g, ret, ret_len);
  yajl_gen_free (g);
  return r;
}

static int
build_exec (yajl_gen g, const char *const *argv, const char *user, const char *const *env, bool attach_stdin)
{
  G (yajl_gen_map_open (g));
  R (gkv_bool (g, "AttachStdin", attach_stdin));
  R (gkv_bool (g, "AttachStdout", true));
  R (gkv_bool (g, "AttachStderr", true));
  R (gkv_bool (g, "Tty", false));
  R (gkv_bool (g, "Privileged", false));
  if (user && *user)
    R (gkv_str (g, "User", user));
  if (env && env[0])
    R (gkv_strv (g, "Env", env));
  R (gkv_strv (g, "Cmd", argv));
  G (yajl_gen_map_close (g));
  return 0;
}

int
docker_json_exec_create (const char *const *argv, const char *user, const char *const *env, bool attach_stdin, char **ret, size_t *ret_len)
{
  if (!argv || !argv[0])
    return -EINVAL;
  yajl_gen g = gen_new ();
  if (!g)
    return -ENOMEM;
  int r = build_exec (g, argv, user, env, attach_stdin);
  if (r == 0)
    r = gen_take (g, ret, ret_len);
  yajl_gen_free (g);
  return r;
}

static int
build_filters (yajl_gen g, const char *const *labels, const char *status)
{
  G (yajl_gen_map_open (g));
  R (gkv_strv (g, "label", labels));
  if (status)
    {
      const char *const st[] = { status, NULL };
      R (gkv_strv (g, "status", st));
    }
  G (yajl_gen_map_close (g));
  return 0;
}

int
docker_json_filters (const char *const *labels, const char *status, char **ret)
{
  yajl_gen g = gen_new ();
  if (!g)
    return -ENOMEM;
  int r = build_filters (g, labels, status);
  if (r == 0)
    r = gen_take (g, ret, NULL);
  yajl_gen_free (g);
  return r;
}

/* ---- tree parsing ---- */

/* The nesting depth of BODY stays within DOCKER_JSON_MAX_DEPTH.  A cheap
   scan that counts brackets outside strings, before yajl builds a tree
   (8 MiB of '[' would otherwise cost ~660 MB of tree nodes).  It lexes
   strings as yajl does, so up to yajl's first error its depth is yajl's:
   invalid input cannot make it undercount what the tree would hold.  */
static bool
depth_ok (const char *body, size_t len)
{
  unsigned depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      char c = body[i];
      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = false;
        }
      else if (c == '"')
        in_string = true;
      else if (c == '[' || c == '{')
        {
          if (++depth > DOCKER_JSON_MAX_DEPTH)
            return false;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return true;
}

static int
tree_parse (const char *body, size_t len, yajl_val *ret)
{
  if (len > DOCKER_JSON_MAX)
    return -E2BIG;
  if (memchr (body, '\0', len) || !depth_ok (body, len))
    return -EPROTO;
  char *copy = malloc (len + 1);
  if (!copy)
    return -ENOMEM;
  memcpy (copy, body, len);
  copy[len] = '\0';
  yajl_val v = yajl_tree_parse (copy, NULL, 0);
  free (copy);
  if (!v)
    return -EPROTO;
  *ret = v;
  return 0;
}

static const char *
get_str (yajl_val v, const char *const *path)
{
  yajl_val s = yajl_tree_get (v, (const char **)path, yajl_t_string);
  return s ? YAJL_GET_STRING (s) : NULL;
}

static int
dup_opt (const char *s, char **ret)
{
  if (!s)
    {
      *ret = NULL;
      return 0;
    }
  *ret = strdup (s);
  return *ret ? 0 : -ENOMEM;
}

/* One line, at most 512 bytes, control characters replaced.  */
static char *
one_line (const char *s, size_t len)
{
  while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == ' '))
    len--;
  if (len > 512)
    len = 512;
  char *out = malloc (len + 1);
  if (!out)
    return NULL;
  for (size_t i = 0; i < len; i++)
    out[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? ' ' : s[i];
  out[len] = '\0';
  return out;
}

int
docker_json_error_message (const char *body, size_t len, char **ret)
{
  yajl_val v = NULL;
  char *out = NULL;
  if (len > 0 && len <= DOCKER_JSON_MAX && tree_parse (body, len, &v) == 0)
    {
      static const char *const p[] = { "message", NULL };
      const char *m = get_str (v, p);
      if (m)
        out = one_line (m, strlen (m));
      yajl_tree_free (v);
    }
  if (!out)
    {
      size_t n = len > 512 ? 512 : len;
      out = n ? one_line (body, n) : strdup ("(empty reply)");
    }
  if (!out)
    return -ENOMEM;
  *ret = out;
  return 0;
}

int
docker_json_id (const char *body, size_t len, char **ret_id)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const p[] = { "Id", NULL };
  const char *id = get_str (v, p);
  r = -EPROTO;
  if (id && *id && strlen (id) <= 128 && !strchr (id, '/'))
    r = dup_opt (id, ret_id);
  yajl_tree_free (v);
  return r;
}

int
docker_json_version (const char *body, size_t len, char **ret_version, char **ret_api, char **ret_min_api)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const pv[] = { "Version", NULL };
  static const char *const pa[] = { "ApiVersion", NULL };
  static const char *const pm[] = { "MinAPIVersion", NULL };
  const char *ver = get_str (v, pv), *api = get_str (v, pa), *min = get_str (v, pm);
  char *a = NULL, *b = NULL, *c = NULL;
  r = -EPROTO;
  if (api && dup_opt (ver ? ver : "unknown", &a) == 0 && dup_opt (api, &b) == 0 && dup_opt (min, &c) == 0)
    {
      *ret_version = a;
      *ret_api = b;
      *ret_min_api = c;
      a = b = c = NULL;
      r = 0;
    }
  free (a);
  free (b);
  free (c);
  yajl_tree_free (v);
  return r;
}

int
docker_json_container_pid (const char *body, size_t len, int64_t *ret_pid)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const pp[] = { "State", "Pid", NULL };
  yajl_val pid = yajl_tree_get (v, (const char **)pp, yajl_t_any);
  r = pid && YAJL_IS_INTEGER (pid) && YAJL_GET_INTEGER (pid) > 0 ? 0 : -EPROTO;
  if (r == 0)
    *ret_pid = YAJL_GET_INTEGER (pid);
  yajl_tree_free (v);
  return r;
}

int
docker_json_exec_inspect (const char *body, size_t len, bool *ret_running, int *ret_exit_code, int64_t *ret_pid)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const pr[] = { "Running", NULL };
  static const char *const pe[] = { "ExitCode", NULL };
  static const char *const pp[] = { "Pid", NULL };
  yajl_val running = yajl_tree_get (v, (const char **)pr, yajl_t_any);
  yajl_val code = yajl_tree_get (v, (const char **)pe, yajl_t_any);
  yajl_val pid = yajl_tree_get (v, (const char **)pp, yajl_t_any);
  r = -EPROTO;
  if (running && (YAJL_IS_TRUE (running) || YAJL_IS_FALSE (running))
      && (!code || YAJL_IS_NULL (code) || YAJL_IS_INTEGER (code)))
    {
      int ec = -1;
      if (code && YAJL_IS_INTEGER (code))
        {
          long long c = YAJL_GET_INTEGER (code);
          ec = c < 0 || c > 255 ? (int)(c & 0xff) : (int)c;
        }
      *ret_running = YAJL_IS_TRUE (running);
      *ret_exit_code = ec;
      if (ret_pid)
        *ret_pid = pid && YAJL_IS_INTEGER (pid) ? YAJL_GET_INTEGER (pid) : 0;
      r = 0;
    }
  yajl_tree_free (v);
  return r;
}

int
docker_json_info_ncpu (const char *body, size_t len, int64_t *ret_ncpu)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const p[] = { "NCPU", NULL };
  yajl_val n = yajl_tree_get (v, (const char **)p, yajl_t_any);
  *ret_ncpu = n && YAJL_IS_INTEGER (n) && YAJL_GET_INTEGER (n) > 0 ? YAJL_GET_INTEGER (n) : 0;
  yajl_tree_free (v);
  return 0;
}

int
docker_json_image_entrypoint (const char *body, size_t len, char **ret_entrypoint0)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      return -EPROTO;
    }
  static const char *const p[] = { "Config", "Entrypoint", NULL };
  yajl_val e = yajl_tree_get (v, (const char **)p, yajl_t_array);
  const char *first = NULL;
  if (e && YAJL_GET_ARRAY (e)->len > 0 && YAJL_IS_STRING (YAJL_GET_ARRAY (e)->values[0]))
    first = YAJL_GET_STRING (YAJL_GET_ARRAY (e)->values[0]);
  r = dup_opt (first, ret_entrypoint0);
  yajl_tree_free (v);
  return r;
}

int
docker_json_current_context (const char *body, size_t len, char **ret_name)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  if (!YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      return -EPROTO;
    }
  static const char *const p[] = { "currentContext", NULL };
  const char *name = get_str (v, p);
  r = dup_opt (name && *name ? name : NULL, ret_name);
  yajl_tree_free (v);
  return r;
}

int
docker_json_context_endpoint (const char *body, size_t len, char **ret_host, bool *ret_skip_tls_verify)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  static const char *const ph[] = { "Endpoints", "docker", "Host", NULL };
  static const char *const ps[] = { "Endpoints", "docker", "SkipTLSVerify", NULL };
  const char *host = YAJL_IS_OBJECT (v) ? get_str (v, ph) : NULL;
  yajl_val skip = YAJL_IS_OBJECT (v) ? yajl_tree_get (v, (const char **)ps, yajl_t_true) : NULL;
  r = host && *host ? dup_opt (host, ret_host) : -EPROTO;
  if (r >= 0)
    *ret_skip_tls_verify = skip != NULL;
  yajl_tree_free (v);
  return r;
}

void
docker_container_clear (docker_container *c)
{
  free (c->id);
  free (c->state);
  free (c->config);
  free (c->network);
  free (c->finished_at);
  free (c->network_mode);
  memset (c, 0, sizeof *c);
}

void
docker_containers_free (docker_container *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    docker_container_clear (&v[i]);
  free (v);
}

static int
fill_container (yajl_val o, bool inspect, docker_container *c)
{
  static const char *const pid[] = { "Id", NULL };
  static const char *const pstate_l[] = { "State", NULL };
  static const char *const pstate_i[] = { "State", "Status", NULL };
  static const char *const plabel_l[] = { "Labels", "berth.config", NULL };
  static const char *const plabel_i[] = { "Config", "Labels", "berth.config", NULL };
  static const char *const pnetl_l[] = { "Labels", "berth.network", NULL };
  static const char *const pnetl_i[] = { "Config", "Labels", "berth.network", NULL };
  static const char *const pfin[] = { "State", "FinishedAt", NULL };
  static const char *const pnet[] = { "HostConfig", "NetworkMode", NULL };
  static const char *const pcreated[] = { "Created", NULL };
  const char *id = get_str (o, pid);
  const char *state = get_str (o, inspect ? pstate_i : pstate_l);
  if (!id || !*id || strlen (id) > 128 || strchr (id, '/') || !state)
    return -EPROTO;
  memset (c, 0, sizeof *c);
  int r = dup_opt (id, &c->id);
  if (r == 0)
    r = dup_opt (state, &c->state);
  if (r == 0)
    r = dup_opt (get_str (o, inspect ? plabel_i : plabel_l), &c->config);
  if (r == 0)
    r = dup_opt (get_str (o, inspect ? pnetl_i : pnetl_l), &c->network);
  if (r == 0 && inspect)
    r = dup_opt (get_str (o, pfin), &c->finished_at);
  if (r == 0 && inspect)
    r = dup_opt (get_str (o, pnet), &c->network_mode);
  if (r == 0 && !inspect)
    {
      yajl_val cr = yajl_tree_get (o, (const char **)pcreated, yajl_t_any);
      c->created = cr && YAJL_IS_INTEGER (cr) ? YAJL_GET_INTEGER (cr) : 0;
    }
  if (r < 0)
    docker_container_clear (c);
  return r;
}

int
docker_json_container_list (const char *body, size_t len, docker_container **ret, size_t *ret_n)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  if (!YAJL_IS_ARRAY (v))
    {
      yajl_tree_free (v);
      return -EPROTO;
    }
  size_t n = YAJL_GET_ARRAY (v)->len;
  docker_container *out = calloc (n ? n : 1, sizeof *out);
  if (!out)
    {
      yajl_tree_free (v);
      return -ENOMEM;
    }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = YAJL_GET_ARRAY (v)->values[i];
      if (!YAJL_IS_OBJECT (o))
        continue;
      r = fill_container (o, false, &out[k]);
      if (r == -ENOMEM)
        {
          docker_containers_free (out, k);
          yajl_tree_free (v);
          return r;
        }
      if (r == 0)
        k++;
    }
  yajl_tree_free (v);
  *ret = out;
  *ret_n = k;
  return 0;
}

int
docker_json_container_inspect (const char *body, size_t len, docker_container *ret)
{
  yajl_val v;
  int r = tree_parse (body, len, &v);
  if (r < 0)
    return r;
  docker_container c;
  r = YAJL_IS_OBJECT (v) ? fill_container (v, true, &c) : -EPROTO;
  yajl_tree_free (v);
  if (r == 0)
    *ret = c;
  return r;
}

/* ---- the pull stream ---- */

#define RECORD_MAX (64u << 10)
#define FIELD_MAX 1024

enum
{
  KEY_NONE,
  KEY_STATUS,
  KEY_ID,
  KEY_ERROR,
  KEY_ERROR_MESSAGE,
  KEY_CURRENT,
  KEY_TOTAL,
  KEY_MESSAGE,
};

struct docker_stream_parser
{
  yajl_handle h;
  docker_pull_fn fn;
  void *userdata;
  int depth;
  int key;           /* the key of the next value */
  bool in_detail;    /* inside progressDetail (depth 2) */
  bool in_errdetail; /* inside errorDetail (depth 2) */
  size_t record_bytes;
  char status[FIELD_MAX];
  char id[FIELD_MAX];
  char error[FIELD_MAX];
  bool has_status, has_id, has_error;
  int64_t current, total;
};

static void
copy_field (char *dst, const unsigned char *s, size_t len)
{
  if (len >= FIELD_MAX)
    len = FIELD_MAX - 1;
  memcpy (dst, s, len);
  dst[len] = '\0';
}

static void
record_reset (docker_stream_parser *p)
{
  p->has_status = p->has_id = p->has_error = false;
  p->current = p->total = -1;
  p->key = KEY_NONE;
  p->in_detail = p->in_errdetail = false;
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  docker_stream_parser *p = ctx;
  switch (p->key)
    {
    case KEY_STATUS:
      copy_field (p->status, s, len);
      p->has_status = true;
      break;
    case KEY_ID:
      copy_field (p->id, s, len);
      p->has_id = true;
      break;
    case KEY_ERROR:
      if (!p->has_error) /* errorDetail.message wins when both */
        {
          copy_field (p->error, s, len);
          p->has_error = true;
        }
      break;
    case KEY_ERROR_MESSAGE:
      copy_field (p->error, s, len);
      p->has_error = true;
      break;
    case KEY_MESSAGE:
      /* {"message": ...} records (some daemons) are errors too.  */
      if (p->depth == 1)
        {
          copy_field (p->error, s, len);
          p->has_error = true;
        }
      break;
    default:
      break;
    }
  p->key = KEY_NONE;
  return 1;
}

static int
cb_integer (void *ctx, long long v)
{
  docker_stream_parser *p = ctx;
  if (p->key == KEY_CURRENT)
    p->current = v;
  else if (p->key == KEY_TOTAL)
    p->total = v;
  p->key = KEY_NONE;
  return 1;
}

static int
cb_other (void *ctx)
{
  docker_stream_parser *p = ctx;
  p->key = KEY_NONE;
  return 1;
}

static int
cb_bool (void *ctx, int b)
{
  return cb_other (ctx);
}

static int
cb_double (void *ctx, double d)
{
  return cb_other (ctx);
}

static int
cb_map_key (void *ctx, const unsigned char *k, size_t len)
{
  docker_stream_parser *p = ctx;
#define IS(lit) (len == sizeof (lit) - 1 && memcmp (k, lit, len) == 0)
  p->key = KEY_NONE;
  if (p->depth == 1)
    {
      p->in_detail = IS ("progressDetail");
      p->in_errdetail = IS ("errorDetail");
      if (IS ("status"))
        p->key = KEY_STATUS;
      else if (IS ("id"))
        p->key = KEY_ID;
      else if (IS ("error"))
        p->key = KEY_ERROR;
      else if (IS ("message"))
        p->key = KEY_MESSAGE;
    }
  else if (p->depth == 2 && p->in_detail)
    {
      if (IS ("current"))
        p->key = KEY_CURRENT;
      else if (IS ("total"))
        p->key = KEY_TOTAL;
    }
  else if (p->depth == 2 && p->in_errdetail)
    {
      if (IS ("message"))
        p->key = KEY_ERROR_MESSAGE;
    }
#undef IS
  return 1;
}

static int
cb_start_map (void *ctx)
{
  docker_stream_parser *p = ctx;
  if (p->depth == 0)
    record_reset (p);
  if (p->depth >= 32)
    return 0;
  p->depth++;
  p->key = KEY_NONE;
  return 1;
}

static int
cb_end_map (void *ctx)
{
  docker_stream_parser *p = ctx;
  p->depth--;
  if (p->depth == 1)
    p->in_detail = p->in_errdetail = false;
  if (p->depth == 0)
    {
      p->fn (p->userdata, p->has_status ? p->status : NULL, p->has_id ? p->id : NULL, p->current, p->total,
             p->has_error ? p->error : NULL);
      p->record_bytes = 0;
    }
  return 1;
}

static int
cb_start_array (void *ctx)
{
  docker_stream_parser *p = ctx;
  if (p->depth == 0 || p->depth >= 32)
    return 0; /* records are objects */
  p->depth++;
  p->key = KEY_NONE;
  return 1;
}

static int
cb_end_array (void *ctx)
{
  docker_stream_parser *p = ctx;
  p->depth--;
  return 1;
}

static int
cb_null (void *ctx)
{
  docker_stream_parser *p = ctx;
  if (p->depth == 0)
    return 0;
  return cb_other (ctx);
}

static const yajl_callbacks pull_callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_bool,
  .yajl_integer = cb_integer,
  .yajl_double = cb_double,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end_map,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end_array,
};

docker_stream_parser *
docker_pull_parser_new (docker_pull_fn fn, void *userdata)
{
  docker_stream_parser *p = calloc (1, sizeof *p);
  if (!p)
    return NULL;
  p->fn = fn;
  p->userdata = userdata;
  p->h = yajl_alloc (&pull_callbacks, NULL, p);
  if (!p->h)
    {
      free (p);
      return NULL;
    }
  yajl_config (p->h, yajl_allow_multiple_values, 1);
  record_reset (p);
  return p;
}

int
docker_pull_parser_feed (docker_stream_parser *p, const void *data, size_t len)
{
  /* Bound one record: feed in pieces, checking the running size.  */
  const unsigned char *d = data;
  while (len > 0)
    {
      size_t n = len > 4096 ? 4096 : len;
      if (yajl_parse (p->h, d, n) != yajl_status_ok)
        return -EPROTO;
      if (p->depth > 0)
        {
          p->record_bytes += n;
          if (p->record_bytes > RECORD_MAX)
            return -EPROTO;
        }
      else
        p->record_bytes = 0;
      d += n;
      len -= n;
    }
  return 0;
}

int
docker_pull_parser_finish (docker_stream_parser *p)
{
  if (yajl_complete_parse (p->h) != yajl_status_ok)
    return -EPROTO;
  return p->depth == 0 ? 0 : -EPROTO;
}

void
docker_pull_parser_free (docker_stream_parser *p)
{
  if (!p)
    return;
  yajl_free (p->h);
  free (p);
}
