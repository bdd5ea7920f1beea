/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* api.c: HTTP to the Docker Engine over DOCKER_HOST with libcurl (see
   api.h): the client, version negotiation and the request lane.  The
   upgraded exec stream is hijack.c; curl is included by these two only.  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "curl-load.h"

#include "api.h"
#include "api-private.h"
#include "helpers.h"
#include "host.h"
#include "json.h"

#define ERROR_BODY_MAX (64u << 10)

uint64_t
docker_now_ms (void)
{
  return berth_monotonic_usec () / 1000;
}

/* TIMEOUT_MS (0: none) capped by what is left of the caller's deadline;
   -1 when it has passed.  */
long
docker_bounded_ms (const docker_client *c, long timeout_ms)
{
  uint64_t now;
  long left;
  if (c->deadline_ms == 0)
    return timeout_ms;
  now = docker_now_ms ();
  if (now >= c->deadline_ms)
    return -1;
  left = (long) (c->deadline_ms - now);
  return timeout_ms <= 0 || left < timeout_ms ? left : timeout_ms;
}

int
docker_deadline_error (const docker_client *c, berth_error **reterr)
{
  return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "the Docker engine at %s did not answer before the timeout: is it overloaded or hung? (check with docker info)",
                          c->display ? c->display : "?");
}

void
docker_client_set_deadline (docker_client *c, uint64_t deadline_usec)
{
  c->deadline_ms = deadline_usec / 1000;
}

static char *
path_join (const char *dir, const char *name)
{
  char *s;
  if (asprintf (&s, "%s/%s", dir, name) < 0)
    return NULL;
  return s;
}

static bool
file_exists (const char *p)
{
  return p && access (p, R_OK) == 0;
}

/* TLS material of DIR (ca.pem, cert.pem, key.pem).  */
static void
tls_files (docker_client *c, const char *dir)
{
  c->ca = path_join (dir, "ca.pem");
  c->cert = path_join (dir, "cert.pem");
  c->key = path_join (dir, "key.pem");
}

/* The engine, chosen as the docker CLI chooses it (host.c).  */
static int
client_configure (docker_client *c, berth_error **reterr)
{
  docker_host_choice choice;
  int r = docker_host_resolve (&choice, reterr);
  if (r < 0)
    return r;
  const char *host = choice.host;
  c->docker_host = strdup (host);
  c->source = strdup (choice.source);
  if (!c->docker_host || !c->source)
    {
      docker_host_choice_clear (&choice);
      return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  /* what messages call it: DOCKER_HOST as set, or where it came from */
  bool from_env = strcmp (choice.source, "DOCKER_HOST") == 0 || strcmp (choice.source, "the default") == 0;
  if (strncmp (host, "unix://", 7) == 0)
    {
      const char *p = host + 7;
      if (*p != '/')
        r = berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s (%s): the socket path must be absolute", host, choice.source);
      else if (strlen (p) >= sizeof ((struct sockaddr_un *)0)->sun_path)
        r = berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s (%s): socket path too long (max 107 bytes)", host, choice.source);
      else
        {
          c->socket_path = strdup (p);
          c->base_url = strdup ("http://localhost");
        }
    }
  else if (strncmp (host, "ssh://", 6) == 0)
    {
      r = docker_ssh_parse (host, &c->ssh_target, reterr);
      if (r >= 0 && (r = docker_dial_listen (c->ssh_path, &c->ssh_listen)) < 0)
        r = berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "DOCKER_HOST=%s: cannot create the local socket for ssh: %s", host, strerror (-r));
      if (r >= 0)
        {
          c->ssh = true;
          c->ssh_control = docker_ssh_control_path ();
          c->base_url = strdup ("http://localhost");
        }
    }
  else if (strncmp (host, "tcp://", 6) == 0)
    {
      const char *hp = host + 6;
      size_t n = strcspn (hp, "/");
      if (n == 0 || n > 255)
        {
          docker_host_choice_clear (&choice);
          return berth_error_set (reterr, -BERTH_E_CONFIG, "DOCKER_HOST=%s (%s): expected tcp://HOST:PORT", host, c->source);
        }
      if (choice.context)
        {
          /* a context carries its own TLS material, the environment's
             DOCKER_TLS* do not apply (as with the docker CLI) */
          char *ca = choice.tls_dir ? path_join (choice.tls_dir, "ca.pem") : NULL;
          char *cert = choice.tls_dir ? path_join (choice.tls_dir, "cert.pem") : NULL;
          c->tls = file_exists (ca) || file_exists (cert);
          c->tls_verify = c->tls && !choice.skip_tls_verify;
          if (c->tls)
            tls_files (c, choice.tls_dir);
          free (ca);
          free (cert);
        }
      else
        {
          const char *v = getenv ("DOCKER_TLS_VERIFY"), *t = getenv ("DOCKER_TLS");
          c->tls_verify = v && *v;
          c->tls = c->tls_verify || (t && *t);
        }
      bool has_port = memchr (hp, ':', n) != NULL && hp[0] != '[';
      if (hp[0] == '[')
        has_port = n > 0 && memchr (hp, ']', n) && ((const char *)memchr (hp, ']', n))[1] == ':';
      if (asprintf (&c->base_url, "%s://%.*s%s", c->tls ? "https" : "http", (int)n, hp,
                    has_port ? "" : (c->tls ? ":2376" : ":2375"))
          < 0)
        c->base_url = NULL;
      if (c->tls && !choice.context)
        {
          const char *dir = getenv ("DOCKER_CERT_PATH");
          char *def = NULL;
          if (!dir || !*dir)
            {
              const char *home = getenv ("HOME");
              if (home && asprintf (&def, "%s/.docker", home) < 0)
                def = NULL;
              dir = def;
            }
          if (dir)
            tls_files (c, dir);
          free (def);
          if (c->tls_verify && !file_exists (c->ca))
            r = berth_error_set (reterr, -BERTH_E_CONFIG,
                                 "DOCKER_TLS_VERIFY is set but %s is missing: set DOCKER_CERT_PATH to the directory with ca.pem, cert.pem and key.pem",
                                 c->ca ? c->ca : "ca.pem");
        }
      else if (c->tls_verify && !file_exists (c->ca))
        r = berth_error_set (reterr, -BERTH_E_CONFIG, "%s verifies TLS but %s/ca.pem is missing: recreate the context with its certificates, or set SkipTLSVerify",
                             c->source, choice.tls_dir ? choice.tls_dir : "its TLS directory");
    }
  else
    r = berth_error_set (reterr, -BERTH_E_CONFIG,
                         "DOCKER_HOST=%s (%s) is not supported: use unix:///path/to/docker.sock, tcp://HOST:PORT or ssh://[USER@]HOST[:PORT]",
                         host, c->source);
  if (r >= 0)
    {
      if (asprintf (&c->display, "%s%s%s%s", host, c->tls ? " (TLS)" : "", from_env ? "" : " from ", from_env ? "" : choice.source) < 0)
        c->display = NULL;
      if (!c->display || !c->base_url || (!c->socket_path && strncmp (host, "unix://", 7) == 0))
        r = berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  docker_host_choice_clear (&choice);
  return r;
}

int
docker_client_new (docker_client **ret, berth_error **reterr)
{
  docker_client *c = calloc (1, sizeof *c);
  if (!c)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  c->timeout_ms = 120000;
  c->ssh_listen = -1;
  int r = client_configure (c, reterr);
  if (r < 0)
    {
      docker_client_free (c);
      return r;
    }
  /* libcurl and the handle come with the first request (curl-load.h) */
  *ret = c;
  return 0;
}

/* C's handle, libcurl loaded first: 0, or < 0 with *RETERR.  */
static int
client_easy (docker_client *c, berth_error **reterr)
{
  int r = docker_curl_load (reterr);
  if (r < 0 || c->easy)
    return r;
  c->easy = curl_easy_init ();
  return c->easy ? 0 : berth_error_set (reterr, -ENOMEM, "curl_easy_init failed");
}

void
docker_client_free (docker_client *c)
{
  if (!c)
    return;
  if (c->easy)
    curl_easy_cleanup (c->easy);
  for (size_t i = 0; i < c->n_dials; i++)
    docker_dial_free (&c->dials[i]);
  free (c->dials);
  if (c->ssh_listen >= 0)
    {
      close (c->ssh_listen);
      docker_dial_unlisten (c->ssh_path);
    }
  docker_ssh_target_clear (&c->ssh_target);
  free (c->ssh_control);
  free (c->source);
  free (c->display);
  free (c->docker_host);
  free (c->socket_path);
  free (c->base_url);
  free (c->ca);
  free (c->cert);
  free (c->key);
  free (c->server_version);
  free (c);
}

const char *
docker_client_host (const docker_client *c)
{
  return c->display;
}

const char *
docker_client_docker_host (const docker_client *c)
{
  return c->docker_host;
}

const char *
docker_client_api_version (const docker_client *c)
{
  return c->negotiated ? c->api : NULL;
}

const char *
docker_client_server_version (const docker_client *c)
{
  return c->server_version;
}

const char *
docker_client_engine (const docker_client *c)
{
  return c->podman ? "Podman" : "Docker";
}

/* ---- ssh:// (dial.c): libcurl's socket is an ssh child's stdin/stdout ---- */

static curl_socket_t
ssh_open (void *clientp, curlsocktype purpose, struct curl_sockaddr *address)
{
  docker_client *c = clientp;
  (void)purpose;
  (void)address;
  /* forget the children that are gone (but the last one: its stderr
     explains a failure) */
  size_t keep = 0;
  for (size_t i = 0; i < c->n_dials; i++)
    {
      docker_dial *d = &c->dials[i];
      if (i != c->last_dial && d->fd < 0 && docker_dial_reap (d, 0))
        {
          docker_dial_free (d);
          continue;
        }
      if (i == c->last_dial)
        c->last_dial = keep;
      c->dials[keep++] = *d;
    }
  c->n_dials = keep;
  docker_dial *v = realloc (c->dials, (c->n_dials + 1) * sizeof *v);
  if (!v)
    return CURL_SOCKET_BAD;
  c->dials = v;
  docker_dial *d = &c->dials[c->n_dials];
  int r = docker_dial_spawn (&c->ssh_target, c->ssh_control, c->ssh_listen, d);
  if (r < 0)
    {
      berth_debugf ("docker", "cannot start ssh for %s: %s", c->docker_host, strerror (-r));
      return CURL_SOCKET_BAD;
    }
  berth_debugf ("docker", "ssh child %d carries a connection to %s", (int)d->pid, c->docker_host);
  c->last_dial = c->n_dials++;
  return d->fd;
}

static int
ssh_close (void *clientp, curl_socket_t fd)
{
  docker_client *c = clientp;
  for (size_t i = 0; i < c->n_dials; i++)
    if (c->dials[i].fd == fd)
      {
        docker_dial_close (&c->dials[i]);
        (void)docker_dial_reap (&c->dials[i], 0);
        return 0;
      }
  close (fd);
  return 0;
}

/* Why the last ssh connection failed: one line, or NULL.  */
static char *
ssh_failure (docker_client *c)
{
  if (c->n_dials == 0)
    return berth_find_program ("ssh") ? NULL : strdup ("ssh is not installed (apt install openssh-client)");
  docker_dial *d = &c->dials[c->last_dial];
  /* ssh exits soon after it failed (or after its stdin closed) */
  (void)docker_dial_reap (d, 2000);
  char *line = docker_dial_stderr (d);
  if (!line && d->pid == 0 && WIFEXITED (d->status) && WEXITSTATUS (d->status) == 127)
    line = strdup ("ssh could not be started");
  return line;
}

/* Connection options shared by requests and hijacks.  */
void
docker_set_conn_opts (docker_client *c, CURL *h, long connect_ms)
{
  curl_easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt (h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt (h, CURLOPT_PROXY, "");
  if (c->socket_path)
    curl_easy_setopt (h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path);
  if (c->ssh)
    {
      curl_easy_setopt (h, CURLOPT_UNIX_SOCKET_PATH, c->ssh_path);
      curl_easy_setopt (h, CURLOPT_OPENSOCKETFUNCTION, ssh_open);
      curl_easy_setopt (h, CURLOPT_OPENSOCKETDATA, c);
      curl_easy_setopt (h, CURLOPT_CLOSESOCKETFUNCTION, ssh_close);
      curl_easy_setopt (h, CURLOPT_CLOSESOCKETDATA, c);
    }
  if (c->tls)
    {
      if (file_exists (c->ca))
        curl_easy_setopt (h, CURLOPT_CAINFO, c->ca);
      if (file_exists (c->cert) && file_exists (c->key))
        {
          curl_easy_setopt (h, CURLOPT_SSLCERT, c->cert);
          curl_easy_setopt (h, CURLOPT_SSLKEY, c->key);
        }
      curl_easy_setopt (h, CURLOPT_SSL_VERIFYPEER, c->tls_verify ? 1L : 0L);
      curl_easy_setopt (h, CURLOPT_SSL_VERIFYHOST, c->tls_verify ? 2L : 0L);
    }
}

/* A one-line reason and fix for a failure to reach the engine.  */
static char *
unreachable_reason (docker_client *c, CURLcode rc, long oserr, const char *errbuf)
{
  char *s = NULL;
  int r = -1;
  if (c->socket_path)
    {
      struct stat st;
      if (stat (c->socket_path, &st) < 0 && errno == ENOENT)
        oserr = ENOENT;
      else if (rc == CURLE_COULDNT_CONNECT && oserr == 0)
        oserr = ECONNREFUSED;
    }
  if (c->ssh && rc != CURLE_OPERATION_TIMEDOUT)
    {
      char *why = ssh_failure (c);
      const docker_ssh_target *t = &c->ssh_target;
      r = asprintf (&s, "cannot reach the Docker engine at %s: %s: check that `ssh%s%s%s%s %s docker system dial-stdio` works without a password "
                    "(docker installed there, its socket accessible to that user)",
                    c->display, why ? why : (errbuf && *errbuf ? errbuf : curl_easy_strerror (rc)), t->port ? " -p " : "", t->port ? t->port : "",
                    t->user ? " -l " : "", t->user ? t->user : "", t->host);
      free (why);
      return r < 0 ? NULL : s;
    }
  if (c->socket_path && (rc == CURLE_COULDNT_CONNECT || oserr == ENOENT))
    switch (oserr)
      {
      case ENOENT:
        r = asprintf (&s, "the Docker socket %s does not exist: is the Docker engine installed and running? Start it (sudo systemctl start docker) or set DOCKER_HOST", c->socket_path);
        break;
      case EACCES:
      case EPERM:
        r = asprintf (&s, "permission denied on the Docker socket %s: add your user to the docker group (sudo usermod -aG docker $USER, then log in again) or run as root", c->socket_path);
        break;
      case ECONNREFUSED:
        r = asprintf (&s, "the Docker engine is not running (nothing accepts connections on %s): start it (sudo systemctl start docker)", c->socket_path);
        break;
      default:
        r = asprintf (&s, "cannot connect to the Docker socket %s: %s", c->socket_path, strerror ((int)oserr));
        break;
      }
  else if (rc == CURLE_OPERATION_TIMEDOUT)
    r = asprintf (&s, "the Docker engine at %s did not answer in time: is it overloaded or hung? (check with docker info)", c->display);
  else if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
    r = asprintf (&s, "cannot connect to the Docker engine at %s: %s: check DOCKER_HOST and that the engine listens there",
                  c->display, errbuf && *errbuf ? errbuf : curl_easy_strerror (rc));
  else if (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CERTPROBLEM
           || rc == CURLE_SSL_CACERT_BADFILE)
    r = asprintf (&s, "TLS to the Docker engine at %s failed: %s: check DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem) and DOCKER_TLS_VERIFY",
                  c->display, errbuf && *errbuf ? errbuf : curl_easy_strerror (rc));
  else
    r = asprintf (&s, "the connection to the Docker engine at %s failed: %s", c->display,
                  errbuf && *errbuf ? errbuf : curl_easy_strerror (rc));
  return r < 0 ? NULL : s;
}

int
docker_unreachable_error (docker_client *c, CURL *h, CURLcode rc, const char *errbuf, berth_error **reterr)
{
  long oserr = 0;
  curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &oserr);
  char *why = unreachable_reason (c, rc, oserr, errbuf);
  int r = berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "%s", why ? why : "cannot reach the Docker engine");
  free (why);
  return r;
}

/* ---- plain requests ---- */

typedef struct headers
{
  char api_version[16];
  char server[128];
} headers;

static void
header_value (const char *line, size_t n, const char *name, char *dst, size_t cap)
{
  size_t k = strlen (name);
  if (n <= k || strncasecmp (line, name, k) != 0)
    return;
  line += k, n -= k;
  while (n > 0 && (*line == ' ' || *line == '\t'))
    line++, n--;
  while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
    n--;
  if (n >= cap)
    n = cap - 1;
  memcpy (dst, line, n);
  dst[n] = '\0';
}

static size_t
header_cb (char *data, size_t size, size_t nmemb, void *userdata)
{
  headers *h = userdata;
  size_t n = size * nmemb;
  header_value (data, n, "api-version:", h->api_version, sizeof h->api_version);
  header_value (data, n, "server:", h->server, sizeof h->server);
  return n;
}

typedef struct sink
{
  CURL *h;
  char *buf;
  size_t len, cap, max;
  bool overflow;
  docker_chunk_fn fn; /* streaming, for 2xx */
  void *userdata;
  int fn_error;
} sink;

static int
sink_append (sink *s, const char *data, size_t n)
{
  if (s->len + n > s->max)
    {
      s->overflow = true;
      return -1;
    }
  if (s->len + n + 1 > s->cap)
    {
      size_t cap = s->cap ? s->cap : 4096;
      while (cap < s->len + n + 1)
        cap *= 2;
      char *b = realloc (s->buf, cap);
      if (!b)
        return -1;
      s->buf = b;
      s->cap = cap;
    }
  memcpy (s->buf + s->len, data, n);
  s->len += n;
  s->buf[s->len] = '\0';
  return 0;
}

static size_t
sink_write (char *data, size_t size, size_t nmemb, void *userdata)
{
  sink *s = userdata;
  size_t n = size * nmemb;
  if (s->fn)
    {
      long status = 0;
      curl_easy_getinfo (s->h, CURLINFO_RESPONSE_CODE, &status);
      if (status >= 200 && status < 300)
        {
          int r = s->fn (s->userdata, data, n);
          if (r < 0)
            {
              s->fn_error = r;
              return 0;
            }
          return n;
        }
    }
  return sink_append (s, data, n) < 0 ? 0 : n;
}

/* BERTH_DEBUG=docker: one line per request, its status and duration.  */
static void
log_request (docker_client *c, CURL *h, const char *method, const char *url, CURLcode rc, uint64_t t0)
{
  long status = 0;
  size_t n = strlen (c->base_url);
  const char *path = strncmp (url, c->base_url, n) == 0 ? url + n : url;
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  if (rc == CURLE_OK)
    berth_debugf ("docker", "HTTP %s %s: %ld in %llu ms", method, path, status, (unsigned long long) (docker_now_ms () - t0));
  else
    berth_debugf ("docker", "HTTP %s %s: failed (%s) after %llu ms", method, path, curl_easy_strerror (rc), (unsigned long long) (docker_now_ms () - t0));
}

static int
do_request_h (docker_client *c, const char *method, const char *url, const char *body, size_t max, docker_chunk_fn fn,
              void *userdata, long timeout_ms, headers *hd, docker_response *ret, berth_error **reterr)
{
  int r = client_easy (c, reterr);
  if (r < 0)
    return r;
  CURL *h = c->easy;
  char errbuf[CURL_ERROR_SIZE] = "";
  sink s = { .h = h, .max = max, .fn = fn, .userdata = userdata };
  struct curl_slist *hdrs = NULL;

  timeout_ms = docker_bounded_ms (c, timeout_ms);
  if (timeout_ms < 0)
    return docker_deadline_error (c, reterr);
  curl_easy_reset (h);
  docker_set_conn_opts (c, h, timeout_ms > 0 && timeout_ms < 5000 ? timeout_ms : 5000);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, &s);
  if (hd)
    {
      curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, header_cb);
      curl_easy_setopt (h, CURLOPT_HEADERDATA, hd);
    }
  if (timeout_ms > 0)
    curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, timeout_ms);
  if (strcmp (method, "GET") == 0)
    curl_easy_setopt (h, CURLOPT_HTTPGET, 1L);
  else if (strcmp (method, "HEAD") == 0)
    curl_easy_setopt (h, CURLOPT_NOBODY, 1L);
  else
    {
      if (strcmp (method, "POST") != 0)
        curl_easy_setopt (h, CURLOPT_CUSTOMREQUEST, method);
      if (body || strcmp (method, "POST") == 0)
        {
          curl_easy_setopt (h, CURLOPT_POSTFIELDS, body ? body : "");
          curl_easy_setopt (h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? strlen (body) : 0));
        }
    }
  hdrs = curl_slist_append (hdrs, "Content-Type: application/json");
  hdrs = curl_slist_append (hdrs, "Expect:");
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, hdrs);

  uint64_t t0 = docker_now_ms ();
  CURLcode rc = curl_easy_perform (h);
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, NULL);
  log_request (c, h, method, url, rc, t0);
  curl_slist_free_all (hdrs);
  if (s.overflow)
    {
      free (s.buf);
      return berth_error_set (reterr, -BERTH_E_PROTOCOL, "the Docker engine's reply to %s was larger than %zu bytes", method, max);
    }
  if (rc == CURLE_WRITE_ERROR && s.fn_error)
    {
      free (s.buf);
      return s.fn_error;
    }
  if (rc != CURLE_OK)
    {
      free (s.buf);
      return docker_unreachable_error (c, h, rc, errbuf, reterr);
    }
  long status = 0;
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  if (!s.buf)
    {
      s.buf = strdup ("");
      if (!s.buf)
        return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  ret->status = status;
  ret->body = s.buf;
  ret->len = s.len;
  return 0;
}

static int
do_request (docker_client *c, const char *method, const char *url, const char *body, size_t max, docker_chunk_fn fn,
            void *userdata, long timeout_ms, docker_response *ret, berth_error **reterr)
{
  return do_request_h (c, method, url, body, max, fn, userdata, timeout_ms, NULL, ret, reterr);
}

void
docker_response_clear (docker_response *r)
{
  free (r->body);
  r->body = NULL;
  r->len = 0;
  r->status = 0;
}

char *
docker_response_message (const docker_response *r)
{
  char *m = NULL;
  if (docker_json_error_message (r->body ? r->body : "", r->len, &m) < 0)
    return NULL;
  return m;
}

char *
docker_url_escape (const char *s)
{
  /* what curl_easy_escape does (RFC 3986: all but the unreserved
     characters), without loading libcurl for it */
  static const char hex[] = "0123456789ABCDEF";
  char *e = malloc (strlen (s) * 3 + 1), *o = e;
  if (e == NULL)
    return NULL;
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~')
      *o++ = (char) *p;
    else
      {
        *o++ = '%';
        *o++ = hex[*p >> 4];
        *o++ = hex[*p & 15];
      }
  *o = '\0';
  return e;
}

static int
set_api (docker_client *c, const char *server_version, const char *api, const char *min_api, berth_error **reterr)
{
  const char *use = docker_version_cmp (api, DOCKER_API_MAX) < 0 ? api : DOCKER_API_MAX;
  /* An engine that no longer accepts our newest version: speak its
     oldest (the fields used here have been stable).  */
  if (min_api && docker_version_cmp (use, min_api) < 0)
    use = min_api;
  if (docker_version_cmp (use, DOCKER_API_MIN) < 0)
    return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "the Docker engine %s at %s speaks API %s; berth needs API %s or newer: upgrade Docker",
                            server_version, c->display, api, DOCKER_API_MIN);
  snprintf (c->api, sizeof c->api, "%s", use);
  char *v = strdup (server_version);
  if (!v)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  free (c->server_version);
  c->server_version = v;
  c->negotiated = true;
  return 0;
}

/* GET /version: slower (the engine asks its components), but it has
   MinAPIVersion.  */
static int
negotiate_version (docker_client *c, berth_error **reterr)
{
  char *url = NULL;
  docker_response resp = { 0 };
  if (asprintf (&url, "%s/version", c->base_url) < 0)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  int r = do_request (c, "GET", url, NULL, 1u << 20, NULL, NULL, 10000, &resp, reterr);
  free (url);
  if (r < 0)
    return r;
  char *version = NULL, *api = NULL, *min_api = NULL;
  if (resp.status != 200 || docker_json_version (resp.body, resp.len, &version, &api, &min_api) < 0)
    {
      char *m = docker_response_message (&resp);
      r = berth_error_set (reterr, -BERTH_E_PROTOCOL, "%s did not answer GET /version like a Docker engine (HTTP %ld: %s)",
                           c->display, resp.status, m ? m : "?");
      free (m);
      docker_response_clear (&resp);
      return r;
    }
  docker_response_clear (&resp);
  r = set_api (c, version, api, min_api, reterr);
  free (version);
  free (api);
  free (min_api);
  return r;
}

int
docker_client_negotiate (docker_client *c, berth_error **reterr)
{
  if (c->negotiated)
    return 0;
  /* Like the docker CLI: GET /_ping and its Api-Version header (cheap).
     An engine whose minimum is above our maximum says so on the first
     versioned request, which then adopts its minimum (see request).  */
  char *url = NULL;
  docker_response resp = { 0 };
  headers hd = { "", "" };
  if (asprintf (&url, "%s/_ping", c->base_url) < 0)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  int r = do_request_h (c, "GET", url, NULL, 4096, NULL, NULL, 10000, &hd, &resp, reterr);
  free (url);
  if (r < 0)
    return r;
  long status = resp.status;
  docker_response_clear (&resp);
  if (status != 200 || !hd.api_version[0] || strncmp (hd.api_version, "1.", 2) != 0)
    return negotiate_version (c, reterr);
  const char *server = hd.server;
  size_t k = strncmp (server, "Docker/", 7) == 0 ? 7 : strncmp (server, "Libpod/", 7) == 0 ? 7 : 0;
  c->podman = strncmp (server, "Libpod/", 7) == 0; /* "Libpod/4.3.1 (linux)" */
  if (k)
    {
      server += k;
      hd.server[k + strcspn (server, " ")] = '\0';
    }
  return set_api (c, *server ? server : "unknown", hd.api_version, NULL, reterr);
}

/* "client version 1.47 is too old. Minimum supported API version is 1.50":
   adopt the engine's minimum.  True when the request should be retried.  */
static bool
adopt_min_version (docker_client *c, const docker_response *r)
{
  static const char key[] = "Minimum supported API version is ";
  if (r->status != 400 || !r->body)
    return false;
  const char *p = strstr (r->body, key);
  if (!p)
    return false;
  p += sizeof key - 1;
  char v[16];
  size_t n = strspn (p, "0123456789.");
  if (n == 0 || n >= sizeof v)
    return false;
  memcpy (v, p, n);
  v[n] = '\0';
  if (docker_version_cmp (v, c->api) <= 0)
    return false;
  snprintf (c->api, sizeof c->api, "%s", v);
  return true;
}

static int
versioned_url (docker_client *c, const char *path, char **ret, berth_error **reterr)
{
  int r = docker_client_negotiate (c, reterr);
  if (r < 0)
    return r;
  if (asprintf (ret, "%s/v%s%s", c->base_url, c->api, path) < 0)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  return 0;
}

int
docker_request (docker_client *c, const char *method, const char *path, const char *body, size_t max, docker_response *ret, berth_error **reterr)
{
  char *url = NULL;
  int r = versioned_url (c, path, &url, reterr);
  if (r < 0)
    return r;
  r = do_request (c, method, url, body, max, NULL, NULL, c->timeout_ms, ret, reterr);
  free (url);
  if (r >= 0 && adopt_min_version (c, ret))
    {
      docker_response_clear (ret);
      if ((r = versioned_url (c, path, &url, reterr)) < 0)
        return r;
      r = do_request (c, method, url, body, max, NULL, NULL, c->timeout_ms, ret, reterr);
      free (url);
    }
  return r;
}

int
docker_request_nowait (docker_client *c, const char *method, const char *path, long wait_ms, long *ret_status, berth_error **reterr)
{
  char *url = NULL;
  int r = versioned_url (c, path, &url, reterr);
  if (r < 0)
    return r;
  docker_response resp = { 0 };
  berth_error *err = NULL;
  r = do_request (c, method, url, NULL, ERROR_BODY_MAX, NULL, NULL, wait_ms, &resp, &err);
  free (url);
  if (r >= 0)
    {
      *ret_status = resp.status;
      docker_response_clear (&resp);
      return 0;
    }
  long sent = 0;
  CURLcode rc = c->easy ? curl_easy_getinfo (c->easy, CURLINFO_REQUEST_SIZE, &sent) : CURLE_FAILED_INIT;
  /* Timed out after the whole request went out: the engine carries on.  */
  if (rc == CURLE_OK && sent > 0 && strstr (berth_error_message (err), "did not answer in time"))
    {
      berth_error_free (err);
      return 1;
    }
  if (reterr)
    *reterr = err;
  else
    berth_error_free (err);
  return r;
}

int
docker_request_stream (docker_client *c, const char *method, const char *path, const char *body, docker_chunk_fn fn, void *userdata, docker_response *ret, berth_error **reterr)
{
  char *url = NULL;
  int r = versioned_url (c, path, &url, reterr);
  if (r < 0)
    return r;
  /* No overall timeout: a pull may take long.  The callback can abort.  */
  r = do_request (c, method, url, body, ERROR_BODY_MAX, fn, userdata, 0, ret, reterr);
  free (url);
  return r;
}

int
docker_client_ping (docker_client *c, long timeout_ms, char **ret_reason)
{
  char *url = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  berth_error *err = NULL;
  if (client_easy (c, &err) < 0)
    {
      if (ret_reason)
        *ret_reason = strdup (berth_error_message (err));
      berth_error_free (err);
      return BERTH_PROBE_UNAVAILABLE;
    }
  if (asprintf (&url, "%s/_ping", c->base_url) < 0)
    return BERTH_PROBE_UNAVAILABLE;
  CURL *h = c->easy;
  sink s = { .h = h, .max = 4096 };
  /* over ssh the first answer waits for the ssh handshake */
  if (c->ssh && timeout_ms < 15000)
    timeout_ms = 15000;
  timeout_ms = docker_bounded_ms (c, timeout_ms);
  if (timeout_ms < 0)
    timeout_ms = 1;
  curl_easy_reset (h);
  docker_set_conn_opts (c, h, timeout_ms);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sink_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, timeout_ms);
  uint64_t t0 = docker_now_ms ();
  CURLcode rc = curl_easy_perform (h);
  log_request (c, h, "GET", url, rc, t0);
  free (url);
  long status = 0;
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  char *why = NULL;
  int state = 0;
  if (rc != CURLE_OK)
    {
      long oserr = 0;
      curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &oserr);
      why = unreachable_reason (c, rc, oserr, errbuf);
      /* Not installed at all vs. installed but not usable.  */
      state = c->socket_path && access (c->socket_path, F_OK) < 0 ? BERTH_PROBE_UNAVAILABLE : BERTH_PROBE_NEEDS_SETUP;
      if (oserr == EACCES || oserr == EPERM)
        state = BERTH_PROBE_NEEDS_SETUP;
    }
  else if (status != 200)
    {
      if (asprintf (&why, "%s answered GET /_ping with HTTP %ld: is DOCKER_HOST a Docker engine?", c->display, status) < 0)
        why = NULL;
      state = BERTH_PROBE_UNAVAILABLE;
    }
  free (s.buf);
  if (ret_reason)
    *ret_reason = why;
  else
    free (why);
  return state;
}
