/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "berth-private.h"
#include "output.h"

static const char replacement[] = "\xef\xbf\xbd";

/* Length of the valid UTF-8 sequence at P (N bytes available): >0 valid,
   0 incomplete (needs more bytes), -1 invalid first byte(s).  */
static int
utf8_seq (const unsigned char *p, size_t n)
{
  unsigned c = p[0];
  int len;
  unsigned min;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, min = 0x10000;
  else
    return -1;
  unsigned cp = c & (0xff >> (len + 1));
  for (int i = 1; i < len; i++)
    {
      if ((size_t) i >= n)
        return 0;
      if ((p[i] & 0xc0) != 0x80)
        return -1;
      cp = (cp << 6) | (p[i] & 0x3f);
    }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return -1;
  return len;
}

/* How much of DATA is ASCII, eight bytes at a time.  */
static size_t
ascii_prefix (const char *data, size_t len)
{
  size_t i = 0;
  for (; i + 8 <= len; i += 8)
    {
      uint64_t w;
      memcpy (&w, data + i, 8);
      if (w & 0x8080808080808080ull)
        break;
    }
  while (i < len && (unsigned char) data[i] < 0x80)
    i++;
  return i;
}

int
berth_utf8_sanitize (berth_buf *b, const char *data, size_t len, char *pend, size_t *npend)
{
  char joined[8];
  size_t i = 0;
  /* Finish a sequence left over from the previous chunk first.  */
  while (*npend > 0 && i < len)
    {
      memcpy (joined, pend, *npend);
      size_t take = len - i < 4 ? len - i : 4;
      memcpy (joined + *npend, data + i, take);
      int s = utf8_seq ((const unsigned char *) joined, *npend + take);
      if (s > 0)
        {
          if (berth_buf_append (b, joined, (size_t) s) < 0)
            return -ENOMEM;
          i += (size_t) s - *npend;
          *npend = 0;
        }
      else if (s == 0)
        {
          memcpy (pend + *npend, data + i, take);
          *npend += take;
          return 0;
        }
      else
        {
          /* The carried lead byte was bad: replace it, retry the rest.  */
          if (berth_buf_append (b, replacement, 3) < 0)
            return -ENOMEM;
          memmove (pend, pend + 1, --*npend);
        }
    }
  size_t start = i;
  while (i < len)
    {
      i += ascii_prefix (data + i, len - i);
      if (i == len)
        break;
      int s = utf8_seq ((const unsigned char *) data + i, len - i);
      if (s > 0)
        {
          i += (size_t) s;
          continue;
        }
      if (berth_buf_append (b, data + start, i - start) < 0)
        return -ENOMEM;
      if (s == 0)
        {
          *npend = len - i;
          memcpy (pend, data + i, *npend);
          return 0;
        }
      if (berth_buf_append (b, replacement, 3) < 0)
        return -ENOMEM;
      start = ++i;
    }
  return berth_buf_append (b, data + start, i - start);
}

void
berth_output_init (berth_output *o, size_t max, const char *spill_dir)
{
  *o = (berth_output){ 0 };
  o->limit = max ? max : 1;
  o->max = max < 16 ? 16 : max;
  o->spill_fd = -1;
  o->spill_dir = spill_dir ? strdup (spill_dir) : NULL;
}

static uint64_t
count_chars (const char *s, size_t n)
{
  /* every byte but a continuation byte (10xxxxxx) starts a character;
     eight at a time: bit 7 set where bit 6 (shifted up) is not, those
     bits summed by a multiply (no popcount instruction assumed) */
  uint64_t c = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    {
      uint64_t w;
      memcpy (&w, s + i, 8);
      uint64_t cont = (w & ~(w << 1) & 0x8080808080808080ull) >> 7;
      c += 8 - ((cont * 0x0101010101010101ull) >> 56);
    }
  for (; i < n; i++)
    c += ((unsigned char) s[i] & 0xc0) != 0x80;
  return c;
}

static void
spill_write (berth_output *o, const char *data, size_t len)
{
  if (o->spill_fd < 0 || o->spilled >= BERTH_SPILL_MAX)
    return;
  if (len > BERTH_SPILL_MAX - o->spilled)
    len = BERTH_SPILL_MAX - o->spilled;
  while (len > 0)
    {
      ssize_t n = write (o->spill_fd, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          o->error = -errno;
          close (o->spill_fd);
          o->spill_fd = -1;
          return;
        }
      o->spilled += (uint64_t) n;
      data += n;
      len -= (size_t) n;
    }
  if (o->spilled >= BERTH_SPILL_MAX)
    {
      static const char note[] = "\n... [spill capped at 16 MiB] ...\n";
      if (write (o->spill_fd, note, sizeof note - 1) < 0)
        o->error = -errno;
    }
}

static void
spill_open (berth_output *o)
{
  char hex[17];
  if (o->spill_memory)
    {
      /* anonymous memory, bounded by the spill cap: no host path */
      if (berth_random_hex (hex, 8) < 0)
        return;
      o->spill_fd = memfd_create ("berth-spill", MFD_CLOEXEC);
      if (o->spill_fd < 0)
        o->error = -errno;
      else
        o->spill_path = berth_strdup_printf ("out-%s.log", hex);
      return;
    }
  if (o->spill_dir == NULL || berth_mkdir_p (o->spill_dir, 0700) < 0 || berth_random_hex (hex, 8) < 0)
    return;
  o->spill_path = berth_strdup_printf ("%s/out-%s.log", o->spill_dir, hex);
  if (o->spill_path == NULL)
    return;
  o->spill_fd = open (o->spill_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (o->spill_fd < 0)
    {
      o->error = -errno;
      free (o->spill_path);
      o->spill_path = NULL;
    }
}

static void
ring_add (berth_output *o, const char *data, size_t len)
{
  if (len >= o->ring_cap)
    {
      memcpy (o->ring, data + len - o->ring_cap, o->ring_cap);
      o->ring_pos = 0;
      o->ring_len = o->ring_cap;
      return;
    }
  size_t first = o->ring_cap - o->ring_pos < len ? o->ring_cap - o->ring_pos : len;
  memcpy (o->ring + o->ring_pos, data, first);
  memcpy (o->ring, data + first, len - first);
  o->ring_pos = (o->ring_pos + len) % o->ring_cap;
  o->ring_len = o->ring_len + len > o->ring_cap ? o->ring_cap : o->ring_len + len;
}

/* Add already-valid UTF-8 of NCHARS characters.  */
static int
add_valid_counted (berth_output *o, const char *data, size_t len, uint64_t nchars)
{
  o->total_bytes += len;
  o->total_chars += nchars;
  if (!o->overflow && o->head.len + len <= o->max)
    return berth_buf_append (&o->head, data, len);
  if (!o->overflow)
    {
      /* Fill the head up to the cap, then switch.  */
      size_t room = o->max - o->head.len;
      if (berth_buf_append (&o->head, data, room) < 0)
        return -ENOMEM;
      data += room;
      len -= room;
      /* First overflow: everything so far goes to the spill file, the
         head shrinks to 40 % (on a character boundary), the rest of what
         we hold seeds the tail.  */
      size_t keep = o->max * 4 / 10;
      o->overflow = true;
      o->ring_cap = o->max - keep;
      o->ring = malloc (o->ring_cap);
      if (o->ring == NULL)
        return -ENOMEM;
      spill_open (o);
      spill_write (o, o->head.data ? o->head.data : "", o->head.len);
      while (keep > 0 && keep < o->head.len && ((unsigned char) o->head.data[keep] & 0xc0) == 0x80)
        keep--;
      if (keep > o->head.len)
        keep = o->head.len;
      ring_add (o, o->head.data + keep, o->head.len - keep);
      o->head.len = keep;
      o->head_chars = count_chars (o->head.data, keep);
    }
  spill_write (o, data, len);
  ring_add (o, data, len);
  return 0;
}

static int
add_valid (berth_output *o, const char *data, size_t len)
{
  return add_valid_counted (o, data, len, count_chars (data, len));
}

int
berth_output_add (berth_output *o, const char *data, size_t len)
{
  int r;
  /* the common case, nothing to mend: no copy, a byte a character */
  if (o->npend == 0 && ascii_prefix (data, len) == len)
    return add_valid_counted (o, data, len, len);
  o->scratch.len = 0;
  r = berth_utf8_sanitize (&o->scratch, data, len, o->pend, &o->npend);
  if (r >= 0)
    r = add_valid (o, o->scratch.data ? o->scratch.data : "", o->scratch.len);
  return r;
}

/* The ring's content, oldest byte first.  */
static void
ring_linear (const berth_output *o, berth_buf *b)
{
  size_t start = (o->ring_pos + o->ring_cap - o->ring_len) % o->ring_cap;
  for (size_t i = 0; i < o->ring_len;)
    {
      size_t at = (start + i) % o->ring_cap;
      size_t run = o->ring_cap - at < o->ring_len - i ? o->ring_cap - at : o->ring_len - i;
      berth_buf_append (b, o->ring + at, run);
      i += run;
    }
}

static bool
is_cont (char c)
{
  return ((unsigned char) c & 0xc0) == 0x80;
}

static const char notice_fmt[] = "\n\n... [OUTPUT TRUNCATED - %llu chars omitted out of %llu total] ...\n\n";

/* Render within the cap: LIMIT bytes in all, the truncation notice and
   NOTE included.  The head takes 40 % of what is left for the text, the
   tail the rest; both cut on character boundaries.  */
static char *
render (berth_output *o, const char *note, size_t *ret_len)
{
  berth_buf out = { 0 }, ring = { 0 };
  size_t nlen = note ? strlen (note) : 0;
  const char *hsrc = o->head.data ? o->head.data : "", *tsrc;
  size_t hsrc_len = o->head.len, tsrc_len;

  if (!o->overflow)
    {
      size_t skip = hsrc_len == 0 && nlen > 0 && note[0] == '\n'; /* no leading newline on empty output */
      if (hsrc_len + nlen - skip <= o->limit)
        {
          berth_buf_append (&out, hsrc, hsrc_len);
          if (nlen > skip)
            berth_buf_append (&out, note + skip, nlen - skip);
          *ret_len = out.len;
          return berth_buf_steal (&out);
        }
      /* The text fits but not with the note: truncated all the same, and
         the whole of it goes to the spill file like any overflow.  */
      o->overflow = true;
      spill_open (o);
      spill_write (o, hsrc, hsrc_len);
      tsrc = hsrc, tsrc_len = hsrc_len;
    }
  else
    {
      ring_linear (o, &ring);
      tsrc = ring.data ? ring.data : "", tsrc_len = ring.len;
    }

  /* The longest the notice can be: the omitted count has at most the
     digits of the total.  */
  size_t tmax = (size_t) snprintf (NULL, 0, notice_fmt, (unsigned long long) o->total_chars, (unsigned long long) o->total_chars);
  size_t budget = o->limit > tmax + nlen ? o->limit - tmax - nlen : 0;
  size_t hn = budget * 4 / 10;
  if (hn > hsrc_len)
    hn = hsrc_len;
  while (hn > 0 && hn < hsrc_len && is_cont (hsrc[hn]))
    hn--;
  size_t tn = budget - hn;
  if (tn > tsrc_len)
    tn = tsrc_len;
  size_t toff = tsrc_len - tn;
  while (toff < tsrc_len && is_cont (tsrc[toff]))
    toff++;
  tn = tsrc_len - toff;

  uint64_t shown = count_chars (hsrc, hn) + count_chars (tsrc + toff, tn);
  uint64_t omitted = o->total_chars > shown ? o->total_chars - shown : 0;
  berth_buf_append (&out, hsrc, hn);
  berth_buf_printf (&out, notice_fmt, (unsigned long long) omitted, (unsigned long long) o->total_chars);
  berth_buf_append (&out, tsrc + toff, tn);
  if (nlen)
    berth_buf_append (&out, note, nlen);
  /* A cap too small for the notices themselves: they are ASCII, cut.  */
  if (out.len > o->limit)
    out.len = o->limit;
  if (out.data)
    out.data[out.len] = '\0';
  berth_buf_free (&ring);
  o->head_chars = count_chars (hsrc, hn);
  *ret_len = out.len;
  return berth_buf_steal (&out);
}

char *
berth_output_finish_note (berth_output *o, const char *note, size_t *ret_len)
{
  if (o->npend > 0)
    {
      o->npend = 0;
      add_valid (o, replacement, 3);
    }
  char *s = render (o, note, ret_len);
  if (o->spill_fd >= 0 && !o->spill_memory)
    {
      close (o->spill_fd);
      o->spill_fd = -1;
    }
  return s;
}

char *
berth_output_finish (berth_output *o, size_t *ret_len)
{
  return berth_output_finish_note (o, NULL, ret_len);
}

void
berth_output_free (berth_output *o)
{
  if (o->spill_fd >= 0)
    close (o->spill_fd);
  berth_buf_free (&o->head);
  berth_buf_free (&o->scratch);
  free (o->ring);
  free (o->spill_dir);
  free (o->spill_path);
  *o = (berth_output){ .spill_fd = -1 };
}

/* ---- pruning spill files (berth gc) ---- */

/* "out-" 16 hex digits ".log": the names spill_open makes.  */
static bool
is_spill_name (const char *n)
{
  if (strncmp (n, "out-", 4) != 0 || strlen (n) != 4 + 16 + 4 || strcmp (n + 20, ".log") != 0)
    return false;
  for (size_t i = 4; i < 20; i++)
    if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
      return false;
  return true;
}

typedef struct spill_entry
{
  char name[32];
  int64_t mtime;
  uint64_t bytes;
} spill_entry;

static int
compare_spill (const void *a, const void *b)
{
  const spill_entry *x = a, *y = b;
  if (x->mtime != y->mtime)
    return x->mtime < y->mtime ? -1 : 1;
  return strcmp (x->name, y->name);
}

BERTH_EXPORT int
berth_gc_output (berth_ctx *ctx, bool dry_run, berth_gc_output_fn fn, void *userdata, berth_error **reterr)
{
  int64_t lifetime = berth_config_int (ctx->config, "terminal.lifetime_seconds", 300);
  _cleanup_free_ char *cache = berth_xdg_dir ("XDG_CACHE_HOME", ".cache");
  _cleanup_free_ char *dir = cache ? berth_strdup_printf ("%s/berth/output", cache) : NULL;
  _cleanup_free_ spill_entry *v = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  int64_t now = (int64_t) time (NULL);
  struct stat st;
  struct dirent *de;
  DIR *d;
  int dfd, count = 0;

  if (dir == NULL)
    return berth_error_errno (reterr, ENOMEM, "out of memory");
  /* Only berth's own directory (never through a symlink), only its own
     files in it.  */
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return errno == ENOENT ? 0 : berth_error_errno (reterr, errno, "%s: cannot open the output directory", dir);
  if (fstat (dfd, &st) < 0 || st.st_uid != getuid () || (st.st_mode & 077) != 0)
    {
      close (dfd);
      return berth_error_set (reterr, BERTH_E_FAILED, "%s: not berth's own directory (owner and mode 0700 expected): left alone", dir);
    }
  d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return berth_error_errno (reterr, errno, "%s: cannot read the output directory", dir);
    }
  while ((de = readdir (d)))
    {
      if (!is_spill_name (de->d_name) || fstatat (dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode)
          || st.st_uid != getuid ())
        continue;
      if (n == cap)
        {
          spill_entry *nv = realloc (v, (cap = cap ? cap * 2 : 64) * sizeof *v);
          if (nv == NULL)
            {
              closedir (d);
              return berth_error_errno (reterr, ENOMEM, "out of memory");
            }
          v = nv;
        }
      snprintf (v[n].name, sizeof v[n].name, "%s", de->d_name);
      v[n].mtime = (int64_t) st.st_mtime;
      v[n].bytes = (uint64_t) st.st_size;
      total += v[n].bytes;
      n++;
    }
  if (n > 1)
    qsort (v, n, sizeof *v, compare_spill);
  /* Oldest first: what outlived terminal.lifetime_seconds, then what
     keeps the directory over its bound.  */
  for (size_t i = 0; i < n; i++)
    {
      const char *why = now - v[i].mtime >= lifetime ? "expired" : total > BERTH_SPILL_TOTAL_MAX ? "over_limit" : NULL;
      if (why == NULL)
        continue;
      if (!dry_run && unlinkat (dfd, v[i].name, 0) < 0)
        {
          if (errno != ENOENT)
            berth_ctx_log (ctx, BERTH_LOG_WARNING, "gc", "%s/%s: cannot remove: %s", dir, v[i].name, strerror (errno));
          continue;
        }
      total -= v[i].bytes;
      count++;
      if (fn)
        {
          _cleanup_free_ char *path = berth_strdup_printf ("%s/%s", dir, v[i].name);
          fn (userdata, path ? path : v[i].name, v[i].bytes, why);
        }
    }
  closedir (d);
  return count;
}
