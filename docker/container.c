/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container.c: the environment's long-lived container -- found again by
   label, restarted, recreated, created (pulling the image), removed, and
   garbage-collected.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "docker-private.h"
#include "helpers.h"
#include "json.h"

#define CPU_DEFAULT 1.0
#define MEMORY_MB_DEFAULT 5120
#define PIDS_DEFAULT 256


static int
oom (berth_error **reterr)
{
  return berth_error_errno (reterr, ENOMEM, "out of memory");
}

/* Labels that identify the environment's container (list filters).  */
static char **
identity_labels (const char *env_id)
{
  char *l_env = NULL, *l_uid = NULL;
  char **v = NULL;
  if (asprintf (&l_env, "berth.env=%s", env_id) >= 0 && asprintf (&l_uid, "berth.uid=%u", (unsigned)getuid ()) >= 0)
    v = berth_strv_new ("berth=1", l_env, l_uid, NULL);
  free (l_env);
  free (l_uid);
  return v;
}

static char *
container_name (berth_env *env)
{
  char *s = NULL;
  if (berth_env_is_persistent (env))
    {
      if (asprintf (&s, "berth-%u-%s", (unsigned)getuid (), berth_env_id (env)) < 0)
        return NULL;
    }
  else if (asprintf (&s, "berth-%s", berth_env_id (env)) < 0)
    return NULL;
  return s;
}

/* The state files of a named environment (in its state directory): the
   container's id, and the settings it was created with.  */
#define CONTAINER_FILE "docker-container"
/* Present while the container is stopped by berth_env_stop_idle.  */
#define IDLE_FILE "docker-idle"
#define SETTINGS_FILE "docker-settings"

static bool
image_ref_ok (const char *ref)
{
  if (!ref || !*ref || strlen (ref) > 512)
    return false;
  for (const char *p = ref; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr ("._:/@-", *p)))
      return false;
  return true;
}

/* ---- images ---- */

typedef struct pull_state
{
  berth_env *env; /* for the log lines of a pull on first use, or NULL */
  berth_pull_fn fn; /* berth pull's progress, or NULL */
  void *userdata;
  const char *image;
  docker_stream_parser *parser;
  char error[1024];
  uint64_t last_log;
  int64_t layers_done;
} pull_state;

static void
pull_record (void *userdata, const char *status, const char *id, int64_t current, int64_t total, const char *error)
{
  pull_state *ps = userdata;
  if (error)
    {
      if (!ps->error[0])
        snprintf (ps->error, sizeof ps->error, "%s", error);
      return;
    }
  if (ps->fn && status)
    {
      berth_pull_event ev = { .size = sizeof ev, .layer = id, .status = status, .current = current, .total = total };
      ps->fn (ps->userdata, &ev);
    }
  if (!ps->env || !status)
    return;
  if (strcmp (status, "Pull complete") == 0)
    ps->layers_done++;
  uint64_t now = berth_monotonic_usec () / 1000;
  bool final = strncmp (status, "Status:", 7) == 0 || strncmp (status, "Digest:", 7) == 0;
  if (!final && now - ps->last_log < 1000)
    return;
  ps->last_log = now;
  if (current >= 0 && total > 0)
    berth_logf (ps->env, BERTH_LOG_INFO, "pulling %s: %s %s %.1f/%.1f MB", ps->image, status, id ? id : "",
                (double)current / 1e6, (double)total / 1e6);
  else
    berth_logf (ps->env, BERTH_LOG_INFO, "pulling %s: %s%s%s", ps->image, status, id ? " " : "", id ? id : "");
}

static int
pull_chunk (void *userdata, const char *data, size_t len)
{
  pull_state *ps = userdata;
  return docker_pull_parser_feed (ps->parser, data, len) < 0 ? -EPROTO : 0;
}

static int
image_pull (berth_env *env, docker_client *c, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  _cleanup_free_ char *repo = NULL, *tag = NULL, *erepo = NULL, *etag = NULL, *path = NULL;
  if (docker_image_split (image, &repo, &tag) < 0)
    return berth_error_set (reterr, -BERTH_E_CONFIG, "invalid image reference '%s'", image);
  erepo = docker_url_escape (repo);
  etag = tag ? docker_url_escape (tag) : NULL;
  if (!erepo || (tag && !etag))
    return oom (reterr);
  if (asprintf (&path, "/images/create?fromImage=%s%s%s", erepo, etag ? "&tag=" : "", etag ? etag : "") < 0)
    return oom (reterr);
  pull_state ps = { .env = env, .fn = fn, .userdata = userdata, .image = image };
  ps.parser = docker_pull_parser_new (pull_record, &ps);
  if (!ps.parser)
    return oom (reterr);
  if (env)
    berth_logf (env, BERTH_LOG_INFO, "image %s is not present: pulling it", image);
  docker_response resp = { 0 };
  int r = docker_request_stream (c, "POST", path, NULL, pull_chunk, &ps, &resp, reterr);
  if (r == -EPROTO)
    r = berth_error_set (reterr, -BERTH_E_PROTOCOL, "pulling %s: the engine's progress stream could not be parsed", image);
  if (r >= 0 && resp.status == 200 && docker_pull_parser_finish (ps.parser) < 0 && !ps.error[0])
    r = berth_error_set (reterr, -BERTH_E_PROTOCOL, "pulling %s: the progress stream ended in the middle of a record", image);
  docker_pull_parser_free (ps.parser);
  if (r < 0)
    {
      docker_response_clear (&resp);
      return r;
    }
  if (resp.status != 200 || ps.error[0])
    {
      _cleanup_free_ char *msg = resp.status != 200 ? docker_response_message (&resp) : NULL;
      const char *m = msg ? msg : ps.error;
      long st = resp.status;
      docker_response_clear (&resp);
      /* Tell "no such image" from "registry unreachable".  */
      bool unreachable = strstr (m, "dial tcp") || strstr (m, "connection refused") || strstr (m, "no such host")
                         || strstr (m, "i/o timeout") || strstr (m, "TLS handshake") || strstr (m, "server gave HTTP response")
                         || strstr (m, "network is unreachable") || strstr (m, "Client.Timeout");
      if (unreachable)
        return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "cannot pull image %s: the registry is unreachable (%s): check the network or the registry address", image, m);
      if (st == 404 || strstr (m, "not found") || strstr (m, "manifest unknown") || strstr (m, "does not exist")
          || strstr (m, "pull access denied"))
        return berth_error_set (reterr, -BERTH_E_CONFIG, "no such image %s (%s): check %s", image, m,
                                env ? "terminal.docker_image" : "the image's name, tag and registry");
      return berth_error_set (reterr, -BERTH_E_BACKEND, "cannot pull image %s: %s", image, m);
    }
  docker_response_clear (&resp);
  if (env)
    berth_logf (env, BERTH_LOG_INFO, "pulled %s", image);
  return 0;
}

int
docker_image_ensure (berth_env *env, docker_client *c, const char *image, char **ret_entrypoint0, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  if (!image_ref_ok (image))
    return berth_error_set (reterr, -BERTH_E_CONFIG, "invalid image reference '%s' (terminal.docker_image)", image);
  if (asprintf (&path, "/images/%s/json", image) < 0)
    return oom (reterr);
  for (int attempt = 0; attempt < 2; attempt++)
    {
      docker_response resp = { 0 };
      int r = docker_request (c, "GET", path, NULL, DOCKER_SMALL_BODY * 4, &resp, reterr);
      if (r < 0)
        return r;
      if (resp.status == 200)
        {
          char *ep = NULL;
          r = docker_json_image_entrypoint (resp.body, resp.len, &ep);
          docker_response_clear (&resp);
          if (r < 0)
            return berth_error_set (reterr, -BERTH_E_PROTOCOL, "cannot parse the engine's description of image %s", image);
          if (ret_entrypoint0)
            *ret_entrypoint0 = ep;
          else
            free (ep);
          return 0;
        }
      if (resp.status != 404 || attempt > 0)
        {
          _cleanup_free_ char *m = docker_response_message (&resp);
          long st = resp.status;
          docker_response_clear (&resp);
          return berth_error_set (reterr, -BERTH_E_BACKEND, "image %s: the engine answered HTTP %ld: %s", image, st, m ? m : "?");
        }
      docker_response_clear (&resp);
      r = image_pull (env, c, image, NULL, NULL, reterr);
      if (r < 0)
        return r;
    }
  return berth_error_set (reterr, -BERTH_E_BACKEND, "image %s is still missing after the pull", image);
}

int
docker_pull (const berth_config *cfg, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  (void)cfg;
  if (!image_ref_ok (image))
    return berth_error_set (reterr, -BERTH_E_CONFIG, "invalid image reference '%s'", image);
  docker_client *c = NULL;
  int r = docker_client_new (&c, reterr);
  if (r < 0)
    return r;
  /* a pull may take long: no overall timeout (docker_request_stream) */
  r = image_pull (NULL, c, image, fn, userdata, reterr);
  docker_client_free (c);
  return r;
}

/* ---- configuration ---- */

char **
docker_forward_env (const berth_config *cfg)
{
  _cleanup_strv_free_ char **names = berth_config_strv (cfg, "terminal.docker_forward_env");
  char **out = berth_strv_new (NULL, NULL);
  if (!out)
    return NULL;
  for (size_t i = 0; names && names[i]; i++)
    {
      const char *v = docker_env_name_valid (names[i], strlen (names[i])) ? getenv (names[i]) : NULL;
      char *kv = NULL;
      if (!v)
        continue;
      if (asprintf (&kv, "%s=%s", names[i], v) < 0 || berth_strv_push (&out, kv) < 0)
        {
          free (kv);
          return berth_strv_free (out);
        }
      free (kv);
    }
  return out;
}

bool
docker_mounts_host_paths (const berth_config *cfg)
{
  _cleanup_strv_free_ char **vols = berth_config_strv (cfg, "terminal.docker_volumes");
  for (size_t i = 0; vols && vols[i]; i++)
    if (strchr (vols[i], ':'))
      return true;
  return berth_config_bool (cfg, "terminal.docker_mount_cwd_to_workspace", false);
}

typedef struct create_spec
{
  char *image;
  char **env;
  char **binds;
  char **labels;
  char *user;
  char *settings; /* "terminal.KEY=VALUE" lines: what needs a new container */
  docker_ulimit ulimits[16];
  docker_create_opts o;
} create_spec;

static void
create_spec_free (create_spec *s)
{
  free (s->image);
  berth_strv_free (s->env);
  berth_strv_free (s->binds);
  berth_strv_free (s->labels);
  free (s->user);
  free (s->settings);
}

static int
ulimit_set (create_spec *s, const char *name, int64_t soft, int64_t hard)
{
  size_t i;
  for (i = 0; i < s->o.n_ulimits; i++)
    if (strcmp (s->ulimits[i].name, name) == 0)
      break;
  if (i == sizeof s->ulimits / sizeof s->ulimits[0])
    return -E2BIG;
  snprintf (s->ulimits[i].name, sizeof s->ulimits[i].name, "%s", name);
  s->ulimits[i].soft = soft;
  s->ulimits[i].hard = hard;
  if (i == s->o.n_ulimits)
    s->o.n_ulimits++;
  return 0;
}

static int64_t
rlim_value (rlim_t v)
{
  return v == RLIM_INFINITY || v > (rlim_t)INT64_MAX ? -1 : (int64_t)v;
}

static void
ulimit_text (char *buf, size_t size, int64_t v)
{
  if (v < 0)
    snprintf (buf, size, "unlimited");
  else
    snprintf (buf, size, "%lld", (long long)v);
}

/* HostConfig.Ulimits.  An engine applies its own defaults otherwise, and
   Podman's (nofile and nproc 1048576 and more) exceed the hard limits of
   many machines: its containers then fail to start ("error setting rlimit
   type 7: operation not permitted").  By default nofile and nproc are this
   process's own limits capped at 65536 and 32768: what an engine started
   next to it can grant, and plenty under the default pids limit.
   terminal.docker_ulimits (NAME: SOFT[:HARD]) sets any of them, capped
   like the defaults at this process's hard limit of the resource (a
   warning names the key when a value is lowered): above it Podman cannot
   start the container.  The configured ones, as written, go into
   *RET_RECORD ("name=soft:hard ...", in the order given) for the settings
   record; the defaults and the caps, which follow the shell berth happens
   to run in, do not.  */
static int
ulimits_init (berth_env *env, const berth_config *cfg, create_spec *s, char **ret_record, berth_error **reterr)
{
  static const struct
  {
    const char *name;
    int resource;
    int64_t cap;
  } defaults[] = { { "nofile", RLIMIT_NOFILE, 65536 }, { "nproc", RLIMIT_NPROC, 32768 } };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
    {
      struct rlimit rl;
      if (getrlimit (defaults[i].resource, &rl) < 0)
        continue;
      int64_t soft = rlim_value (rl.rlim_cur), hard = rlim_value (rl.rlim_max), cap = defaults[i].cap;
      if (hard < 0 || hard > cap)
        hard = cap;
      if (soft < 0 || soft > hard)
        soft = hard;
      (void)ulimit_set (s, defaults[i].name, soft, hard);
    }
  _cleanup_strv_free_ char **conf = berth_config_strv (cfg, "terminal.docker_ulimits");
  _cleanup_free_ char *joined = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&joined, &size);
  if (!f)
    return oom (reterr);
  for (size_t i = 0; conf && conf[i]; i++)
    {
      char *eq = strchr (conf[i], '=');
      int64_t soft, hard;
      if (eq)
        *eq = '\0';
      if (!eq || docker_ulimit_resource (conf[i]) < 0)
        {
          fclose (f);
          return berth_error_set (reterr, -BERTH_E_CONFIG,
                                  "terminal.docker_ulimits: '%s' is not a ulimit name (core, cpu, data, fsize, locks, memlock, msgqueue, nice, "
                                  "nofile, nproc, rss, rtprio, rttime, sigpending, stack)",
                                  conf[i]);
        }
      if (docker_ulimit_parse (eq + 1, &soft, &hard) < 0)
        {
          fclose (f);
          return berth_error_set (reterr, -BERTH_E_CONFIG,
                                  "terminal.docker_ulimits: %s: '%s' is not SOFT[:HARD] (integers or unlimited, soft <= hard), like 1024:4096",
                                  conf[i], eq + 1);
        }
      int64_t csoft = soft, chard = hard;
      struct rlimit rl;
      if (getrlimit (docker_ulimit_resource (conf[i]), &rl) == 0 && docker_ulimit_cap (&csoft, &chard, rlim_value (rl.rlim_max)))
        {
          char was_s[24], was_h[24];
          ulimit_text (was_s, sizeof was_s, soft);
          ulimit_text (was_h, sizeof was_h, hard);
          berth_logf (env, BERTH_LOG_WARNING,
                      "terminal.docker_ulimits: %s: %s:%s lowered to %lld:%lld, berth's own hard limit (an engine may not grant more: Podman then cannot start the container)",
                      conf[i], was_s, was_h, (long long)csoft, (long long)chard);
        }
      if (ulimit_set (s, conf[i], csoft, chard) < 0)
        {
          fclose (f);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "terminal.docker_ulimits: too many entries");
        }
      fprintf (f, "%s%s=%lld:%lld", i ? " " : "", conf[i], (long long)soft, (long long)hard);
    }
  if (fclose (f) != 0)
    return oom (reterr);
  *ret_record = joined;
  joined = NULL;
  return 0;
}

static const char *const cmd_sleep[] = { "sleep", "infinity", NULL };
static const char *const caps_all[] = { "DAC_OVERRIDE", "CHOWN", "FOWNER", "SETUID", "SETGID", NULL };
static const char *const caps_host_user[] = { "DAC_OVERRIDE", "CHOWN", "FOWNER", NULL };

static int
create_spec_init (berth_env *env, create_spec *s, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  const char *image = berth_env_image (env);
  if (!image || !*image)
    image = berth_config_string (cfg, "terminal.docker_image", DOCKER_DEFAULT_IMAGE);
  if (!image || !*image)
    image = DOCKER_DEFAULT_IMAGE;
  memset (s, 0, sizeof *s);
  s->image = strdup (image);
  s->env = berth_strv_new (NULL, NULL);
  s->binds = berth_strv_new (NULL, NULL);
  if (!s->image || !s->env || !s->binds)
    return oom (reterr);

  /* docker_env: literal values from the configuration, set on the
     container.  Secrets belong in docker_forward_env, which goes only into
     each exec's body (never into `docker inspect`).  */
  _cleanup_strv_free_ char **denv = berth_config_strv (cfg, "terminal.docker_env");
  for (size_t i = 0; denv && denv[i]; i++)
    {
      const char *eq = strchr (denv[i], '=');
      size_t n = eq ? (size_t)(eq - denv[i]) : strlen (denv[i]);
      if (!eq || !docker_env_name_valid (denv[i], n))
        {
          berth_logf (env, BERTH_LOG_WARNING, "terminal.docker_env: ignoring an entry whose name is not a valid variable name");
          continue;
        }
      if (berth_strv_push (&s->env, denv[i]) < 0)
        return oom (reterr);
    }

  _cleanup_strv_free_ char **vols = berth_config_strv (berth_env_config (env), "terminal.docker_volumes");
  for (size_t i = 0; vols && vols[i]; i++)
    {
      if (!strchr (vols[i], ':') || vols[i][0] != '/')
        {
          berth_logf (env, BERTH_LOG_WARNING, "terminal.docker_volumes: ignoring '%s' (expected /host/path:/container/path[:ro])", vols[i]);
          continue;
        }
      if (berth_strv_push (&s->binds, vols[i]) < 0)
        return oom (reterr);
    }
  bool mount_cwd = berth_config_bool (cfg, "terminal.docker_mount_cwd_to_workspace", false);
  if (mount_cwd)
    {
      _cleanup_free_ char *cwd = getcwd (NULL, 0);
      _cleanup_free_ char *b = NULL;
      if (cwd && asprintf (&b, "%s:/workspace", cwd) >= 0 && berth_strv_push (&s->binds, b) < 0)
        return oom (reterr);
    }

  bool host_user = berth_config_bool (cfg, "terminal.docker_run_as_host_user", false);
  bool snap = berth_config_bool (cfg, "terminal.docker_snap_compat", false);
  if (host_user && asprintf (&s->user, "%u:%u", (unsigned)getuid (), (unsigned)getgid ()) < 0)
    return oom (reterr);

  double cpu = berth_config_double (cfg, "terminal.container_cpu", CPU_DEFAULT);
  int64_t mem_mb = berth_config_int (cfg, "terminal.container_memory", MEMORY_MB_DEFAULT);
  int64_t shm = 0;
  const char *shm_s = berth_config_string (cfg, "terminal.docker_shm_size", "1g");
  if (docker_parse_size (shm_s, &shm) < 0)
    return berth_error_set (reterr, -BERTH_E_CONFIG, "terminal.docker_shm_size: '%s' is not a size (like 1g or 512m)", shm_s);

  s->o = (docker_create_opts){
    .image = s->image,
    .cmd = cmd_sleep,
    .env = (const char *const *)s->env,
    .binds = (const char *const *)s->binds,
    .cap_add = host_user ? caps_host_user : caps_all,
    .user = s->user,
    .init = !snap,
    .no_new_privileges = !snap,
    /* a hosted agent's sandbox is off the network unless configured */
    .network_none = !berth_config_bool (cfg, "terminal.docker_network", !berth_env_is_hosted (env)),
    .pids_limit = berth_config_int (cfg, "terminal.docker_pids_limit", PIDS_DEFAULT),
    .memory = mem_mb > 0 ? (mem_mb < 6 ? 6 : mem_mb) * 1024 * 1024 : 0,
    .nano_cpus = cpu > 0 ? (int64_t)(cpu * 1e9) : 0,
    .shm_size = shm,
  };
  _cleanup_free_ char *ulimits_rec = NULL;
  int r = ulimits_init (env, cfg, s, &ulimits_rec, reterr);
  if (r < 0)
    return r;
  s->o.ulimits = s->ulimits;

  /* By the keys a user sets; secrets (docker_env values) only as a digest,
     the cwd of docker_mount_cwd_to_workspace not at all (it is where the
     caller happens to be).  */
  {
    size_t size = 0;
    char env_digest[17];
    _cleanup_free_ char *env_joined = berth_shell_join ((const char *const *)s->env);
    _cleanup_free_ char *vols_joined = vols ? berth_shell_join ((const char *const *)vols) : strdup ("");
    FILE *f = open_memstream (&s->settings, &size);
    if (f == NULL || env_joined == NULL || vols_joined == NULL)
      {
        if (f)
          fclose (f);
        return oom (reterr);
      }
    docker_digest (env_joined, strlen (env_joined), env_digest);
    fprintf (f, "terminal.docker_image=%s\n", s->image);
    fprintf (f, "terminal.container_memory=%lld\n", (long long)mem_mb);
    fprintf (f, "terminal.container_cpu=%g\n", cpu);
    fprintf (f, "terminal.docker_network=%s\n", s->o.network_none ? "false" : "true");
    fprintf (f, "terminal.docker_pids_limit=%lld\n", (long long)s->o.pids_limit);
    fprintf (f, "terminal.docker_shm_size=%lld\n", (long long)shm);
    fprintf (f, "terminal.docker_run_as_host_user=%s\n", host_user ? "true" : "false");
    fprintf (f, "terminal.docker_snap_compat=%s\n", snap ? "true" : "false");
    fprintf (f, "terminal.docker_mount_cwd_to_workspace=%s\n", mount_cwd ? "true" : "false");
    fprintf (f, "terminal.docker_volumes=%s\n", vols_joined);
    fprintf (f, "terminal.docker_env=%s\n", *env_joined ? env_digest : "");
    /* only when set: a container made before the key existed agrees */
    if (*ulimits_rec)
      fprintf (f, "terminal.docker_ulimits=%s\n", ulimits_rec);
    if (fclose (f) != 0)
      return oom (reterr);
  }
  return 0;
}

/* The labels, including berth.config = digest of everything else.  */
static int
create_spec_labels (berth_env *env, create_spec *s, char digest[17], berth_error **reterr)
{
  _cleanup_free_ char *body = NULL;
  size_t len;
  int r_;
  s->o.labels = NULL;
  /* without the ulimits: the settings record has the configured ones */
  size_t n_ulimits = s->o.n_ulimits;
  s->o.n_ulimits = 0;
  r_ = docker_json_container_create (&s->o, &body, &len);
  s->o.n_ulimits = n_ulimits;
  if (r_ < 0)
    return berth_error_set (reterr, -BERTH_E_CONFIG, "terminal.docker_*: a value is not valid UTF-8");
  docker_digest (body, len, digest);
  s->labels = identity_labels (berth_env_id (env));
  _cleanup_free_ char *task = docker_label_sanitize (berth_env_task_id (env));
  _cleanup_free_ char *l_task = NULL, *l_cfg = NULL;
  if (!s->labels || !task || asprintf (&l_task, "berth.task=%s", task) < 0 || asprintf (&l_cfg, "berth.config=%s", digest) < 0
      || berth_strv_push (&s->labels, l_task) < 0 || berth_strv_push (&s->labels, l_cfg) < 0
      || berth_strv_push (&s->labels, berth_env_is_persistent (env) ? "berth.persistent=1" : "berth.persistent=0") < 0
      || berth_strv_push (&s->labels, s->o.network_none ? "berth.network=none" : "berth.network=default") < 0)
    return oom (reterr);
  s->o.labels = (const char *const *)s->labels;
  return 0;
}

/* ---- containers ---- */

/* Find the environment's container: 1 found, 0 none.  */
static int
container_find (docker_client *c, const char *env_id, docker_container *ret, berth_error **reterr)
{
  _cleanup_strv_free_ char **labels = identity_labels (env_id);
  _cleanup_free_ char *filters = NULL, *esc = NULL, *path = NULL;
  if (!labels || docker_json_filters ((const char *const *)labels, NULL, &filters) < 0 || !(esc = docker_url_escape (filters))
      || asprintf (&path, "/containers/json?all=1&filters=%s", esc) < 0)
    return oom (reterr);
  docker_response resp = { 0 };
  int r = docker_request (c, "GET", path, NULL, DOCKER_SMALL_BODY * 8, &resp, reterr);
  if (r < 0)
    return r;
  if (resp.status != 200)
    {
      _cleanup_free_ char *m = docker_response_message (&resp);
      docker_response_clear (&resp);
      return berth_error_set (reterr, -BERTH_E_BACKEND, "listing containers failed: %s", m ? m : "?");
    }
  docker_container *v = NULL;
  size_t n = 0;
  r = docker_json_container_list (resp.body, resp.len, &v, &n);
  docker_response_clear (&resp);
  if (r < 0)
    return berth_error_set (reterr, -BERTH_E_PROTOCOL, "cannot parse the engine's container list");
  /* Prefer a running one; there should be only one.  */
  size_t pick = n;
  for (size_t i = 0; i < n; i++)
    if (pick == n || strcmp (v[i].state, "running") == 0)
      pick = i;
  if (pick == n)
    {
      docker_containers_free (v, n);
      return 0;
    }
  *ret = v[pick];
  memset (&v[pick], 0, sizeof v[pick]);
  docker_containers_free (v, n);
  return 1;
}

static int
container_start (docker_client *c, const char *id, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  if (asprintf (&path, "/containers/%s/start", id) < 0)
    return oom (reterr);
  docker_response resp = { 0 };
  int r = docker_request (c, "POST", path, NULL, DOCKER_SMALL_BODY, &resp, reterr);
  if (r < 0)
    return r;
  if (resp.status == 204 || resp.status == 304)
    {
      docker_response_clear (&resp);
      return 0;
    }
  _cleanup_free_ char *m = docker_response_message (&resp);
  long st = resp.status;
  docker_response_clear (&resp);
  if (m && (strstr (m, "catatonit") || strstr (m, "init binary")))
    return berth_error_set (reterr, -BERTH_E_UNAVAILABLE,
                            "starting the container failed: %s: the engine has no init for the container (Podman: install catatonit "
                            "where it runs, apt install catatonit), or set terminal.docker_snap_compat: true",
                            m);
  if (m && strstr (m, "rlimit"))
    return berth_error_set (reterr, -BERTH_E_CONFIG,
                            "starting the container failed: %s: the engine cannot grant the container's ulimits: lower them with "
                            "terminal.docker_ulimits (e.g. nofile: 1024:4096)",
                            m);
  return berth_error_set (reterr, st == 404 ? -ENOENT : -BERTH_E_BACKEND, "starting the container failed: %s", m ? m : "?");
}

static int
container_remove (docker_client *c, const char *id, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  if (asprintf (&path, "/containers/%s?force=1&v=1", id) < 0)
    return oom (reterr);
  docker_response resp = { 0 };
  int r = docker_request (c, "DELETE", path, NULL, DOCKER_SMALL_BODY, &resp, reterr);
  if (r < 0)
    return r;
  long st = resp.status;
  if (st == 204 || st == 404 || st == 200)
    {
      docker_response_clear (&resp);
      return st == 404 ? 0 : 1;
    }
  _cleanup_free_ char *m = docker_response_message (&resp);
  docker_response_clear (&resp);
  /* 409 "removal already in progress" is as good as done.  */
  if (st == 409 && m && strstr (m, "already in progress"))
    return 1;
  return berth_error_set (reterr, -BERTH_E_BACKEND, "removing container %.12s failed: %s", id, m ? m : "?");
}

static int
daemon_ncpu (docker_client *c, int64_t *ret)
{
  docker_response resp = { 0 };
  *ret = 0;
  if (docker_request (c, "GET", "/info", NULL, DOCKER_SMALL_BODY * 4, &resp, NULL) < 0)
    return 0;
  if (resp.status == 200)
    docker_json_info_ncpu (resp.body, resp.len, ret);
  docker_response_clear (&resp);
  return 0;
}

static int
container_create (berth_env *env, docker_env_data *d, create_spec *s, char **ret_id, berth_error **reterr)
{
  docker_client *c = d->client;
  _cleanup_free_ char *entry = NULL, *name = NULL, *path = NULL, *body = NULL, *id = NULL;
  int r = docker_image_ensure (env, c, s->image, &entry, reterr);
  if (r < 0)
    return r;
  /* s6-overlay images run their own init on /run.  */
  if (entry && (strcmp (entry, "/init") == 0 || strcmp (entry, "/package/admin/s6-overlay/command/init") == 0))
    {
      s->o.init = false;
      s->o.run_exec = true;
    }
  /* More than one CPU asked: the engine refuses more than it has.  */
  int64_t ncpu = 0;
  if (s->o.nano_cpus > 1000000000LL)
    daemon_ncpu (c, &ncpu);
  if (ncpu > 0 && s->o.nano_cpus > ncpu * 1000000000LL)
    s->o.nano_cpus = ncpu * 1000000000LL;
  name = container_name (env);
  if (!name || docker_json_container_create (&s->o, &body, NULL) < 0 || asprintf (&path, "/containers/create?name=%s", name) < 0)
    return oom (reterr);
  docker_response resp = { 0 };
  r = docker_request (c, "POST", path, body, DOCKER_SMALL_BODY, &resp, reterr);
  if (r < 0)
    return r;
  if (resp.status == 409)
    {
      /* The name is taken: another process created it a moment ago, or a
         leftover with that name.  */
      docker_response_clear (&resp);
      docker_container found;
      r = container_find (c, berth_env_id (env), &found, reterr);
      if (r < 0)
        return r;
      if (r == 0)
        return berth_error_set (reterr, -BERTH_E_BACKEND, "a container named %s exists but is not berth's: remove it (docker rm -f %s)", name, name);
      r = container_start (c, found.id, reterr);
      if (r >= 0)
        {
          *ret_id = found.id;
          found.id = NULL;
        }
      docker_container_clear (&found);
      return r;
    }
  if (resp.status != 201 || docker_json_id (resp.body, resp.len, &id) < 0)
    {
      _cleanup_free_ char *m = docker_response_message (&resp);
      long st = resp.status;
      docker_response_clear (&resp);
      if (m && (strstr (m, "catatonit") || strstr (m, "init binary")))
        return berth_error_set (reterr, -BERTH_E_UNAVAILABLE,
                                "creating the container failed: %s: the engine has no init for the container (Podman: install "
                                "catatonit where it runs, apt install catatonit), or set terminal.docker_snap_compat: true",
                                m);
      return berth_error_set (reterr, -BERTH_E_BACKEND, "creating the container failed (HTTP %ld): %s", st, m ? m : "?");
    }
  docker_response_clear (&resp);
  r = container_start (c, id, reterr);
  if (r < 0)
    {
      container_remove (c, id, NULL);
      return r;
    }
  *ret_id = id;
  id = NULL;
  return 0;
}

static void
remember (berth_env *env, const char *id)
{
  if (!berth_env_is_persistent (env))
    return;
  int r = berth_env_state_write (env, CONTAINER_FILE, id, strlen (id));
  if (r < 0)
    berth_logf (env, BERTH_LOG_DEBUG, "cannot record the container id in %s: %s", CONTAINER_FILE, strerror (-r));
}

/* The settings a named environment's container was created with
   (SETTINGS_FILE in its state directory), or NULL.  */
static char *
recorded_settings (berth_env *env)
{
  char *rec = NULL;
  if (berth_env_state_read (env, SETTINGS_FILE, &rec) <= 0)
    {
      free (rec);
      return NULL;
    }
  return rec;
}

static void
record_settings (berth_env *env, const char *settings)
{
  if (!berth_env_is_persistent (env))
    return;
  int r = berth_env_state_write (env, SETTINGS_FILE, settings, strlen (settings));
  if (r < 0)
    berth_logf (env, BERTH_LOG_WARNING, "cannot record the container's settings in %s: %s", SETTINGS_FILE, strerror (-r));
}

/* A named environment's container is kept with the settings it was made
   with: one that needs a new container is refused, never applied by
   destroying the container's files behind the user's back, nor ignored.
   FOUND_NETWORK is the container's network mode, DIGEST_MATCHES whether
   its berth.config label agrees (for containers older than the record).  */
static int
check_settings (berth_env *env, const create_spec *s, const char *found_network, bool digest_matches, berth_error **reterr)
{
  _cleanup_free_ char *rec = recorded_settings (env);
  _cleanup_free_ char *changes = rec ? docker_settings_changes (rec, s->settings) : NULL;
  const char *id = berth_env_id (env);
  if (rec == NULL && s->o.network_none && (!found_network || strcmp (found_network, "none") != 0))
    changes = strdup ("terminal.docker_network: true -> false");
  else if (rec == NULL && !digest_matches)
    changes = strdup ("terminal.docker_* or the image");
  if (changes == NULL)
    {
      if (rec == NULL)
        record_settings (env, s->settings);
      return 0;
    }
  return berth_error_set (reterr, -BERTH_E_ENV,
                          "environment %s was created with other settings (%s): `berth rm %s` applies them (its container and "
                          "the files in it go), or restore the old values",
                          id, changes, id);
}

static bool
remembered (berth_env *env)
{
  return berth_env_is_persistent (env) && berth_env_state_read (env, CONTAINER_FILE, NULL) >= 0;
}

int
docker_container_ensure (berth_env *env, docker_env_data *d, berth_error **reterr)
{
  docker_client *c = d->client;
  bool had = d->container != NULL || remembered (env);
  create_spec s;
  char digest[17];
  int r = create_spec_init (env, &s, reterr);
  if (r >= 0)
    r = create_spec_labels (env, &s, digest, reterr);
  if (r < 0)
    {
      create_spec_free (&s);
      return r;
    }

  /* A named environment whose serving agent runs in the container it
     recorded (agent-socket.c): that container runs, with these settings;
     no engine call (libcurl is not even loaded).  */
  if (berth_env_is_persistent (env) && d->container == NULL && berth_env_state_read (env, IDLE_FILE, NULL) < 0)
    {
      _cleanup_free_ char *rec = recorded_settings (env), *changes = NULL, *id = NULL;
      if (rec && (changes = docker_settings_changes (rec, s.settings)) == NULL && berth_env_state_read (env, CONTAINER_FILE, &id) > 0
          && docker_agent_container_runs (env, d, id))
        {
          d->container = id;
          id = NULL;
          create_spec_free (&s);
          return 0;
        }
    }

  /* A throw-away environment's first container needs no lookup.  */
  if (had || berth_env_is_persistent (env))
    {
      docker_container found;
      r = container_find (c, berth_env_id (env), &found, reterr);
      if (r < 0)
        {
          create_spec_free (&s);
          return r;
        }
      if (r > 0)
        {
          bool keep = true;
          if (berth_env_is_persistent (env)
              && (r = check_settings (env, &s, found.network, found.config && strcmp (found.config, digest) == 0, reterr)) < 0)
            {
              docker_container_clear (&found);
              create_spec_free (&s);
              return r;
            }
          if (keep && strcmp (found.state, "running") != 0)
            {
              berth_error *err = NULL;
              berth_logf (env, BERTH_LOG_INFO, "container %.12s is %s: starting it", found.id, found.state);
              bool idle = berth_env_state_read (env, IDLE_FILE, NULL) >= 0;
              if (container_start (c, found.id, &err) < 0)
                {
                  berth_logf (env, BERTH_LOG_WARNING, "%s: replacing the container", berth_error_message (err));
                  keep = false;
                }
              else if (!idle)
                berth_env_mark_recreated (env); /* it stopped by itself: its processes are gone */
              berth_error_free (err);
            }
          (void) berth_env_state_remove (env, IDLE_FILE);
          if (keep)
            {
              free (d->container);
              d->container = found.id;
              found.id = NULL;
              docker_container_clear (&found);
              remember (env, d->container);
              create_spec_free (&s);
              return 0;
            }
          r = container_remove (c, found.id, reterr);
          docker_container_clear (&found);
          if (r < 0)
            {
              create_spec_free (&s);
              return r;
            }
          had = true;
        }
    }

  char *id = NULL;
  r = container_create (env, d, &s, &id, reterr);
  if (r >= 0)
    record_settings (env, s.settings);
  create_spec_free (&s);
  if (r < 0)
    return r;
  if (had)
    berth_env_mark_recreated (env);
  free (d->container);
  d->container = id;
  remember (env, id);
  return 0;
}

/* Removal at cleanup: a throw-away environment should not make its
   caller wait for the engine to tear the container down (~0.5 s).  */
static int
container_remove_soon (docker_client *c, const char *id, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  long status = 0;
  if (asprintf (&path, "/containers/%s?force=1&v=1", id) < 0)
    return oom (reterr);
  int r = docker_request_nowait (c, "DELETE", path, 150, &status, reterr);
  if (r != 0)
    return r < 0 ? r : 0;
  if (status == 204 || status == 404 || status == 200 || status == 409)
    return 0;
  return container_remove (c, id, reterr);
}

/* The environment's container id: the one in use, else found by label
   (`berth rm NAME` from a fresh process).  0 when there is none.  */
static int
container_of (berth_env *env, docker_env_data *d, berth_error **reterr)
{
  if (d->container)
    return 1;
  docker_container found;
  int r = container_find (d->client, berth_env_id (env), &found, reterr);
  if (r <= 0)
    return r;
  d->container = found.id;
  found.id = NULL;
  docker_container_clear (&found);
  return 1;
}

int
docker_container_stop (berth_env *env, docker_env_data *d, berth_error **reterr)
{
  _cleanup_free_ char *path = NULL;
  int r = container_of (env, d, reterr);
  if (r <= 0)
    return r;
  /* The engine's grace before SIGKILL, within what the caller has left. */
  double left = berth_env_time_left (env, 10.0);
  if (asprintf (&path, "/containers/%s/stop?t=%d", d->container, left > 2 ? (int) left - 1 : 1) < 0)
    return oom (reterr);
  docker_response resp = { 0 };
  r = docker_request (d->client, "POST", path, NULL, DOCKER_SMALL_BODY, &resp, reterr);
  if (r < 0)
    return r;
  long st = resp.status;
  _cleanup_free_ char *m = st == 204 || st == 304 ? NULL : docker_response_message (&resp);
  docker_response_clear (&resp);
  if (st != 204 && st != 304)
    return berth_error_set (reterr, -BERTH_E_BACKEND, "stopping the container failed: %s", m ? m : "?");
  /* Ours to start again: the workspace is there, not "recreated".  */
  (void) berth_env_state_write (env, IDLE_FILE, "1", 1);
  return 0;
}

int
docker_container_remove (berth_env *env, docker_env_data *d, berth_error **reterr)
{
  int r = container_of (env, d, reterr);
  if (r <= 0)
    return r;
  r = berth_env_is_persistent (env) ? container_remove (d->client, d->container, reterr)
                                    : container_remove_soon (d->client, d->container, reterr);
  if (r < 0)
    return r;
  free (d->container);
  d->container = NULL;
  (void) berth_env_state_remove (env, CONTAINER_FILE);
  (void) berth_env_state_remove (env, IDLE_FILE);
  return 0;
}

int
docker_container_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  docker_client *c = NULL;
  int r = docker_client_new (&c, reterr);
  if (r < 0)
    return r;
  /* Only this user's throw-away containers: a named environment's
     container, stopped or not, goes with `berth rm` alone, and another
     user's are theirs.  */
  char l_uid[64];
  snprintf (l_uid, sizeof l_uid, "berth.uid=%u", (unsigned)getuid ());
  const char *const labels[] = { "berth=1", "berth.persistent=0", l_uid, NULL };
  _cleanup_free_ char *filters = NULL, *esc = NULL, *path = NULL;
  if (docker_json_filters (labels, NULL, &filters) < 0 || !(esc = docker_url_escape (filters))
      || asprintf (&path, "/containers/json?all=1&filters=%s", esc) < 0)
    {
      docker_client_free (c);
      return oom (reterr);
    }
  docker_response resp = { 0 };
  r = docker_request (c, "GET", path, NULL, DOCKER_SMALL_BODY * 8, &resp, reterr);
  if (r < 0)
    {
      docker_client_free (c);
      return r;
    }
  docker_container *v = NULL;
  size_t n = 0;
  if (resp.status != 200 || docker_json_container_list (resp.body, resp.len, &v, &n) < 0)
    {
      docker_response_clear (&resp);
      docker_client_free (c);
      return berth_error_set (reterr, -BERTH_E_PROTOCOL, "cannot list berth containers");
    }
  docker_response_clear (&resp);
  int removed = 0, failed = 0;
  int64_t now = (int64_t)time (NULL);
  for (size_t i = 0; i < n; i++)
    {
      const char *st = v[i].state;
      if (strcmp (st, "exited") != 0 && strcmp (st, "dead") != 0 && strcmp (st, "created") != 0)
        continue;
      int64_t when = v[i].created;
      _cleanup_free_ char *ipath = NULL;
      if (strcmp (st, "created") != 0 && asprintf (&ipath, "/containers/%s/json", v[i].id) >= 0)
        {
          docker_response ir = { 0 };
          docker_container info;
          if (docker_request (c, "GET", ipath, NULL, DOCKER_SMALL_BODY * 4, &ir, NULL) >= 0 && ir.status == 200
              && docker_json_container_inspect (ir.body, ir.len, &info) == 0)
            {
              int64_t t;
              int pr = docker_parse_time (info.finished_at, &t);
              if (pr == 0)
                when = t;
              else if (pr == -ENOENT)
                when = now; /* never ran: not a leftover of ours yet */
              docker_container_clear (&info);
            }
          docker_response_clear (&ir);
        }
      if (when <= 0 || now - when < lifetime)
        continue;
      berth_error *err = NULL;
      if (container_remove (c, v[i].id, &err) >= 0)
        removed++;
      else
        failed++;
      berth_error_free (err);
    }
  docker_containers_free (v, n);
  docker_client_free (c);
  (void)cfg;
  (void)failed;
  return removed;
}
