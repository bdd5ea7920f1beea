/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* exec.c: the start transport -- exec create, hijacked exec start (stdin
   written then half-closed), frames demultiplexed into stdout/stderr,
   exit code from exec inspect.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker-private.h"
#include "frames.h"
#include "json.h"

#define PUMP_BUF 65536
#define PUMP_ROUNDS 16

typedef struct docker_proc
{
  docker_client *client; /* borrowed from the environment's data */
  docker_hijack *hj;
  char *exec_id;
  docker_frames frames;
  bool eof;
  berth_sink_fn sink;
  void *userdata;
} docker_proc;

static void
frame_sink (void *userdata, int stream, const char *data, size_t len)
{
  docker_proc *p = userdata;
  /* Stderr stays separate (the runtime's state channel).  A daemon-side
     error (type 3) is text for the user: stdout.  */
  p->sink (p->userdata, stream == DOCKER_FRAME_STDERR ? BERTH_STREAM_ERR : BERTH_STREAM_OUT, data, len);
}

/* The exec no longer runs (exec inspect), or stops within a second (the
   engine may close the stream a moment before it records the exit).  */
static bool
exec_finished (docker_proc *p)
{
  char *path = NULL;
  bool running = true;
  if (asprintf (&path, "/exec/%s/json", p->exec_id) < 0)
    return false;
  for (int i = 0; running && i < 20; i++)
    {
      docker_response resp = { 0 };
      int code = -1;
      if (i > 0)
        {
          struct timespec ts = { 0, 50 * 1000 * 1000 };
          nanosleep (&ts, NULL);
        }
      if (docker_request (p->client, "GET", path, NULL, DOCKER_SMALL_BODY, &resp, NULL) < 0 || resp.status != 200
          || docker_json_exec_inspect (resp.body, resp.len, &running, &code, NULL) < 0)
        running = true, i = 20; /* cannot tell: not finished */
      docker_response_clear (&resp);
    }
  free (path);
  return !running;
}

static int
proc_pump (void *proc, berth_sink_fn sink, void *userdata)
{
  docker_proc *p = proc;
  char buf[PUMP_BUF];
  if (p->eof)
    return 0;
  p->sink = sink;
  p->userdata = userdata;
  for (int i = 0; i < PUMP_ROUNDS; i++)
    {
      ssize_t n = docker_hijack_recv (p->hj, buf, sizeof buf);
      if (n == -EAGAIN)
        return 1;
      if (n == -ECONNRESET && exec_finished (p))
        {
          /* Podman closes the stream of a command that exited while stdin
             it never read is still queued on its side: the socket then
             reports a reset instead of the end, after the output (queued
             data is read before the error).  The command is done: its
             exit code comes from exec inspect.  */
          p->eof = true;
          return 0;
        }
      if (n < 0)
        return (int)n;
      if (n == 0)
        {
          p->eof = true;
          return 0;
        }
      int r = docker_frames_feed (&p->frames, buf, (size_t)n, frame_sink, p);
      if (r < 0)
        return r;
    }
  return 1;
}

static ssize_t
proc_write_stdin (void *proc, const void *buf, size_t len)
{
  docker_proc *p = proc;
  return docker_hijack_send (p->hj, buf, len);
}

static int
proc_close_stdin (void *proc)
{
  docker_proc *p = proc;
  return docker_hijack_close_write (p->hj);
}

static int
proc_wait (void *proc, int *ret_status, berth_error **reterr)
{
  docker_proc *p = proc;
  char *path = NULL;
  if (asprintf (&path, "/exec/%s/json", p->exec_id) < 0)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  docker_response resp = { 0 };
  berth_error *err = NULL;
  int r = docker_request (p->client, "GET", path, NULL, DOCKER_SMALL_BODY, &resp, &err);
  free (path);
  if (r < 0)
    {
      /* The stream ended because the engine went away under the command.  */
      r = berth_error_set (reterr, -BERTH_E_BACKEND, "docker: the connection to the engine was lost while the command ran (is dockerd still running?): %s",
                           berth_error_message (err));
      berth_error_free (err);
      return r;
    }
  bool running = false;
  int code = -1;
  if (resp.status != 200 || docker_json_exec_inspect (resp.body, resp.len, &running, &code, NULL) < 0)
    {
      char *m = docker_response_message (&resp);
      r = berth_error_set (reterr, -BERTH_E_PROTOCOL, "exec inspect failed (HTTP %ld): %s", resp.status, m ? m : "?");
      free (m);
      docker_response_clear (&resp);
      return r;
    }
  docker_response_clear (&resp);
  *ret_status = running ? -1 : code;
  return 0;
}

static void
proc_free (void *proc)
{
  docker_proc *p = proc;
  if (!p)
    return;
  docker_hijack_free (p->hj);
  free (p->exec_id);
  free (p);
}

static const berth_proc_ops docker_proc_ops = {
  .size = sizeof (berth_proc_ops),
  .pump = proc_pump,
  .write_stdin = proc_write_stdin,
  .close_stdin = proc_close_stdin,
  .wait = proc_wait,
  .free = proc_free,
};

/* POST /containers/{id}/exec: 1 with *ret_id, 0 when the container is gone
   or stopped (the caller brings it back), < 0 on error.  */
static int
exec_create (docker_env_data *d, const char *body, char **ret_id, berth_error **reterr)
{
  char *path = NULL;
  if (asprintf (&path, "/containers/%s/exec", d->container) < 0)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  docker_response resp = { 0 };
  int r = docker_request (d->client, "POST", path, body, DOCKER_SMALL_BODY, &resp, reterr);
  free (path);
  if (r < 0)
    return r;
  if (resp.status == 404 || resp.status == 409)
    {
      docker_response_clear (&resp);
      return 0;
    }
  if (resp.status != 201 || docker_json_id (resp.body, resp.len, ret_id) < 0)
    {
      char *m = docker_response_message (&resp);
      r = berth_error_set (reterr, -BERTH_E_BACKEND, "exec create failed (HTTP %ld): %s", resp.status, m ? m : "?");
      free (m);
      docker_response_clear (&resp);
      return r;
    }
  docker_response_clear (&resp);
  return 1;
}

int
docker_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  docker_env_data *d = docker_env_data_get (env);
  char *body = NULL, *exec_id = NULL, *path = NULL;
  const char *user = BERTH_HAS_FIELD (req, berth_start_req, user) ? req->user : NULL;
  int r;
  if (!req->argv || !req->argv[0])
    return berth_error_set (reterr, -EINVAL, "docker: nothing to run");
  r = docker_json_exec_create (req->argv, user, (const char *const *)d->exec_env, req->has_stdin, &body, NULL);
  if (r == -EILSEQ)
    return berth_error_set (reterr, -EILSEQ, "docker: the command is not valid UTF-8 (the Engine API cannot carry it; pass binary data on stdin)");
  if (r < 0)
    return berth_error_errno (reterr, -r, "docker: cannot encode the exec request");

  for (int attempt = 0; attempt < 2; attempt++)
    {
      if (!d->container)
        {
          r = docker_container_ensure (env, d, reterr);
          if (r < 0)
            goto out;
        }
      r = exec_create (d, body, &exec_id, reterr);
      if (r != 0)
        break;
      /* Gone or stopped under us: bring it back once (restart or recreate,
         reported as environment_recreated).  */
      berth_logf (env, BERTH_LOG_INFO, "container %.12s is gone or stopped: bringing it back", d->container);
      free (d->container);
      d->container = NULL;
    }
  if (r == 0)
    r = berth_error_set (reterr, -BERTH_E_BACKEND, "docker: the container stopped again right after it was started: see docker logs");
  if (r < 0)
    goto out;
  free (body);
  body = NULL;

  docker_hijack *hj = NULL;
  if (asprintf (&path, "/exec/%s/start", exec_id) < 0)
    {
      r = berth_error_errno (reterr, ENOMEM, "out of memory");
      goto out;
    }
  r = docker_hijack_start (d->client, path, "{\"Detach\":false,\"Tty\":false}", &hj, NULL, reterr);
  if (r < 0)
    goto out;
  docker_proc *p = calloc (1, sizeof *p);
  if (!p)
    {
      docker_hijack_free (hj);
      r = berth_error_errno (reterr, ENOMEM, "out of memory");
      goto out;
    }
  p->client = d->client;
  p->hj = hj;
  p->exec_id = exec_id;
  exec_id = NULL;
  ret->fd = docker_hijack_fd (hj);
  ret->stdin_fd = req->has_stdin ? ret->fd : -1;
  ret->ops = &docker_proc_ops;
  ret->proc = p;
  r = 0;
out:
  free (body);
  free (exec_id);
  free (path);
  return r;
}
