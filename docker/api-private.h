/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* api-private.h: what the request lane (api.c) and the exec stream
   (hijack.c) share: the client, its connection options and the
   deadline.  Included by those two files only: with them, the only
   places that see <curl/curl.h>.  */
#ifndef BERTH_DOCKER_API_PRIVATE_H
#define BERTH_DOCKER_API_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "curl-load.h"

#include <berth/provider-util.h>

#include "api.h"
#include "dial.h"

struct docker_client
{
  char *display;     /* DOCKER_HOST as the user knows it */
  char *docker_host; /* DOCKER_HOST, or the default */
  char *socket_path; /* unix, or NULL */
  char *base_url;    /* "http://localhost", "https://host:2376" */
  char *source;      /* where the host came from: "DOCKER_HOST", "the docker context X (...)" */
  bool ssh;          /* ssh://: every connection is an ssh child (dial.c) */
  docker_ssh_target ssh_target;
  char *ssh_control; /* the ssh ControlPath, or NULL */
  int ssh_listen;     /* where libcurl connects: the socket at ssh_path */
  char ssh_path[128];
  docker_dial *dials; /* the ssh children, one per connection */
  size_t n_dials, last_dial;
  bool tls, tls_verify;
  char *ca, *cert, *key;
  CURL *easy; /* the request lane, reused (keeps its connection) */
  long timeout_ms;
  uint64_t deadline_ms; /* CLOCK_MONOTONIC bound of the caller's call, 0: none */
  bool negotiated;
  bool podman; /* the engine answered as Podman (Server: Libpod/...) */
  char api[16];
  char *server_version;
};

/* CLOCK_MONOTONIC milliseconds.  */
uint64_t docker_now_ms (void);
/* TIMEOUT_MS (0: none) capped by what is left of the caller's deadline;
   -1 when it has passed.  */
long docker_bounded_ms (const docker_client *c, long timeout_ms);
/* The error of a request given up on at the caller's deadline.  */
int docker_deadline_error (const docker_client *c, berth_error **reterr);
/* Connection options shared by requests and hijacks.  */
void docker_set_conn_opts (docker_client *c, CURL *h, long connect_ms);
/* -BERTH_E_UNAVAILABLE with a one-line reason and fix for a failure to
   reach the engine.  */
int docker_unreachable_error (docker_client *c, CURL *h, CURLcode rc, const char *errbuf, berth_error **reterr);

#endif
