/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests: the ssh backend's berth_proc (a local client process with
   separate stdout/stderr behind one pollable fd), driven with local
   programs standing in for ssh.  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ssh-proc.h"

typedef struct
{
  char out[65536];
  size_t out_len;
  char err[65536];
  size_t err_len;
} sink_t;

static void
sink (void *userdata, int stream, const char *data, size_t len)
{
  sink_t *s = userdata;
  char *buf = stream == BERTH_STREAM_OUT ? s->out : s->err;
  size_t *l = stream == BERTH_STREAM_OUT ? &s->out_len : &s->err_len;
  assert_true (stream == BERTH_STREAM_OUT || stream == BERTH_STREAM_ERR);
  if (*l + len < sizeof s->out)
    {
      memcpy (buf + *l, data, len);
      *l += len;
    }
}

/* Drive P like libberth does: feed IN, pump until the end.  */
static int
run (berth_proc *p, const char *in, sink_t *s)
{
  size_t off = 0, len = in ? strlen (in) : 0;
  int status = -1;
  for (;;)
    {
      struct pollfd fds[2] = { { p->fd, POLLIN, 0 }, { p->stdin_fd, POLLOUT, 0 } };
      int nfds = p->stdin_fd >= 0 ? 2 : 1;
      assert_true (poll (fds, (nfds_t) nfds, 10000) > 0);
      if (nfds == 2 && fds[1].revents)
        {
          ssize_t n = off < len ? p->ops->write_stdin (p->proc, in + off, len - off) : 0;
          if (n > 0)
            off += (size_t) n;
          if (off >= len || (n < 0 && n != -EAGAIN))
            {
              p->ops->close_stdin (p->proc);
              p->stdin_fd = -1;
            }
        }
      if (fds[0].revents)
        {
          int r = p->ops->pump (p->proc, sink, s);
          assert_true (r >= 0);
          if (r == 0)
            break;
        }
    }
  assert_int_equal (p->ops->wait (p->proc, &status, NULL), 0);
  p->ops->free (p->proc);
  return status;
}

static void
test_streams_apart (void **state)
{
  const char *argv[] = { "/bin/sh", "-c", "cat; echo err >&2; printf 'no-nl'; exit 7", NULL };
  berth_proc p = { .size = sizeof p };
  sink_t *s = calloc (1, sizeof *s);
  assert_int_equal (berth_ssh_proc_spawn (argv, NULL, true, &p, NULL), 0);
  assert_true (p.stdin_fd >= 0);
  assert_int_equal (run (&p, "line1\nline2\n", s), 7);
  assert_int_equal (s->out_len, strlen ("line1\nline2\nno-nl"));
  assert_memory_equal (s->out, "line1\nline2\nno-nl", s->out_len);
  assert_int_equal (s->err_len, 4);
  assert_memory_equal (s->err, "err\n", 4);
  free (s);
}

static void
test_no_stdin (void **state)
{
  const char *argv[] = { "/bin/sh", "-c", "cat; echo done", NULL };
  berth_proc p = { .size = sizeof p };
  sink_t *s = calloc (1, sizeof *s);
  assert_int_equal (berth_ssh_proc_spawn (argv, NULL, false, &p, NULL), 0);
  assert_int_equal (p.stdin_fd, -1);
  assert_int_equal (run (&p, NULL, s), 0); /* cat sees /dev/null at once */
  assert_memory_equal (s->out, "done\n", 5);
  free (s);
}

static void
test_big_output (void **state)
{
  /* more than a pipe buffer on both streams at once: no deadlock */
  const char *argv[] = { "/bin/sh", "-c", "head -c 40000 /dev/zero; head -c 40000 /dev/zero >&2", NULL };
  berth_proc p = { .size = sizeof p };
  sink_t *s = calloc (1, sizeof *s);
  assert_int_equal (berth_ssh_proc_spawn (argv, NULL, false, &p, NULL), 0);
  assert_int_equal (run (&p, NULL, s), 0);
  assert_int_equal (s->out_len, 40000);
  assert_int_equal (s->err_len, 40000);
  free (s);
}

static void
test_stdin_closed_early (void **state)
{
  /* the command exits without reading: writes fail softly, no SIGPIPE */
  const char *argv[] = { "/bin/sh", "-c", "exit 0", NULL };
  berth_proc p = { .size = sizeof p };
  char *big = malloc (1 << 20);
  sink_t *s = calloc (1, sizeof *s);
  memset (big, 'x', (1 << 20) - 1);
  big[(1 << 20) - 1] = '\0';
  assert_int_equal (berth_ssh_proc_spawn (argv, NULL, true, &p, NULL), 0);
  assert_int_equal (run (&p, big, s), 0);
  free (big);
  free (s);
}

static void
test_signal_status_and_free_kills (void **state)
{
  const char *argv[] = { "/bin/sh", "-c", "kill -TERM $$", NULL };
  const char *sleeper[] = { "/bin/sleep", "100", NULL };
  berth_proc p = { .size = sizeof p };
  sink_t *s = calloc (1, sizeof *s);
  time_t t0;
  assert_int_equal (berth_ssh_proc_spawn (argv, NULL, false, &p, NULL), 0);
  assert_int_equal (run (&p, NULL, s), 128 + SIGTERM);
  /* free without wait: the client is killed and reaped, at once */
  assert_int_equal (berth_ssh_proc_spawn (sleeper, NULL, false, &p, NULL), 0);
  t0 = time (NULL);
  p.ops->free (p.proc);
  assert_true (time (NULL) - t0 < 3);
  free (s);
}

static void
test_spawn_failure (void **state)
{
  const char *argv[] = { "/nonexistent/ssh", NULL };
  berth_proc p = { .size = sizeof p };
  berth_error *err = NULL;
  int r = berth_ssh_proc_spawn (argv, NULL, false, &p, &err);
  /* posix_spawn reports exec failure either here or as exit 127 */
  if (r < 0)
    {
      assert_non_null (err);
      assert_non_null (strstr (berth_error_message (err), "/nonexistent/ssh"));
      berth_error_free (err);
    }
  else
    {
      sink_t *s = calloc (1, sizeof *s);
      assert_int_equal (run (&p, NULL, s), 127);
      free (s);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_streams_apart),
    cmocka_unit_test (test_no_stdin),
    cmocka_unit_test (test_big_output),
    cmocka_unit_test (test_stdin_closed_early),
    cmocka_unit_test (test_signal_status_and_free_kills),
    cmocka_unit_test (test_spawn_failure),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
