/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host.h: which engine, found the way the docker CLI finds it (no curl
   here: unit tested with temporary directories).  */
#ifndef BERTH_DOCKER_HOST_H
#define BERTH_DOCKER_HOST_H

#include <stdbool.h>

#include <berth/provider.h>

#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"

typedef struct docker_host_choice
{
  char *host;    /* "unix://...", "tcp://...", "ssh://..." */
  char *source;  /* for messages: "DOCKER_HOST", "docker context NAME (DOCKER_CONTEXT)", ... */
  char *context; /* the context's name, NULL for DOCKER_HOST and the default */
  char *tls_dir; /* the context's TLS material (ca.pem, cert.pem, key.pem), or NULL */
  bool skip_tls_verify;
} docker_host_choice;

/* In the docker CLI's order: DOCKER_HOST, then the context named by
   DOCKER_CONTEXT, then config.json's currentContext ($DOCKER_CONFIG, by
   default ~/.docker), then unix:///var/run/docker.sock.  A context is
   $DOCKER_CONFIG/contexts/meta/<sha256 of its name>/meta.json
   (Endpoints.docker.Host); "default" is the default engine.  A context
   that is named but cannot be read is an error (-BERTH_E_CONFIG) that
   says where it was looked for, like the docker CLI's.  */
int docker_host_resolve (docker_host_choice *ret, berth_error **reterr);
void docker_host_choice_clear (docker_host_choice *c);

#endif
