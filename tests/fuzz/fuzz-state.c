/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the session's state channel and the snapshot filter,
   fed arbitrary bytes split at an arbitrary point (the first byte picks
   the split).  Run with tests/fuzz/run-fuzz-state.sh.  */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "snapshot.h"
#include "wrapper.h"

static bool
drop_odd (void *userdata, const char *name)
{
  return strlen (name) % 2 == 1;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size == 0)
    return 0;
  size_t split = data[0] % size;
  const char *text = (const char *) data + 1;
  size_t len = size - 1;
  berth_state st = { 0 };
  berth_state_feed (&st, text, split < len ? split : len);
  if (split < len)
    berth_state_feed (&st, text + split, len - split);
  berth_state_end (&st);
  if (st.env)
    free (berth_snapshot_filter (st.env, st.env_len, drop_odd, NULL));
  free (berth_snapshot_filter (text, len, drop_odd, NULL));
  berth_state_free (&st);
  return 0;
}
