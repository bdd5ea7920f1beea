/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* replay.h: the one file reader of the replay drivers (the fuzz targets
   built without libFuzzer, run by make check): feed the whole of PATH to
   LLVMFuzzerTestOneInput.  Include it after that function's declaration.  */
#ifndef BERTH_FUZZ_REPLAY_H
#define BERTH_FUZZ_REPLAY_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
