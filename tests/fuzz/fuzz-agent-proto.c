/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the berth-agent frame parser and every payload
   decoder, fed arbitrary bytes as a stream of frames (what either side
   of an agent stream may receive).  Whatever decodes is encoded again
   and must parse back the same.  Run with tests/fuzz/run-fuzz-agent.sh.  */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/proto.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
#include "replay.h"

static void
roundtrip_run (const berth_agent_run *run)
{
  berth_agent_buf b = { 0 };
  berth_agent_frame f;
  berth_agent_run again;
  if (berth_agent_put_run (&b, 7, run) < 0)
    {
      berth_agent_buf_free (&b);
      return;
    }
  int n = berth_agent_frame_parse (b.data, b.len, &f);
  assert (n > 0 && (size_t) n == b.len && f.type == BERTH_AGENT_RUN && f.chan == 7);
  assert (berth_agent_run_decode (f.data, f.len, &again) == 0);
  assert (again.flags == run->flags);
  for (size_t i = 0; run->argv[i] || again.argv[i]; i++)
    assert (run->argv[i] && again.argv[i] && strcmp (run->argv[i], again.argv[i]) == 0);
  assert ((run->env == NULL) == (again.env == NULL));
  assert ((run->cwd == NULL) == (again.cwd == NULL));
  berth_agent_run_free (&again);
  berth_agent_buf_free (&b);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  size_t off = 0;
  while (off < size)
    {
      berth_agent_frame f;
      int n = berth_agent_frame_parse (data + off, size - off, &f);
      if (n <= 0)
        break;
      assert ((size_t) n <= size - off && f.len + BERTH_AGENT_HDR == (size_t) n);
      off += (size_t) n;
      berth_agent_rd r = berth_agent_rd_init (&f);
      switch (f.type)
        {
        case BERTH_AGENT_RUN:
          {
            berth_agent_run run;
            if (berth_agent_run_decode (f.data, f.len, &run) == 0)
              {
                assert (run.argv && run.argv[0]);
                roundtrip_run (&run);
                berth_agent_run_free (&run);
              }
            break;
          }
        case BERTH_AGENT_EXIT:
          {
            berth_agent_exit e = { 0 };
            if (berth_agent_exit_decode (&f, &e) == 0)
              {
                assert (e.message);
                free (e.message);
              }
            break;
          }
        case BERTH_AGENT_ENVIRON:
          {
            char **env = NULL;
            if (berth_agent_environ_decode (&f, &env) == 0)
              {
                /* encoded again, it decodes the same */
                berth_agent_buf b = { 0 };
                berth_agent_frame g;
                char **again = NULL;
                assert (berth_agent_put_environ (&b, env) == 0);
                assert (berth_agent_frame_parse (b.data, b.len, &g) > 0 && berth_agent_environ_decode (&g, &again) == 0);
                for (size_t i = 0; env[i] || again[i]; i++)
                  assert (env[i] && again[i] && strcmp (env[i], again[i]) == 0);
                for (size_t i = 0; env[i]; i++)
                  free (env[i]), free (again[i]);
                free (env), free (again);
                berth_agent_buf_free (&b);
              }
            break;
          }
        case BERTH_AGENT_HELLO:
        case BERTH_AGENT_KILL:
          {
            (void) berth_agent_get_u32 (&r);
            if (f.type == BERTH_AGENT_KILL)
              (void) berth_agent_get_u32 (&r);
            free (berth_agent_get_strdup (&r, BERTH_AGENT_MAX_STR));
            break;
          }
        case BERTH_AGENT_LIST_REPLY:
          {
            uint32_t k = berth_agent_get_u32 (&r);
            for (uint32_t i = 0; i < k && !r.bad; i++)
              {
                size_t l;
                (void) berth_agent_get_u32 (&r);
                (void) berth_agent_get_u32 (&r);
                (void) berth_agent_get_u32 (&r);
                (void) berth_agent_get_u8 (&r);
                (void) berth_agent_get_str (&r, 256, &l);
              }
            break;
          }
        default:
          (void) berth_agent_get_u64 (&r);
          (void) berth_agent_type_name (f.type);
        }
    }
  return 0;
}

#ifndef BERTH_LIBFUZZER
/* The replay driver `make check` runs (tests/fuzz/fuzz-agent-proto-replay):
   the files given, else a stream of every frame type the encoders make,
   then mutations of it (bytes flipped, cut, removed), each fed to the
   target above.  tests/fuzz/run-fuzz-agent.sh builds the libFuzzer one
   with -DBERTH_LIBFUZZER.  */
#include <stdio.h>


static void
seed_stream (berth_agent_buf *b)
{
  char *argv[] = { (char *) "bash", (char *) "-c", (char *) "true", NULL };
  char *env[] = { (char *) "A=1", (char *) "PATH=/bin", NULL };
  berth_agent_run run = { .flags = BERTH_AGENT_RUN_STDIN | BERTH_AGENT_RUN_FD3, .cwd = (char *) "/tmp", .argv = argv, .env = env };
  berth_agent_run run2 = { .flags = BERTH_AGENT_RUN_PTY, .argv = argv, .env = NULL };
  static const uint8_t list[] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 0, 1, 0, 0, 0, 4, 'b', 'a', 's', 'h' };
  if (berth_agent_put_hello (b, "0.0/1") < 0 || berth_agent_put_environ (b, env) < 0 || berth_agent_put_frame (b, BERTH_AGENT_FD3, 1, "echo hi\n", 8) < 0
      || berth_agent_put_run (b, 1, &run) < 0 || berth_agent_put_run (b, 2, &run2) < 0
      || berth_agent_put_frame (b, BERTH_AGENT_STDIN, 1, "input", 5) < 0 || berth_agent_put_frame (b, BERTH_AGENT_CLOSE_STDIN, 1, NULL, 0) < 0
      || berth_agent_put_u32 (b, BERTH_AGENT_WINDOW_FRAME, 1, 4096) < 0 || berth_agent_put_u32 (b, BERTH_AGENT_STARTED, 1, 42) < 0
      || berth_agent_put_frame (b, BERTH_AGENT_OUT, 1, "out", 3) < 0 || berth_agent_put_eof (b, 1, BERTH_AGENT_STREAM_OUT) < 0
      || berth_agent_put_exit (b, 1, BERTH_AGENT_CAUSE_OOM, 9, "") < 0 || berth_agent_put_exit (b, 2, BERTH_AGENT_CAUSE_FAILED, 2, "no such file") < 0
      || berth_agent_put_kill (b, 0, 0, 42, "job-token") < 0 || berth_agent_put_frame (b, BERTH_AGENT_LIST, 0, NULL, 0) < 0
      || berth_agent_put_frame (b, BERTH_AGENT_LIST_REPLY, 0, list, sizeof list) < 0 || berth_agent_put_u32 (b, BERTH_AGENT_ATTACH, 3, 9) < 0
      || berth_agent_put_u64 (b, BERTH_AGENT_PING, 0, 0x0102030405060708ull) < 0 || berth_agent_put_error (b, 0, "bye") < 0)
    abort ();
}


int
main (int argc, char **argv)
{
  if (argc > 1)
    {
      for (int i = 1; i < argc; i++)
        if (fuzz_replay_file (argv[i]))
          return 1;
      printf ("replayed %d inputs\n", argc - 1);
      return 0;
    }
  berth_agent_buf seed = { 0 };
  seed_stream (&seed);
  size_t len = berth_agent_buf_pending (&seed), runs = 1;
  LLVMFuzzerTestOneInput (seed.data + seed.off, len);
  uint8_t *buf = malloc (len);
  if (buf == NULL)
    abort ();
  for (int m = 0; m < 20000; m++)
    {
      size_t n = len;
      memcpy (buf, seed.data + seed.off, len);
      for (int k = 1 + (int) (next () % 4); k > 0 && n; k--)
        {
          size_t at = next () % n;
          switch (next () % 4)
            {
            case 0: buf[at] = (uint8_t) next (); break;
            case 1: buf[at] ^= (uint8_t) (1u << (next () % 8)); break;
            case 2: n = at; break; /* cut */
            default: memmove (buf + at, buf + at + 1, n - at - 1), n--; break;
            }
        }
      LLVMFuzzerTestOneInput (buf, n);
      runs++;
    }
  free (buf);
  berth_agent_buf_free (&seed);
  printf ("%zu inputs: no crash, every decoded RUN encoded back the same\n", runs);
  return 0;
}
#endif
