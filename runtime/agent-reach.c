/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent-reach.c: a named environment's agent, reached directly.
 *
 * The agent of a named environment serves a UNIX socket inside it for as
 * long as the environment lives (berth-agent --serve).  The first berth
 * process records where (the runtime directory's AGENT_AT: the agent's
 * tag and the socket's path inside the environment); every later one
 * asks the backend how this host reaches that path (agent_socket in
 * provider.h: the path itself for local, through /proc/PID/root for a
 * container of this host, an ssh forward) and connects to it, with no
 * command through the transport.  Whatever fails here costs nothing but
 * the usual start through the transport.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../agent/proto.h"
#include "agent-client.h"
#include "provider-call.h"

#define AGENT_AT "agent-at"
#define QUIT_WAIT_MS 2000

static char *
record_path (const berth_env *env)
{
  return env->runtime_dir ? berth_strdup_printf ("%s/" AGENT_AT, env->runtime_dir) : NULL;
}

/* The recorded socket path (malloc'd) when the record is TAG's (NULL:
   any tag), else NULL.  */
static char *
recorded (const berth_env *env, const char *tag)
{
  _cleanup_free_ char *file = record_path (env), *text = NULL;
  if (file == NULL || berth_state_file_read (file, &text) <= 0)
    return NULL;
  char *nl = strchr (text, '\n');
  if (nl == NULL || nl[1] != '/')
    return NULL;
  *nl = '\0';
  if (tag && strcmp (text, tag) != 0)
    return NULL;
  return strndup (nl + 1, strcspn (nl + 1, "\n"));
}

/* A connected socket to the host path HOST, whose other end runs as us
   (or root), else -errno.  */
static int
connect_to (const char *host)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (host) >= sizeof sa.sun_path)
    return -ENAMETOOLONG;
  strcpy (sa.sun_path, host);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -errno;
  struct ucred cr;
  socklen_t n = sizeof cr;
  if (connect (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int r = -errno;
      close (s);
      return r;
    }
  if (getsockopt (s, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0 || n != sizeof cr || (cr.uid != geteuid () && cr.uid != 0))
    {
      close (s);
      return -EPERM;
    }
  return s;
}

int
berth_agent_reach (berth_env *env, const char *tag, char **ret_at)
{
  _cleanup_free_ char *path = recorded (env, tag), *host = NULL;
  if (path == NULL)
    return -ENOENT;
  int r = berth_provider_call_agent_socket (env, path, false, &host, NULL);
  if (r < 0)
    return r;
  r = connect_to (host);
  berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "%s: the agent at %s (%s): %s", env->id, path, host, r >= 0 ? "connected" : strerror (-r));
  if (r >= 0)
    {
      *ret_at = path;
      path = NULL;
    }
  return r;
}

bool
berth_agent_lost_why (berth_env *env, const char *at, berth_error **reterr)
{
  _cleanup_free_ char *host = NULL;
  berth_error *err = NULL;
  if (berth_provider_call_agent_socket (env, at, false, &host, &err) >= 0 || err == NULL)
    {
      berth_error_free (err);
      return false;
    }
  *reterr = err;
  return true;
}

void
berth_agent_record (berth_env *env, const char *tag, const char *path)
{
  _cleanup_free_ char *file = record_path (env), *host = NULL, *text = NULL;
  if (file == NULL || path[0] != '/' || strchr (path, '\n'))
    return;
  if (berth_provider_call_agent_socket (env, path, true, &host, NULL) < 0)
    {
      unlink (file); /* not reachable from here: every berth relays */
      return;
    }
  text = berth_strdup_printf ("%s\n%s\n", tag, path);
  (void) berth_state_file_write (file, text, strlen (text)); /* a shortcut: without it the next berth relays */
}

void
berth_agent_forget (berth_env *env)
{
  _cleanup_free_ char *file = record_path (env);
  if (file)
    unlink (file);
}

void
berth_agent_quit (berth_env *env)
{
  _cleanup_free_ char *path = recorded (env, NULL), *host = NULL;
  berth_error *err = NULL;
  if (path == NULL)
    return;
  int r = berth_provider_call_attach (env, &err);
  berth_error_free (err);
  if (r < 0 || berth_provider_call_agent_socket (env, path, false, &host, NULL) < 0)
    return;
  _cleanup_close_ int s = connect_to (host);
  if (s < 0)
    return;
  berth_agent_buf b = { 0 };
  if (berth_agent_put_hello (&b, BERTH_AGENT_VERSION) == 0 && berth_agent_put_frame (&b, BERTH_AGENT_QUIT, 0, NULL, 0) == 0
      && write (s, b.data, b.len) == (ssize_t) b.len)
    {
      /* its end of the socket closes as it exits */
      char buf[4096];
      struct pollfd p = { s, POLLIN, 0 };
      while (poll (&p, 1, QUIT_WAIT_MS) > 0 && read (s, buf, sizeof buf) > 0)
        ;
      berth_ctx_log (env->ctx, BERTH_LOG_DEBUG, "agent", "%s: the agent at %s stopped", env->id, path);
    }
  berth_agent_buf_free (&b);
}
