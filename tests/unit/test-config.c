/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-config: the configuration tree (runtime/config.c).  */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <ftw.h>

#include <berth/provider.h>
#include "conf-private.h"
#include "conf.h"
#include "util.h"

/* rm -rf of a test directory (this test links the config sources alone,
   without provider-util.c's berth_remove_tree).  */
static int
rm_one (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void) st, (void) flag, (void) ftw;
  return remove (path) < 0 ? -1 : 0;
}

static int
rm_tree (const char *path)
{
  return nftw (path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#ifndef BERTH_FIXTURES_DIR
#define BERTH_FIXTURES_DIR "tests/fixtures/config"
#endif

/* A time bound in microseconds, scaled by $BERTH_TEST_TIME_FACTOR (for
   valgrind and sanitizer runs).  */
static uint64_t
time_limit (double seconds)
{
  const char *f = getenv ("BERTH_TEST_TIME_FACTOR");
  double factor = f ? strtod (f, NULL) : 1.0;
#if defined(__SANITIZE_ADDRESS__)
  factor *= 10;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  factor *= 10;
#endif
#endif
  return (uint64_t) (seconds * (factor > 0 ? factor : 1.0) * 1e6);
}

static char *
fixture (const char *name)
{
  const char *dir = getenv ("BERTH_CONFIG_FIXTURES");
  char *p = berth_strdup_printf ("%s/%s", dir ? dir : BERTH_FIXTURES_DIR, name);
  assert_non_null (p);
  return p;
}

/* Merge YAML (named "t.yaml") into a fresh tree; on failure return NULL
   and the message in *MSG (caller frees).  */
static berth_config *
load (const char *yaml, char **msg)
{
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  assert_non_null (cfg);
  int r = berth_config_merge_string (cfg, "t.yaml", yaml, strlen (yaml), &err);
  if (msg)
    *msg = NULL;
  if (r < 0)
    {
      assert_int_equal (r, -BERTH_E_CONFIG);
      if (msg)
        *msg = strdup (berth_error_message (err));
      berth_error_free (err);
      return berth_config_free (cfg);
    }
  assert_null (err);
  return cfg;
}

static void
expect_error (const char *yaml, const char *message)
{
  char *msg = NULL;
  berth_config *cfg = load (yaml, &msg);
  if (cfg != NULL)
    fail_msg ("accepted: %s", yaml);
  if (strcmp (msg, message) != 0)
    fail_msg ("for\n%s\nexpected: %s\n     got: %s", yaml, message, msg);
  free (msg);
}

static void
expect_error_prefix (const char *yaml, size_t len, const char *prefix)
{
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  int r = berth_config_merge_string (cfg, "t.yaml", yaml, len, &err);
  assert_int_equal (r, -BERTH_E_CONFIG);
  if (strncmp (berth_error_message (err), prefix, strlen (prefix)) != 0)
    fail_msg ("expected prefix: %s\n     got: %s", prefix, berth_error_message (err));
  berth_error_free (err);
  berth_config_free (cfg);
}

static void
assert_strv (char **v, const char *const *expected)
{
  assert_non_null (v);
  size_t n = berth_strv_length ((const char *const *) v);
  assert_int_equal (n, berth_strv_length (expected));
  for (size_t i = 0; i < n; i++)
    assert_string_equal (v[i], expected[i]);
  berth_strv_free (v);
}

static int
write_text (const char *path, const char *text)
{
  return berth_write_file_atomic (path, text, strlen (text), 0600);
}

static char *
read_text (const char *path)
{
  char *text = NULL;
  assert_int_equal (berth_read_file (path, 1 << 20, &text, NULL), 0);
  return text;
}

/* ---- reading ---- */

static void
test_valid_file (void **state)
{
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  char *path = fixture ("valid.yaml");
  assert_int_equal (berth_config_merge_file (cfg, path, true, &err), 0);
  assert_null (err);

  assert_string_equal (berth_config_string (cfg, "terminal.backend", "local"), "docker");
  assert_string_equal (berth_config_string (cfg, "terminal.cwd", NULL), "/home/me/project");
  assert_true (berth_config_double (cfg, "terminal.timeout", 0) == 180.5);
  assert_int_equal (berth_config_int (cfg, "terminal.lifetime_seconds", 0), 300);
  assert_strv (berth_config_strv (cfg, "terminal.env_passthrough"), (const char *const[]){ "GITHUB_ACTOR", "LANG", NULL });
  assert_string_equal (berth_config_string (cfg, "terminal.docker_image", NULL), "nikolaik/python-nodejs:python3.11-nodejs20");
  assert_strv (berth_config_strv (cfg, "terminal.docker_volumes"),
               (const char *const[]){ "/srv/data:/data:ro", "/tmp/cache:/cache", NULL });
  assert_false (berth_config_bool (cfg, "terminal.docker_network", true));
  assert_strv (berth_config_strv (cfg, "terminal.docker_env"),
               (const char *const[]){ "PYTHONUNBUFFERED=1", "GREETING=hello world", "EMPTY=", NULL });
  assert_true (berth_config_double (cfg, "terminal.container_cpu", 0) == 1.5);
  assert_int_equal (berth_config_int (cfg, "terminal.container_memory", 0), 5120);
  assert_true (berth_config_bool (cfg, "terminal.container_persistent", false));
  assert_string_equal (berth_config_string (cfg, "terminal.singularity_image", NULL), "docker://alpine:3.20");
  assert_int_equal (berth_config_int (cfg, "terminal.ssh_port", 22), 2222);
  /* "~/.ssh/..." is a string, not YAML's null "~".  */
  assert_string_equal (berth_config_string (cfg, "terminal.ssh_key", NULL), "~/.ssh/id_ed25519");
  assert_int_equal (berth_config_int (cfg, "terminal.bwrap_max_procs", 0), 256);
  assert_int_equal (berth_config_int (cfg, "tool_output.max_bytes", 0), 50000);
  assert_strv (berth_config_strv (cfg, "plugins.enabled"), (const char *const[]){ "acmebox", NULL });

  /* Walk the binds.  */
  const berth_config *binds = berth_config_lookup (cfg, "terminal.bwrap_binds");
  assert_int_equal (berth_config_kind (binds), BERTH_CONFIG_SEQUENCE);
  assert_int_equal (berth_config_count (binds), 2);
  const berth_config *b0 = berth_config_item (binds, 0);
  assert_int_equal (berth_config_kind (b0), BERTH_CONFIG_MAPPING);
  assert_int_equal (berth_config_count (b0), 3);
  assert_string_equal (berth_config_key (berth_config_item (b0, 1)), "dest");
  assert_string_equal (berth_config_scalar (berth_config_item (b0, 1)), "/tools");
  assert_true (berth_config_bool (b0, "readonly", false));
  assert_string_equal (berth_config_scalar (berth_config_item (binds, 1)), "/var/cache/apt:/var/cache/apt:ro");
  assert_string_equal (berth_config_string (cfg, "terminal.bwrap_binds.0.src", NULL), "/opt/tools");
  assert_null (berth_config_item (binds, 2));
  assert_string_equal (berth_config_key (binds), "bwrap_binds");
  assert_null (berth_config_key (berth_config_item (binds, 1)));

  /* Positions.  */
  char *where = berth_strdup_printf ("%s:8:12", path);
  assert_string_equal (berth_config_where (berth_config_lookup (cfg, "terminal.backend")), where);
  free (where);

  /* Other sections and unknown keys are kept, unchecked.  */
  assert_string_equal (berth_config_string (cfg, "model.provider", NULL), "someone");
  assert_int_equal (berth_config_kind (berth_config_lookup (cfg, "terminal.an_unknown_key")), BERTH_CONFIG_SEQUENCE);

  /* Absent keys and NULL nodes.  */
  assert_string_equal (berth_config_string (cfg, "terminal.nope", "def"), "def");
  assert_int_equal (berth_config_int (cfg, "terminal.backend", 7), 7); /* unparseable */
  assert_true (berth_config_double (cfg, "nope.nope", 2.5) == 2.5);
  assert_true (berth_config_bool (cfg, "terminal.backend", true));
  assert_null (berth_config_strv (cfg, "terminal.backend"));
  assert_null (berth_config_strv (cfg, "terminal.nope"));
  assert_int_equal (berth_config_kind (NULL), 0);
  assert_int_equal (berth_config_count (NULL), 0);
  assert_null (berth_config_scalar (NULL));
  assert_string_equal (berth_config_where (NULL), "");
  free (path);
  berth_config_free (cfg);
}

static void
test_layering (void **state)
{
  berth_config *cfg = berth_config_new ();
  const char *names[] = { "system.yaml", "user.yaml", "missing.yaml", "extra.yaml" };
  for (size_t i = 0; i < ARRAY_SIZE (names); i++)
    {
      char *p = fixture (names[i]);
      assert_int_equal (berth_config_merge_file (cfg, p, false, NULL), 0);
      free (p);
    }
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "docker");     /* user */
  assert_int_equal (berth_config_int (cfg, "terminal.timeout", 0), 30);                      /* extra */
  assert_string_equal (berth_config_string (cfg, "terminal.docker_image", NULL), "debian:12"); /* null keeps */
  /* sequences replace, mappings merge */
  assert_strv (berth_config_strv (cfg, "terminal.docker_volumes"), (const char *const[]){ "/c:/c", NULL });
  assert_strv (berth_config_strv (cfg, "terminal.docker_env"), (const char *const[]){ "A=1", "B=3", "C=4", NULL });
  assert_strv (berth_config_strv (cfg, "plugins.enabled"), (const char *const[]){ NULL });
  /* The position comes from the file that set the value.  */
  assert_non_null (strstr (berth_config_where (berth_config_lookup (cfg, "terminal.timeout")), "extra.yaml:2:12"));
  assert_non_null (strstr (berth_config_where (berth_config_lookup (cfg, "terminal.backend")), "user.yaml:2:12"));

  /* A missing file is an error only when it must exist.  */
  berth_error *err = NULL;
  assert_int_equal (berth_config_merge_file (cfg, "/nonexistent/berth.yaml", true, &err), -ENOENT);
  assert_non_null (strstr (berth_error_message (err), "/nonexistent/berth.yaml"));
  berth_error_free (err);
  /* A failed merge leaves the tree as it was.  */
  char *bad = fixture ("wrong-type.yaml");
  err = NULL;
  assert_int_equal (berth_config_merge_file (cfg, bad, false, &err), -BERTH_E_CONFIG);
  char *expected = berth_strdup_printf ("%s:3:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got 'abc'", bad);
  assert_string_equal (berth_error_message (err), expected);
  free (expected);
  berth_error_free (err);
  free (bad);
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "docker");
  assert_int_equal (berth_config_int (cfg, "terminal.timeout", 0), 30);
  berth_config_free (cfg);
}

static void
test_wrong_types (void **state)
{
  static const struct
  {
    const char *yaml;
    const char *message;
  } cases[] = {
    { "terminal:\n  backend: Docker\n", "t.yaml:2:12: terminal.backend: expected a backend name ([a-z0-9_]+), got 'Docker'" },
    { "terminal:\n  backend: [a]\n", "t.yaml:2:12: terminal.backend: expected a backend name ([a-z0-9_]+), got a list" },
    { "terminal:\n  cwd: [a]\n", "t.yaml:2:8: terminal.cwd: expected a string, got a list" },
    { "terminal:\n  timeout: abc\n", "t.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got 'abc'" },
    { "terminal:\n  timeout: -1\n", "t.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got '-1'" },
    { "terminal:\n  timeout: 1e20\n", "t.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got '1e20'" },
    { "terminal:\n  timeout: 2147483649\n", "t.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got '2147483649'" },
    { "terminal:\n  timeout: .nan\n", "t.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got '.nan'" },
    { "terminal:\n  lifetime_seconds: -5\n", "t.yaml:2:21: terminal.lifetime_seconds: expected an integer >= 0, got '-5'" },
    { "terminal:\n  env_passthrough: FOO\n", "t.yaml:2:20: terminal.env_passthrough: expected a list of strings, got 'FOO'" },
    { "terminal:\n  env_passthrough: [a, [b]]\n", "t.yaml:2:24: terminal.env_passthrough[1]: expected a string, got a list" },
    { "terminal:\n  container_cpu: lots\n", "t.yaml:2:18: terminal.container_cpu: expected a number >= 0, got 'lots'" },
    { "terminal:\n  container_memory: 1.5\n", "t.yaml:2:21: terminal.container_memory: expected an integer >= 0 (MB), got '1.5'" },
    { "terminal:\n  container_memory: 99999999999999999999\n",
      "t.yaml:2:21: terminal.container_memory: expected an integer >= 0 (MB), got '99999999999999999999'" },
    { "terminal:\n  container_persistent: 2\n",
      "t.yaml:2:25: terminal.container_persistent: expected a boolean (true/false, yes/no, on/off), got '2'" },
    { "tool_output:\n  max_bytes: 0\n", "t.yaml:2:14: tool_output.max_bytes: expected a positive integer, got '0'" },
    { "plugins:\n  enabled: acmebox\n", "t.yaml:2:12: plugins.enabled: expected a list of strings, got 'acmebox'" },
    { "plugins:\n  enabled: [~]\n", "t.yaml:2:13: plugins.enabled[0]: expected a string, got an empty value" },
    { "terminal: docker\n", "t.yaml:1:11: terminal: expected a mapping, got 'docker'" },
    { "terminal:\n  cwd: {}\n  timeout: 1\n", "t.yaml:2:8: terminal.cwd: expected a string, got a mapping" },
  };
  for (size_t i = 0; i < ARRAY_SIZE (cases); i++)
    expect_error (cases[i].yaml, cases[i].message);

  /* Long values are cut in messages, control characters replaced.  */
  char *msg = NULL;
  berth_config *cfg = load ("terminal:\n  timeout: \"a\\tbcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"\n", &msg);
  assert_null (cfg);
  assert_non_null (strstr (msg, "got 'a?bcdefg"));
  assert_non_null (strstr (msg, "...'"));
  assert_true (strlen (msg) < 200);
  free (msg);
}

static void
test_types_accepted (void **state)
{
  berth_config *cfg = load ("terminal:\n"
                            "  backend: my_box2\n"
                            "  timeout: 1e2\n"
                            "  ssh_port: \"2200\"\n"
                            "  docker_network: ON\n"
                            "  container_persistent: False\n"
                            "  container_cpu: 0\n"
                            "  lifetime_seconds: 0\n"
                            "  cwd: 123\n"
                            "  docker_image: ''\n"
                            "  ssh_host: ~\n"
                            "  docker_volumes: []\n"
                            "  bwrap_binds: ['/a:/b', '/c:/d:rw', {src: /e}]\n",
                            NULL);
  assert_non_null (cfg);
  assert_true (berth_config_double (cfg, "terminal.timeout", 0) == 100.0);
  assert_int_equal (berth_config_int (cfg, "terminal.ssh_port", 0), 2200);
  assert_true (berth_config_bool (cfg, "terminal.docker_network", false));
  assert_false (berth_config_bool (cfg, "terminal.container_persistent", true));
  assert_string_equal (berth_config_string (cfg, "terminal.cwd", NULL), "123");
  assert_string_equal (berth_config_string (cfg, "terminal.docker_image", NULL), "");
  /* A null known key is "not set".  */
  assert_null (berth_config_lookup (cfg, "terminal.ssh_host"));
  assert_string_equal (berth_config_string (cfg, "terminal.ssh_host", "d"), "d");
  assert_strv (berth_config_strv (cfg, "terminal.docker_volumes"), (const char *const[]){ NULL });
  berth_config_free (cfg);

  /* A null section is an empty one; an empty file is an empty mapping.  */
  cfg = load ("terminal:\nplugins: ~\n", NULL);
  assert_non_null (cfg);
  assert_int_equal (berth_config_kind (berth_config_lookup (cfg, "terminal")), BERTH_CONFIG_MAPPING);
  assert_int_equal (berth_config_count (berth_config_lookup (cfg, "plugins")), 0);
  berth_config_free (cfg);
  cfg = load ("", NULL);
  assert_non_null (cfg);
  assert_int_equal (berth_config_count (cfg), 0);
  berth_config_free (cfg);
  cfg = load ("# only a comment\n---\n...\n", NULL);
  assert_non_null (cfg);
  berth_config_free (cfg);
}

static void
test_unknown_ignored (void **state)
{
  berth_config *cfg = load ("terminal:\n"
                            "  backend: local\n"
                            "  some_later_switch: maybe\n"
                            "  some_future_key: {a: [1, 2]}\n"
                            "model: [not, a, mapping]\n"
                            "auxiliary:\n"
                            "  timeout: abc\n"
                            "tool_output:\n"
                            "  other: x\n",
                            NULL);
  assert_non_null (cfg);
  assert_string_equal (berth_config_string (cfg, "terminal.some_later_switch", NULL), "maybe");
  assert_string_equal (berth_config_string (cfg, "auxiliary.timeout", NULL), "abc");
  assert_string_equal (berth_config_string (cfg, "model.1", NULL), "a");
  assert_string_equal (berth_config_string (cfg, "terminal.some_future_key.a.1", NULL), "2");
  berth_config_free (cfg);
}

static void
test_malformed (void **state)
{
  char *path = fixture ("malformed.yaml");
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  assert_int_equal (berth_config_merge_file (cfg, path, true, &err), -BERTH_E_CONFIG);
  char *prefix = berth_strdup_printf ("%s:4:", path);
  if (strncmp (berth_error_message (err), prefix, strlen (prefix)) != 0 || !strstr (berth_error_message (err), "invalid YAML"))
    fail_msg ("got: %s", berth_error_message (err));
  free (prefix);
  free (path);
  berth_error_free (err);
  berth_config_free (cfg);

  expect_error_prefix ("a: b: c\n", 8, "t.yaml:1:5: invalid YAML: mapping values are not allowed");
  expect_error_prefix ("terminal:\n\tbackend: x\n", 22, "t.yaml:2:1: invalid YAML:");
  expect_error_prefix ("a: b\0c\n", 7, "t.yaml:1:5: invalid YAML: control characters are not allowed (byte 0x00)");
  expect_error_prefix ("a: \xff\n", 5, "t.yaml:1:4: invalid YAML: invalid leading UTF-8 octet");
  expect_error_prefix ("a:\n  b: \"\xc3\x28\"\n", 12, "t.yaml:2:8: invalid YAML: invalid trailing UTF-8 octet (byte 0x28)");
  expect_error_prefix ("a: \"x\\0y\"\n", 10, "t.yaml:1:4: a NUL character in a value is not allowed");
  expect_error ("a: 1\n---\nb: 2\n", "t.yaml:2:1: only one YAML document is allowed");
  expect_error ("a: 1\nb: 2\na: 3\n", "t.yaml:3:1: duplicate key 'a'");
  expect_error ("hello\n", "t.yaml:1:1: the top level must be a mapping, got 'hello'");
  expect_error ("- a\n- b\n", "t.yaml:1:1: the top level must be a mapping, got a list");
  expect_error ("? [a]\n: b\n", "t.yaml:1:3: a mapping key must be a scalar");
  expect_error_prefix ("terminal:\n  backend: \"docker\n", 29, "t.yaml:3:1: invalid YAML: found unexpected end of stream");
}

static void
test_limits (void **state)
{
  /* Over 1 MiB: rejected before parsing, from memory and from a file.  */
  size_t big = 1024 * 1024 + 1;
  char *text = malloc (big + 1);
  assert_non_null (text);
  memset (text, '#', big);
  text[big] = '\0';
  expect_error_prefix (text, big, "t.yaml: larger than 1048576 bytes");

  char dir[] = "/tmp/test-config-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char *path = berth_strdup_printf ("%s/huge.yaml", dir);
  assert_int_equal (berth_write_file_atomic (path, text, big, 0600), 0);
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  assert_int_equal (berth_config_merge_file (cfg, path, false, &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "larger than 1 MiB"));
  berth_error_free (err);
  /* Exactly 1 MiB of comments is fine.  */
  assert_int_equal (berth_write_file_atomic (path, text, big - 1, 0600), 0);
  assert_int_equal (berth_config_merge_file (cfg, path, false, NULL), 0);
  berth_config_free (cfg);
  free (text);
  rm_tree (dir);
  free (path);

  /* Nesting: 64 levels are fine, 65 are not; flow and block.  */
  berth_buf b = { 0 };
  for (int i = 0; i < 63; i++)
    berth_buf_puts (&b, "[");
  for (int i = 0; i < 63; i++)
    berth_buf_puts (&b, "]");
  char *ok = berth_strdup_printf ("a: %s\n", b.data);
  cfg = load (ok, NULL);
  assert_non_null (cfg);
  berth_config_free (cfg);
  free (ok);
  char *deep = berth_strdup_printf ("a: [%s]\n", b.data);
  expect_error (deep, "t.yaml:1:67: nesting deeper than 64 levels");
  free (deep);
  berth_buf_free (&b);
  for (int i = 0; i < 100000; i++)
    berth_buf_puts (&b, "[");
  expect_error_prefix (b.data, b.len, "t.yaml:1:65: nesting deeper than 64 levels");
  berth_buf_free (&b);
  for (int i = 0; i < 70; i++)
    berth_buf_printf (&b, "%*sk:\n", 2 * i, "");
  expect_error_prefix (b.data, b.len, "t.yaml:65:129: nesting deeper than 64 levels");
  berth_buf_free (&b);

  /* Many nodes: a flat list of 100001 items.  */
  berth_buf_puts (&b, "a:\n");
  for (int i = 0; i < 100001; i++)
    berth_buf_puts (&b, "- x\n");
  expect_error_prefix (b.data, b.len, "t.yaml:99999:3: more than 100000 nodes");
  berth_buf_free (&b);
  /* A wide mapping (duplicate detection must not be quadratic).  */
  for (int i = 0; i < 40000; i++)
    berth_buf_printf (&b, "k%d: %d\n", i, i);
  uint64_t t0 = berth_now_usec ();
  cfg = load (b.data, NULL);
  assert_non_null (cfg);
  assert_int_equal (berth_config_count (cfg), 40000);
  /* Merging it over itself stays fast too.  */
  assert_int_equal (berth_config_merge_string (cfg, "again", b.data, b.len, NULL), 0);
  assert_int_equal (berth_config_count (cfg), 40000);
  uint64_t wide = berth_now_usec () - t0;
  print_message ("40000-key mapping parsed and merged over itself in %.3f s\n", (double) wide / 1e6);
  assert_true (wide < time_limit (5));
  berth_config_free (cfg);
  berth_buf_free (&b);
}

static void
test_aliases (void **state)
{
  char *path = fixture ("aliases.yaml");
  berth_config *cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, path, true, NULL), 0);
  assert_string_equal (berth_config_string (cfg, "terminal.docker_image", NULL), "ubuntu:24.04");
  assert_strv (berth_config_strv (cfg, "terminal.docker_volumes"), (const char *const[]){ "/a:/a", "/b:/b", NULL });
  assert_strv (berth_config_strv (cfg, "terminal.bwrap_hide"), (const char *const[]){ "/a:/a", "/b:/b", NULL });
  berth_config_free (cfg);
  free (path);

  /* The billion laughs stop at the node budget, quickly.  */
  path = fixture ("laughs.yaml");
  cfg = berth_config_new ();
  berth_error *err = NULL;
  uint64_t t0 = berth_now_usec ();
  assert_int_equal (berth_config_merge_file (cfg, path, true, &err), -BERTH_E_CONFIG);
  uint64_t laughs = berth_now_usec () - t0;
  print_message ("billion laughs rejected in %.3f s\n", (double) laughs / 1e6);
  assert_true (laughs < time_limit (2));
  assert_non_null (strstr (berth_error_message (err), "more than 100000 nodes (with aliases expanded)"));
  berth_error_free (err);
  berth_config_free (cfg);
  free (path);

  /* An alias is checked like the value it stands for.  */
  expect_error ("x: &t abc\nterminal:\n  timeout: *t\n", "t.yaml:1:4: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got 'abc'");
  expect_error ("a: *nope\n", "t.yaml:1:4: unknown alias '*nope' (an anchor must be complete before it is used)");
  expect_error ("a: &x [*x]\n", "t.yaml:1:8: unknown alias '*x' (an anchor must be complete before it is used)");
  expect_error ("&k a: b\n", "t.yaml:1:1: anchors on mapping keys are not supported");
  /* An alias as a key is its scalar; as a value it nests within limits.  */
  cfg = load ("k: &k backend\nterminal:\n  *k : docker\n", NULL);
  assert_non_null (cfg);
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "docker");
  berth_config_free (cfg);
  berth_buf b = { 0 };
  berth_buf_puts (&b, "a: &a ");
  for (int i = 0; i < 40; i++)
    berth_buf_puts (&b, "[");
  for (int i = 0; i < 40; i++)
    berth_buf_puts (&b, "]");
  berth_buf_puts (&b, "\nb: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[*a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n");
  expect_error_prefix (b.data, b.len, "t.yaml:2:34: nesting deeper than 64 levels");
  berth_buf_free (&b);
}

static void
test_strv_mapping (void **state)
{
  berth_config *cfg = load ("terminal:\n  docker_env:\n    A: 1\n    B: \"x y\"\n    C:\n    D: ''\n    E: a=b\n", NULL);
  assert_non_null (cfg);
  assert_strv (berth_config_strv (cfg, "terminal.docker_env"),
               (const char *const[]){ "A=1", "B=x y", "C=", "D=", "E=a=b", NULL });
  berth_config_free (cfg);
}

static void
expect_render (const berth_config *cfg, const char *path, const char *expected)
{
  char *out = NULL;
  assert_int_equal (berth_config_render (cfg, path, &out, NULL), 0);
  if (strcmp (out, expected) != 0)
    fail_msg ("render %s\nexpected: %s\n     got: %s", path, expected, out);
  free (out);
}

static void
test_render (void **state)
{
  berth_config *cfg = load ("terminal:\n"
                            "  backend: docker\n"
                            "  cwd: \"/path with: colon\"\n"
                            "  docker_volumes:\n    - /a:/a\n    - 'x, y'\n"
                            "  docker_env: {A: \"1\", B: yes, C: \"yes\", D: '', E: ~}\n"
                            "  bwrap_binds:\n    - src: /a\n      dest: /b\n    - /c:/d\n"
                            "  empty: []\n",
                            NULL);
  assert_non_null (cfg);
  expect_render (cfg, "terminal.backend", "docker");
  expect_render (cfg, "terminal.cwd", "/path with: colon");
  expect_render (cfg, "terminal.docker_volumes", "[/a:/a, \"x, y\"]");
  expect_render (cfg, "terminal.docker_env", "A: \"1\"\nB: yes\nC: \"yes\"\nD: \"\"\nE: ~");
  expect_render (cfg, "terminal.bwrap_binds", "- src: /a\n  dest: /b\n- /c:/d");
  expect_render (cfg, "terminal.empty", "[]");
  expect_render (cfg, NULL,
                 "terminal:\n"
                 "  backend: docker\n"
                 "  cwd: \"/path with: colon\"\n"
                 "  docker_volumes: [/a:/a, \"x, y\"]\n"
                 "  docker_env:\n    A: \"1\"\n    B: yes\n    C: \"yes\"\n    D: \"\"\n    E: ~\n"
                 "  bwrap_binds:\n    - src: /a\n      dest: /b\n    - /c:/d\n"
                 "  empty: []");
  /* What render prints reads back the same.  */
  char *all = NULL;
  assert_int_equal (berth_config_render (cfg, "", &all, NULL), 0);
  berth_config *again = load (all, NULL);
  assert_non_null (again);
  char *all2 = NULL;
  assert_int_equal (berth_config_render (again, "", &all2, NULL), 0);
  assert_string_equal (all, all2);
  free (all);
  free (all2);
  berth_config_free (again);

  char *out = NULL;
  berth_error *err = NULL;
  assert_int_equal (berth_config_render (cfg, "terminal.nope", &out, &err), -ENOENT);
  assert_null (out);
  berth_error_free (err);
  berth_config_free (cfg);
}

/* ---- set_in_file ---- */

typedef struct tmpdir
{
  char path[64];
} tmpdir;

static int
setup_tmp (void **state)
{
  tmpdir *t = calloc (1, sizeof *t);
  strcpy (t->path, "/tmp/test-config-XXXXXX");
  if (mkdtemp (t->path) == NULL)
    return -1;
  *state = t;
  return 0;
}

static int
teardown_tmp (void **state)
{
  tmpdir *t = *state;
  rm_tree (t->path);
  free (t);
  return 0;
}

static char *
copy_fixture (tmpdir *t, const char *name)
{
  char *src = fixture (name);
  char *text = read_text (src);
  char *dst = berth_strdup_printf ("%s/%s", t->path, name);
  assert_int_equal (berth_write_file_atomic (dst, text, strlen (text), 0640), 0);
  free (src);
  free (text);
  return dst;
}

static void
expect_set (const char *file, const char *key, const char *value, const char *expected_text)
{
  berth_error *err = NULL;
  int r = berth_config_set_in_file (file, key, value, &err);
  if (r < 0)
    fail_msg ("set %s %s: %s", key, value, berth_error_message (err));
  char *text = read_text (file);
  if (expected_text && strcmp (text, expected_text) != 0)
    fail_msg ("set %s %s\nexpected:\n%s\ngot:\n%s", key, value, expected_text, text);
  free (text);
}

static const char commented_head[] = "# My berth configuration.\n"
                                     "# Keep this header.\n"
                                     "\n"
                                     "model:\n"
                                     "  name: big   # unrelated section\n"
                                     "\n"
                                     "terminal:\n"
                                     "  # which backend to use\n";

static void
test_set_keeps_comments (void **state)
{
  tmpdir *t = *state;
  char *file = copy_fixture (t, "commented.yaml");
  char *expected;

  /* An existing simple scalar: only the value changes.  */
  expected = berth_strdup_printf ("%s"
                                  "  backend: docker   # was docker before\n"
                                  "  docker_image:    # pick one later\n"
                                  "  docker_volumes:\n"
                                  "    - /a:/a     # first\n"
                                  "    - /b:/b\n"
                                  "  ssh_port: 22\n"
                                  "\n"
                                  "# trailing comment\n",
                                  commented_head);
  expect_set (file, "terminal.backend", "docker", expected);
  free (expected);

  /* An empty value: filled in, the comment stays.  */
  expected = berth_strdup_printf ("%s"
                                  "  backend: docker   # was docker before\n"
                                  "  docker_image: \"ubuntu:24.04 # not a comment\"    # pick one later\n"
                                  "  docker_volumes:\n"
                                  "    - /a:/a     # first\n"
                                  "    - /b:/b\n"
                                  "  ssh_port: 22\n"
                                  "\n"
                                  "# trailing comment\n",
                                  commented_head);
  expect_set (file, "terminal.docker_image", "ubuntu:24.04 # not a comment", expected);
  free (expected);

  /* A missing key: inserted under its section.  A block list: replaced.  */
  expected = berth_strdup_printf ("%s"
                                  "  backend: docker   # was docker before\n"
                                  "  docker_image: \"ubuntu:24.04 # not a comment\"    # pick one later\n"
                                  "  docker_volumes: [/c:/c, /d d:/e]\n"
                                  "  ssh_port: 2222\n"
                                  "  timeout: 30\n"
                                  "\n"
                                  "# trailing comment\n",
                                  commented_head);
  expect_set (file, "terminal.timeout", "30", NULL);
  expect_set (file, "terminal.ssh_port", "2222", NULL);
  expect_set (file, "terminal.docker_volumes", "[/c:/c, '/d d:/e']", expected);
  free (expected);

  /* A missing section: appended.  */
  char *before = read_text (file);
  expect_set (file, "plugins.enabled", "[acmebox]", NULL);
  char *after = read_text (file);
  expected = berth_strdup_printf ("%splugins:\n  enabled: [acmebox]\n", before);
  assert_string_equal (after, expected);
  free (expected);
  free (before);
  free (after);

  /* The file keeps its mode.  */
  struct stat st;
  assert_int_equal (stat (file, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0640);

  /* Round trip through the reader.  */
  berth_config *cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, file, true, NULL), 0);
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "docker");
  assert_string_equal (berth_config_string (cfg, "terminal.docker_image", NULL), "ubuntu:24.04 # not a comment");
  assert_strv (berth_config_strv (cfg, "terminal.docker_volumes"), (const char *const[]){ "/c:/c", "/d d:/e", NULL });
  assert_int_equal (berth_config_int (cfg, "terminal.timeout", 0), 30);
  assert_int_equal (berth_config_int (cfg, "terminal.ssh_port", 0), 2222);
  assert_strv (berth_config_strv (cfg, "plugins.enabled"), (const char *const[]){ "acmebox", NULL });
  assert_string_equal (berth_config_string (cfg, "model.name", NULL), "big");
  berth_config_free (cfg);
  free (file);
}

static void
test_set_create (void **state)
{
  tmpdir *t = *state;
  char *file = berth_strdup_printf ("%s/a/b/config.yaml", t->path);
  struct stat st;
  expect_set (file, "terminal.backend", "docker", "terminal:\n  backend: docker\n");
  expect_set (file, "terminal.docker_network", "false", "terminal:\n  backend: docker\n  docker_network: false\n");
  expect_set (file, "tool_output.max_bytes", "1000",
              "terminal:\n  backend: docker\n  docker_network: false\ntool_output:\n  max_bytes: 1000\n");
  assert_int_equal (stat (file, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0600);
  char *dir = berth_strdup_printf ("%s/a/b", t->path);
  assert_int_equal (stat (dir, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0700);
  free (dir);
  /* Deeper paths and special values.  */
  expect_set (file, "acme.box.level", "it's \"quoted\"\nand\tmore", NULL);
  expect_set (file, "terminal.docker_env", "{A: 1, B: 'x y'}", NULL);
  expect_set (file, "terminal.cwd", "\"yes\"", NULL);
  expect_set (file, "terminal.ssh_key", "-", NULL);
  berth_config *cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, file, true, NULL), 0);
  assert_string_equal (berth_config_string (cfg, "acme.box.level", NULL), "it's \"quoted\"\nand\tmore");
  assert_strv (berth_config_strv (cfg, "terminal.docker_env"), (const char *const[]){ "A=1", "B=x y", NULL });
  assert_string_equal (berth_config_string (cfg, "terminal.cwd", NULL), "yes");
  assert_string_equal (berth_config_string (cfg, "terminal.ssh_key", NULL), "-");
  assert_false (berth_config_bool (cfg, "terminal.docker_network", true));
  berth_config_free (cfg);
  free (file);
}

static void
test_set_rejects (void **state)
{
  tmpdir *t = *state;
  char *file = copy_fixture (t, "commented.yaml");
  char *before = read_text (file);
  berth_error *err = NULL;

  /* A wrong type: the file is untouched, the message has a position.  */
  assert_int_equal (berth_config_set_in_file (file, "terminal.timeout", "abc", &err), -BERTH_E_CONFIG);
  char *expected = berth_strdup_printf ("%s:15:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got 'abc'", file);
  assert_string_equal (berth_error_message (err), expected);
  free (expected);
  berth_error_free (err);
  err = NULL;
  assert_int_equal (berth_config_set_in_file (file, "plugins.enabled", "acmebox", &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "plugins.enabled: expected a list of strings, got 'acmebox'"));
  berth_error_free (err);
  err = NULL;
  assert_int_equal (berth_config_set_in_file (file, "terminal.docker_volumes", "[a, [b", &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "value:"));
  berth_error_free (err);
  static const char *const bad_keys[] = { "", ".a", "a.", "a..b", "a b", "a:b", "terminal.x#" };
  for (size_t i = 0; i < ARRAY_SIZE (bad_keys); i++)
    {
      err = NULL;
      assert_int_equal (berth_config_set_in_file (file, bad_keys[i], "x", &err), -BERTH_E_CONFIG);
      berth_error_free (err);
    }
  err = NULL;
  assert_int_equal (berth_config_set_in_file (file, "terminal.docker_volumes.5", "/x:/x", &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "no item 5 in that list; set the whole list instead"));
  berth_error_free (err);
  char *after = read_text (file);
  assert_string_equal (before, after);
  free (after);
  free (before);

  /* A broken file is not edited.  */
  char *broken = copy_fixture (t, "malformed.yaml");
  before = read_text (broken);
  err = NULL;
  assert_int_equal (berth_config_set_in_file (broken, "terminal.backend", "local", &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "invalid YAML"));
  berth_error_free (err);
  after = read_text (broken);
  assert_string_equal (before, after);
  free (after);
  free (before);
  free (broken);

  /* A wrong value can be fixed with set.  */
  char *wrong = copy_fixture (t, "wrong-type.yaml");
  expect_set (wrong, "terminal.timeout", "5", "terminal:\n  backend: local\n  timeout: 5\n");
  free (wrong);
  free (file);
}

static void
test_set_fallbacks (void **state)
{
  tmpdir *t = *state;
  char *file = berth_strdup_printf ("%s/flow.yaml", t->path);
  berth_config *cfg;

  /* Flow sections: in place when the key is a scalar, else rewritten.  */
  assert_int_equal (write_text (file, "terminal: {backend: local, timeout: 3}  # c\n"), 0);
  expect_set (file, "terminal.backend", "docker", "terminal: {backend: docker, timeout: 3}  # c\n");
  expect_set (file, "terminal.cwd", "/w", "terminal:\n  backend: docker\n  timeout: 3\n  cwd: /w\n");

  /* A scalar where a section belongs; a section set from a key below.  */
  assert_int_equal (write_text (file, "# head\nplugins: none\nterminal:\n  backend: local\n"), 0);
  expect_set (file, "plugins.enabled", "[a, b]", "# head\nplugins:\n  enabled: [a, b]\nterminal:\n  backend: local\n");
  assert_int_equal (write_text (file, "terminal:   # mine\nother: 1\n"), 0);
  expect_set (file, "terminal.backend", "ssh", "terminal:   # mine\n  backend: ssh\nother: 1\n");

  /* A multi-line value and a value on its own line.  */
  assert_int_equal (write_text (file, "terminal:\n  cwd: |\n    /a\n    /b\n  backend:\n    local\nx: 1\n"), 0);
  expect_set (file, "terminal.cwd", "/c", NULL);
  expect_set (file, "terminal.backend", "docker", "terminal:\n  cwd: /c\n  backend:\n    docker\nx: 1\n");

  /* No final newline; a sequence item mapping.  */
  assert_int_equal (write_text (file, "terminal:\n  bwrap_binds:\n    - src: /a\n      dest: /b"), 0);
  expect_set (file, "terminal.bwrap_binds.0.readonly", "yes", NULL);
  expect_set (file, "terminal.backend", "bwrap", NULL);
  cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, file, true, NULL), 0);
  assert_true (berth_config_bool (cfg, "terminal.bwrap_binds.0.readonly", false));
  assert_string_equal (berth_config_string (cfg, "terminal.bwrap_binds.0.dest", NULL), "/b");
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "bwrap");
  berth_config_free (cfg);

  /* An item of a list, in place.  */
  assert_int_equal (write_text (file, "plugins:\n  enabled:\n    - a   # first\n    - b\n"), 0);
  expect_set (file, "plugins.enabled.1", "c", "plugins:\n  enabled:\n    - a   # first\n    - c\n");

  /* Through a symlink, the target is edited.  */
  char *link = berth_strdup_printf ("%s/link.yaml", t->path);
  assert_int_equal (symlink (file, link), 0);
  expect_set (link, "terminal.timeout", "9", NULL);
  struct stat st;
  assert_int_equal (lstat (link, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, file, true, NULL), 0);
  assert_int_equal (berth_config_int (cfg, "terminal.timeout", 0), 9);
  berth_config_free (cfg);
  free (link);
  free (file);
}

/* A FIFO, a directory or a device as a configuration file is refused
   with one line, never read (a FIFO would block forever, a device read
   without end).  alarm(): a regression fails instead of hanging.  */
static void
test_not_regular (void **state)
{
  tmpdir *t = *state;
  char *fifo = berth_strdup_printf ("%s/fifo.yaml", t->path);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  const char *paths[] = { fifo, t->path, "/dev/zero", NULL };
  alarm (10);
  for (const char *const *p = paths; *p; p++)
    {
      berth_config *cfg = berth_config_new ();
      berth_error *err = NULL;
      assert_int_equal (berth_config_merge_file (cfg, *p, true, &err), -BERTH_E_CONFIG);
      const char *m = berth_error_message (err);
      assert_non_null (strstr (m, *p));
      assert_non_null (strstr (m, "not a regular file"));
      assert_null (strchr (m, '\n'));
      berth_error_free (err);
      /* nor when the layer is optional, nor to edit it */
      err = NULL;
      assert_int_equal (berth_config_merge_file (cfg, *p, false, &err), -BERTH_E_CONFIG);
      berth_error_free (err);
      berth_config_free (cfg);
    }
  berth_error *err = NULL;
  assert_int_equal (berth_config_set_in_file (fifo, "terminal.timeout", "5", &err), -BERTH_E_CONFIG);
  assert_non_null (strstr (berth_error_message (err), "not a regular file"));
  berth_error_free (err);
  /* /dev/null stays the usual "no configuration" (as with ssh -F).  */
  berth_config *cfg = berth_config_new ();
  assert_int_equal (berth_config_merge_file (cfg, "/dev/null", true, NULL), 0);
  berth_config_free (cfg);
  alarm (0);
  free (fifo);
}


/* ---- unknown keys, backend names, unset, list (issue 11 item 18) ---- */

typedef struct warned
{
  char text[1024];
  int n;
} warned;

static void
collect_warning (void *userdata, const char *where, const char *key, const char *suggestion)
{
  warned *w = userdata;
  size_t len = strlen (w->text);
  snprintf (w->text + len, sizeof w->text - len, "%s %s %s\n", where, key, suggestion ? suggestion : "-");
  w->n++;
}

static void
test_unknown_warned (void **state)
{
  static const char yaml[] = "terminal:\n"
                             "  timout: 5\n"
                             "  backend: local\n"
                             "  docker_imgae: x\n"
                             "  Timeout: 3\n"
                             "  something_else_entirely: 1\n"
                             "  acmebox_umask: 022\n"
                             "model:\n"
                             "  timout: 1\n";
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  warned w = { 0 };
  assert_int_equal (berth_config_merge_string_warn (cfg, "t.yaml", yaml, strlen (yaml), collect_warning, &w, &err), 0);
  /* Only the terminal section: other sections are the agent's.  The
     provider prefix rule (acmebox_) is applied by the context, later.  */
  assert_string_equal (w.text, "t.yaml:2:3 terminal.timout terminal.timeout\n"
                               "t.yaml:4:3 terminal.docker_imgae -\n"
                               "t.yaml:5:3 terminal.Timeout terminal.timeout\n"
                               "t.yaml:6:3 terminal.something_else_entirely -\n"
                               "t.yaml:7:3 terminal.acmebox_umask -\n");
  /* Unknown keys still do not stop the load.  */
  assert_string_equal (berth_config_string (cfg, "terminal.backend", NULL), "local");
  berth_config_free (cfg);
  /* A key the core's schema knows is never reported.  */
  cfg = berth_config_new ();
  w = (warned){ 0 };
  static const char known[] = "terminal:\n  env_passthrough: [A]\n  timeout: 3\n";
  assert_int_equal (berth_config_merge_string_warn (cfg, "k.yaml", known, strlen (known), collect_warning, &w, NULL), 0);
  assert_int_equal (w.n, 0);
  berth_config_free (cfg);
  /* container_disk was accepted and read by nothing (no backend here can
     bound a container's disk: overlay2 needs xfs project quotas): an
     unknown key, said so, not a silent no-op.  */
  cfg = berth_config_new ();
  w = (warned){ 0 };
  static const char disk[] = "terminal:\n  container_disk: 51200\n";
  assert_int_equal (berth_config_merge_string_warn (cfg, "d.yaml", disk, strlen (disk), collect_warning, &w, NULL), 0);
  assert_int_equal (w.n, 1);
  assert_true (strncmp (w.text, "d.yaml:2:3 terminal.container_disk ", 35) == 0);
  berth_config_free (cfg);
}

/* A key a provider declares is checked by its type (here an "options"
   key: a list, a mapping or one string, nothing deeper).  */
static void
test_declared_keys (void **state)
{
  static const berth_key_spec keys[] = {
    { "x_options", BERTH_KEY_OPTIONS },
    { "x_level", BERTH_KEY_INT, 1, 9 },
    { "x_big", BERTH_KEY_INT, 0, (double) INT64_MAX },
    { NULL },
  };
  static const char *const ok[] = { "terminal:\n  x_options: BatchMode=yes\n", "terminal:\n  x_options: {BatchMode: yes}\n",
                                    "terminal:\n  x_options: [A=1]\n  x_level: 9\n  x_big: 9223372036854775807\n" };
  berth_error *err = NULL;
  for (size_t i = 0; i < ARRAY_SIZE (ok); i++)
    {
      berth_config *cfg = load (ok[i], NULL);
      assert_int_equal (conf_schema_check_declared (cfg, keys, NULL), 0);
      berth_config_free (cfg);
    }
  berth_config *cfg = load ("terminal:\n  x_options: [[a]]\n  x_level: 10\n", NULL);
  assert_int_equal (conf_schema_check_declared (cfg, keys, &err), -BERTH_E_CONFIG);
  assert_string_equal (berth_error_message (err), "t.yaml:2:15: terminal.x_options[0]: expected a string, got a list");
  berth_error_free (err);
  err = NULL;
  berth_config_free (cfg);
  cfg = load ("terminal:\n  x_level: 10\n", NULL);
  assert_int_equal (conf_schema_check_declared (cfg, keys, &err), -BERTH_E_CONFIG);
  assert_string_equal (berth_error_message (err), "t.yaml:2:12: terminal.x_level: expected an integer from 1 to 9, got '10'");
  berth_error_free (err);
  berth_config_free (cfg);
  assert_string_equal (conf_schema_suggest_declared (keys, "x_levle"), "x_level");
  assert_null (conf_schema_suggest_declared (keys, "nothing_like_it"));
}

static void
test_set_backend_names (void **state)
{
  tmpdir *t = *state;
  char *file = berth_strdup_printf ("%s/b.yaml", t->path);
  berth_error *err = NULL;
  berth_config_edit how = { .backends = "local, docker, acmebox" };
  assert_int_equal (berth_write_file_atomic (file, "terminal:\n  backend: local\n", 27, 0600), 0);
  assert_int_equal (berth_config_set_in_file_ex (file, "terminal.backend", "nosuch", &how, &err), -BERTH_E_CONFIG);
  assert_string_equal (berth_error_message (err), "terminal.backend: no backend named 'nosuch' (available: local, docker, acmebox)");
  berth_error_free (err);
  err = NULL;
  char *text = read_text (file);
  assert_string_equal (text, "terminal:\n  backend: local\n");
  free (text);
  assert_int_equal (berth_config_set_in_file_ex (file, "terminal.backend", "acmebox", &how, &err), 0);
  text = read_text (file);
  assert_string_equal (text, "terminal:\n  backend: acmebox\n");
  free (text);
  /* Another key leaves a backend name alone; without names nothing is
     checked (the layered configuration did not load).  */
  assert_int_equal (berth_config_set_in_file_ex (file, "terminal.timeout", "5", &(berth_config_edit){ .backends = "local" }, &err), 0);
  assert_int_equal (berth_config_set_in_file_ex (file, "terminal.backend", "later", NULL, &err), 0);
  free (file);
}

static void
expect_unset (const char *file, const char *key, const char *expected_text)
{
  berth_error *err = NULL;
  int r = berth_config_unset_in_file (file, key, &err);
  if (r < 0)
    fail_msg ("unset %s: %s", key, berth_error_message (err));
  char *text = read_text (file);
  if (strcmp (text, expected_text) != 0)
    fail_msg ("unset %s\nexpected:\n%s\ngot:\n%s", key, expected_text, text);
  free (text);
}

static void
test_unset (void **state)
{
  tmpdir *t = *state;
  char *file = copy_fixture (t, "commented.yaml");
  berth_error *err = NULL;
  struct stat st;

  /* A list with its items, comments elsewhere kept.  */
  expect_unset (file, "terminal.docker_volumes",
                "# My berth configuration.\n# Keep this header.\n\nmodel:\n  name: big   # unrelated section\n\n"
                "terminal:\n  # which backend to use\n  backend: local   # was docker before\n"
                "  docker_image:    # pick one later\n  ssh_port: 22\n\n# trailing comment\n");
  /* A scalar with a trailing comment.  */
  expect_unset (file, "terminal.backend",
                "# My berth configuration.\n# Keep this header.\n\nmodel:\n  name: big   # unrelated section\n\n"
                "terminal:\n  # which backend to use\n"
                "  docker_image:    # pick one later\n  ssh_port: 22\n\n# trailing comment\n");
  /* Not set: -ENOENT, the file untouched.  */
  assert_int_equal (berth_config_unset_in_file (file, "terminal.nope", &err), -ENOENT);
  assert_non_null (strstr (berth_error_message (err), "terminal.nope is not set in"));
  berth_error_free (err);
  err = NULL;
  assert_int_equal (berth_config_unset_in_file (file, "terminal.ssh_port.x", &err), -ENOENT);
  berth_error_free (err);
  err = NULL;
  /* The last keys of a section take the section with them.  */
  expect_unset (file, "terminal.docker_image",
                "# My berth configuration.\n# Keep this header.\n\nmodel:\n  name: big   # unrelated section\n\n"
                "terminal:\n  # which backend to use\n  ssh_port: 22\n\n# trailing comment\n");
  expect_unset (file, "terminal.ssh_port",
                "# My berth configuration.\n# Keep this header.\n\nmodel:\n  name: big   # unrelated section\n\n"
                "\n# trailing comment\n");
  /* The mode is kept.  */
  assert_int_equal (stat (file, &st), 0);
  assert_int_equal (st.st_mode & 07777, 0640);
  /* A flow mapping cannot be edited line by line: rewritten, same tree.  */
  assert_int_equal (berth_write_file_atomic (file, "terminal: {timeout: 3, cwd: /x}\n", 32, 0600), 0);
  expect_unset (file, "terminal.cwd", "terminal:\n  timeout: 3\n");
  /* A missing file sets nothing.  */
  char *none = berth_strdup_printf ("%s/none.yaml", t->path);
  assert_int_equal (berth_config_unset_in_file (none, "terminal.timeout", &err), -ENOENT);
  berth_error_free (err);
  free (none);
  free (file);
}

typedef struct listed
{
  char text[2048];
} listed;

static void
collect_key (void *userdata, const char *key, const char *value, const char *origin)
{
  listed *l = userdata;
  size_t len = strlen (l->text);
  snprintf (l->text + len, sizeof l->text - len, "%s=%s @%s\n", key, value, origin ? origin : "default");
}

static void
test_list (void **state)
{
  static const char a[] = "terminal:\n  timeout: 5\n  docker_volumes: [/a:/a, /b:/b]\n  docker_env:\n    FOO: bar\n";
  static const char b[] = "terminal:\n\n  backend: docker\n";
  berth_config *cfg = berth_config_new ();
  listed l = { { 0 } };
  assert_int_equal (berth_config_merge_string (cfg, "a.yaml", a, strlen (a), NULL), 0);
  assert_int_equal (berth_config_merge_string (cfg, "b.yaml", b, strlen (b), NULL), 0);
  assert_int_equal (berth_config_list (cfg, collect_key, &l, NULL), 0);
  assert_string_equal (l.text, "terminal.backend=docker @b.yaml:3\n"
                               "terminal.docker_env.FOO=bar @a.yaml:5\n"
                               "terminal.docker_volumes=[/a:/a, /b:/b] @a.yaml:3\n"
                               "terminal.lifetime_seconds=300 @default\n"
                               "terminal.timeout=5 @a.yaml:2\n"
                               "tool_output.max_bytes=50000 @default\n");
  berth_config_free (cfg);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_valid_file),
    cmocka_unit_test (test_layering),
    cmocka_unit_test (test_wrong_types),
    cmocka_unit_test (test_types_accepted),
    cmocka_unit_test (test_unknown_ignored),
    cmocka_unit_test (test_malformed),
    cmocka_unit_test (test_limits),
    cmocka_unit_test (test_aliases),
    cmocka_unit_test (test_strv_mapping),
    cmocka_unit_test (test_render),
    cmocka_unit_test_setup_teardown (test_set_keeps_comments, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown (test_set_create, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown (test_set_rejects, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown (test_set_fallbacks, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown (test_not_regular, setup_tmp, teardown_tmp),
    cmocka_unit_test (test_unknown_warned),
    cmocka_unit_test (test_declared_keys),
    cmocka_unit_test_setup_teardown (test_set_backend_names, setup_tmp, teardown_tmp),
    cmocka_unit_test_setup_teardown (test_unset, setup_tmp, teardown_tmp),
    cmocka_unit_test (test_list),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
