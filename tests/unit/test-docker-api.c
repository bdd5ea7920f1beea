/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The docker HTTP layer against the real engine (DOCKER_HOST): version
   negotiation, plain requests, the hijacked exec stream with stdin
   half-close, frames, a second exec while a first stream is open, engine
   errors, unreachable sockets, pulls from the local registry.  Skips (77)
   without an engine, except in CI where that fails.  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker/api.h"
#include "docker/frames.h"
#include "docker/json.h"

#define IMAGE "berth-test:latest"
static docker_client *client;
static char *container;

typedef struct out
{
  char *out, *err;
  size_t out_len, err_len;
} out;

static void
collect (void *userdata, int stream, const char *data, size_t len)
{
  out *o = userdata;
  char **b = stream == DOCKER_FRAME_STDERR ? &o->err : &o->out;
  size_t *n = stream == DOCKER_FRAME_STDERR ? &o->err_len : &o->out_len;
  *b = realloc (*b, *n + len + 1);
  memcpy (*b + *n, data, len);
  *n += len;
  (*b)[*n] = '\0';
}

static char *
exec_create (const char *const *argv, bool in)
{
  char *body = NULL, *path = NULL, *id = NULL;
  assert_int_equal (docker_json_exec_create (argv, NULL, NULL, in, &body, NULL), 0);
  assert_true (asprintf (&path, "/containers/%s/exec", container) > 0);
  docker_response r = { 0 };
  assert_int_equal (docker_request (client, "POST", path, body, 1 << 20, &r, NULL), 0);
  assert_int_equal (r.status, 201);
  assert_int_equal (docker_json_id (r.body, r.len, &id), 0);
  docker_response_clear (&r);
  free (body);
  free (path);
  return id;
}

static docker_hijack *
exec_start (const char *id)
{
  char *path = NULL;
  docker_hijack *h = NULL;
  long status = 0;
  berth_error *err = NULL;
  assert_true (asprintf (&path, "/exec/%s/start", id) > 0);
  int r = docker_hijack_start (client, path, "{\"Detach\":false,\"Tty\":false}", &h, &status, &err);
  if (r < 0)
    fail_msg ("hijack: %s", berth_error_message (err));
  assert_true (status == 101 || status == 200);
  free (path);
  return h;
}

static void
drain (docker_hijack *h, out *o)
{
  docker_frames d = DOCKER_FRAMES_INIT;
  char buf[65536];
  for (;;)
    {
      ssize_t n = docker_hijack_recv (h, buf, sizeof buf);
      if (n == -EAGAIN)
        {
          struct pollfd p = { .fd = docker_hijack_fd (h), .events = POLLIN };
          assert_true (poll (&p, 1, 20000) == 1);
          continue;
        }
      assert_true (n >= 0);
      if (n == 0)
        break;
      assert_int_equal (docker_frames_feed (&d, buf, (size_t)n, collect, o), 0);
    }
  assert_true (docker_frames_at_boundary (&d));
}

static int
exit_code (const char *id)
{
  char *path = NULL;
  docker_response r = { 0 };
  bool running;
  int code;
  assert_true (asprintf (&path, "/exec/%s/json", id) > 0);
  assert_int_equal (docker_request (client, "GET", path, NULL, 1 << 20, &r, NULL), 0);
  assert_int_equal (r.status, 200);
  assert_int_equal (docker_json_exec_inspect (r.body, r.len, &running, &code, NULL), 0);
  assert_false (running);
  docker_response_clear (&r);
  free (path);
  return code;
}

static void
test_negotiate (void **state)
{
  const char *v = docker_client_api_version (client);
  assert_non_null (v);
  assert_true (strncmp (v, "1.", 2) == 0);
  assert_non_null (docker_client_server_version (client));
  char *why = NULL;
  assert_int_equal (docker_client_ping (client, 2000, &why), 0);
  assert_null (why);
}

static void
test_exec_stdin_halfclose (void **state)
{
  const char *argv[] = { "sh", "-c", "cat; echo err1 >&2; printf no-newline; exit 3", NULL };
  char *id = exec_create (argv, true);
  docker_hijack *h = exec_start (id);
  const char *in = "hello via the hijack\n\xc3\xa9\n";
  size_t off = 0;
  while (off < strlen (in))
    {
      ssize_t n = docker_hijack_send (h, in + off, strlen (in) - off);
      if (n == -EAGAIN)
        continue;
      assert_true (n > 0);
      off += (size_t)n;
    }
  assert_int_equal (docker_hijack_close_write (h), 0);
  out o = { 0 };
  drain (h, &o);
  docker_hijack_free (h);
  assert_string_equal (o.out, "hello via the hijack\n\xc3\xa9\nno-newline");
  assert_string_equal (o.err, "err1\n");
  assert_int_equal (exit_code (id), 3);
  free (o.out), free (o.err), free (id);
}

static void
test_second_exec_while_open (void **state)
{
  const char *cat[] = { "cat", NULL };
  const char *echo[] = { "sh", "-c", "echo second; exit 5", NULL };
  char *id1 = exec_create (cat, true);
  docker_hijack *h1 = exec_start (id1);
  char *id2 = exec_create (echo, false);
  docker_hijack *h2 = exec_start (id2);
  out o2 = { 0 };
  drain (h2, &o2);
  docker_hijack_free (h2);
  assert_string_equal (o2.out, "second\n");
  assert_int_equal (exit_code (id2), 5);
  assert_true (docker_hijack_send (h1, "first\n", 6) == 6);
  docker_hijack_close_write (h1);
  out o1 = { 0 };
  drain (h1, &o1);
  docker_hijack_free (h1);
  assert_string_equal (o1.out, "first\n");
  assert_int_equal (exit_code (id1), 0);
  free (o1.out), free (o2.out), free (id1), free (id2);
}

static void
test_large_output (void **state)
{
  const char *argv[] = { "sh", "-c", "head -c 3000000 /dev/zero; head -c 100000 /dev/zero >&2", NULL };
  char *id = exec_create (argv, false);
  docker_hijack *h = exec_start (id);
  out o = { 0 };
  drain (h, &o);
  docker_hijack_free (h);
  assert_int_equal (o.out_len, 3000000);
  assert_int_equal (o.err_len, 100000);
  assert_int_equal (exit_code (id), 0);
  free (o.out), free (o.err), free (id);
}

static void
test_engine_errors (void **state)
{
  docker_hijack *h = NULL;
  berth_error *err = NULL;
  long status = 0;
  assert_true (docker_hijack_start (client, "/exec/nosuchexec0000/start", "{\"Detach\":false,\"Tty\":false}", &h, &status, &err) < 0);
  assert_int_equal (status, 404);
  assert_non_null (strstr (berth_error_message (err), "No such exec instance"));
  berth_error_free (err);

  docker_response r = { 0 };
  assert_int_equal (docker_request (client, "GET", "/containers/berth-no-such-container/json", NULL, 1 << 20, &r, NULL), 0);
  assert_int_equal (r.status, 404);
  char *m = docker_response_message (&r);
  assert_non_null (strstr (m, "No such container"));
  free (m);
  docker_response_clear (&r);

  /* A reply larger than the bound is refused.  */
  err = NULL;
  assert_true (docker_request (client, "GET", "/version", NULL, 10, &r, &err) < 0);
  assert_non_null (strstr (berth_error_message (err), "larger than"));
  berth_error_free (err);
}

static void
test_unreachable (void **state)
{
  char dir[] = "/tmp/berth-docker-test.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char sock[100], host[160];
  snprintf (sock, sizeof sock, "%s/missing.sock", dir);
  snprintf (host, sizeof host, "unix://%s", sock);
  char *saved = getenv ("DOCKER_HOST") ? strdup (getenv ("DOCKER_HOST")) : NULL;
  setenv ("DOCKER_HOST", host, 1);
  docker_client *c = NULL;
  assert_int_equal (docker_client_new (&c, NULL), 0);
  char *why = NULL;
  assert_int_equal (docker_client_ping (c, 1000, &why), BERTH_PROBE_UNAVAILABLE);
  assert_non_null (strstr (why, "does not exist"));
  free (why);
  berth_error *err = NULL;
  docker_response r = { 0 };
  assert_int_equal (docker_request (c, "GET", "/info", NULL, 1 << 20, &r, &err), -BERTH_E_UNAVAILABLE);
  assert_non_null (strstr (berth_error_message (err), "systemctl start docker"));
  berth_error_free (err);
  docker_client_free (c);

  /* A socket file nobody listens on: the engine is down.  */
  int fd = socket (AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", sock);
  assert_int_equal (bind (fd, (struct sockaddr *)&sa, sizeof sa), 0);
  close (fd);
  assert_int_equal (docker_client_new (&c, NULL), 0);
  assert_int_equal (docker_client_ping (c, 1000, &why), BERTH_PROBE_NEEDS_SETUP);
  assert_non_null (strstr (why, "not running"));
  free (why);
  docker_client_free (c);
  unlink (sock);
  rmdir (dir);

  setenv ("DOCKER_HOST", "ftp://me@host", 1);
  err = NULL;
  assert_true (docker_client_new (&c, &err) < 0);
  assert_non_null (strstr (berth_error_message (err), "not supported"));
  berth_error_free (err);
  /* ssh:// is supported (dial.c), but not a path after the host */
  setenv ("DOCKER_HOST", "ssh://me@host/var/run/docker.sock", 1);
  err = NULL;
  assert_true (docker_client_new (&c, &err) < 0);
  assert_non_null (strstr (berth_error_message (err), "path"));
  berth_error_free (err);
  setenv ("DOCKER_HOST", "unix://relative.sock", 1);
  err = NULL;
  assert_true (docker_client_new (&c, &err) < 0);
  berth_error_free (err);
  if (saved)
    setenv ("DOCKER_HOST", saved, 1);
  else
    unsetenv ("DOCKER_HOST");
  free (saved);
}

/* ---- a fake engine: a newer daemon whose minimum API is above ours ---- */

typedef struct fake
{
  int lfd;
  char paths[8][256];
  int n;
} fake;

static void *
fake_serve (void *arg)
{
  fake *f = arg;
  for (;;)
    {
      int c = accept (f->lfd, NULL, NULL);
      if (c < 0)
        return NULL;
      char buf[4096];
      size_t len = 0;
      for (;;)
        {
          ssize_t n = read (c, buf + len, sizeof buf - 1 - len);
          if (n <= 0)
            break;
          len += (size_t)n;
          buf[len] = '\0';
          char *end = strstr (buf, "\r\n\r\n");
          if (!end)
            continue;
          char method[16], path[256];
          if (sscanf (buf, "%15s %255s", method, path) != 2)
            break;
          if (f->n < 8)
            snprintf (f->paths[f->n++], sizeof f->paths[0], "%s", path);
          const char *body;
          int status;
          if (strcmp (path, "/_ping") == 0)
            status = 200, body = "OK";
          else if (strncmp (path, "/v1.50/", 7) == 0)
            status = 200, body = "{\"NCPU\":2}";
          else
            status = 400, body = "{\"message\":\"client version 1.47 is too old. Minimum supported API version is 1.50, please upgrade your client to a newer version\"}";
          char resp[1024];
          int k = snprintf (resp, sizeof resp,
                            "HTTP/1.1 %d X\r\nApi-Version: 1.99\r\nServer: Docker/99.0.0 (linux)\r\nContent-Type: application/json\r\n"
                            "Content-Length: %zu\r\n\r\n%s",
                            status, strlen (body), body);
          if (write (c, resp, (size_t)k) != k)
            break;
          size_t used = (size_t)(end + 4 - buf);
          memmove (buf, buf + used, len - used);
          len -= used;
          buf[len] = '\0';
        }
      close (c);
    }
}

static void
test_negotiate_newer_engine (void **state)
{
  char dir[] = "/tmp/berth-docker-fake.XXXXXX";
  assert_non_null (mkdtemp (dir));
  char sock[100], host[160];
  snprintf (sock, sizeof sock, "%s/d.sock", dir);
  snprintf (host, sizeof host, "unix://%s", sock);
  fake f = { .lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0) };
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", sock);
  assert_int_equal (bind (f.lfd, (struct sockaddr *)&sa, sizeof sa), 0);
  assert_int_equal (listen (f.lfd, 8), 0);
  pthread_t t;
  pthread_create (&t, NULL, fake_serve, &f);
  char *saved = getenv ("DOCKER_HOST") ? strdup (getenv ("DOCKER_HOST")) : NULL;
  setenv ("DOCKER_HOST", host, 1);
  docker_client *c = NULL;
  assert_int_equal (docker_client_new (&c, NULL), 0);
  berth_error *err = NULL;
  assert_int_equal (docker_client_negotiate (c, &err), 0);
  /* Never more than we know (the engine offers 1.99).  */
  assert_string_equal (docker_client_api_version (c), DOCKER_API_MAX);
  assert_string_equal (docker_client_server_version (c), "99.0.0");
  docker_response r = { 0 };
  assert_int_equal (docker_request (c, "GET", "/info", NULL, 1 << 20, &r, &err), 0);
  /* The engine refused 1.47 and we moved to its minimum.  */
  assert_int_equal (r.status, 200);
  assert_string_equal (docker_client_api_version (c), "1.50");
  docker_response_clear (&r);
  docker_client_free (c);
  assert_string_equal (f.paths[0], "/_ping");
  assert_string_equal (f.paths[1], "/v" DOCKER_API_MAX "/info");
  assert_string_equal (f.paths[2], "/v1.50/info");
  shutdown (f.lfd, SHUT_RDWR);
  close (f.lfd);
  pthread_join (t, NULL);
  unlink (sock);
  rmdir (dir);
  if (saved)
    setenv ("DOCKER_HOST", saved, 1);
  else
    unsetenv ("DOCKER_HOST");
  free (saved);
}

static int
count_records (void *userdata, const char *data, size_t len)
{
  return docker_pull_parser_feed (userdata, data, len);
}

typedef struct pull_seen
{
  int records;
  char error[512];
} pull_seen;

static void
seen (void *userdata, const char *status, const char *id, int64_t cur, int64_t tot, const char *error)
{
  pull_seen *s = userdata;
  s->records++;
  if (error)
    snprintf (s->error, sizeof s->error, "%s", error);
}

/* CI=true or BERTH_TEST_MUST_WORK: a missing engine fails.  Empty is
   unset, as ${CI:-} in the shell suites (debian/rules passes CI=).  */
static bool
must_work (void)
{
  const char *ci = getenv ("CI"), *must = getenv ("BERTH_TEST_MUST_WORK");
  return (ci && *ci) || (must && *must);
}

static void
test_pull_local_registry (void **state)
{
  docker_response r = { 0 };
  if (docker_request (client, "GET", "/distribution/127.0.0.1:5000/berth-test-api:latest/json", NULL, 1 << 20, &r, NULL) < 0
      || (system ("curl -fsS http://127.0.0.1:5000/v2/ >/dev/null 2>&1") != 0))
    {
      docker_response_clear (&r);
      if (must_work ())
        fail_msg ("no local registry on 127.0.0.1:5000 (run tests/integration/setup/docker.sh)");
      skip ();
    }
  docker_response_clear (&r);
  docker_request (client, "DELETE", "/images/127.0.0.1:5000/berth-test-api:latest", NULL, 1 << 20, &r, NULL);
  docker_response_clear (&r);
  pull_seen s = { 0 };
  docker_stream_parser *p = docker_pull_parser_new (seen, &s);
  assert_int_equal (docker_request_stream (client, "POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fberth-test-api&tag=latest", NULL,
                                           count_records, p, &r, NULL),
                    0);
  assert_int_equal (r.status, 200);
  assert_int_equal (docker_pull_parser_finish (p), 0);
  docker_pull_parser_free (p);
  docker_response_clear (&r);
  assert_true (s.records > 0);
  assert_string_equal (s.error, "");
  assert_int_equal (docker_request (client, "GET", "/images/127.0.0.1:5000/berth-test-api:latest/json", NULL, 1 << 22, &r, NULL), 0);
  assert_int_equal (r.status, 200);
  docker_response_clear (&r);
  docker_request (client, "DELETE", "/images/127.0.0.1:5000/berth-test-api:latest", NULL, 1 << 20, &r, NULL);
  docker_response_clear (&r);

  /* No such image: an error before or inside the stream.  */
  memset (&s, 0, sizeof s);
  p = docker_pull_parser_new (seen, &s);
  assert_int_equal (docker_request_stream (client, "POST", "/images/create?fromImage=127.0.0.1%3A5000%2Fno-such-image&tag=latest", NULL,
                                           count_records, p, &r, NULL),
                    0);
  assert_true (r.status != 200 || s.error[0]);
  docker_pull_parser_free (p);
  docker_response_clear (&r);
}

static int
setup (void **state)
{
  const char *cmd[] = { "sleep", "infinity", NULL };
  const char *labels[] = { "berth=1", "berth.env=api-unit-test", NULL };
  const char *caps[] = { "CHOWN", NULL };
  docker_create_opts o = { .image = IMAGE, .cmd = cmd, .labels = labels, .cap_add = caps, .init = true, .network_none = true };
  char *body = NULL;
  docker_response r = { 0 };
  berth_error *err = NULL;
  assert_int_equal (docker_json_container_create (&o, &body, NULL), 0);
  if (docker_request (client, "POST", "/containers/create", body, 1 << 20, &r, &err) < 0)
    fail_msg ("%s", berth_error_message (err));
  if (r.status != 201)
    fail_msg ("create: %ld %s (is %s built? run tests/integration/setup/docker.sh)", r.status, r.body, IMAGE);
  assert_int_equal (docker_json_id (r.body, r.len, &container), 0);
  docker_response_clear (&r);
  free (body);
  char *path = NULL;
  assert_true (asprintf (&path, "/containers/%s/start", container) > 0);
  assert_int_equal (docker_request (client, "POST", path, NULL, 1 << 20, &r, NULL), 0);
  assert_int_equal (r.status, 204);
  docker_response_clear (&r);
  free (path);
  return 0;
}

static int
teardown (void **state)
{
  char *path = NULL;
  docker_response r = { 0 };
  if (container && asprintf (&path, "/containers/%s?force=1", container) > 0)
    docker_request (client, "DELETE", path, NULL, 1 << 20, &r, NULL);
  docker_response_clear (&r);
  free (path);
  free (container);
  return 0;
}

int
main (void)
{
  berth_error *err = NULL;
  bool must = must_work ();
  char *why = NULL;
  if (docker_client_new (&client, &err) < 0)
    {
      fprintf (stderr, "%s\n", berth_error_message (err));
      return must ? 1 : 77;
    }
  if (docker_client_ping (client, 2000, &why) != 0)
    {
      fprintf (stderr, "no Docker engine: %s\n", why);
      return must ? 1 : 77;
    }
  if (docker_client_negotiate (client, &err) < 0)
    {
      fprintf (stderr, "%s\n", berth_error_message (err));
      return 1;
    }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_negotiate),
    cmocka_unit_test (test_exec_stdin_halfclose),
    cmocka_unit_test (test_second_exec_while_open),
    cmocka_unit_test (test_large_output),
    cmocka_unit_test (test_engine_errors),
    cmocka_unit_test (test_unreachable),
    cmocka_unit_test (test_negotiate_newer_engine),
    cmocka_unit_test (test_pull_local_registry),
  };
  int r = cmocka_run_group_tests (tests, setup, teardown);
  docker_client_free (client);
  return r;
}
