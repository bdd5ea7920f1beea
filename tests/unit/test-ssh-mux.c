/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the in-process ControlMaster liveness check against fake
   masters (a real OpenSSH master is exercised by the integration tests).  */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ssh-mux.h"

static char dir[64];
static char path[128];

static int
setup (void **state)
{
  snprintf (dir, sizeof dir, "/tmp/berth-test-mux-XXXXXX");
  if (mkdtemp (dir) == NULL)
    return -1;
  snprintf (path, sizeof path, "%s/cm", dir);
  return 0;
}

static int
teardown (void **state)
{
  unlink (path);
  rmdir (dir);
  return 0;
}

static int
listen_at (const char *p)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true (fd >= 0);
  strcpy (sa.sun_path, p);
  unlink (p);
  assert_int_equal (bind (fd, (struct sockaddr *) &sa, sizeof sa), 0);
  assert_int_equal (listen (fd, 4), 0);
  return fd;
}

static void
put_u32 (unsigned char *b, uint32_t v)
{
  b[0] = (unsigned char) (v >> 24);
  b[1] = (unsigned char) (v >> 16);
  b[2] = (unsigned char) (v >> 8);
  b[3] = (unsigned char) v;
}

static uint32_t
get_u32 (const unsigned char *b)
{
  return ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) | ((uint32_t) b[2] << 8) | b[3];
}

static void
read_full (int fd, unsigned char *b, size_t n)
{
  while (n > 0)
    {
      ssize_t r = read (fd, b, n);
      if (r <= 0)
        _exit (3);
      b += r;
      n -= (size_t) r;
    }
}

enum
{
  FAKE_GOOD,
  FAKE_SILENT,
  FAKE_GARBAGE,
  FAKE_HELLO_EXT, /* a hello with an extension, answer split in pieces */
};

/* A child process acting as a master: MODE says how it behaves.  */
static pid_t
fake_master (int mode)
{
  int lfd = listen_at (path);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      int c = accept (lfd, NULL, NULL);
      unsigned char hello[12], msg[12], out[64];
      if (c < 0)
        _exit (2);
      if (mode == FAKE_SILENT)
        {
          pause ();
          _exit (0);
        }
      if (mode == FAKE_GARBAGE)
        {
          if (write (c, "SSH-2.0-nope\r\n", 14) != 14)
            _exit (2);
          pause ();
          _exit (0);
        }
      /* the master's hello */
      if (mode == FAKE_HELLO_EXT)
        {
          /* hello + one extension ("x", "y") */
          put_u32 (out, 4 + 4 + 4 + 1 + 4 + 1);
          put_u32 (out + 4, 1);
          put_u32 (out + 8, 4);
          put_u32 (out + 12, 1);
          out[16] = 'x';
          put_u32 (out + 17, 1);
          out[21] = 'y';
          if (write (c, out, 11) != 11 || (usleep (20000), write (c, out + 11, 11)) != 11)
            _exit (2);
        }
      else
        {
          put_u32 (out, 8);
          put_u32 (out + 4, 1);
          put_u32 (out + 8, 4);
          if (write (c, out, 12) != 12)
            _exit (2);
        }
      read_full (c, hello, 12);
      if (get_u32 (hello) != 8 || get_u32 (hello + 4) != 1 || get_u32 (hello + 8) != 4)
        _exit (4);
      read_full (c, msg, 12);
      if (get_u32 (msg) != 8 || get_u32 (msg + 4) != 0x10000004u)
        _exit (5);
      put_u32 (out, 12);
      put_u32 (out + 4, 0x80000005u);
      memcpy (out + 8, msg + 8, 4); /* the request id */
      put_u32 (out + 12, 4242);
      if (write (c, out, 16) != 16)
        _exit (2);
      _exit (0);
    }
  close (lfd);
  return pid;
}

static int
reap (pid_t pid, bool kill_it)
{
  int st;
  if (kill_it)
    kill (pid, SIGKILL);
  assert_int_equal (waitpid (pid, &st, 0), pid);
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
}

static void
test_absent (void **state)
{
  pid_t pid = 1;
  assert_int_equal (ssh_mux_check (path, 1000, &pid), SSH_MUX_ABSENT);
  assert_int_equal (pid, 1); /* untouched */
}

static void
test_stale_socket (void **state)
{
  /* a socket file nobody listens on: what a killed master leaves */
  int fd = listen_at (path);
  close (fd);
  assert_int_equal (ssh_mux_check (path, 1000, NULL), SSH_MUX_ABSENT);
}

static void
test_not_a_socket (void **state)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fclose (f);
  assert_int_equal (ssh_mux_check (path, 1000, NULL), SSH_MUX_ABSENT);
}

static void
test_alive (void **state)
{
  pid_t child = fake_master (FAKE_GOOD), pid = 0;
  assert_int_equal (ssh_mux_check (path, 2000, &pid), SSH_MUX_ALIVE);
  assert_int_equal (pid, 4242);
  assert_int_equal (reap (child, false), 0);
}

static void
test_alive_hello_extensions (void **state)
{
  pid_t child = fake_master (FAKE_HELLO_EXT), pid = 0;
  assert_int_equal (ssh_mux_check (path, 2000, &pid), SSH_MUX_ALIVE);
  assert_int_equal (pid, 4242);
  assert_int_equal (reap (child, false), 0);
}

static void
test_wedged (void **state)
{
  pid_t child = fake_master (FAKE_SILENT);
  struct timespec a, b;
  clock_gettime (CLOCK_MONOTONIC, &a);
  assert_int_equal (ssh_mux_check (path, 300, NULL), -ETIMEDOUT);
  clock_gettime (CLOCK_MONOTONIC, &b);
  long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
  assert_true (ms >= 250 && ms < 2000);
  reap (child, true);
}

static void
test_garbage (void **state)
{
  pid_t child = fake_master (FAKE_GARBAGE);
  int r = ssh_mux_check (path, 1000, NULL);
  assert_true (r == -EPROTO);
  reap (child, true);
}

static void
test_path_too_long (void **state)
{
  char p[200];
  memset (p, 'a', sizeof p - 1);
  p[0] = '/';
  p[sizeof p - 1] = '\0';
  assert_int_equal (ssh_mux_check (p, 100, NULL), -ENAMETOOLONG);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_absent, setup, teardown),
    cmocka_unit_test_setup_teardown (test_stale_socket, setup, teardown),
    cmocka_unit_test_setup_teardown (test_not_a_socket, setup, teardown),
    cmocka_unit_test_setup_teardown (test_alive, setup, teardown),
    cmocka_unit_test_setup_teardown (test_alive_hello_extensions, setup, teardown),
    cmocka_unit_test_setup_teardown (test_wedged, setup, teardown),
    cmocka_unit_test_setup_teardown (test_garbage, setup, teardown),
    cmocka_unit_test (test_path_too_long),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
