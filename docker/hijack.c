/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hijack.c: the upgraded exec stream of the Docker Engine API -- a POST
   with Connection: Upgrade on a connection of its own (libcurl's
   CONNECT_ONLY), its response head read by hand, then raw bytes both
   ways.  The request lane is api.c; the two share the client and its
   connection options (api-private.h).  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "curl-load.h"

#include "api.h"
#include "api-private.h"
#include "helpers.h"

#define HEAD_MAX (16u << 10)

struct docker_hijack
{
  CURL *h;
  curl_socket_t fd;
  char *pending; /* stream bytes read with the response head */
  size_t pending_len, pending_off;
  bool write_closed;
};

/* ---- the hijacked stream ---- */

static int
wait_fd (curl_socket_t fd, short events, uint64_t deadline)
{
  for (;;)
    {
      uint64_t now = docker_now_ms ();
      if (now >= deadline)
        return -ETIMEDOUT;
      struct pollfd p = { .fd = fd, .events = events };
      int n = poll (&p, 1, (int)(deadline - now));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n > 0)
        return 0;
    }
}

static int
send_all (docker_hijack *hj, const char *data, size_t len, uint64_t deadline)
{
  while (len > 0)
    {
      size_t n = 0;
      CURLcode rc = curl_easy_send (hj->h, data, len, &n);
      if (rc == CURLE_AGAIN)
        {
          int r = wait_fd (hj->fd, POLLOUT, deadline);
          if (r < 0)
            return r;
          continue;
        }
      if (rc != CURLE_OK)
        return -EPIPE;
      data += n;
      len -= n;
    }
  return 0;
}

/* Read the response head, up to "\r\n\r\n".  On a plain socket the
   head is consumed exactly (MSG_PEEK), so stream bytes stay in the kernel
   and poll() keeps reporting them; through TLS extra bytes may be read and
   are returned in *RET_LEN beyond *RET_HEAD_END.  */
static int
read_head (docker_hijack *hj, bool peek, char *buf, size_t cap, size_t *ret_len, size_t *ret_head_end, uint64_t deadline)
{
  size_t len = 0;
  for (;;)
    {
      if (len >= cap)
        return -E2BIG;
      size_t n = 0;
      if (peek)
        {
          ssize_t k = recv (hj->fd, buf + len, cap - len, MSG_PEEK);
          if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            {
              int r = wait_fd (hj->fd, POLLIN, deadline);
              if (r < 0)
                return r;
              continue;
            }
          if (k <= 0)
            return -ECONNRESET;
          n = (size_t)k;
        }
      else
        {
          CURLcode rc = curl_easy_recv (hj->h, buf + len, cap - len, &n);
          if (rc == CURLE_AGAIN)
            {
              int r = wait_fd (hj->fd, POLLIN, deadline);
              if (r < 0)
                return r;
              continue;
            }
          if (rc != CURLE_OK || n == 0)
            return -ECONNRESET;
        }
      size_t from = len >= 3 ? len - 3 : 0;
      char *e = memmem (buf + from, len + n - from, "\r\n\r\n", 4);
      size_t take = n;
      if (e && peek)
        take = (size_t)(e - buf) + 4 - len;
      if (peek)
        {
          /* Consume exactly what belongs to the head.  */
          size_t got = 0;
          while (got < take)
            {
              ssize_t k = recv (hj->fd, buf + len + got, take - got, 0);
              if (k < 0 && errno == EINTR)
                continue;
              if (k <= 0)
                return -ECONNRESET;
              got += (size_t)k;
            }
        }
      len += take;
      if (e)
        {
          *ret_len = len;
          *ret_head_end = (size_t)(e - buf) + 4;
          return 0;
        }
    }
}

/* Content-Length of a response head, or -1.  */
static long
head_content_length (const char *head, size_t len)
{
  const char *p = head;
  const char *end = head + len;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      if (!nl)
        break;
      if ((size_t)(nl - p) > 15 && strncasecmp (p, "content-length:", 15) == 0)
        return strtol (p + 15, NULL, 10);
      p = nl + 1;
    }
  return -1;
}

int
docker_hijack_start (docker_client *c, const char *path, const char *body, docker_hijack **ret, long *ret_status, berth_error **reterr)
{
  char *url = NULL, *req = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  int r;

  if (ret_status)
    *ret_status = 0;
  r = docker_client_negotiate (c, reterr);
  if (r < 0 || (r = docker_curl_load (reterr)) < 0)
    return r;
  docker_hijack *hj = calloc (1, sizeof *hj);
  if (!hj)
    return berth_error_set (reterr, -ENOMEM, "out of memory");
  hj->fd = CURL_SOCKET_BAD;
  hj->h = curl_easy_init ();
  if (!hj->h || asprintf (&url, "%s/", c->base_url) < 0)
    {
      docker_hijack_free (hj);
      return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  long bound = docker_bounded_ms (c, c->timeout_ms);
  if (bound < 0)
    {
      docker_hijack_free (hj);
      return docker_deadline_error (c, reterr);
    }
  uint64_t deadline = docker_now_ms () + (uint64_t)bound;
  docker_set_conn_opts (c, hj->h, bound < 10000 ? bound : 10000);
  curl_easy_setopt (hj->h, CURLOPT_URL, url);
  curl_easy_setopt (hj->h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (hj->h, CURLOPT_CONNECT_ONLY, 1L);
  CURLcode rc = curl_easy_perform (hj->h);
  free (url);
  if (rc != CURLE_OK)
    {
      r = docker_unreachable_error (c, hj->h, rc, errbuf, reterr);
      docker_hijack_free (hj);
      return r;
    }
  if (curl_easy_getinfo (hj->h, CURLINFO_ACTIVESOCKET, &hj->fd) != CURLE_OK || hj->fd == CURL_SOCKET_BAD)
    {
      docker_hijack_free (hj);
      return berth_error_set (reterr, -BERTH_E_PROTOCOL, "libcurl gave no socket for the exec stream");
    }
  size_t blen = body ? strlen (body) : 0;
  int n = asprintf (&req,
                    "POST /v%s%s HTTP/1.1\r\nHost: docker\r\nUser-Agent: berth\r\nContent-Type: application/json\r\n"
                    "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: %zu\r\n\r\n%s",
                    c->api, path, blen, body ? body : "");
  if (n < 0)
    {
      docker_hijack_free (hj);
      return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  r = send_all (hj, req, (size_t)n, deadline);
  free (req);
  if (r < 0)
    {
      docker_hijack_free (hj);
      return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "sending the exec start to the Docker engine at %s failed: %s", c->display, strerror (-r));
    }
  char *buf = malloc (HEAD_MAX);
  size_t len = 0, head_end = 0;
  if (!buf)
    {
      docker_hijack_free (hj);
      return berth_error_set (reterr, -ENOMEM, "out of memory");
    }
  r = read_head (hj, !c->tls, buf, HEAD_MAX, &len, &head_end, deadline);
  if (r < 0)
    {
      free (buf);
      docker_hijack_free (hj);
      if (r == -ETIMEDOUT)
        return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "the Docker engine at %s did not answer the exec start in time", c->display);
      return berth_error_set (reterr, -BERTH_E_PROTOCOL, "bad reply from the Docker engine to the exec start: %s", strerror (-r));
    }
  int major, minor;
  long status = 0;
  berth_debugf ("docker", "HTTP POST /v%s%s (exec stream): %.*s", c->api, path, (int) strcspn (buf, "\r\n"), buf);
  if (sscanf (buf, "HTTP/%d.%d %ld", &major, &minor, &status) != 3)
    {
      free (buf);
      docker_hijack_free (hj);
      return berth_error_set (reterr, -BERTH_E_PROTOCOL, "bad status line from the Docker engine to the exec start");
    }
  if (ret_status)
    *ret_status = status;
  if (status != 101 && status != 200)
    {
      /* Collect the error body (Content-Length bounded), then report it.  */
      long want = head_content_length (buf, head_end);
      size_t have = len - head_end;
      while (want > 0 && have < (size_t)want && len < HEAD_MAX)
        {
          size_t got = 0;
          rc = curl_easy_recv (hj->h, buf + len, HEAD_MAX - len, &got);
          if (rc == CURLE_AGAIN)
            {
              if (wait_fd (hj->fd, POLLIN, deadline) < 0)
                break;
              continue;
            }
          if (rc != CURLE_OK || got == 0)
            break;
          len += got;
          have += got;
        }
      docker_response resp = { .status = status, .body = buf + head_end, .len = len - head_end };
      char *m = docker_response_message (&resp);
      r = berth_error_set (reterr, status == 404 ? -ENOENT : status == 409 ? -EBUSY
                                                                           : -BERTH_E_BACKEND,
                           "the Docker engine refused the exec start (HTTP %ld): %s", status, m ? m : "?");
      free (m);
      free (buf);
      docker_hijack_free (hj);
      return r;
    }
  if (len > head_end)
    {
      memmove (buf, buf + head_end, len - head_end);
      hj->pending = buf;
      hj->pending_len = len - head_end;
    }
  else
    free (buf);
  *ret = hj;
  return 0;
}

int
docker_hijack_fd (const docker_hijack *h)
{
  return (int)h->fd;
}

ssize_t
docker_hijack_recv (docker_hijack *h, void *buf, size_t len)
{
  if (h->pending)
    {
      size_t n = h->pending_len - h->pending_off;
      if (n > len)
        n = len;
      memcpy (buf, h->pending + h->pending_off, n);
      h->pending_off += n;
      if (h->pending_off == h->pending_len)
        {
          free (h->pending);
          h->pending = NULL;
        }
      return (ssize_t)n;
    }
  size_t n = 0;
  CURLcode rc = curl_easy_recv (h->h, buf, len, &n);
  if (rc == CURLE_AGAIN)
    return -EAGAIN;
  if (rc != CURLE_OK)
    return -ECONNRESET;
  return (ssize_t)n;
}

ssize_t
docker_hijack_send (docker_hijack *h, const void *buf, size_t len)
{
  if (h->write_closed)
    return -EPIPE;
  size_t n = 0;
  CURLcode rc = curl_easy_send (h->h, buf, len, &n);
  if (rc == CURLE_AGAIN)
    return -EAGAIN;
  if (rc != CURLE_OK)
    return -EPIPE;
  return (ssize_t)n;
}

int
docker_hijack_close_write (docker_hijack *h)
{
  if (h->write_closed)
    return 0;
  h->write_closed = true;
  /* For TLS this is a TCP FIN without close_notify; Go's TLS reader takes
     it as EOF at a record boundary.  */
  if (shutdown (h->fd, SHUT_WR) < 0 && errno != ENOTCONN)
    return -errno;
  return 0;
}

void
docker_hijack_free (docker_hijack *h)
{
  if (!h)
    return;
  if (h->h)
    curl_easy_cleanup (h->h); /* closes the socket */
  free (h->pending);
  free (h);
}
