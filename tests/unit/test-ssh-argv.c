/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: ssh argv building, control-socket paths and remote-shell
   quoting (including a property test: quote -> sh -c -> compare).  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ssh-argv.h"
#include "ssh-quote.h"

/* ---- quoting ---- */

static char *
quote (const char *s)
{
  char *out = NULL;
  size_t len = 0;
  assert_int_equal (ssh_quote_append (&out, &len, s, strlen (s)), 0);
  assert_int_equal (strlen (out), len);
  return out;
}

static void
test_quote_plain (void **state)
{
  char *q = quote ("abc");
  assert_string_equal (q, "'abc'");
  free (q);
  q = quote ("");
  assert_string_equal (q, "''");
  free (q);
}

static void
test_quote_specials (void **state)
{
  char *q = quote ("it's");
  assert_string_equal (q, "'it'\\''s'");
  free (q);
  q = quote ("$(id) `id` $HOME \" ; | & *");
  assert_string_equal (q, "'$(id) `id` $HOME \" ; | & *'");
  free (q);
  q = quote ("a\\b\\'");
  assert_string_equal (q, "'a'\\\\'b'\\\\''\\'''");
  free (q);
  q = quote ("a\nb");
  assert_string_equal (q, "'a\nb'");
  free (q);
  q = quote ("-n");
  assert_string_equal (q, "'-n'");
  free (q);
  q = quote ("''");
  assert_string_equal (q, "''\\'''\\'''");
  free (q);
}

static void
test_quote_rejects_nul (void **state)
{
  char *out = NULL;
  size_t len = 0;
  assert_int_equal (ssh_quote_append (&out, &len, "a\0b", 3), -EINVAL);
  assert_null (out);
  assert_int_equal (len, 0);
}

static void
test_join (void **state)
{
  const char *w[] = { "bash", "-c", "echo \"$1\"", "x y", "" };
  char *j = NULL;
  assert_int_equal (ssh_join_words (w, 5, &j), 0);
  assert_string_equal (j, "'bash' '-c' 'echo \"$1\"' 'x y' ''");
  free (j);
  assert_int_equal (ssh_join_words (w, 0, &j), 0);
  assert_string_equal (j, "");
  free (j);
}

/* Run SHELL -c "printf '%s\0' JOINED" and return what it printed.  */
static char *
run_printf (const char *shell, const char *joined, size_t *ret_len)
{
  int p[2];
  pid_t pid;
  char *cmd, *out = NULL;
  size_t len = 0, cap = 0;
  int st;

  assert_true (asprintf (&cmd, "printf '%%s\\0' %s", joined) > 0);
  assert_int_equal (pipe (p), 0);
  pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      dup2 (p[1], 1);
      close (p[0]);
      close (p[1]);
      execl (shell, shell, "-c", cmd, (char *) NULL);
      _exit (127);
    }
  close (p[1]);
  for (;;)
    {
      ssize_t n;
      if (len + 4096 > cap)
        {
          cap = (cap + 4096) * 2;
          out = realloc (out, cap);
          assert_non_null (out);
        }
      n = read (p[0], out + len, cap - len);
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  close (p[0]);
  assert_int_equal (waitpid (pid, &st, 0), pid);
  assert_true (WIFEXITED (st) && WEXITSTATUS (st) == 0);
  free (cmd);
  *ret_len = len;
  return out;
}

static void
check_roundtrip (const char *shell, const char *const *words, size_t n)
{
  char *joined = NULL, *out;
  size_t len, off = 0;
  assert_int_equal (ssh_join_words (words, n, &joined), 0);
  out = run_printf (shell, joined, &len);
  for (size_t i = 0; i < n; i++)
    {
      size_t wl = strlen (words[i]);
      assert_true (off + wl < len + 1);
      assert_memory_equal (out + off, words[i], wl);
      assert_int_equal (out[off + wl], '\0');
      off += wl + 1;
    }
  assert_int_equal (off, len);
  free (out);
  free (joined);
}

static void
test_roundtrip_fixed (void **state)
{
  const char *w[] = { "it's", "\"dq\"", "$(echo pwned)", "`id`", "a\nb\n", "-n", "--", "ü€😀", "  lead", "trail  ", "\\", "'", "", "*", "~", "#c", "a;b|c&d", "!x" };
  check_roundtrip ("/bin/sh", w, sizeof w / sizeof *w);
  check_roundtrip ("/bin/bash", w, sizeof w / sizeof *w);
}

/* Property: any NUL-free bytes survive quote -> sh -c.  */
static void
test_roundtrip_random (void **state)
{
  unsigned seed = (unsigned) getpid ();
  const char *env = getenv ("BERTH_TEST_SEED");
  if (env)
    seed = (unsigned) strtoul (env, NULL, 10);
  srand (seed);
  for (int iter = 0; iter < 150; iter++)
    {
      char *words[6];
      size_t n = 1 + (size_t) rand () % 6;
      for (size_t i = 0; i < n; i++)
        {
          size_t len = (size_t) rand () % 40;
          words[i] = malloc (len + 1);
          for (size_t j = 0; j < len; j++)
            {
              int k = rand () % 4;
              /* bias towards shell-special bytes */
              words[i][j] = k == 0 ? "'\"\\$`\n !*?[]{}~#;&|<>()-"[rand () % 25] : (char) (1 + rand () % 255);
            }
          words[i][len] = '\0';
        }
      check_roundtrip (iter % 2 ? "/bin/bash" : "/bin/sh", (const char *const *) words, n);
      for (size_t i = 0; i < n; i++)
        free (words[i]);
    }
}

/* ---- settings and argv ---- */

static ssh_settings
good (void)
{
  static const char *opts[] = { "UserKnownHostsFile=/tmp/kh", NULL };
  return (ssh_settings){
    .ssh = "/usr/bin/ssh",
    .host = "example.org",
    .user = "alice",
    .key = "/home/alice/.ssh/id",
    .port = 2222,
    .options = opts,
    .connect_timeout = 10,
    .control_persist = 600,
    .control_path = "/run/user/1000/berth/e1/cm",
  };
}

static void
expect_invalid (const ssh_settings *s, const char *needle)
{
  char *why = NULL;
  assert_int_equal (ssh_settings_check (s, &why), -EINVAL);
  assert_non_null (why);
  if (strstr (why, needle) == NULL)
    fail_msg ("'%s' does not mention '%s'", why, needle);
  free (why);
}

static void
test_settings_check (void **state)
{
  ssh_settings s = good ();
  const char *bad_opt[] = { "-oProxyCommand=x", NULL };
  const char *no_eq[] = { "Compression", NULL };
  char *why = NULL;

  assert_int_equal (ssh_settings_check (&s, &why), 0);
  assert_null (why);

  s = good ();
  s.host = NULL;
  s.user = NULL;
  expect_invalid (&s, "ssh_host and ssh_user");
  s = good ();
  s.user = "";
  expect_invalid (&s, "terminal.ssh_user");
  s = good ();
  s.host = NULL;
  expect_invalid (&s, "terminal.ssh_host");
  s = good ();
  s.host = "-oProxyCommand=touch /tmp/x";
  expect_invalid (&s, "terminal.ssh_host");
  s = good ();
  s.host = "a b";
  expect_invalid (&s, "terminal.ssh_host");
  s = good ();
  s.host = "bob@h";
  expect_invalid (&s, "ssh_user");
  s = good ();
  s.user = "-lroot";
  expect_invalid (&s, "terminal.ssh_user");
  s = good ();
  s.port = 70000;
  expect_invalid (&s, "terminal.ssh_port");
  s = good ();
  s.options = bad_opt;
  expect_invalid (&s, "terminal.ssh_options");
  s = good ();
  s.options = no_eq;
  expect_invalid (&s, "Key=Value");
  s = good ();
  s.control_path = "/very/long/path/that/goes/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/and/on/cm";
  expect_invalid (&s, "too long");
}

static ssize_t
index_of (char **argv, const char *s)
{
  for (size_t i = 0; argv[i]; i++)
    if (strcmp (argv[i], s) == 0)
      return (ssize_t) i;
  return -1;
}

static size_t
count (char **argv)
{
  size_t n = 0;
  while (argv[n])
    n++;
  return n;
}

static void
test_argv_client (void **state)
{
  ssh_settings s = good ();
  char **a = NULL;
  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_CLIENT, false, NULL, &a), 0);
  assert_string_equal (a[0], "/usr/bin/ssh");
  assert_true (index_of (a, "-T") > 0);
  assert_int_equal (index_of (a, "-n"), -1);
  assert_int_equal (index_of (a, "-M"), -1);
  assert_true (index_of (a, "-oControlPath=/run/user/1000/berth/e1/cm") > 0);
  assert_true (index_of (a, "-oControlMaster=no") > 0);
  assert_true (index_of (a, "-oBatchMode=yes") > 0);
  assert_true (index_of (a, "-oStrictHostKeyChecking=accept-new") > 0);
  assert_true (index_of (a, "-oConnectTimeout=10") > 0);
  /* the user's options come before berth's overridable defaults */
  assert_true (index_of (a, "-oUserKnownHostsFile=/tmp/kh") < index_of (a, "-oStrictHostKeyChecking=accept-new"));
  assert_true (index_of (a, "-oBatchMode=yes") < index_of (a, "-oUserKnownHostsFile=/tmp/kh"));
  assert_string_equal (a[index_of (a, "-p") + 1], "2222");
  assert_string_equal (a[index_of (a, "-i") + 1], "/home/alice/.ssh/id");
  assert_string_equal (a[index_of (a, "-l") + 1], "alice");
  assert_string_equal (a[count (a) - 1], "example.org");
  /* the helper splits on the first "--": never in ssh's own argv */
  assert_int_equal (index_of (a, "--"), -1);
  ssh_argv_free (a);

  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_CLIENT, true, NULL, &a), 0);
  assert_true (index_of (a, "-n") > 0);
  ssh_argv_free (a);

  /* a remote terminal (berth shell): -tt for -T, over the same master */
  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_TERMINAL, false, NULL, &a), 0);
  assert_true (index_of (a, "-tt") > 0);
  assert_int_equal (index_of (a, "-T"), -1);
  assert_int_equal (index_of (a, "-n"), -1);
  assert_true (index_of (a, "-oControlPath=/run/user/1000/berth/e1/cm") > 0);
  assert_string_equal (a[count (a) - 1], "example.org");
  ssh_argv_free (a);

  /* optional keys absent: no -p, no -i */
  s.port = 0;
  s.key = NULL;
  s.options = NULL;
  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_CLIENT, false, NULL, &a), 0);
  assert_int_equal (index_of (a, "-p"), -1);
  assert_int_equal (index_of (a, "-i"), -1);
  assert_int_equal (index_of (a, "-oIdentitiesOnly=yes"), -1);
  ssh_argv_free (a);
}

static void
test_argv_master_and_control (void **state)
{
  ssh_settings s = good ();
  char **a = NULL;
  s.control_path = "/tmp/odd%h/cm";
  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_MASTER, false, NULL, &a), 0);
  assert_true (index_of (a, "-M") > 0);
  assert_true (index_of (a, "-N") > 0);
  assert_true (index_of (a, "-f") > 0);
  assert_true (index_of (a, "-oControlPersist=600") > 0);
  assert_true (index_of (a, "-oControlPath=/tmp/odd%%h/cm") > 0); /* literal, not a %-token */
  assert_int_equal (index_of (a, "-oControlMaster=no"), -1);
  assert_string_equal (a[count (a) - 1], "example.org");
  ssh_argv_free (a);

  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_CONTROL, false, "exit", &a), 0);
  assert_string_equal (a[index_of (a, "-O") + 1], "exit");
  assert_string_equal (a[count (a) - 1], "example.org");
  ssh_argv_free (a);

  assert_int_equal (ssh_build_argv (&s, SSH_ARGV_DIRECT, true, NULL, &a), 0);
  assert_true (index_of (a, "-oControlPath=none") > 0);
  ssh_argv_free (a);
}

static void
test_control_path (void **state)
{
  char *p = NULL, *d = NULL, *p2 = NULL, *d2 = NULL;
  const char *longdir = "/home/someone-with-a-long-name/.local/state/xdg-runtime/berth/env-0123456789abcdef0123456789";

  assert_int_equal (ssh_control_path ("/run/user/1000/berth/e1", 1000, &p, &d), 0);
  assert_string_equal (p, "/run/user/1000/berth/e1/cm");
  assert_string_equal (d, "/run/user/1000/berth/e1");
  free (p);
  free (d);

  assert_int_equal (ssh_control_path (longdir, 1000, &p, &d), 0);
  assert_string_equal (d, "/tmp/berth-ssh-1000");
  assert_int_equal (strncmp (p, "/tmp/berth-ssh-1000/", 20), 0);
  assert_int_equal (strlen (p), 20 + 16);
  /* ssh binds PATH.<16 random> first: within macOS' 104-byte sun_path */
  assert_true (strlen (p) + 17 <= 103);
  assert_int_equal (ssh_control_path (longdir, 1000, &p2, &d2), 0);
  assert_string_equal (p, p2); /* stable: a named environment finds its master again */
  free (p2);
  free (d2);
  assert_int_equal (ssh_control_path ("/home/someone-with-a-long-name/.local/state/xdg-runtime/berth/env-0123456789abcdef0123456788", 1000, &p2, &d2), 0);
  assert_string_not_equal (p, p2); /* siblings never share a master */
  free (p);
  free (d);
  free (p2);
  free (d2);

  /* characters ssh's config parser or %-expansion would mangle */
  assert_int_equal (ssh_control_path ("/tmp/with space", 0, &p, &d), 0);
  assert_string_equal (d, "/tmp/berth-ssh-0");
  free (p);
  free (d);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_quote_plain),
    cmocka_unit_test (test_quote_specials),
    cmocka_unit_test (test_quote_rejects_nul),
    cmocka_unit_test (test_join),
    cmocka_unit_test (test_roundtrip_fixed),
    cmocka_unit_test (test_roundtrip_random),
    cmocka_unit_test (test_settings_check),
    cmocka_unit_test (test_argv_client),
    cmocka_unit_test (test_argv_master_and_control),
    cmocka_unit_test (test_control_path),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
