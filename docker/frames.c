/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frames.c: the Docker multiplexed-stream demuxer (see frames.h).  */
#include <errno.h>
#include <string.h>

#include "frames.h"

#define FRAMES_BROKEN 0xff

int
docker_frames_feed (docker_frames *d, const void *data, size_t len, docker_frame_fn fn, void *userdata)
{
  const unsigned char *p = data;

  if (d->stream == FRAMES_BROKEN)
    return -EPROTO;
  while (len > 0)
    {
      if (d->remaining == 0)
        {
          size_t take = sizeof d->header - d->header_len;
          if (take > len)
            take = len;
          memcpy (d->header + d->header_len, p, take);
          d->header_len += take;
          p += take;
          len -= take;
          if (d->header_len < sizeof d->header)
            break;
          d->header_len = 0;
          if (d->header[0] > DOCKER_FRAME_SYSTEMERR || d->header[1] || d->header[2] || d->header[3])
            {
              d->stream = FRAMES_BROKEN;
              return -EPROTO;
            }
          d->stream = d->header[0] == DOCKER_FRAME_STDIN ? DOCKER_FRAME_STDOUT : d->header[0];
          d->remaining = (uint32_t)d->header[4] << 24 | (uint32_t)d->header[5] << 16
                         | (uint32_t)d->header[6] << 8 | (uint32_t)d->header[7];
          d->frames++;
          continue;
        }
      size_t take = d->remaining < len ? d->remaining : len;
      fn (userdata, d->stream, (const char *)p, take);
      d->remaining -= (uint32_t)take;
      p += take;
      len -= take;
    }
  return 0;
}

int
docker_frames_at_boundary (const docker_frames *d)
{
  return d->stream != FRAMES_BROKEN && d->remaining == 0 && d->header_len == 0;
}
