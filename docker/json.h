/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json.h: Docker Engine API request bodies and response parsers (yajl
   stays inside json.c).  Parsers take a bounded body (not necessarily
   NUL-terminated) and reject what they do not understand with -EPROTO;
   builders reject invalid UTF-8 with -EILSEQ.  */
#ifndef BERTH_DOCKER_JSON_H
#define BERTH_DOCKER_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bodies larger than this are refused by every parser.  */
#define DOCKER_JSON_MAX (8u << 20)
/* Bodies nested deeper than this (arrays and objects) are refused with
   -EPROTO before any tree is built.  */
#define DOCKER_JSON_MAX_DEPTH 64

/* One entry of HostConfig.Ulimits (-1: unlimited).  */
typedef struct docker_ulimit
{
  char name[16];
  int64_t soft, hard;
} docker_ulimit;

typedef struct docker_create_opts
{
  const char *image;
  const char *const *cmd;    /* NULL-terminated */
  const char *const *env;    /* "K=V", NULL-terminated or NULL */
  const char *const *labels; /* "k=v", NULL-terminated or NULL */
  const char *const *binds;  /* "host:ctr[:opts]" or NULL */
  const char *const *cap_add;
  const char *user;        /* NULL: image default */
  const char *working_dir; /* NULL: image default */
  bool init;
  bool no_new_privileges;
  bool network_none;
  bool run_exec;      /* /run tmpfs without noexec (s6 images) */
  int64_t pids_limit; /* 0: unset */
  int64_t memory;     /* bytes, 0: unset */
  int64_t nano_cpus;  /* 0: unset */
  int64_t shm_size;   /* bytes, 0: unset */
  const docker_ulimit *ulimits; /* HostConfig.Ulimits, N_ULIMITS of them */
  size_t n_ulimits;
  bool redact_env;    /* emit env names only (for a config digest) */
} docker_create_opts;

int docker_json_container_create (const docker_create_opts *o, char **ret, size_t *ret_len);
/* ENV: "K=V" for this process only (NULL: none).  */
int docker_json_exec_create (const char *const *argv, const char *user, const char *const *env, bool attach_stdin, char **ret, size_t *ret_len);
/* {"label":["k=v",...],"status":[STATUS]} (STATUS may be NULL).  */
int docker_json_filters (const char *const *labels, const char *status, char **ret);

/* {"message":"..."} -> the message; a non-JSON body (the daemon's
   text/plain errors) -> its text.  Always one line, bounded, never NULL
   on success.  */
int docker_json_error_message (const char *body, size_t len, char **ret);
/* {"Id":"..."} (create responses).  */
int docker_json_id (const char *body, size_t len, char **ret_id);
/* GET /version.  */
int docker_json_version (const char *body, size_t len, char **ret_version, char **ret_api, char **ret_min_api);
/* GET /exec/{id}/json.  *ret_exit_code is -1 while running (null).  */
/* A container inspect's State.Pid (its first process, as the engine's
   host sees it; > 0 while it runs).  */
int docker_json_container_pid (const char *body, size_t len, int64_t *ret_pid);
int docker_json_exec_inspect (const char *body, size_t len, bool *ret_running, int *ret_exit_code, int64_t *ret_pid);
/* GET /info: NCPU (0 when absent).  */
int docker_json_info_ncpu (const char *body, size_t len, int64_t *ret_ncpu);
/* GET /images/{name}/json: the first word of Config.Entrypoint (NULL
   when none).  */
int docker_json_image_entrypoint (const char *body, size_t len, char **ret_entrypoint0);

/* The docker CLI's config.json: "currentContext" (NULL when unset or "").  */
int docker_json_current_context (const char *body, size_t len, char **ret_name);
/* A context's meta.json: Endpoints.docker.Host and .SkipTLSVerify;
   -EPROTO without a host.  */
int docker_json_context_endpoint (const char *body, size_t len, char **ret_host, bool *ret_skip_tls_verify);

typedef struct docker_container
{
  char *id;
  char *state;        /* "running", "exited", "created", ... */
  char *config;       /* label berth.config, or NULL */
  char *network;      /* label berth.network, or NULL */
  char *finished_at;  /* inspect only */
  char *network_mode; /* inspect only */
  int64_t created;    /* list only: unix seconds */
} docker_container;
void docker_container_clear (docker_container *c);
void docker_containers_free (docker_container *v, size_t n);
/* GET /containers/json: an array.  */
int docker_json_container_list (const char *body, size_t len, docker_container **ret, size_t *ret_n);
/* GET /containers/{id}/json.  */
int docker_json_container_inspect (const char *body, size_t len, docker_container *ret);

/* The pull progress stream: concatenated JSON objects, fed in chunks of
   any size.  FN gets each record: STATUS and ID may be NULL, CURRENT and
   TOTAL are -1 when absent, ERROR is non-NULL for an error record.  */
typedef void (*docker_pull_fn) (void *userdata, const char *status, const char *id, int64_t current, int64_t total, const char *error);
typedef struct docker_stream_parser docker_stream_parser;
docker_stream_parser *docker_pull_parser_new (docker_pull_fn fn, void *userdata);
/* -EPROTO on malformed input or a record over 64 KiB.  */
int docker_pull_parser_feed (docker_stream_parser *p, const void *data, size_t len);
int docker_pull_parser_finish (docker_stream_parser *p);
void docker_pull_parser_free (docker_stream_parser *p);

#endif
