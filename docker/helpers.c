/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers.c: label sanitising, image references, sizes, times.  */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <berth/provider-util.h>

#include "helpers.h"

char *
docker_label_sanitize (const char *s)
{
  size_t n = s ? strlen (s) : 0;
  if (n == 0)
    return strdup ("unknown");
  if (n > 63)
    n = 63;
  char *out = malloc (n + 1);
  if (!out)
    return NULL;
  for (size_t i = 0; i < n; i++)
    {
      char c = s[i];
      out[i] = (isascii ((unsigned char)c) && isalnum ((unsigned char)c)) || c == '_' || c == '.' || c == '-' ? c : '_';
    }
  out[n] = '\0';
  return out;
}

int
docker_image_split (const char *ref, char **ret_repo, char **ret_tag)
{
  if (!ref || !*ref || strlen (ref) > 1024)
    return -EINVAL;
  for (const char *p = ref; *p; p++)
    if ((unsigned char)*p <= ' ' || *p == 0x7f)
      return -EINVAL;
  char *repo = NULL, *tag = NULL;
  if (strchr (ref, '@'))
    repo = strdup (ref); /* a digest: no tag */
  else
    {
      const char *slash = strrchr (ref, '/');
      const char *colon = strrchr (ref, ':');
      if (colon && (!slash || colon > slash))
        {
          if (colon[1] == '\0' || colon == ref)
            return -EINVAL;
          repo = strndup (ref, (size_t)(colon - ref));
          tag = strdup (colon + 1);
          if (!tag)
            {
              free (repo);
              return -ENOMEM;
            }
        }
      else
        {
          repo = strdup (ref);
          tag = strdup ("latest");
          if (!tag)
            {
              free (repo);
              return -ENOMEM;
            }
        }
    }
  if (!repo)
    {
      free (tag);
      return -ENOMEM;
    }
  *ret_repo = repo;
  *ret_tag = tag;
  return 0;
}

int
docker_parse_size (const char *s, int64_t *ret)
{
  while (s && isspace ((unsigned char)*s))
    s++;
  if (!s || !*s)
    {
      *ret = 0;
      return 0;
    }
  char *end;
  errno = 0;
  double v = strtod (s, &end);
  if (errno || end == s || v < 0 || !isfinite (v))
    return -EINVAL;
  double mult = 1;
  switch (tolower ((unsigned char)*end))
    {
    case 'k':
      mult = 1024.0, end++;
      break;
    case 'm':
      mult = 1024.0 * 1024, end++;
      break;
    case 'g':
      mult = 1024.0 * 1024 * 1024, end++;
      break;
    case 't':
      mult = 1024.0 * 1024 * 1024 * 1024, end++;
      break;
    case 'b':
    case '\0':
    case ' ':
      break;
    default:
      return -EINVAL;
    }
  if (tolower ((unsigned char)*end) == 'b')
    end++;
  while (isspace ((unsigned char)*end))
    end++;
  if (*end)
    return -EINVAL;
  v *= mult;
  if (v > 9.0e18)
    return -ERANGE;
  *ret = (int64_t)v;
  return 0;
}

int
docker_parse_time (const char *s, int64_t *ret)
{
  int Y, M, D, h, m, sec, n = 0;
  if (!s || sscanf (s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &n) != 6 || n != 19)
    return -EINVAL;
  if (Y <= 1)
    return -ENOENT;
  const char *p = s + n;
  if (*p == '.')
    {
      p++;
      if (!isdigit ((unsigned char)*p))
        return -EINVAL;
      while (isdigit ((unsigned char)*p))
        p++;
    }
  int off = 0;
  if (*p == 'Z')
    p++;
  else if (*p == '+' || *p == '-')
    {
      int oh, om, k = 0;
      if (sscanf (p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5)
        return -EINVAL;
      off = (oh * 60 + om) * 60 * (*p == '+' ? 1 : -1);
      p += 6;
    }
  else
    return -EINVAL;
  if (*p || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
    return -EINVAL;
  struct tm tm = { .tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec };
  time_t t = timegm (&tm);
  if (t == (time_t)-1)
    return -EINVAL;
  *ret = (int64_t)t - off;
  return 0;
}

void
docker_digest (const void *data, size_t len, char out[17])
{
  snprintf (out, 17, "%016llx", (unsigned long long)berth_fnv1a64 (data, len));
}

bool
docker_env_name_valid (const char *s, size_t len)
{
  if (len == 0 || len > 255 || !(isalpha ((unsigned char)s[0]) || s[0] == '_') || !isascii ((unsigned char)s[0]))
    return false;
  for (size_t i = 1; i < len; i++)
    if (!isascii ((unsigned char)s[i]) || !(isalnum ((unsigned char)s[i]) || s[i] == '_'))
      return false;
  return true;
}

int
docker_version_cmp (const char *a, const char *b)
{
  unsigned long ma = 0, na = 0, mb = 0, nb = 0;
  sscanf (a ? a : "", "%lu.%lu", &ma, &na);
  sscanf (b ? b : "", "%lu.%lu", &mb, &nb);
  if (ma != mb)
    return ma < mb ? -1 : 1;
  if (na != nb)
    return na < nb ? -1 : 1;
  return 0;
}

/* The value of KEY in a settings record, as a length; NULL when absent.  */
static const char *
settings_value (const char *rec, const char *key, size_t keylen, size_t *ret_len)
{
  for (const char *l = rec; l && *l;)
    {
      const char *end = strchr (l, '\n');
      size_t n = end ? (size_t) (end - l) : strlen (l);
      if (n > keylen && strncmp (l, key, keylen) == 0 && l[keylen] == '=')
        {
          *ret_len = n - keylen - 1;
          return l + keylen + 1;
        }
      l = end ? end + 1 : l + n;
    }
  return NULL;
}

/* Append "KEY: OLD -> NEW" for KEY if it differs between A and B.  */
static void
settings_compare_key (FILE *out, bool *first, const char *key, size_t keylen, const char *a, const char *b)
{
  size_t la = 0, lb = 0;
  const char *va = settings_value (a, key, keylen, &la), *vb = settings_value (b, key, keylen, &lb);
  if (va && vb && la == lb && memcmp (va, vb, la) == 0)
    return;
  fprintf (out, "%s%.*s: %.*s -> %.*s", *first ? "" : ", ", (int) keylen, key, va ? (int) la : 7, va ? va : "(unset)",
           vb ? (int) lb : 7, vb ? vb : "(unset)");
  *first = false;
}

char *
docker_settings_changes (const char *recorded, const char *current)
{
  char *buf = NULL;
  size_t size = 0;
  bool first = true;
  FILE *out = open_memstream (&buf, &size);
  if (out == NULL)
    abort ();
  /* every key of either record, each once */
  for (int pass = 0; pass < 2; pass++)
    for (const char *l = pass ? current : recorded; l && *l;)
      {
        const char *end = strchr (l, '\n'), *eq = strchr (l, '=');
        size_t n = end ? (size_t) (end - l) : strlen (l), dummy;
        if (eq && eq < l + n && (pass == 0 || settings_value (recorded, l, (size_t) (eq - l), &dummy) == NULL))
          settings_compare_key (out, &first, l, (size_t) (eq - l), recorded, current);
        l = end ? end + 1 : l + n;
      }
  fclose (out);
  if (first)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

static const struct
{
  const char *name;
  int resource;
} ulimit_names[] = {
  { "core", RLIMIT_CORE },         { "cpu", RLIMIT_CPU },           { "data", RLIMIT_DATA },
  { "fsize", RLIMIT_FSIZE },       { "locks", RLIMIT_LOCKS },       { "memlock", RLIMIT_MEMLOCK },
  { "msgqueue", RLIMIT_MSGQUEUE }, { "nice", RLIMIT_NICE },         { "nofile", RLIMIT_NOFILE },
  { "nproc", RLIMIT_NPROC },       { "rss", RLIMIT_RSS },           { "rtprio", RLIMIT_RTPRIO },
  { "rttime", RLIMIT_RTTIME },     { "sigpending", RLIMIT_SIGPENDING }, { "stack", RLIMIT_STACK },
};

int
docker_ulimit_resource (const char *name)
{
  for (size_t i = 0; name && i < sizeof ulimit_names / sizeof ulimit_names[0]; i++)
    if (strcmp (name, ulimit_names[i].name) == 0)
      return ulimit_names[i].resource;
  return -1;
}

static int
ulimit_value (const char *s, size_t n, int64_t *ret)
{
  if (n == 9 && strncmp (s, "unlimited", 9) == 0)
    {
      *ret = -1;
      return 0;
    }
  if (n == 0 || n > 19)
    return -EINVAL;
  int64_t v = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return -EINVAL;
      if (v > (INT64_MAX - (s[i] - '0')) / 10)
        return -EINVAL;
      v = v * 10 + (s[i] - '0');
    }
  *ret = v;
  return 0;
}

int
docker_ulimit_parse (const char *value, int64_t *ret_soft, int64_t *ret_hard)
{
  if (!value)
    return -EINVAL;
  while (isspace ((unsigned char)*value))
    value++;
  size_t len = strlen (value);
  while (len > 0 && isspace ((unsigned char)value[len - 1]))
    len--;
  const char *colon = memchr (value, ':', len);
  int64_t soft, hard;
  if (ulimit_value (value, colon ? (size_t)(colon - value) : len, &soft) < 0)
    return -EINVAL;
  hard = soft;
  if (colon && ulimit_value (colon + 1, len - (size_t)(colon + 1 - value), &hard) < 0)
    return -EINVAL;
  /* unlimited (-1) is above every number */
  if (hard != -1 && (soft == -1 || soft > hard))
    return -EINVAL;
  *ret_soft = soft;
  *ret_hard = hard;
  return 0;
}

/* ---- SHA-256 (FIPS 180-4), for the docker CLI's context directories ---- */

static const uint32_t sha256_k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha256_block (uint32_t h[8], const unsigned char *p)
{
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ROR32 (w[i - 15], 7) ^ ROR32 (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ROR32 (w[i - 2], 17) ^ ROR32 (w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1 = k + (ROR32 (e, 6) ^ ROR32 (e, 11) ^ ROR32 (e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
      uint32_t t2 = (ROR32 (a, 2) ^ ROR32 (a, 13) ^ ROR32 (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void
docker_sha256_hex (const void *data, size_t len, char out[65])
{
  uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  const unsigned char *p = data;
  unsigned char tail[128];
  size_t full = len / 64 * 64, rest = len - full;
  for (size_t i = 0; i < full; i += 64)
    sha256_block (h, p + i);
  memset (tail, 0, sizeof tail);
  if (rest)
    memcpy (tail, p + full, rest);
  tail[rest] = 0x80;
  size_t tlen = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++)
    tail[tlen - 1 - i] = (unsigned char)(bits >> (8 * i));
  sha256_block (h, tail);
  if (tlen == 128)
    sha256_block (h, tail + 64);
  for (int i = 0; i < 8; i++)
    snprintf (out + 8 * i, 9, "%08x", h[i]);
}
