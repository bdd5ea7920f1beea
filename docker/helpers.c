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

int
docker_ulimit_cap (int64_t *soft, int64_t *hard, int64_t max)
{
  int lowered = 0;
  if (max < 0)
    return 0;
  if (*hard < 0 || *hard > max)
    {
      *hard = max;
      lowered = 1;
    }
  if (*soft < 0 || *soft > *hard)
    {
      *soft = *hard;
      lowered = 1;
    }
  return lowered;
}
