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

/* Attach: the engine client (no request yet) and the forwarded
   variables, in the block libberth allocated (env_data_size).  */
static int
docker_attach (berth_env *env, berth_error **reterr)
{
  docker_env_data *d = berth_env_get_data (env);
  int r = docker_client_new (&d->client, reterr);
  if (r < 0)
    return r;
  d->exec_env = docker_forward_env (berth_env_config (env));
  if (!d->exec_env)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  return 0;
}

static void
docker_release (berth_env *env)
{
  docker_env_data *d = berth_env_get_data (env);
  docker_client_free (d->client);
  free (d->container);
  berth_strv_free (d->exec_env);
}

docker_env_data *
docker_env_data_get (berth_env *env)
{
  docker_env_data *d = berth_env_get_data (env);
  /* every call into the engine ends by the caller's deadline */
  docker_client_set_deadline (d->client, berth_env_deadline_usec (env));
  return d;
}

static int
docker_ensure (berth_env *env, berth_error **reterr)
{
  /* An agent's sandbox reaches nothing of the host.  */
  if (berth_env_is_hosted (env) && docker_mounts_host_paths (berth_env_config (env)))
    return berth_error_set (reterr, BERTH_E_HOSTED,
                            "docker: a hosted scope's sandbox cannot mount host paths: unset terminal.docker_volumes and "
                            "terminal.docker_mount_cwd_to_workspace");
  return docker_container_ensure (env, docker_env_data_get (env), reterr);
}

static int
docker_stop (berth_env *env, berth_error **reterr)
{
  return docker_container_stop (env, docker_env_data_get (env), reterr);
}

static int
docker_remove (berth_env *env, berth_error **reterr)
{
  return docker_container_remove (env, docker_env_data_get (env), reterr);
}

static int
docker_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  return docker_container_gc (cfg, lifetime, reterr);
}

/* The exec prefix; TERMINAL: `-it`, a terminal of its own in the
   container (the CLI sizes and resizes it as its own stdin's).  */
static int
prefix_argv (berth_env *env, const char *user, bool interactive, bool terminal, char ***ret_argv, berth_error **reterr)
{
  docker_env_data *d = docker_env_data_get (env);
  int r = 0;
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
        r = berth_strv_push (&argv, terminal ? "-it" : "-i");
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
  else if (terminal)
    return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "docker: a terminal in the container needs the docker CLI on PATH (install docker.io or docker-ce-cli)");
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
  return 0;
}

static int
docker_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags, berth_error **reterr)
{
  *ret_flags = 0;
  return prefix_argv (env, user, interactive, false, ret_argv, reterr);
}

static int
docker_terminal_prefix (berth_env *env, const char *user, char ***ret_argv, berth_error **reterr)
{
  return prefix_argv (env, user, true, true, ret_argv, reterr);
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

/* The keys docker reads (berth-config(5)); the container_* keys of the
   contract are the core's.  */
static const berth_key_spec docker_config_keys[] = {
  { "docker_image", BERTH_KEY_STRING },
  { "docker_volumes", BERTH_KEY_STRV },
  { "docker_network", BERTH_KEY_BOOL },
  { "docker_env", BERTH_KEY_STRMAP, .expect = "a mapping of variable names to values" },
  { "docker_forward_env", BERTH_KEY_STRV },
  { "docker_shm_size", BERTH_KEY_STRING },
  { "docker_pids_limit", BERTH_KEY_INT, 0, INT64_MAX, "an integer >= 0" },
  { "docker_ulimits", BERTH_KEY_STRMAP, .expect = "a mapping of ulimit names to SOFT[:HARD] (integers or unlimited)" },
  { "docker_run_as_host_user", BERTH_KEY_BOOL },
  { "docker_snap_compat", BERTH_KEY_BOOL },
  { "docker_mount_cwd_to_workspace", BERTH_KEY_BOOL },
  { NULL },
};

const berth_provider_ops berth_docker_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "docker",
  .display_name = "Docker",
  .description = "a long-lived container per environment, driven through the Docker Engine API",
  .env_description = "Commands run inside a Docker container (cwd /root by default); host files are not visible unless mounted.",
  .flags = BERTH_FLAG_IS_REMOTE | BERTH_FLAG_IS_CONTAINER | BERTH_FLAG_SKIP_CONTAINER_GUARDS | BERTH_FLAG_SUPPORTS_STREAMS
           | BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT | BERTH_FLAG_CLEANUP_STOPS_PROCESSES | BERTH_FLAG_SERVES_HOSTED_SCOPES,
  .default_cwd = "/root",
  .cache_path_base = "/root/.berth",
  .flag = docker_flag,
  .probe = docker_probe,
  .doctor = docker_doctor,
  .setup_instructions = "Install the Docker engine (apt install docker.io), start it (sudo systemctl start docker) and give your user access "
                        "to its socket (sudo usermod -aG docker $USER), or point DOCKER_HOST at an engine (unix:// or tcp:// with "
                        "DOCKER_TLS_VERIFY and DOCKER_CERT_PATH).",
  .config_keys = docker_config_keys,
  .env_data_size = sizeof (docker_env_data),
  .attach = docker_attach,
  .ensure = docker_ensure,
  .stop = docker_stop,
  .remove = docker_remove,
  .release = docker_release,
  .exec_prefix = docker_exec_prefix,
  .terminal_prefix = docker_terminal_prefix,
  .start = docker_start,
  .gc = docker_gc,
  .pull = docker_pull,
  .agent_socket = docker_agent_socket,
};

BERTH_PROVIDER_EXPORT (berth_docker_provider)
