/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host.c: the engine the docker CLI would talk to (see host.h).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <berth/provider-util.h>

#include "helpers.h"
#include "host.h"
#include "json.h"

#define CONFIG_MAX (1u << 20)

void
docker_host_choice_clear (docker_host_choice *c)
{
  free (c->host);
  free (c->source);
  free (c->context);
  free (c->tls_dir);
  memset (c, 0, sizeof *c);
}

/* $DOCKER_CONFIG, or ~/.docker.  */
static char *
config_dir (void)
{
  const char *d = getenv ("DOCKER_CONFIG");
  char *s = NULL;
  if (d && *d)
    return strdup (d);
  const char *home = getenv ("HOME");
  if (!home || !*home)
    return NULL;
  if (asprintf (&s, "%s/.docker", home) < 0)
    return NULL;
  return s;
}

/* The whole of PATH (at most CONFIG_MAX bytes): 0 with *RET, -errno.  */
static int
read_small (const char *path, char **ret, size_t *ret_len)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return -errno;
  char *buf = malloc (CONFIG_MAX + 1);
  size_t len = 0;
  if (!buf)
    {
      close (fd);
      return -ENOMEM;
    }
  for (;;)
    {
      ssize_t n = read (fd, buf + len, CONFIG_MAX + 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          free (buf);
          close (fd);
          return -e;
        }
      if (n == 0)
        break;
      len += (size_t)n;
      if (len > CONFIG_MAX)
        {
          free (buf);
          close (fd);
          return -EFBIG;
        }
    }
  close (fd);
  buf[len] = '\0';
  *ret = buf;
  *ret_len = len;
  return 0;
}

static int
oom (berth_error **reterr)
{
  return berth_error_set (reterr, -ENOMEM, "out of memory");
}

/* The context NAME (from WHY) into RET.  */
static int
use_context (docker_host_choice *ret, const char *dir, const char *name, const char *why, berth_error **reterr)
{
  if (strcmp (name, "default") == 0)
    {
      ret->host = strdup (DOCKER_DEFAULT_HOST);
      if (!ret->host || asprintf (&ret->source, "the docker context default (%s)", why) < 0)
        return oom (reterr);
      return 0;
    }
  char digest[65];
  berth_sha256_hex (name, strlen (name), digest);
  char *meta = NULL, *tls = NULL, *body = NULL;
  size_t len = 0;
  if (asprintf (&meta, "%s/contexts/meta/%s/meta.json", dir, digest) < 0)
    return oom (reterr);
  int r = read_small (meta, &body, &len);
  if (r < 0)
    {
      r = berth_error_set (reterr, -BERTH_E_CONFIG,
                           "the docker context '%s' (%s) cannot be read (%s: %s): create it (docker context create %s --docker host=...), "
                           "or choose another (docker context use NAME, or unset %s)",
                           name, why, meta, strerror (-r), name, strcmp (why, "DOCKER_CONTEXT") == 0 ? "DOCKER_CONTEXT" : "currentContext");
      free (meta);
      return r;
    }
  r = docker_json_context_endpoint (body, len, &ret->host, &ret->skip_tls_verify);
  free (body);
  if (r < 0)
    {
      r = berth_error_set (reterr, -BERTH_E_CONFIG, "the docker context '%s' (%s) has no docker endpoint in %s: recreate it (docker context create %s --docker host=...)",
                           name, why, meta, name);
      free (meta);
      return r;
    }
  free (meta);
  ret->context = strdup (name);
  if (!ret->context || asprintf (&ret->source, "the docker context %s (%s)", name, why) < 0)
    return oom (reterr);
  if (asprintf (&tls, "%s/contexts/tls/%s/docker", dir, digest) < 0)
    return oom (reterr);
  struct stat st;
  if (stat (tls, &st) == 0 && S_ISDIR (st.st_mode))
    ret->tls_dir = tls;
  else
    free (tls);
  return 0;
}

int
docker_host_resolve (docker_host_choice *ret, berth_error **reterr)
{
  memset (ret, 0, sizeof *ret);
  const char *host = getenv ("DOCKER_HOST");
  if (host && *host)
    {
      ret->host = strdup (host);
      ret->source = strdup ("DOCKER_HOST");
      if (!ret->host || !ret->source)
        {
          docker_host_choice_clear (ret);
          return oom (reterr);
        }
      return 0;
    }
  char *dir = config_dir ();
  const char *ctx = getenv ("DOCKER_CONTEXT");
  int r = 0;
  if (ctx && *ctx)
    r = dir ? use_context (ret, dir, ctx, "DOCKER_CONTEXT", reterr)
            : berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_CONTEXT=%s but neither DOCKER_CONFIG nor HOME is set: set one of them", ctx);
  else if (dir)
    {
      char *cfg = NULL, *body = NULL, *name = NULL;
      size_t len = 0;
      if (asprintf (&cfg, "%s/config.json", dir) < 0)
        r = oom (reterr);
      else if (read_small (cfg, &body, &len) == 0)
        {
          /* An unreadable or broken config.json: the docker CLI goes on
             with the default too (with a warning).  */
          if (docker_json_current_context (body, len, &name) == 0 && name)
            {
              char *why = NULL;
              if (asprintf (&why, "currentContext of %s", cfg) < 0)
                r = oom (reterr);
              else
                r = use_context (ret, dir, name, why, reterr);
              free (why);
            }
          free (body);
        }
      free (name);
      free (cfg);
    }
  free (dir);
  if (r < 0)
    {
      docker_host_choice_clear (ret);
      return r;
    }
  if (!ret->host)
    {
      ret->host = strdup (DOCKER_DEFAULT_HOST);
      ret->source = strdup ("the default");
      if (!ret->host || !ret->source)
        {
          docker_host_choice_clear (ret);
          return oom (reterr);
        }
    }
  return 0;
}
