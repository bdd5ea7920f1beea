/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the Docker stream demuxer.  The input is split into
   chunks at positions taken from its first bytes; the payload delivered
   must be the same whatever the chunking.  */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker/frames.h"

typedef struct acc
{
  uint64_t sum[4];
  size_t len[4];
} acc;

static void
sink (void *userdata, int stream, const char *data, size_t len)
{
  acc *a = userdata;
  if (stream < 0 || stream > 3 || len == 0)
    abort ();
  for (size_t i = 0; i < len; i++)
    a->sum[stream] = a->sum[stream] * 31 + (unsigned char)data[i];
  a->len[stream] += len;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size < 1)
    return 0;
  unsigned step = data[0] % 17 + 1;
  data++, size--;
  docker_frames whole = DOCKER_FRAMES_INIT, split = DOCKER_FRAMES_INIT;
  acc a = { 0 }, b = { 0 };
  int r1 = docker_frames_feed (&whole, data, size, sink, &a);
  int r2 = 0;
  for (size_t off = 0; off < size && r2 == 0; off += step)
    {
      size_t n = size - off < step ? size - off : step;
      r2 = docker_frames_feed (&split, data + off, n, sink, &b);
    }
  if (r1 != r2)
    abort ();
  if (r1 == 0 && (memcmp (&a, &b, sizeof a) != 0 || docker_frames_at_boundary (&whole) != docker_frames_at_boundary (&split)))
    abort ();
  return 0;
}
