/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* serve-private.h: what serve.c (the loop, clients, environments,
   executes) shares with the methods of sandbox.c (processes, files,
   idle).  */
#ifndef BERTH_SERVE_PRIVATE_H
#define BERTH_SERVE_PRIVATE_H

#include <berth/berth.h>

#include "json.h"

typedef struct sproc sproc;
typedef struct client client;
typedef struct sexec sexec;

typedef struct senv
{
  char handle[24];
  berth_env *env;
  char *tenant, *agent; /* the scope it was opened under (NULL: none) */
  sexec *running;
  struct senv *next;
} senv;

struct sexec
{
  char *id; /* the request's id, as JSON */
  berth_exec *x;
  senv *env;
  client *c;
  bool stream;
  bool interrupted; /* by its client's end (once) */
  unsigned char carry[4]; /* a UTF-8 sequence cut between two chunks */
  size_t carry_len;
  sexec *next;
};

struct client
{
  int in_fd, out_fd;
  int in_flags, out_flags; /* fcntl flags to restore (stdio) */
  char *in;
  size_t in_len, in_cap;
  bool discarding; /* skipping the rest of an oversize line */
  unsigned long line_no;
  sbuf out;
  size_t out_off;
  bool eof, dead;
  senv *envs;
  size_t n_envs;
  client *next;
};

typedef struct server
{
  berth_ctx *ctx;
  client *clients;
  size_t n_clients;
  sexec *execs;
  size_t n_execs;
  sproc *procs; /* attach_process streams (sandbox.c) */
  size_t n_procs;
  int listen_fd;
  const char *socket_path;
  unsigned long next_handle;
  bool stop;
  /* berth serve --tenant T --agent A: every environment opened here is
     that scope's (an open without one gets it, another is refused) */
  const char *tenant, *agent;
} server;

typedef struct req
{
  server *s;
  client *c;
  const char *id;
  const char *method;
  const jv *params;
} req;

/* Replies (the client's output buffer).  */
void reply_result (client *c, const char *id, const char *result_json);
void reply_error_full (client *c, const char *id, const char *code, const char *message, int berth_code, const char *output, size_t output_len);
void reply_error (client *c, const char *id, const char *code, const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
/* A libberth error (freed).  */
void reply_berth_error (client *c, const char *id, berth_error *err, int r);
/* Parameters: each replies invalid_params and returns false on a wrong type.  */
bool get_string (req *r, const char *key, bool required, const char **ret);
bool get_bool (req *r, const char *key, bool dflt, bool *ret);
bool get_number (req *r, const char *key, double min, double max, double *ret, bool *ret_set);
/* The client's environment named by "env", its scope bound; else replies.  */
senv *get_env (req *r);
/* Bind the scope E was opened under.  */
void bind_scope (server *s, const senv *e);
/* An output event of request ID: "data" when DATA is UTF-8, else "data_b64". */
void emit_output_event (client *c, const char *id, const unsigned char *data, size_t len);

/* sandbox.c: the methods, and the attach streams the loop polls.  */
void m_start_process (req *r);
void m_attach_process (req *r);
void m_write (req *r);
void m_close_stdin (req *r);
void m_poll (req *r);
void m_stop_process (req *r);
void m_list_processes (req *r);
void m_read_file (req *r);
void m_write_file (req *r);
void m_realpath (req *r);
void m_temp_dir (req *r);
void m_stop_idle (req *r);
/* The fd of attach stream P (readable: step it), or -1.  */
int sproc_fd (const sproc *p);
sproc *sproc_next (const sproc *p);
client *sproc_client (const sproc *p);
/* Move P's output to its client; at its end, reply and drop it.  */
void sproc_step (server *s, sproc *p);
/* Drop C's streams (it went), or the one of request ID (cancel): true
   when one was.  */
bool sproc_cancel (server *s, client *c, const char *id);

#endif
