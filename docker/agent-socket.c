/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent-socket.c: where this host reaches the socket of the container's
   agent (agent_socket in provider.h): the path as the container's first
   process sees it, /proc/PID/root/PATH, when the engine runs on this
   host (unix://) in our pid namespace.  The pid is asked of the engine
   once, when the agent starts serving, and kept in the state directory
   with the container's id; before it is used, /proc/PID/cgroup must
   still name that container (a restarted container has another pid,
   and a pid may be reused).  Anything else: the agent is reached
   through exec, as before.  The same record tells ensure that the
   container runs without asking the engine.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-private.h"
#include "json.h"

#define PID_FILE "agent-pid"

/* Whether /proc/PID/cgroup names container ID.  */
static bool
pid_in_container (int64_t pid, const char *id)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%" PRId64 "/cgroup", pid);
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strlen (id) >= 12 && strstr (buf, id) != NULL;
}

static int
container_pid (docker_env_data *d, int64_t *ret_pid)
{
  _cleanup_free_ char *path = NULL;
  if (asprintf (&path, "/containers/%s/json", d->container) < 0)
    return -ENOMEM;
  docker_response resp = { 0 };
  int r = docker_request (d->client, "GET", path, NULL, DOCKER_SMALL_BODY * 8, &resp, NULL);
  if (r >= 0)
    r = resp.status == 200 ? docker_json_container_pid (resp.body, resp.len, ret_pid) : -ESRCH;
  docker_response_clear (&resp);
  return r;
}

/* The pid and container id recorded when the agent started serving.  */
static int
recorded_pid (berth_env *env, int64_t *ret_pid, char id[129])
{
  _cleanup_free_ char *rec = NULL;
  if (berth_env_state_read (env, PID_FILE, &rec) <= 0 || sscanf (rec, "%" SCNd64 " %128s", ret_pid, id) != 2)
    return -ENOENT;
  return 0;
}

bool
docker_agent_container_runs (berth_env *env, docker_env_data *d, const char *id)
{
  int64_t pid;
  char rec_id[129];
  return strncmp (docker_client_host (d->client), "unix://", 7) == 0 && recorded_pid (env, &pid, rec_id) == 0 && strcmp (rec_id, id) == 0
         && pid_in_container (pid, id);
}

int
docker_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr)
{
  docker_env_data *d = docker_env_data_get (env);
  if (d == NULL || d->container == NULL || strncmp (docker_client_host (d->client), "unix://", 7) != 0)
    return -ENOTSUP;
  int64_t pid = 0;
  if (setup)
    {
      _cleanup_free_ char *rec = NULL;
      int r = container_pid (d, &pid);
      if (r < 0 || asprintf (&rec, "%" PRId64 " %s\n", pid, d->container) < 0)
        return r < 0 ? r : -ENOMEM;
      if ((r = berth_env_state_write (env, PID_FILE, rec, strlen (rec))) < 0)
        return r;
    }
  else
    {
      char id[129];
      if (recorded_pid (env, &pid, id) < 0 || strcmp (id, d->container) != 0)
        return -ENOENT;
    }
  if (!pid_in_container (pid, d->container))
    return berth_error_set (reterr, BERTH_E_BACKEND, "docker: container %.12s stopped while the command ran", d->container);
  return asprintf (ret_path, "/proc/%" PRId64 "/root%s", pid, path) < 0 ? -ENOMEM : 0;
}
