/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* api.h: HTTP to the Docker Engine (libcurl stays inside api.c and hijack.c).
   The engine is found as the docker CLI finds it (host.c: DOCKER_HOST,
   DOCKER_CONTEXT, config.json's currentContext, the default socket):
   unix://PATH (default /var/run/docker.sock), tcp://H:P with TLS when
   DOCKER_TLS_VERIFY or DOCKER_TLS is set (certificates from
   DOCKER_CERT_PATH, default ~/.docker; a context's own), or
   ssh://[USER@]HOST[:PORT] (dial.c: ssh ... docker system dial-stdio).
   The API version is negotiated on first use.  */
#ifndef BERTH_DOCKER_API_H
#define BERTH_DOCKER_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <berth/provider.h>

/* The newest API this code was written against; older engines get their
   own version (down to DOCKER_API_MIN), newer ones are asked for this.  */
#define DOCKER_API_MAX "1.47"
#define DOCKER_API_MIN "1.25"

typedef struct docker_client docker_client;

/* Reads DOCKER_HOST, DOCKER_CONTEXT, DOCKER_CONFIG, DOCKER_TLS_VERIFY,
   DOCKER_TLS, DOCKER_CERT_PATH (and the docker CLI's files) now.  */
int docker_client_new (docker_client **ret, berth_error **reterr);
void docker_client_free (docker_client *c);
/* "unix:///var/run/docker.sock", "tcp://h:2376 (TLS)"...  */
const char *docker_client_host (const docker_client *c);
/* DOCKER_HOST as the docker CLI's -H takes it.  */
const char *docker_client_docker_host (const docker_client *c);
/* Bound every request, stream and pull by DEADLINE_USEC (CLOCK_MONOTONIC,
   0: none): berth_env_deadline_usec of the call in progress.  */
void docker_client_set_deadline (docker_client *c, uint64_t deadline_usec);

/* A cheap readiness check: connect + GET /_ping within TIMEOUT_MS.
   Returns 0, or BERTH_PROBE_NEEDS_SETUP / _UNAVAILABLE with a one-line
   reason that says what to do.  */
int docker_client_ping (docker_client *c, long timeout_ms, char **ret_reason);
/* Negotiate (once) and return the API version in use ("1.41").  */
int docker_client_negotiate (docker_client *c, berth_error **reterr);
const char *docker_client_api_version (const docker_client *c);
const char *docker_client_server_version (const docker_client *c);
/* "Docker", or "Podman" for Podman's Docker-compatible API (once
   negotiated).  */
const char *docker_client_engine (const docker_client *c);

typedef struct docker_response
{
  long status;
  char *body; /* NUL-terminated, may be empty */
  size_t len;
} docker_response;
void docker_response_clear (docker_response *r);

/* METHOD /vX.Y PATH with a JSON BODY (may be NULL).  A response body over
   MAX bytes is a protocol error.  An HTTP error status is data (in
   ret->status); failing to reach the engine is -BERTH_E_UNAVAILABLE with
   a message naming DOCKER_HOST and what to do.  */
int docker_request (docker_client *c, const char *method, const char *path, const char *body, size_t max, docker_response *ret, berth_error **reterr);
/* Send a bodyless METHOD PATH and wait at most WAIT_MS for the answer:
   0 with *ret_status when it came, 1 when the request was delivered but
   the engine is still working on it (it finishes without us: the engine
   does not cancel a removal when the client goes), < 0 when it could not
   be sent.  */
int docker_request_nowait (docker_client *c, const char *method, const char *path, long wait_ms, long *ret_status, berth_error **reterr);
/* Same, streaming the body to FN (return < 0 to abort).  Error statuses
   are collected (bounded) into ret->body instead.  */
typedef int (*docker_chunk_fn) (void *userdata, const char *data, size_t len);
int docker_request_stream (docker_client *c, const char *method, const char *path, const char *body, docker_chunk_fn fn, void *userdata, docker_response *ret, berth_error **reterr);
/* The daemon's message for an error response, as one line (caller frees). */
char *docker_response_message (const docker_response *r);
/* URL-escape S for a query parameter (caller frees).  */
char *docker_url_escape (const char *s);

/* A hijacked bidirectional connection (POST with Connection: Upgrade).  */
typedef struct docker_hijack docker_hijack;
/* Sends METHOD PATH BODY, reads the response head (101 or 200).  Any other
   status is an error carrying the daemon's message; *ret_status gets it
   when non-NULL (0 for transport failures).  */
int docker_hijack_start (docker_client *c, const char *path, const char *body, docker_hijack **ret, long *ret_status, berth_error **reterr);
int docker_hijack_fd (const docker_hijack *h);
/* > 0 bytes, 0 at end of stream, -EAGAIN, -errno.  */
ssize_t docker_hijack_recv (docker_hijack *h, void *buf, size_t len);
/* Bytes sent, -EAGAIN, -errno.  */
ssize_t docker_hijack_send (docker_hijack *h, const void *buf, size_t len);
/* Half-close: the process sees EOF on stdin.  */
int docker_hijack_close_write (docker_hijack *h);
void docker_hijack_free (docker_hijack *h);

#endif
