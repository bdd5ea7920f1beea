/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth-agent itself, driven frame by frame over its stdio and its
   socket (the real binary, agent/berth-agent of the build): a run and
   its exit, a pty, a detached process that outlives its controller and
   is listed and attached to (output replayed) from the socket, a
   foreground tree (setsid escapees too) killed when its controller
   goes, and malformed input refused.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/proto.h"

typedef struct conn
{
  int in, out; /* we write IN, read OUT */
  berth_agent_buf rx;
  size_t consumed; /* the frame next_frame gave last */
  pid_t pid;   /* the agent, when we started it */
} conn;

static char *
agent_path (void)
{
  static char p[4096];
  const char *b = getenv ("BERTH_BUILDDIR");
  snprintf (p, sizeof p, "%s/agent/berth-agent", b ? b : ".");
  return p;
}

static conn
start_agent (const char *sock)
{
  int in[2], out[2];
  assert_int_equal (pipe (in), 0);
  assert_int_equal (pipe (out), 0);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      dup2 (in[0], 0);
      dup2 (out[1], 1);
      close (in[1]);
      close (out[0]);
      if (sock)
        execl (agent_path (), "berth-agent", "--stdio", "--socket", sock, (char *) NULL);
      else
        execl (agent_path (), "berth-agent", "--stdio", (char *) NULL);
      _exit (127);
    }
  close (in[0]);
  close (out[1]);
  signal (SIGPIPE, SIG_IGN);
  return (conn){ .in = in[1], .out = out[0], .pid = pid };
}

static conn
connect_sock (const char *path)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  snprintf (sa.sun_path, sizeof sa.sun_path, "%s", path);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (s >= 0);
  assert_int_equal (connect (s, (struct sockaddr *) &sa, sizeof sa), 0);
  return (conn){ .in = s, .out = s, .pid = -1 };
}

static void
send_buf (conn *c, berth_agent_buf *b)
{
  size_t off = 0;
  while (off < b->len)
    {
      ssize_t n = write (c->in, b->data + off, b->len - off);
      assert_true (n > 0);
      off += (size_t) n;
    }
  berth_agent_buf_free (b);
}

static void
hello (conn *c)
{
  berth_agent_buf b = { 0 };
  assert_int_equal (berth_agent_put_hello (&b, BERTH_AGENT_VERSION), 0);
  send_buf (c, &b);
}

static void
run (conn *c, uint32_t id, uint32_t flags, const char *script)
{
  char *argv[] = { "bash", "-c", (char *) script, NULL };
  berth_agent_run r = { .flags = flags, .argv = argv };
  berth_agent_buf b = { 0 };
  assert_int_equal (berth_agent_put_run (&b, id, &r), 0);
  send_buf (c, &b);
}

/* The next frame within 10 s into *F (valid until the next call); false
   at end of stream.  */
static bool
next_frame (conn *c, berth_agent_frame *f)
{
  berth_agent_buf_consume (&c->rx, c->consumed);
  c->consumed = 0;
  for (;;)
    {
      int r = berth_agent_frame_parse (c->rx.data + c->rx.off, berth_agent_buf_pending (&c->rx), f);
      assert_true (r >= 0);
      if (r > 0)
        {
          c->consumed = (size_t) r;
          return true;
        }
      struct pollfd p = { c->out, POLLIN, 0 };
      assert_int_equal (poll (&p, 1, 10000), 1);
      assert_int_equal (berth_agent_buf_reserve (&c->rx, 65536), 0);
      ssize_t n = read (c->out, c->rx.data + c->rx.len, c->rx.cap - c->rx.len);
      if (n <= 0)
        return false;
      c->rx.len += (size_t) n;
    }
}

/* Frames of channel ID until its EXIT: stdout and stderr collected.  */
static berth_agent_exit
collect (conn *c, uint32_t id, char *out, size_t outsz, char *err, size_t errsz)
{
  berth_agent_frame f;
  size_t no = 0, ne = 0;
  berth_agent_exit e = { 0 };
  while (next_frame (c, &f))
    {
      if (f.chan != id)
        continue;
      if (f.type == BERTH_AGENT_OUT && out && no + f.len < outsz)
        memcpy (out + no, f.data, f.len), no += f.len;
      if (f.type == BERTH_AGENT_ERR && err && ne + f.len < errsz)
        memcpy (err + ne, f.data, f.len), ne += f.len;
      if (f.type == BERTH_AGENT_EXIT)
        {
          assert_int_equal (berth_agent_exit_decode (&f, &e), 0);
          break;
        }
    }
  if (out)
    out[no] = '\0';
  if (err)
    err[ne] = '\0';
  return e;
}

static void
close_conn (conn *c)
{
  if (c->in != c->out)
    close (c->in);
  close (c->out);
  berth_agent_buf_free (&c->rx);
}

/* The agent exits within 3 s (nothing left to serve).  */
static void
agent_exits (conn *c)
{
  int st;
  for (int i = 0; i < 300; i++)
    {
      if (waitpid (c->pid, &st, WNOHANG) == c->pid)
        {
          assert_true (WIFEXITED (st));
          return;
        }
      usleep (10000);
    }
  kill (c->pid, SIGKILL);
  fail_msg ("the agent did not exit");
}

static int
count_marker (const char *marker)
{
  DIR *d = opendir ("/proc");
  struct dirent *de;
  int n = 0;
  while (d && (de = readdir (d)))
    {
      char p[300], buf[256] = "";
      snprintf (p, sizeof p, "/proc/%s/cmdline", de->d_name);
      FILE *f = fopen (p, "re");
      if (f == NULL)
        continue;
      size_t got = fread (buf, 1, sizeof buf - 1, f);
      fclose (f);
      for (size_t i = 0; i < got; i++)
        if (buf[i] == '\0')
          buf[i] = ' ';
      if (strncmp (buf, marker, strlen (marker)) == 0)
        n++;
    }
  if (d)
    closedir (d);
  return n;
}

/* Right after HELLO, the agent says what a command that inherits its
   environment starts with (the controller leaves that out of snapshots).  */
static void
test_environ (void **state)
{
  setenv ("BERTH_TEST_ENVIRON", "a b=c", 1);
  conn c = start_agent (NULL);
  unsetenv ("BERTH_TEST_ENVIRON");
  berth_agent_frame f;
  assert_true (next_frame (&c, &f));
  assert_int_equal (f.type, BERTH_AGENT_HELLO);
  assert_true (next_frame (&c, &f));
  assert_int_equal (f.type, BERTH_AGENT_ENVIRON);
  char **env = NULL;
  assert_int_equal (berth_agent_environ_decode (&f, &env), 0);
  bool seen = false;
  for (size_t i = 0; env[i]; i++)
    {
      seen |= strcmp (env[i], "BERTH_TEST_ENVIRON=a b=c") == 0;
      free (env[i]);
    }
  free (env);
  assert_true (seen);
  close_conn (&c);
  agent_exits (&c);
}

static void
test_run_and_exit (void **state)
{
  conn c = start_agent (NULL);
  char out[256], err[256];
  hello (&c);
  run (&c, 1, 0, "echo out; echo err >&2; exit 7");
  berth_agent_exit e = collect (&c, 1, out, sizeof out, err, sizeof err);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_EXITED);
  assert_int_equal (e.value, 7);
  assert_string_equal (out, "out\n");
  assert_string_equal (err, "err\n");
  free (e.message);
  run (&c, 2, 0, "kill -TERM $$");
  e = collect (&c, 2, NULL, 0, NULL, 0);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_SIGNALED);
  assert_int_equal (e.value, SIGTERM);
  free (e.message);
  char *argv[] = { "/nonexistent/berth-agent-test", NULL };
  berth_agent_run r = { .argv = argv };
  berth_agent_buf b = { 0 };
  assert_int_equal (berth_agent_put_run (&b, 3, &r), 0);
  send_buf (&c, &b);
  e = collect (&c, 3, NULL, 0, NULL, 0);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_FAILED);
  assert_non_null (strstr (e.message, "cannot run"));
  free (e.message);
  close_conn (&c);
  agent_exits (&c);
}

static void
test_pty (void **state)
{
  conn c = start_agent (NULL);
  char out[256];
  hello (&c);
  run (&c, 1, BERTH_AGENT_RUN_PTY | BERTH_AGENT_RUN_STDIN, "[ -t 0 ] && [ -t 1 ] && echo on-a-tty");
  berth_agent_exit e = collect (&c, 1, out, sizeof out, NULL, 0);
  assert_int_equal (e.value, 0);
  assert_non_null (strstr (out, "on-a-tty"));
  free (e.message);
  close_conn (&c);
  agent_exits (&c);
}

/* A detached process outlives its controller; a second one, on the
   socket, lists it and attaches (its output so far replayed), then
   kills it; with nothing left the agent exits.  */
static void
test_detached_attach (void **state)
{
  char dir[64] = "/tmp/berth-agent-test-XXXXXX", sock[108], marker[64], script[256];
  /* the agent listens only in a directory private to its user */
  assert_non_null (mkdtemp (dir));
  snprintf (sock, sizeof sock, "%s/s", dir);
  snprintf (marker, sizeof marker, "sleep 41.%ld", (long) getpid ());
  snprintf (script, sizeof script, "echo early; %s; echo late", marker);
  conn c = start_agent (sock);
  berth_agent_frame f;
  hello (&c);
  run (&c, 1, BERTH_AGENT_RUN_DETACHED, script);
  while (next_frame (&c, &f) && f.type != BERTH_AGENT_STARTED)
    ;
  usleep (300 * 1000); /* it prints early */
  close_conn (&c);
  usleep (700 * 1000); /* past the grace: a foreground one would be gone */
  assert_int_equal (count_marker (marker), 1);
  assert_int_equal (waitpid (c.pid, NULL, WNOHANG), 0);

  conn s = connect_sock (sock);
  hello (&s);
  berth_agent_buf b = { 0 };
  assert_int_equal (berth_agent_put_frame (&b, BERTH_AGENT_LIST, 0, NULL, 0), 0);
  send_buf (&s, &b);
  uint32_t gid = 0;
  while (next_frame (&s, &f))
    if (f.type == BERTH_AGENT_LIST_REPLY)
      {
        berth_agent_rd r = berth_agent_rd_init (&f);
        assert_int_equal (berth_agent_get_u32 (&r), 1);
        gid = berth_agent_get_u32 (&r);
        (void) berth_agent_get_u32 (&r);
        assert_int_equal (berth_agent_get_u32 (&r) & BERTH_AGENT_RUN_DETACHED, BERTH_AGENT_RUN_DETACHED);
        assert_int_equal (berth_agent_get_u8 (&r), 1); /* running */
        break;
      }
  assert_true (gid > 0);
  assert_int_equal (berth_agent_put_u32 (&b, BERTH_AGENT_ATTACH, gid, 9), 0);
  send_buf (&s, &b);
  while (next_frame (&s, &f) && !(f.type == BERTH_AGENT_OUT && f.chan == 9))
    ;
  assert_true (f.len >= 6 && memcmp (f.data, "early\n", 6) == 0);
  assert_int_equal (berth_agent_put_kill (&b, 9, 0, 0, NULL), 0);
  send_buf (&s, &b);
  berth_agent_exit e = collect (&s, 9, NULL, 0, NULL, 0);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_SIGNALED);
  assert_int_equal (e.value, SIGKILL);
  free (e.message);
  assert_int_equal (count_marker (marker), 0);
  close_conn (&s);
  agent_exits (&c);
  assert_int_equal (access (sock, F_OK), -1); /* its socket goes with it */
  rmdir (dir);
}

/* A second agent started at the socket of one that listens there relays
   to it: what the first says after its HELLO (ENVIRON, in the same
   write) comes through whole, and a command runs.  */
static void
test_relay (void **state)
{
  char dir[64] = "/tmp/berth-agent-test-XXXXXX", sock[108], out[64];
  assert_non_null (mkdtemp (dir));
  snprintf (sock, sizeof sock, "%s/s", dir);
  conn a = start_agent (sock);
  berth_agent_frame f;
  hello (&a);
  assert_true (next_frame (&a, &f) && f.type == BERTH_AGENT_HELLO);
  conn b = start_agent (sock);
  assert_true (next_frame (&b, &f));
  assert_int_equal (f.type, BERTH_AGENT_HELLO);
  assert_true (next_frame (&b, &f));
  assert_int_equal (f.type, BERTH_AGENT_ENVIRON);
  hello (&b);
  run (&b, 1, 0, "echo relayed");
  berth_agent_exit e = collect (&b, 1, out, sizeof out, NULL, 0);
  assert_int_equal (e.cause, BERTH_AGENT_CAUSE_EXITED);
  assert_int_equal (e.value, 0);
  assert_string_equal (out, "relayed\n");
  free (e.message);
  close_conn (&b);
  close_conn (&a);
  agent_exits (&a);
  rmdir (dir);
}

/* A socket path in a directory others may write (a shared /tmp): the
   agent serves its stdio but neither listens nor connects there.  */
static void
test_public_dir_refused (void **state)
{
  char sock[108];
  snprintf (sock, sizeof sock, "/tmp/berth-agent-test-%ld.sock", (long) getpid ());
  conn c = start_agent (sock);
  hello (&c);
  assert_int_equal (access (sock, F_OK), -1);
  close_conn (&c);
  agent_exits (&c);
}

/* The controller goes: the foreground tree (a setsid escapee and an
   orphaned grandchild too) is gone within 2 s and the agent exits.  */
static void
test_controller_gone (void **state)
{
  char marker[64], script[256];
  snprintf (marker, sizeof marker, "sleep 42.%ld", (long) getpid ());
  snprintf (script, sizeof script, "setsid %s & (%s &) ; %s", marker, marker, marker);
  conn c = start_agent (NULL);
  hello (&c);
  run (&c, 1, 0, script);
  for (int i = 0; i < 100 && count_marker (marker) < 3; i++)
    usleep (20000);
  assert_int_equal (count_marker (marker), 3);
  close_conn (&c);
  int n = -1;
  for (int i = 0; i < 20 && (n = count_marker (marker)) > 0; i++)
    usleep (100 * 1000);
  assert_int_equal (n, 0);
  agent_exits (&c);
}

static void
test_refuses_garbage (void **state)
{
  conn c = start_agent (NULL);
  berth_agent_frame f;
  /* a frame before hello */
  run (&c, 1, 0, "true");
  bool refused = false;
  while (next_frame (&c, &f))
    if (f.type == BERTH_AGENT_ERROR)
      refused = true;
  assert_true (refused);
  close_conn (&c);
  agent_exits (&c);

  c = start_agent (NULL);
  hello (&c);
  /* a header with its reserved bytes set */
  uint8_t bad[BERTH_AGENT_HDR] = { 0, 0, 0, 0, BERTH_AGENT_PING, 1, 0, 0, 0, 0, 0, 0 };
  assert_int_equal (write (c.in, bad, sizeof bad), (ssize_t) sizeof bad);
  refused = false;
  while (next_frame (&c, &f))
    if (f.type == BERTH_AGENT_ERROR)
      refused = true;
  assert_true (refused);
  close_conn (&c);
  agent_exits (&c);
}

int
main (void)
{
  if (access (agent_path (), X_OK) != 0)
    {
      fprintf (stderr, "test-agent-serve: %s is not built\n", agent_path ());
      return 1;
    }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_environ), cmocka_unit_test (test_run_and_exit),  cmocka_unit_test (test_pty),         cmocka_unit_test (test_detached_attach),
    cmocka_unit_test (test_public_dir_refused), cmocka_unit_test (test_relay),
    cmocka_unit_test (test_controller_gone), cmocka_unit_test (test_refuses_garbage),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
