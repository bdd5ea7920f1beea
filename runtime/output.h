/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.h: the bounded output of one command.  Invalid UTF-8 becomes
   U+FFFD (a character split across reads stays whole); beyond MAX bytes
   the first 40 % and the last 60 % are kept and everything goes to a 0600
   spill file (itself capped).  Memory is O(MAX) whatever comes in.  The
   rendered text is never longer than MAX bytes: the truncation notice and
   a caller's note (timeout, interrupt) are inside the cap.  */
#ifndef BERTH_OUTPUT_H
#define BERTH_OUTPUT_H

#include "util.h"

#define BERTH_SPILL_MAX (16u << 20)
/* berth gc keeps the spill directory under this many bytes.  */
#define BERTH_SPILL_TOTAL_MAX (256ull << 20)

typedef struct berth_output
{
  size_t limit; /* the cap of the rendered text, bytes */
  size_t max;   /* what is kept: LIMIT, at least 16 */
  berth_buf head; /* everything until overflow, then the first 40 % */
  char *ring;     /* the last 60 % after overflow */
  size_t ring_cap, ring_pos, ring_len;
  uint64_t total_bytes, total_chars, head_chars;
  bool overflow;
  char pend[4]; /* an incomplete UTF-8 sequence carried to the next chunk */
  size_t npend;
  int spill_fd;
  bool spill_memory; /* spill to a memfd, not a file (a hosted scope): spill_path
                        is then only its name, spill_fd stays open until free */
  char *spill_dir; /* where spill files go */
  char *spill_path;
  uint64_t spilled;
  int error; /* first spill error, -errno */
  berth_buf scratch; /* reused for sanitizing each chunk */
} berth_output;

BERTH_INTERNAL void berth_output_init (berth_output *o, size_t max, const char *spill_dir);
BERTH_INTERNAL int berth_output_add (berth_output *o, const char *data, size_t len);
/* Flush the carried bytes and render: the (possibly truncated) text.  */
BERTH_INTERNAL char *berth_output_finish (berth_output *o, size_t *ret_len);
/* The same with NOTE (e.g. "\n[Command timed out after 5s]", its leading
   newline dropped on empty output) at the end, inside the cap.  When only
   the note does not fit, the text is truncated (and spilled) to make
   room.  */
BERTH_INTERNAL char *berth_output_finish_note (berth_output *o, const char *note, size_t *ret_len);
BERTH_INTERNAL void berth_output_free (berth_output *o);
/* Append valid UTF-8 of DATA to B; bytes of an incomplete trailing
   sequence go to PEND (up to 3).  Exposed for tests.  */
BERTH_INTERNAL int berth_utf8_sanitize (berth_buf *b, const char *data, size_t len, char *pend, size_t *npend);

#endif
