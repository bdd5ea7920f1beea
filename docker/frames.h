/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* frames.h: incremental demultiplexer of the Docker attach/exec stream
   (Tty=false): frames of [stream:1][0:3][size:4 big-endian] + payload.
   Robust to any chunk boundaries, including a split header.  */
#ifndef BERTH_DOCKER_FRAMES_H
#define BERTH_DOCKER_FRAMES_H

#include <stddef.h>
#include <stdint.h>

enum
{
  DOCKER_FRAME_STDIN = 0, /* delivered as stdout, as moby's stdcopy does */
  DOCKER_FRAME_STDOUT = 1,
  DOCKER_FRAME_STDERR = 2,
  DOCKER_FRAME_SYSTEMERR = 3, /* a daemon-side error message */
};

/* Called with each piece of payload (possibly a part of a frame).  STREAM
   is DOCKER_FRAME_STDOUT, _STDERR or _SYSTEMERR.  */
typedef void (*docker_frame_fn) (void *userdata, int stream, const char *data, size_t len);

typedef struct docker_frames
{
  unsigned char header[8];
  size_t header_len;  /* bytes of header collected */
  uint32_t remaining; /* payload bytes left in the current frame */
  int stream;
  uint64_t frames; /* complete headers seen */
} docker_frames;

#define DOCKER_FRAMES_INIT \
  {                        \
    .header_len = 0        \
  }

/* Feed LEN bytes.  Returns 0, or -EPROTO on a malformed header (unknown
   stream type or non-zero padding); the demuxer stays in the error.  */
int docker_frames_feed (docker_frames *d, const void *data, size_t len, docker_frame_fn fn, void *userdata);
/* True when the stream may end here (between frames).  */
int docker_frames_at_boundary (const docker_frames *d);

#endif
