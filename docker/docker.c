/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* docker.c: the docker provider -- an environment is one long-lived
   container driven through the Docker Engine API (no docker CLI needed).  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-private.h"
#include "json.h"

void
docker_env_data_free (void *data)
{
  docker_env_data *d = data;
  if (!d)
    return;
  docker_client_free (d->client);
  free (d->container);
  berth_strv_free (d->exec_env);
  free (d);
}

int
docker_env_data_get (berth_env *env, docker_env_data **ret, berth_error **reterr)
{
  docker_env_data *d = berth_env_get_data (env);
  if (d)
    {
      /* every call into the engine ends by the caller's deadline */
      docker_client_set_deadline (d->client, berth_env_deadline_usec (env));
      *ret = d;
      return 0;
    }
  d = calloc (1, sizeof *d);
  if (!d)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  int r = docker_client_new (&d->client, reterr);
  if (r < 0)
    {
      free (d);
      return r;
    }
  docker_client_set_deadline (d->client, berth_env_deadline_usec (env));
  d->exec_env = docker_forward_env (berth_env_config (env));
  if (!d->exec_env)
    {
      docker_env_data_free (d);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  berth_env_set_data (env, d);
  *ret = d;
  return 0;
}

static int
docker_create (berth_env *env, berth_error **reterr)
{
  docker_env_data *d = NULL;
  int r = docker_env_data_get (env, &d, reterr);
  if (r < 0)
    return r;
  return docker_container_ensure (env, d, reterr);
}

static int
docker_cleanup (berth_env *env, bool remove, berth_error **reterr)
{
  return docker_container_cleanup (env, remove, reterr);
}

static int
docker_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  return docker_container_gc (cfg, lifetime, reterr);
}

static int
docker_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  docker_env_data *d = NULL;
  int r = docker_env_data_get (env, &d, reterr);
  if (r < 0)
    return r;
  if (!d->container && (r = docker_container_ensure (env, d, reterr)) < 0)
    return r;
  char **argv = NULL;
  char *cli = berth_find_program ("docker");
  if (cli)
    {
      /* The docker CLI, pointed at the same engine (-H: a docker context
         must not send it elsewhere; TLS settings come from the same
         environment variables).  Forwarded variables go by name only: the
         CLI takes their values from its own environment, never argv.  */
      argv = berth_strv_new (cli, "-H", docker_client_docker_host (d->client), "exec", NULL);
      free (cli);
      if (argv && interactive)
        r = berth_strv_push (&argv, "-i");
      if (argv && r >= 0 && user && *user)
        {
          r = berth_strv_push (&argv, "-u");
          if (r >= 0)
            r = berth_strv_push (&argv, user);
        }
      for (char **e = d->exec_env; argv && r >= 0 && e && *e; e++)
        {
          char *name = strndup (*e, strcspn (*e, "="));
          r = name ? berth_strv_push (&argv, "-e") : -ENOMEM;
          if (r >= 0)
            r = berth_strv_push (&argv, name);
          free (name);
        }
      if (argv && r >= 0)
        r = berth_strv_push (&argv, d->container);
    }
  else
    {
      /* No CLI: berth bridges the stream over the API itself.  Only a named
         environment can be found again by another process.  */
      if (!berth_env_is_persistent (env))
        return berth_error_set (reterr, -ENOTSUP,
                                "docker: streams into a throw-away environment need the docker CLI on PATH; use a named environment (-e NAME)");
      if (user && *user)
        return berth_error_set (reterr, -ENOTSUP, "docker: a stream as another user needs the docker CLI on PATH");
      char *berth = berth_helper_path ("berth");
      if (!berth)
        return berth_error_errno (reterr, ENOMEM, "out of memory");
      argv = berth_strv_new (berth, "exec-stream", "-b", "docker", "-e", berth_env_id (env), "--", NULL);
      free (berth);
    }
  if (!argv || r < 0)
    {
      berth_strv_free (argv);
      return berth_error_errno (reterr, ENOMEM, "out of memory");
    }
  *ret_argv = argv;
  *ret_flags = 0;
  return 0;
}

static int
docker_flag (const berth_config *cfg, uint32_t flag, bool *ret)
{
  if (flag == BERTH_FLAG_SKIP_CONTAINER_GUARDS)
    {
      /* Approval can be skipped only while no host path is mounted.  */
      *ret = !docker_mounts_host_paths (cfg);
      return 0;
    }
  return -1;
}

static int
docker_probe (const berth_config *cfg, char **ret_reason)
{
  docker_client *c = NULL;
  berth_error *err = NULL;
  if (docker_client_new (&c, &err) < 0)
    {
      if (ret_reason)
        *ret_reason = strdup (berth_error_message (err));
      berth_error_free (err);
      return BERTH_PROBE_NEEDS_SETUP;
    }
  int st = docker_client_ping (c, 1500, ret_reason);
  docker_client_free (c);
  return st;
}

static int
docker_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  docker_client *c = NULL;
  berth_error *err = NULL;
  char *why = NULL, *detail = NULL;
  if (docker_client_new (&c, &err) < 0)
    {
      fn (userdata, "docker host", false, berth_error_message (err), "set DOCKER_HOST to unix:///path/to/docker.sock or tcp://HOST:PORT");
      berth_error_free (err);
      return 0;
    }
  int st = docker_client_ping (c, 2000, &why);
  if (asprintf (&detail, "%s", docker_client_host (c)) < 0)
    detail = NULL;
  fn (userdata, "engine reachable", st == 0, st == 0 ? detail : why, st == 0 ? NULL : "start the Docker engine and make its socket accessible (see the reason)");
  free (why);
  free (detail);
  detail = NULL;
  if (st != 0)
    {
      docker_client_free (c);
      return 0;
    }
  if (docker_client_negotiate (c, &err) < 0)
    {
      fn (userdata, "API version", false, berth_error_message (err), "upgrade the Docker engine");
      berth_error_free (err);
      err = NULL;
    }
  else
    {
      if (asprintf (&detail, "%s %s, API %s", docker_client_engine (c), docker_client_server_version (c), docker_client_api_version (c)) < 0)
        detail = NULL;
      fn (userdata, "API version", true, detail, NULL);
      free (detail);
      detail = NULL;
      const char *image = berth_config_string (cfg, "terminal.docker_image", DOCKER_DEFAULT_IMAGE);
      char *path = NULL;
      docker_response resp = { 0 };
      if (image && asprintf (&path, "/images/%s/json", image) >= 0 && docker_request (c, "GET", path, NULL, DOCKER_SMALL_BODY * 4, &resp, NULL) >= 0)
        {
          if (asprintf (&detail, resp.status == 200 ? "%s present" : "%s not present: pulled on first use", image) < 0)
            detail = NULL;
          fn (userdata, "image", true, detail, NULL);
          free (detail);
          docker_response_clear (&resp);
        }
      free (path);
    }
  docker_client_free (c);
  return 0;
}

const berth_provider_ops berth_docker_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "docker",
  .display_name = "Docker",
  .description = "a long-lived container per environment, driven through the Docker Engine API",
  .env_description = "Commands run inside a Docker container (cwd /root by default); host files are not visible unless mounted.",
  .flags = BERTH_FLAG_IS_REMOTE | BERTH_FLAG_IS_CONTAINER | BERTH_FLAG_SKIP_CONTAINER_GUARDS | BERTH_FLAG_SUPPORTS_STREAMS
           | BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT | BERTH_FLAG_CLEANUP_STOPS_PROCESSES,
  .default_cwd = "/root",
  .cache_path_base = "/root/.berth",
  .flag = docker_flag,
  .probe = docker_probe,
  .doctor = docker_doctor,
  .setup_instructions = "Install the Docker engine (apt install docker.io), start it (sudo systemctl start docker) and give your user access "
                        "to its socket (sudo usermod -aG docker $USER), or point DOCKER_HOST at an engine (unix:// or tcp:// with "
                        "DOCKER_TLS_VERIFY and DOCKER_CERT_PATH).",
  .create = docker_create,
  .exec_prefix = docker_exec_prefix,
  .start = docker_start,
  .cleanup = docker_cleanup,
  .gc = docker_gc,
  .free_data = docker_env_data_free,
  .pull = docker_pull,
};

BERTH_PROVIDER_EXPORT (berth_docker_provider)
