/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* docker-private.h: shared between the docker backend's files.  */
#ifndef BERTH_DOCKER_PRIVATE_H
#define BERTH_DOCKER_PRIVATE_H

#include <berth/provider.h>
#include <berth/provider-util.h>

#include "api.h"

#define DOCKER_DEFAULT_IMAGE "debian:bookworm-slim"
#define DOCKER_SMALL_BODY (1u << 20)

/* Per-environment data: the block libberth allocates (env_data_size),
   filled by attach, emptied by release.  */
typedef struct docker_env_data
{
  docker_client *client;
  char *container; /* id of the container in use, or NULL */
  char **exec_env; /* "K=V" of docker_forward_env: exec bodies only */
} docker_env_data;

/* The environment's data, its client bound by the caller's deadline.  */
docker_env_data *docker_env_data_get (berth_env *env);

/* container.c */
/* Find (named) or create the environment's container and make sure it
   runs; sets d->container.  Marks the environment recreated when a
   container it used before had to be restarted or replaced.  */
int docker_container_ensure (berth_env *env, docker_env_data *d, berth_error **reterr);
/* Stop the container while idle (kept, with its workspace); the next
   ensure starts it again, not "recreated".  */
int docker_container_stop (berth_env *env, docker_env_data *d, berth_error **reterr);
/* Remove the container for good (found by label after attach alone);
   none there is success.  */
int docker_container_remove (berth_env *env, docker_env_data *d, berth_error **reterr);
int docker_container_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr);
/* Make IMAGE present (pull it when missing).  */
int docker_image_ensure (berth_env *env, docker_client *c, const char *image, char **ret_entrypoint0, berth_error **reterr);
/* berth pull: fetch IMAGE now (even when present: a newer one), progress
   through FN.  */
int docker_pull (const berth_config *cfg, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr);
/* "docker_forward_env" values as "K=V" (caller frees with berth_strv_free). */
char **docker_forward_env (const berth_config *cfg);
/* Host paths are mounted (docker_volumes or the cwd at /workspace).  */
bool docker_mounts_host_paths (const berth_config *cfg);

/* agent-socket.c: agent_socket (provider.h) for an engine on this host.  */
int docker_agent_socket (berth_env *env, const char *path, bool setup, char **ret_path, berth_error **reterr);
/* True when the process recorded as the serving agent's still runs in
   container ID (so the container runs): no engine call.  */
bool docker_agent_container_runs (berth_env *env, docker_env_data *d, const char *id);

/* exec.c */
int docker_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr);

#endif
