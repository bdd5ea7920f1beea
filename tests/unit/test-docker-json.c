/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: Docker JSON builders and parsers (malformed and oversized
   bodies), the pull-stream parser under any chunking, label sanitising,
   image references, sizes, times.  */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include "docker/helpers.h"
#include "docker/json.h"

static void
test_create_body (void **state)
{
  const char *cmd[] = { "sleep", "infinity", NULL };
  const char *env[] = { "FOO=bar baz", "Q=\"quoted\"", NULL };
  const char *labels[] = { "berth=1", "berth.env=abc", NULL };
  const char *binds[] = { "/h:/c:ro", NULL };
  const char *caps[] = { "CHOWN", NULL };
  docker_create_opts o = { .image = "img:1", .cmd = cmd, .env = env, .labels = labels, .binds = binds, .cap_add = caps, .init = true, .no_new_privileges = true, .network_none = true, .pids_limit = 256, .memory = 1 << 30, .nano_cpus = 1000000000, .shm_size = 1 << 30 };
  char *body = NULL;
  size_t len = 0;
  assert_int_equal (docker_json_container_create (&o, &body, &len), 0);
  assert_int_equal (strlen (body), len);
  assert_non_null (strstr (body, "\"Image\":\"img:1\""));
  assert_non_null (strstr (body, "\"Cmd\":[\"sleep\",\"infinity\"]"));
  assert_non_null (strstr (body, "\"Env\":[\"FOO=bar baz\",\"Q=\\\"quoted\\\"\"]"));
  assert_non_null (strstr (body, "\"Labels\":{\"berth\":\"1\",\"berth.env\":\"abc\"}"));
  assert_non_null (strstr (body, "\"CapDrop\":[\"ALL\"]"));
  assert_non_null (strstr (body, "\"CapAdd\":[\"CHOWN\"]"));
  assert_non_null (strstr (body, "\"SecurityOpt\":[\"no-new-privileges\"]"));
  assert_non_null (strstr (body, "\"NetworkMode\":\"none\""));
  assert_non_null (strstr (body, "\"Init\":true"));
  assert_non_null (strstr (body, "\"PidsLimit\":256"));
  assert_non_null (strstr (body, "\"/tmp\":\"rw,nosuid,size=512m\""));
  assert_non_null (strstr (body, "\"/run\":\"rw,noexec,nosuid,size=64m\""));
  assert_non_null (strstr (body, "\"Binds\":[\"/h:/c:ro\"]"));
  /* Labels at the top level, not in HostConfig.  */
  assert_true (strstr (body, "\"Labels\"") < strstr (body, "\"HostConfig\""));
  free (body);

  /* Redacted env: names only.  */
  o.redact_env = true;
  assert_int_equal (docker_json_container_create (&o, &body, &len), 0);
  assert_null (strstr (body, "bar baz"));
  assert_non_null (strstr (body, "\"Env\":[\"FOO\",\"Q\"]"));
  free (body);

  /* Invalid UTF-8 is rejected, never passed on.  */
  const char *bad_env[] = { "X=\xff\xfe", NULL };
  o.redact_env = false;
  o.env = bad_env;
  assert_int_equal (docker_json_container_create (&o, &body, &len), -EILSEQ);
  o.env = env;
  const char *bad_label[] = { "nolabelvalue", NULL };
  o.labels = bad_label;
  assert_int_equal (docker_json_container_create (&o, &body, &len), -EINVAL);
}

static void
test_exec_body (void **state)
{
  const char *argv[] = { "bash", "-c", "echo 'a b' \"$X\"\n\xc3\xa9", NULL };
  const char *env[] = { "TOKEN=s3cret", NULL };
  char *body = NULL;
  assert_int_equal (docker_json_exec_create (argv, "1000", env, true, &body, NULL), 0);
  assert_non_null (strstr (body, "\"AttachStdin\":true"));
  assert_non_null (strstr (body, "\"Tty\":false"));
  assert_non_null (strstr (body, "\"User\":\"1000\""));
  assert_non_null (strstr (body, "\"Env\":[\"TOKEN=s3cret\"]"));
  assert_non_null (strstr (body, "\"Cmd\":[\"bash\",\"-c\",\"echo 'a b' \\\"$X\\\"\\n\xc3\xa9\"]"));
  free (body);
  assert_int_equal (docker_json_exec_create (argv, NULL, NULL, false, &body, NULL), 0);
  assert_null (strstr (body, "User"));
  assert_null (strstr (body, "Env"));
  assert_non_null (strstr (body, "\"AttachStdin\":false"));
  free (body);
  const char *bad[] = { "printf", "\xc3", NULL };
  assert_int_equal (docker_json_exec_create (bad, NULL, NULL, false, &body, NULL), -EILSEQ);
  const char *empty[] = { NULL };
  assert_int_equal (docker_json_exec_create (empty, NULL, NULL, false, &body, NULL), -EINVAL);
}

static void
test_filters (void **state)
{
  const char *labels[] = { "berth=1", "berth.env=x", NULL };
  char *f = NULL;
  assert_int_equal (docker_json_filters (labels, "exited", &f), 0);
  assert_string_equal (f, "{\"label\":[\"berth=1\",\"berth.env=x\"],\"status\":[\"exited\"]}");
  free (f);
}

static void
test_error_message (void **state)
{
  char *m = NULL;
  const char *j = "{\"message\":\"No such container: abc\\nsecond line\"}";
  assert_int_equal (docker_json_error_message (j, strlen (j), &m), 0);
  assert_string_equal (m, "No such container: abc second line");
  free (m);
  /* text/plain errors (version range) */
  const char *t = "client version 1.11 is too old. Minimum supported API version is 1.12\n";
  assert_int_equal (docker_json_error_message (t, strlen (t), &m), 0);
  assert_string_equal (m, "client version 1.11 is too old. Minimum supported API version is 1.12");
  free (m);
  assert_int_equal (docker_json_error_message ("", 0, &m), 0);
  assert_string_equal (m, "(empty reply)");
  free (m);
  /* Huge body: bounded.  */
  char *big = malloc (100000);
  memset (big, 'x', 100000);
  assert_int_equal (docker_json_error_message (big, 100000, &m), 0);
  assert_true (strlen (m) <= 512);
  free (m);
  free (big);
  /* JSON without message: the text itself.  */
  assert_int_equal (docker_json_error_message ("{\"x\":1}", 7, &m), 0);
  assert_string_equal (m, "{\"x\":1}");
  free (m);
}

static void
test_id_version_inspect (void **state)
{
  char *id = NULL;
  const char *b = "{\"Id\":\"285e95c9abc\",\"Warnings\":[]}";
  assert_int_equal (docker_json_id (b, strlen (b), &id), 0);
  assert_string_equal (id, "285e95c9abc");
  free (id);
  assert_int_equal (docker_json_id ("{\"Id\":5}", 8, &id), -EPROTO);
  assert_int_equal (docker_json_id ("{\"Id\":\"../x\"}", 13, &id), -EPROTO);
  assert_int_equal (docker_json_id ("[1,2", 4, &id), -EPROTO);
  assert_int_equal (docker_json_id ("{\"Id\":\"a\"}\0xx", 13, &id), -EPROTO);

  char *v, *a, *mn;
  const char *vb = "{\"Version\":\"20.10.24\",\"ApiVersion\":\"1.41\",\"MinAPIVersion\":\"1.12\",\"Os\":\"linux\"}";
  assert_int_equal (docker_json_version (vb, strlen (vb), &v, &a, &mn), 0);
  assert_string_equal (v, "20.10.24");
  assert_string_equal (a, "1.41");
  assert_string_equal (mn, "1.12");
  free (v), free (a), free (mn);
  assert_int_equal (docker_json_version ("{}", 2, &v, &a, &mn), -EPROTO);

  bool running;
  int code;
  int64_t pid;
  const char *r1 = "{\"ID\":\"x\",\"Running\":true,\"ExitCode\":null,\"Pid\":0}";
  assert_int_equal (docker_json_exec_inspect (r1, strlen (r1), &running, &code, &pid), 0);
  assert_true (running);
  assert_int_equal (code, -1);
  const char *r2 = "{\"ID\":\"x\",\"Running\":false,\"ExitCode\":7,\"Pid\":12746}";
  assert_int_equal (docker_json_exec_inspect (r2, strlen (r2), &running, &code, &pid), 0);
  assert_false (running);
  assert_int_equal (code, 7);
  assert_int_equal (pid, 12746);
  const char *r3 = "{\"Running\":\"no\"}";
  assert_int_equal (docker_json_exec_inspect (r3, strlen (r3), &running, &code, &pid), -EPROTO);
  const char *r4 = "{\"Running\":false,\"ExitCode\":\"7\"}";
  assert_int_equal (docker_json_exec_inspect (r4, strlen (r4), &running, &code, &pid), -EPROTO);
}

static void
test_oversized (void **state)
{
  size_t n = DOCKER_JSON_MAX + 10;
  char *big = malloc (n);
  memset (big, ' ', n);
  big[0] = '{';
  big[n - 1] = '}';
  char *id;
  assert_int_equal (docker_json_id (big, n, &id), -E2BIG);
  free (big);
}

static long
maxrss_kib (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A hostile engine's deeply nested body is refused before a tree is
   built: 8 MiB of '[' (or of {"a":) must not cost hundreds of MB.  */
static void
test_nesting (void **state)
{
  size_t n = DOCKER_JSON_MAX;
  char *deep = malloc (n);
  assert_non_null (deep);
  memset (deep, '[', n);
  long before = maxrss_kib ();
  double t0 = now_s ();
  char *id = NULL;
  assert_int_equal (docker_json_id (deep, n, &id), -EPROTO);
  docker_container *v = NULL;
  size_t nv = 0;
  assert_int_equal (docker_json_container_list (deep, n, &v, &nv), -EPROTO);
  for (size_t i = 0; i + 5 <= n; i += 5)
    memcpy (deep + i, "{\"a\":", 5);
  docker_container c;
  assert_int_equal (docker_json_container_inspect (deep, n - n % 5, &c), -EPROTO);
  char *msg = NULL;
  assert_int_equal (docker_json_error_message (deep, n - n % 5, &msg), 0); /* falls back to the text */
  assert_int_equal (strlen (msg), 512);
  free (msg);
  double dt = now_s () - t0;
  long grew = maxrss_kib () - before;
  print_message ("nested 8 MiB bodies: refused in %.3f s, peak RSS grew by %ld KiB\n", dt, grew);
  assert_true (grew < 64 * 1024);
  free (deep);

  /* The limit: 64 levels pass, 65 do not; brackets inside strings and
     escaped quotes do not count.  */
  char buf[1024];
  for (int depth = 64; depth <= 65; depth++)
    {
      size_t k = 0;
      k += (size_t)sprintf (buf + k, "{\"Id\":\"abc\",\"s\":\"[[[{{{\\\"[[[\",\"x\":");
      for (int i = 1; i < depth; i++)
        buf[k++] = '[';
      for (int i = 1; i < depth; i++)
        buf[k++] = ']';
      buf[k++] = '}';
      buf[k] = '\0';
      id = NULL;
      int r = docker_json_id (buf, k, &id);
      if (depth == 64)
        {
          assert_int_equal (r, 0);
          assert_string_equal (id, "abc");
          free (id);
        }
      else
        assert_int_equal (r, -EPROTO);
    }
}

static void
test_containers (void **state)
{
  const char *list = "[{\"Id\":\"aaa\",\"State\":\"exited\",\"Created\":100,\"Labels\":{\"berth\":\"1\",\"berth.config\":\"d1\"}},"
                     "{\"Id\":\"bbb\",\"State\":\"running\",\"Created\":200,\"Labels\":{}},"
                     "{\"Names\":[\"/no-id\"]}, 5, {\"Id\":\"ccc\"}]";
  docker_container *v = NULL;
  size_t n = 0;
  assert_int_equal (docker_json_container_list (list, strlen (list), &v, &n), 0);
  assert_int_equal (n, 2);
  assert_string_equal (v[0].id, "aaa");
  assert_string_equal (v[0].state, "exited");
  assert_string_equal (v[0].config, "d1");
  assert_int_equal (v[0].created, 100);
  assert_null (v[1].config);
  docker_containers_free (v, n);
  assert_int_equal (docker_json_container_list ("{}", 2, &v, &n), -EPROTO);
  assert_int_equal (docker_json_container_list ("[]", 2, &v, &n), 0);
  assert_int_equal (n, 0);
  docker_containers_free (v, n);

  const char *ins = "{\"Id\":\"abc\",\"State\":{\"Status\":\"exited\",\"FinishedAt\":\"2026-05-28T13:45:00.123456789Z\"},"
                    "\"HostConfig\":{\"NetworkMode\":\"none\"},\"Config\":{\"Labels\":{\"berth.config\":\"zz\"}}}";
  docker_container c;
  assert_int_equal (docker_json_container_inspect (ins, strlen (ins), &c), 0);
  assert_string_equal (c.state, "exited");
  assert_string_equal (c.network_mode, "none");
  assert_string_equal (c.config, "zz");
  assert_string_equal (c.finished_at, "2026-05-28T13:45:00.123456789Z");
  docker_container_clear (&c);

  char *ep = NULL;
  const char *img = "{\"Id\":\"sha\",\"Config\":{\"Entrypoint\":[\"/init\",\"x\"],\"Cmd\":null}}";
  assert_int_equal (docker_json_image_entrypoint (img, strlen (img), &ep), 0);
  assert_string_equal (ep, "/init");
  free (ep);
  const char *img2 = "{\"Id\":\"sha\",\"Config\":{\"Entrypoint\":null}}";
  assert_int_equal (docker_json_image_entrypoint (img2, strlen (img2), &ep), 0);
  assert_null (ep);
  int64_t ncpu;
  assert_int_equal (docker_json_info_ncpu ("{\"NCPU\":2}", 10, &ncpu), 0);
  assert_int_equal (ncpu, 2);
}

/* ---- pull stream ---- */

typedef struct pulled
{
  int records;
  int errors;
  char last_status[256];
  char error[256];
  int64_t current, total;
} pulled;

static void
on_record (void *userdata, const char *status, const char *id, int64_t current, int64_t total, const char *error)
{
  pulled *p = userdata;
  p->records++;
  if (status)
    snprintf (p->last_status, sizeof p->last_status, "%s", status);
  if (error)
    {
      p->errors++;
      snprintf (p->error, sizeof p->error, "%s", error);
    }
  if (current >= 0)
    p->current = current, p->total = total;
}

static const char pull_ok[] = "{\"status\":\"Pulling from proto/testimg\",\"id\":\"v1\"}\r\n"
                              "{\"status\":\"Pulling fs layer\",\"progressDetail\":{},\"id\":\"60babeb090c8\"}\r\n"
                              "{\"status\":\"Downloading\",\"progressDetail\":{\"current\":32768,\"total\":2144650},\"progress\":\"[\\u003e   ]  32.77kB/2.145MB\",\"id\":\"60babeb090c8\"}\r\n"
                              "{\"status\":\"Pull complete\",\"progressDetail\":{},\"id\":\"60babeb090c8\"}\r\n"
                              "{\"status\":\"Digest: sha256:22156c58\"}\r\n"
                              "{\"status\":\"Status: Downloaded newer image for localhost:5055/proto/testimg:v1\"}\r\n";

static void
test_pull_every_split (void **state)
{
  size_t n = strlen (pull_ok);
  for (size_t i = 0; i <= n; i++)
    {
      pulled p = { 0 };
      docker_stream_parser *ps = docker_pull_parser_new (on_record, &p);
      assert_int_equal (docker_pull_parser_feed (ps, pull_ok, i), 0);
      assert_int_equal (docker_pull_parser_feed (ps, pull_ok + i, n - i), 0);
      assert_int_equal (docker_pull_parser_finish (ps), 0);
      docker_pull_parser_free (ps);
      assert_int_equal (p.records, 6);
      assert_int_equal (p.errors, 0);
      assert_int_equal (p.current, 32768);
      assert_int_equal (p.total, 2144650);
      assert_string_equal (p.last_status, "Status: Downloaded newer image for localhost:5055/proto/testimg:v1");
    }
}

static void
test_pull_errors (void **state)
{
  const char *s = "{\"status\":\"Pulling fs layer\",\"progressDetail\":{},\"id\":\"a\"}\r\n"
                  "{\"errorDetail\":{\"message\":\"unknown blob\"},\"error\":\"unknown blob (legacy)\"}\r\n";
  pulled p = { 0 };
  docker_stream_parser *ps = docker_pull_parser_new (on_record, &p);
  assert_int_equal (docker_pull_parser_feed (ps, s, strlen (s)), 0);
  assert_int_equal (docker_pull_parser_finish (ps), 0);
  docker_pull_parser_free (ps);
  assert_int_equal (p.errors, 1);
  assert_string_equal (p.error, "unknown blob");

  /* Malformed.  */
  ps = docker_pull_parser_new (on_record, &p);
  assert_int_equal (docker_pull_parser_feed (ps, "{\"a\":}", 6), -EPROTO);
  docker_pull_parser_free (ps);
  /* Truncated.  */
  ps = docker_pull_parser_new (on_record, &p);
  assert_int_equal (docker_pull_parser_feed (ps, "{\"status\":\"x\"", 13), 0);
  assert_int_equal (docker_pull_parser_finish (ps), -EPROTO);
  docker_pull_parser_free (ps);
  /* Arrays at the top level are not records.  */
  ps = docker_pull_parser_new (on_record, &p);
  assert_int_equal (docker_pull_parser_feed (ps, "[1]", 3), -EPROTO);
  docker_pull_parser_free (ps);
  /* A record too large is refused, not buffered without end.  */
  ps = docker_pull_parser_new (on_record, &p);
  size_t big = 200000;
  char *b = malloc (big);
  memcpy (b, "{\"status\":\"", 11);
  memset (b + 11, 'x', big - 11);
  assert_int_equal (docker_pull_parser_feed (ps, b, big), -EPROTO);
  free (b);
  docker_pull_parser_free (ps);
  /* Deep nesting is refused.  */
  ps = docker_pull_parser_new (on_record, &p);
  char deep[300];
  size_t k = 0;
  deep[k++] = '{';
  for (int i = 0; i < 40; i++)
    {
      memcpy (deep + k, "\"a\":{", 5);
      k += 5;
    }
  assert_int_equal (docker_pull_parser_feed (ps, deep, k), -EPROTO);
  docker_pull_parser_free (ps);
}

/* ---- helpers ---- */

static void
test_labels (void **state)
{
  char *s;
  s = docker_label_sanitize ("task/with:weird*chars");
  assert_string_equal (s, "task_with_weird_chars");
  free (s);
  s = docker_label_sanitize ("with/slash");
  assert_string_equal (s, "with_slash");
  free (s);
  s = docker_label_sanitize ("");
  assert_string_equal (s, "unknown");
  free (s);
  s = docker_label_sanitize (NULL);
  assert_string_equal (s, "unknown");
  free (s);
  char hundred[101];
  memset (hundred, 'a', 100);
  hundred[100] = '\0';
  s = docker_label_sanitize (hundred);
  assert_int_equal (strlen (s), 63);
  free (s);
  s = docker_label_sanitize ("ok-1.2_x\xc3\xa9");
  assert_string_equal (s, "ok-1.2_x__");
  free (s);
}

static void
test_image_split (void **state)
{
  char *r, *t;
  assert_int_equal (docker_image_split ("debian", &r, &t), 0);
  assert_string_equal (r, "debian");
  assert_string_equal (t, "latest");
  free (r), free (t);
  assert_int_equal (docker_image_split ("127.0.0.1:5000/berth-test:latest", &r, &t), 0);
  assert_string_equal (r, "127.0.0.1:5000/berth-test");
  assert_string_equal (t, "latest");
  free (r), free (t);
  assert_int_equal (docker_image_split ("localhost:5000/a/b", &r, &t), 0);
  assert_string_equal (r, "localhost:5000/a/b");
  assert_string_equal (t, "latest");
  free (r), free (t);
  assert_int_equal (docker_image_split ("a@sha256:abcd", &r, &t), 0);
  assert_string_equal (r, "a@sha256:abcd");
  assert_null (t);
  free (r);
  assert_int_equal (docker_image_split ("a:", &r, &t), -EINVAL);
  assert_int_equal (docker_image_split ("", &r, &t), -EINVAL);
  assert_int_equal (docker_image_split ("a b", &r, &t), -EINVAL);
}

static void
test_sizes_times_versions (void **state)
{
  int64_t v;
  assert_int_equal (docker_parse_size ("1g", &v), 0);
  assert_int_equal (v, 1073741824);
  assert_int_equal (docker_parse_size ("512m", &v), 0);
  assert_int_equal (v, 536870912);
  assert_int_equal (docker_parse_size ("64K", &v), 0);
  assert_int_equal (v, 65536);
  assert_int_equal (docker_parse_size ("1024", &v), 0);
  assert_int_equal (v, 1024);
  assert_int_equal (docker_parse_size ("  ", &v), 0);
  assert_int_equal (v, 0);
  assert_int_equal (docker_parse_size ("0", &v), 0);
  assert_int_equal (v, 0);
  assert_int_equal (docker_parse_size ("1gb", &v), 0);
  assert_int_equal (v, 1073741824);
  assert_int_equal (docker_parse_size ("lots", &v), -EINVAL);
  assert_int_equal (docker_parse_size ("1x", &v), -EINVAL);
  assert_int_equal (docker_parse_size ("-1m", &v), -EINVAL);

  assert_int_equal (docker_parse_time ("2026-05-28T13:45:00.123456789Z", &v), 0);
  assert_int_equal (v, 1779975900);
  assert_int_equal (docker_parse_time ("2026-05-28T15:45:00+02:00", &v), 0);
  assert_int_equal (v, 1779975900);
  assert_int_equal (docker_parse_time ("0001-01-01T00:00:00Z", &v), -ENOENT);
  assert_int_equal (docker_parse_time ("yesterday", &v), -EINVAL);
  assert_int_equal (docker_parse_time ("2026-05-28T13:45:00", &v), -EINVAL);

  assert_true (docker_version_cmp ("1.41", "1.9") > 0);
  assert_true (docker_version_cmp ("1.41", "1.47") < 0);
  assert_int_equal (docker_version_cmp ("1.44", "1.44"), 0);
  assert_true (docker_version_cmp ("2.0", "1.99") > 0);
  assert_true (docker_version_cmp ("garbage", "1.0") < 0);

  assert_true (docker_env_name_valid ("VALID_KEY", 9));
  assert_true (docker_env_name_valid ("_x1", 3));
  assert_false (docker_env_name_valid ("123bad", 6));
  assert_false (docker_env_name_valid ("", 0));
  assert_false (docker_env_name_valid ("also valid", 10));

  char d1[17], d2[17];
  docker_digest ("abc", 3, d1);
  docker_digest ("abd", 3, d2);
  assert_int_equal (strlen (d1), 16);
  assert_string_not_equal (d1, d2);
}

/* What a named environment's container was created with against the
   current settings (docker_settings_changes).  */
static void
test_settings_changes (void **state)
{
  (void) state;
  const char *a = "terminal.docker_image=debian:12\nterminal.container_memory=5120\nterminal.docker_network=true\n";
  assert_null (docker_settings_changes (a, a));
  char *c = docker_settings_changes (a, "terminal.docker_image=debian:12\nterminal.container_memory=1024\nterminal.docker_network=true\n");
  assert_string_equal (c, "terminal.container_memory: 5120 -> 1024");
  free (c);
  c = docker_settings_changes (a, "terminal.docker_image=alpine\nterminal.container_memory=5120\nterminal.docker_network=false\n");
  assert_string_equal (c, "terminal.docker_image: debian:12 -> alpine, terminal.docker_network: true -> false");
  free (c);
  /* a key only one side has, and a key that is a prefix of another */
  c = docker_settings_changes ("terminal.x=1\n", "terminal.x=1\nterminal.xy=2\n");
  assert_string_equal (c, "terminal.xy: (unset) -> 2");
  free (c);
  c = docker_settings_changes ("terminal.x=1\nterminal.gone=3", "terminal.x=1\n");
  assert_string_equal (c, "terminal.gone: 3 -> (unset)");
  free (c);
  /* an empty value is a value */
  c = docker_settings_changes ("terminal.docker_env=\n", "terminal.docker_env=abc\n");
  assert_string_equal (c, "terminal.docker_env:  -> abc");
  free (c);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_create_body),
    cmocka_unit_test (test_exec_body),
    cmocka_unit_test (test_filters),
    cmocka_unit_test (test_error_message),
    cmocka_unit_test (test_id_version_inspect),
    cmocka_unit_test (test_oversized),
    cmocka_unit_test (test_nesting),
    cmocka_unit_test (test_containers),
    cmocka_unit_test (test_pull_every_split),
    cmocka_unit_test (test_pull_errors),
    cmocka_unit_test (test_labels),
    cmocka_unit_test (test_image_split),
    cmocka_unit_test (test_sizes_times_versions),
    cmocka_unit_test (test_settings_changes),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
