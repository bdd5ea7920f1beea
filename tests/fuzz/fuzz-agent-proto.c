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
