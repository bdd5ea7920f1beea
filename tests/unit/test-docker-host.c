/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: which engine the docker backend talks to, resolved in the
   docker CLI's order (DOCKER_HOST > DOCKER_CONTEXT > config.json's
   currentContext > the default socket) from real files in temporary
   directories; ssh:// targets and the ssh command line; SHA-256 (the
   contexts' directory names); the ulimits of terminal.docker_ulimits and
   their place in the create body.  */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <berth/provider-util.h>

#include "docker/dial.h"
#include "docker/helpers.h"
#include "docker/host.h"
#include "docker/json.h"

static char tmp[64];

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
}

/* $TMP/contexts/meta/<sha256(NAME)>/meta.json with HOST; TLS: a tls dir. */
static void
make_context (const char *dir, const char *name, const char *host, bool tls)
{
  char digest[65], path[512], body[512];
  berth_sha256_hex (name, strlen (name), digest);
  snprintf (path, sizeof path, "mkdir -p '%s/contexts/meta/%s'", dir, digest);
  assert_int_equal (system (path), 0);
  snprintf (path, sizeof path, "%s/contexts/meta/%s/meta.json", dir, digest);
  snprintf (body, sizeof body,
            "{\"Name\":\"%s\",\"Metadata\":{\"Description\":\"test\"},\"Endpoints\":{\"docker\":{\"Host\":\"%s\",\"SkipTLSVerify\":false}}}", name,
            host);
  write_file (path, body);
  if (tls)
    {
      snprintf (path, sizeof path, "mkdir -p '%s/contexts/tls/%s/docker'", dir, digest);
      assert_int_equal (system (path), 0);
    }
}

static int
setup (void **state)
{
  (void)state;
  snprintf (tmp, sizeof tmp, "/tmp/berth-docker-host.XXXXXX");
  assert_non_null (mkdtemp (tmp));
  unsetenv ("DOCKER_HOST");
  unsetenv ("DOCKER_CONTEXT");
  unsetenv ("DOCKER_CONFIG");
  setenv ("HOME", tmp, 1);
  return 0;
}

static int
teardown (void **state)
{
  (void)state;
  char cmd[128];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", tmp);
  return system (cmd) == 0 ? 0 : -1;
}

static void
resolve_ok (const char *want_host, const char *want_source_part)
{
  docker_host_choice c;
  berth_error *err = NULL;
  int r = docker_host_resolve (&c, &err);
  if (r < 0)
    fail_msg ("docker_host_resolve: %s", berth_error_message (err));
  assert_string_equal (c.host, want_host);
  if (!strstr (c.source, want_source_part))
    fail_msg ("source '%s' lacks '%s'", c.source, want_source_part);
  docker_host_choice_clear (&c);
}

static void
resolve_fails (const char *want_part)
{
  docker_host_choice c;
  berth_error *err = NULL;
  assert_int_equal (docker_host_resolve (&c, &err), -BERTH_E_CONFIG);
  if (!strstr (berth_error_message (err), want_part))
    fail_msg ("error '%s' lacks '%s'", berth_error_message (err), want_part);
  berth_error_free (err);
}

static void
test_sha256 (void **state)
{
  (void)state;
  char out[65];
  berth_sha256_hex ("", 0, out);
  assert_string_equal (out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  berth_sha256_hex ("abc", 3, out);
  assert_string_equal (out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* two blocks of padding (56 bytes), and more than one block */
  const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  berth_sha256_hex (m, strlen (m), out);
  assert_string_equal (out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  char a[1000];
  memset (a, 'a', sizeof a);
  berth_sha256_hex (a, sizeof a, out);
  assert_string_equal (out, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void
test_default_and_docker_host (void **state)
{
  (void)state;
  resolve_ok ("unix:///var/run/docker.sock", "default");
  /* a config.json without currentContext, or a broken one: the default */
  char dir[128], path[192];
  snprintf (dir, sizeof dir, "%s/.docker", tmp);
  assert_int_equal (mkdir (dir, 0700), 0);
  snprintf (path, sizeof path, "%s/config.json", dir);
  write_file (path, "{\"auths\":{}}");
  resolve_ok ("unix:///var/run/docker.sock", "default");
  write_file (path, "{not json");
  resolve_ok ("unix:///var/run/docker.sock", "default");
  /* DOCKER_HOST wins over everything */
  make_context (dir, "remote", "ssh://me@far", false);
  write_file (path, "{\"currentContext\":\"remote\"}");
  setenv ("DOCKER_CONTEXT", "remote", 1);
  setenv ("DOCKER_HOST", "tcp://10.0.0.1:2375", 1);
  resolve_ok ("tcp://10.0.0.1:2375", "DOCKER_HOST");
  unsetenv ("DOCKER_HOST");
  unsetenv ("DOCKER_CONTEXT");
}

static void
test_contexts (void **state)
{
  (void)state;
  char dir[128], path[192];
  snprintf (dir, sizeof dir, "%s/.docker", tmp);
  assert_int_equal (mkdir (dir, 0700), 0);
  snprintf (path, sizeof path, "%s/config.json", dir);
  make_context (dir, "remote", "ssh://me@far:2200", false);
  make_context (dir, "other", "unix:///run/other.sock", false);
  make_context (dir, "secure", "tcp://h:2376", true);
  /* currentContext of ~/.docker/config.json */
  write_file (path, "{\"auths\":{},\"currentContext\":\"remote\"}");
  resolve_ok ("ssh://me@far:2200", "the docker context remote (currentContext");
  /* DOCKER_CONTEXT before currentContext */
  setenv ("DOCKER_CONTEXT", "other", 1);
  resolve_ok ("unix:///run/other.sock", "the docker context other (DOCKER_CONTEXT)");
  /* "default" is the default engine, whatever currentContext says */
  setenv ("DOCKER_CONTEXT", "default", 1);
  resolve_ok ("unix:///var/run/docker.sock", "default");
  /* a named context that does not exist is an error naming it */
  setenv ("DOCKER_CONTEXT", "nope", 1);
  resolve_fails ("'nope' (DOCKER_CONTEXT) cannot be read");
  unsetenv ("DOCKER_CONTEXT");
  write_file (path, "{\"currentContext\":\"gone\"}");
  resolve_fails ("'gone' (currentContext of");
  /* a context's TLS directory is found */
  write_file (path, "{\"currentContext\":\"secure\"}");
  docker_host_choice c;
  assert_int_equal (docker_host_resolve (&c, NULL), 0);
  assert_string_equal (c.host, "tcp://h:2376");
  assert_string_equal (c.context, "secure");
  assert_non_null (c.tls_dir);
  assert_non_null (strstr (c.tls_dir, "/contexts/tls/"));
  assert_false (c.skip_tls_verify);
  docker_host_choice_clear (&c);
  /* a meta.json without an endpoint */
  char digest[65], meta[256];
  berth_sha256_hex ("secure", 6, digest);
  snprintf (meta, sizeof meta, "%s/contexts/meta/%s/meta.json", dir, digest);
  write_file (meta, "{\"Name\":\"secure\",\"Endpoints\":{}}");
  resolve_fails ("has no docker endpoint");
  /* DOCKER_CONFIG instead of ~/.docker */
  char alt[128];
  snprintf (alt, sizeof alt, "%s/alt", tmp);
  assert_int_equal (mkdir (alt, 0700), 0);
  make_context (alt, "remote", "ssh://alt@host", false);
  snprintf (path, sizeof path, "%s/config.json", alt);
  write_file (path, "{\"currentContext\":\"remote\"}");
  setenv ("DOCKER_CONFIG", alt, 1);
  resolve_ok ("ssh://alt@host", "the docker context remote");
  unsetenv ("DOCKER_CONFIG");
}

static void
test_ssh_targets (void **state)
{
  (void)state;
  docker_ssh_target t;
  berth_error *err = NULL;
  assert_int_equal (docker_ssh_parse ("ssh://me@host.example:2222", &t, NULL), 0);
  assert_string_equal (t.user, "me");
  assert_string_equal (t.host, "host.example");
  assert_string_equal (t.port, "2222");
  char **argv = docker_ssh_argv (&t, "/usr/bin/ssh", NULL);
  char joined[512] = "";
  for (size_t i = 0; argv[i]; i++)
    snprintf (joined + strlen (joined), sizeof joined - strlen (joined), "%s%s", i ? " " : "", argv[i]);
  assert_string_equal (joined, "/usr/bin/ssh -o ConnectTimeout=30 -o BatchMode=yes -T -l me -p 2222 -- host.example docker system dial-stdio");
  berth_strv_free (argv);
  argv = docker_ssh_argv (&t, "/usr/bin/ssh", "/run/user/7/berth/dssh-%C");
  joined[0] = '\0';
  for (size_t i = 0; argv[i]; i++)
    snprintf (joined + strlen (joined), sizeof joined - strlen (joined), "%s%s", i ? " " : "", argv[i]);
  assert_string_equal (joined, "/usr/bin/ssh -o ConnectTimeout=30 -o BatchMode=yes -o ControlMaster=auto -o ControlPath=/run/user/7/berth/dssh-%C "
                               "-o ControlPersist=60 -T -l me -p 2222 -- host.example docker system dial-stdio");
  berth_strv_free (argv);
  /* the masters live only in a runtime directory that is ours alone */
  char xdg[128], *cp;
  snprintf (xdg, sizeof xdg, "%s/xdg", tmp);
  assert_int_equal (mkdir (xdg, 0755), 0);
  setenv ("XDG_RUNTIME_DIR", xdg, 1);
  assert_null (docker_ssh_control_path ());
  assert_int_equal (chmod (xdg, 0700), 0);
  cp = docker_ssh_control_path ();
  assert_non_null (cp);
  assert_non_null (strstr (cp, "/xdg/berth/dssh-%C"));
  free (cp);
  unsetenv ("XDG_RUNTIME_DIR");
  assert_null (docker_ssh_control_path ());
  docker_ssh_target_clear (&t);
  assert_int_equal (docker_ssh_parse ("ssh://host/", &t, NULL), 0);
  assert_null (t.user);
  assert_null (t.port);
  assert_string_equal (t.host, "host");
  docker_ssh_target_clear (&t);
  assert_int_equal (docker_ssh_parse ("ssh://u@[::1]:22", &t, NULL), 0);
  assert_string_equal (t.host, "::1");
  assert_string_equal (t.port, "22");
  docker_ssh_target_clear (&t);
  static const char *const bad[] = { "ssh://-oProxyCommand=x", "ssh://-l@host", "ssh://host:0", "ssh://host:70000", "ssh://host:22x",
                                     "ssh://host/var/run/docker.sock", "ssh://", "ssh://u@", "ssh://ho st", "ssh://[::1", NULL };
  for (size_t i = 0; bad[i]; i++)
    {
      err = NULL;
      if (docker_ssh_parse (bad[i], &t, &err) != -BERTH_E_CONFIG)
        fail_msg ("%s was accepted", bad[i]);
      assert_non_null (strstr (berth_error_message (err), bad[i]));
      berth_error_free (err);
    }
}

static void
test_ulimits (void **state)
{
  (void)state;
  int64_t s, h;
  assert_int_equal (docker_ulimit_parse ("1024:4096", &s, &h), 0);
  assert_int_equal (s, 1024);
  assert_int_equal (h, 4096);
  assert_int_equal (docker_ulimit_parse (" 2048 ", &s, &h), 0);
  assert_int_equal (s, 2048);
  assert_int_equal (h, 2048);
  assert_int_equal (docker_ulimit_parse ("unlimited", &s, &h), 0);
  assert_int_equal (s, -1);
  assert_int_equal (h, -1);
  assert_int_equal (docker_ulimit_parse ("64:unlimited", &s, &h), 0);
  assert_int_equal (s, 64);
  assert_int_equal (h, -1);
  static const char *const bad[] = { "", ":", "10:5", "unlimited:5", "-1", "1k", "1:2:3", "99999999999999999999", NULL };
  for (size_t i = 0; bad[i]; i++)
    if (docker_ulimit_parse (bad[i], &s, &h) != -EINVAL)
      fail_msg ("'%s' was accepted", bad[i]);
  assert_true (docker_ulimit_resource ("nofile") >= 0);
  assert_true (docker_ulimit_resource ("nproc") >= 0);
  assert_int_equal (docker_ulimit_resource ("nofiles"), -1);
  assert_int_equal (docker_ulimit_resource (NULL), -1);

  /* a configured value is capped at berth's own hard limit */
  static const struct
  {
    int64_t soft, hard, max, want_soft, want_hard;
    int lowered;
  } caps[] = {
    { 1024, 4096, 8192, 1024, 4096, 0 }, { 1024, 4096, -1, 1024, 4096, 0 },  { 1024, 1048576, 4096, 1024, 4096, 1 },
    { 8192, 8192, 4096, 4096, 4096, 1 }, { -1, -1, 4096, 4096, 4096, 1 },     { 64, -1, 4096, 64, 4096, 1 },
    { -1, -1, -1, -1, -1, 0 },           { 4096, 4096, 4096, 4096, 4096, 0 },
  };
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
    {
      s = caps[i].soft;
      h = caps[i].hard;
      int lowered = docker_ulimit_cap (&s, &h, caps[i].max);
      if (lowered != caps[i].lowered || s != caps[i].want_soft || h != caps[i].want_hard)
        fail_msg ("cap %zu: %lld:%lld (lowered %d)", i, (long long)s, (long long)h, lowered);
    }

  const char *cmd[] = { "sleep", "infinity", NULL };
  docker_ulimit u[] = { { "nofile", 1024, 4096 }, { "nproc", -1, -1 } };
  docker_create_opts o = { .image = "img", .cmd = cmd, .ulimits = u, .n_ulimits = 2 };
  char *body = NULL;
  assert_int_equal (docker_json_container_create (&o, &body, NULL), 0);
  assert_non_null (strstr (body, "\"Ulimits\":[{\"Name\":\"nofile\",\"Soft\":1024,\"Hard\":4096},{\"Name\":\"nproc\",\"Soft\":-1,\"Hard\":-1}]"));
  free (body);
  o.n_ulimits = 0;
  assert_int_equal (docker_json_container_create (&o, &body, NULL), 0);
  assert_null (strstr (body, "Ulimits"));
  free (body);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_sha256),
    cmocka_unit_test_setup_teardown (test_default_and_docker_host, setup, teardown),
    cmocka_unit_test_setup_teardown (test_contexts, setup, teardown),
    cmocka_unit_test_setup_teardown (test_ssh_targets, setup, teardown),
    cmocka_unit_test (test_ulimits),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
