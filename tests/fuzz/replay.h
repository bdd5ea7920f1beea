/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* replay.h: what the replay drivers share (the fuzz targets built
   without libFuzzer, run by make check): feeding a whole file to
   LLVMFuzzerTestOneInput, and the fixed xorshift generator of their
   mutations (the same runs every time).  Include it after that
   function's declaration.  */
#ifndef BERTH_FUZZ_REPLAY_H
#define BERTH_FUZZ_REPLAY_H
#ifndef BERTH_LIBFUZZER /* libFuzzer brings its own driver */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t fuzz_rng = 2463534242u;

static uint32_t
next (void)
{
  fuzz_rng ^= fuzz_rng << 13;
  fuzz_rng ^= fuzz_rng >> 17;
  fuzz_rng ^= fuzz_rng << 5;
  return fuzz_rng;
}

static int
fuzz_replay_file (const char *path)
{
  FILE *f = fopen (path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;
  if (f == NULL)
    {
      perror (path);
      return 1;
    }
  do
    {
      if (cap - len < 65536)
        buf = realloc (buf, cap = len + 65536);
      if (buf == NULL)
        abort ();
      n = fread (buf + len, 1, cap - len, f);
      len += n;
    }
  while (n > 0);
  fclose (f);
  LLVMFuzzerTestOneInput (buf, len);
  free (buf);
  return 0;
}

#endif
#endif
