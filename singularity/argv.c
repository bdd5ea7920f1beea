/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* argv.c: argv builders and parsers for the Apptainer CLI.  */
#include "config.h"

#include "argv.h"

#include <berth/provider-util.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
valid_env_id (const char *id)
{
  size_t n = 0;
  if (id == NULL || *id == '\0')
    return false;
  for (const char *p = id; *p; p++, n++)
    if (!(isalnum ((unsigned char) *p) || *p == '.' || *p == '_' || *p == '-'))
      return false;
  return n <= 128;
}

bool
sing_valid_instance_name (const char *name)
{
  if (name == NULL || *name == '\0' || strlen (name) > SING_MAX_NAME)
    return false;
  for (const char *p = name; *p; p++)
    if (!(isalnum ((unsigned char) *p) || *p == '.' || *p == '_' || *p == '-'))
      return false;
  return true;
}


char *
sing_instance_name (const char *env_id, bool persistent, pid_t creator, const char *state_dir)
{
  char *s = NULL;
  if (!valid_env_id (env_id))
    return NULL;
  if (persistent)
    {
      /* Instances are per user and host, environment names per state
         directory: tell two state directories apart.  */
      if (asprintf (&s, SING_ENV_PREFIX "%s-%08" PRIx32, env_id,
                    (uint32_t) (berth_fnv1a64 (state_dir ? state_dir : "", state_dir ? strlen (state_dir) : 0) & 0xffffffffu))
          < 0)
        return NULL;
    }
  else if (asprintf (&s, SING_TMP_PREFIX "%ld-%s", (long) creator, env_id) < 0)
    return NULL;
  return s;
}

pid_t
sing_instance_creator (const char *name)
{
  const char *p;
  char *end = NULL;
  long v;

  if (name == NULL || strncmp (name, SING_TMP_PREFIX, strlen (SING_TMP_PREFIX)) != 0)
    return -1;
  p = name + strlen (SING_TMP_PREFIX);
  if (!isdigit ((unsigned char) *p))
    return -1;
  errno = 0;
  v = strtol (p, &end, 10);
  if (errno != 0 || end == p || *end != '-' || end[1] == '\0' || v <= 0 || v > INT32_MAX)
    return -1;
  return (pid_t) v;
}

char *
sing_sif_name (const char *image)
{
  static const char scheme[] = "docker://";
  const char *ref;
  size_t n, keep;
  char *s, *out;

  if (image == NULL || strncmp (image, scheme, strlen (scheme)) != 0)
    return NULL;
  ref = image + strlen (scheme);
  if (*ref == '\0')
    return NULL;
  n = strlen (ref);
  s = malloc (n + 1);
  if (s == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++)
    {
      char c = ref[i];
      if (c == '/' || c == ':' || c == '@')
        s[i] = '-';
      else if (isalnum ((unsigned char) c) || c == '.' || c == '_' || c == '-')
        s[i] = c;
      else
        s[i] = '_';
    }
  s[n] = '\0';
  /* Never a hidden file or a "..": the name is a path component.  */
  if (s[0] == '.')
    s[0] = '_';
  keep = n;
  if (n > 160)
    keep = 160;
  if (keep < n)
    {
      if (asprintf (&out, "%.*s-%016" PRIx64 ".sif", (int) keep, s, berth_fnv1a64 (ref, strlen (ref))) < 0)
        out = NULL;
    }
  else if (asprintf (&out, "%s.sif", s) < 0)
    out = NULL;
  free (s);
  return out;
}

static bool
abs_path_ok (const char *p, size_t len)
{
  if (len == 0 || p[0] != '/')
    return false;
  for (size_t i = 0; i < len; i++)
    if (p[i] == ',' || p[i] == '\n' || p[i] == '\0')
      return false;
  return true;
}

int
sing_parse_bind (const char *spec, char **ret, berth_error **reterr)
{
  const char *c1, *c2, *src, *dst, *opt = NULL;
  size_t src_len, dst_len;
  char *out;

  if (spec == NULL || *spec == '\0')
    return berth_error_set (reterr, BERTH_E_CONFIG, "singularity: empty bind in terminal.singularity_binds");
  src = spec;
  c1 = strchr (spec, ':');
  if (c1 == NULL)
    {
      src_len = strlen (spec);
      dst = src;
      dst_len = src_len;
    }
  else
    {
      src_len = (size_t) (c1 - spec);
      dst = c1 + 1;
      c2 = strchr (dst, ':');
      if (c2 == NULL)
        dst_len = strlen (dst);
      else
        {
          dst_len = (size_t) (c2 - dst);
          opt = c2 + 1;
        }
      if (dst_len == 0)
        {
          dst = src;
          dst_len = src_len;
        }
    }
  if (!abs_path_ok (src, src_len) || !abs_path_ok (dst, dst_len))
    return berth_error_set (reterr, BERTH_E_CONFIG,
                            "singularity: bad bind '%s' in terminal.singularity_binds: "
                            "use \"/host/path[:/container/path[:ro|rw]]\" (absolute paths, no commas)",
                            spec);
  if (opt != NULL && strcmp (opt, "ro") != 0 && strcmp (opt, "rw") != 0)
    return berth_error_set (reterr, BERTH_E_CONFIG,
                            "singularity: bad bind option '%s' in '%s' (terminal.singularity_binds): use ro or rw",
                            opt, spec);
  if (asprintf (&out, "%.*s:%.*s%s", (int) src_len, src, (int) dst_len, dst,
                opt != NULL && strcmp (opt, "ro") == 0 ? ":ro" : "")
      < 0)
    return berth_error_set (reterr, -ENOMEM, "singularity: out of memory");
  *ret = out;
  return 0;
}

bool
sing_bind_is_writable (const char *spec)
{
  size_t n = spec ? strlen (spec) : 0;
  return !(n >= 3 && strcmp (spec + n - 3, ":ro") == 0);
}

/* Push each of a NULL-terminated list of words; frees and NULLs *V on
   failure.  */
static int
push_words (char ***v, ...)
{
  va_list ap;
  const char *w;
  int r = 0;
  va_start (ap, v);
  while ((w = va_arg (ap, const char *)) != NULL)
    if (r == 0 && berth_strv_push (v, w) < 0)
      r = -ENOMEM;
  va_end (ap);
  if (r < 0)
    *v = berth_strv_free (*v);
  return r;
}

char **
sing_start_argv (const sing_start_opts *o)
{
  char **v = NULL;
  char buf[64];

  if (o == NULL || o->bin == NULL || o->image == NULL || o->name == NULL)
    return NULL;
  if (push_words (&v, o->bin, "instance", "start", "--containall", "--no-home", NULL) < 0)
    return NULL;
  if (o->overlay != NULL)
    {
      if (push_words (&v, "--overlay", o->overlay, NULL) < 0)
        return NULL;
    }
  else if (push_words (&v, "--writable-tmpfs", NULL) < 0)
    return NULL;
  for (const char *const *b = o->binds; b != NULL && *b != NULL; b++)
    if (push_words (&v, "--bind", *b, NULL) < 0)
      return NULL;
  if (o->memory_mb > 0)
    {
      snprintf (buf, sizeof buf, "%" PRId64 "M", o->memory_mb);
      if (push_words (&v, "--memory", buf, NULL) < 0)
        return NULL;
    }
  if (o->cpus > 0)
    {
      snprintf (buf, sizeof buf, "%g", o->cpus);
      if (push_words (&v, "--cpus", buf, NULL) < 0)
        return NULL;
    }
  if (push_words (&v, o->image, o->name, NULL) < 0)
    return NULL;
  return v;
}

char **
sing_exec_prefix_argv (const char *bin, const char *pwd, const char *name)
{
  char **v = NULL;
  char *target = NULL;

  if (bin == NULL || name == NULL || asprintf (&target, "instance://%s", name) < 0)
    return NULL;
  if (push_words (&v, bin, "exec", "--cleanenv", NULL) < 0
      || (pwd != NULL && push_words (&v, "--pwd", pwd, NULL) < 0)
      || push_words (&v, target, NULL) < 0)
    v = NULL;
  free (target);
  return v;
}

char **
sing_stop_argv (const char *bin, const char *name, bool force)
{
  char **v = NULL;
  if (bin == NULL || name == NULL)
    return NULL;
  if (push_words (&v, bin, "instance", "stop", NULL) < 0
      || (force && push_words (&v, "--force", NULL) < 0)
      || push_words (&v, name, NULL) < 0)
    return NULL;
  return v;
}

char **
sing_list_argv (const char *bin, const char *name)
{
  char **v = NULL;
  if (bin == NULL)
    return NULL;
  if (push_words (&v, bin, "instance", "list", "--json", NULL) < 0
      || (name != NULL && push_words (&v, name, NULL) < 0))
    return NULL;
  return v;
}

char **
sing_build_argv (const char *bin, const char *out, const char *image)
{
  char **v = NULL;
  if (bin == NULL || out == NULL || image == NULL)
    return NULL;
  if (push_words (&v, bin, "build", out, image, NULL) < 0)
    return NULL;
  return v;
}

/* ---- instance list --json ---- */

static const char *
skip_ws (const char *p)
{
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}

/* After a key at P (pointing past its closing quote), the value start.  */
static const char *
after_colon (const char *p)
{
  p = skip_ws (p);
  if (*p != ':')
    return NULL;
  return skip_ws (p + 1);
}

/* A JSON string without escapes (instance names never need them); NULL
   for anything else.  */
static char *
plain_string (const char *p, const char **ret_end)
{
  const char *q;
  char *s;
  if (p == NULL || *p != '"')
    return NULL;
  p++;
  for (q = p; *q && *q != '"'; q++)
    if (*q == '\\' || (unsigned char) *q < 0x20 || q - p > SING_MAX_NAME)
      return NULL;
  if (*q != '"')
    return NULL;
  s = strndup (p, (size_t) (q - p));
  if (s != NULL && ret_end != NULL)
    *ret_end = q + 1;
  return s;
}

int
sing_parse_instances (const char *text, sing_instance **ret, size_t *ret_n)
{
  static const char key_inst[] = "\"instance\"";
  static const char key_pid[] = "\"pid\"";
  sing_instance *v = NULL;
  size_t n = 0;
  const char *p;

  if (text == NULL)
    {
      *ret = NULL;
      *ret_n = 0;
      return 0;
    }
  p = text;
  while ((p = strstr (p, key_inst)) != NULL && n < 4096)
    {
      const char *val, *end = NULL, *obj_end, *pidk;
      char *name;
      int64_t pid = -1;
      sing_instance *nv;

      p += strlen (key_inst);
      val = after_colon (p);
      name = plain_string (val, &end);
      if (name == NULL)
        continue;
      p = end;
      /* "pid" anywhere in the same object (before its closing brace).  */
      obj_end = strchr (p, '}');
      pidk = strstr (p, key_pid);
      if (pidk != NULL && (obj_end == NULL || pidk < obj_end))
        {
          const char *d = after_colon (pidk + strlen (key_pid));
          if (d != NULL && isdigit ((unsigned char) *d))
            {
              char *e = NULL;
              long long x;
              errno = 0;
              x = strtoll (d, &e, 10);
              if (errno == 0 && x > 0 && x <= INT32_MAX)
                pid = x;
            }
        }
      if (!sing_valid_instance_name (name))
        {
          free (name);
          continue;
        }
      nv = realloc (v, (n + 1) * sizeof *v);
      if (nv == NULL)
        {
          free (name);
          sing_instances_free (v, n);
          return -ENOMEM;
        }
      v = nv;
      v[n].name = name;
      v[n].pid = pid;
      n++;
    }
  *ret = v;
  *ret_n = n;
  return (int) n;
}

void
sing_instances_free (sing_instance *v, size_t n)
{
  for (size_t i = 0; v != NULL && i < n; i++)
    free (v[i].name);
  free (v);
}

char *
sing_tail (const char *output, size_t max)
{
  size_t n, start, len;
  char *s, *w;

  if (output == NULL)
    return strdup ("");
  n = strlen (output);
  while (n > 0 && isspace ((unsigned char) output[n - 1]))
    n--;
  start = n > max ? n - max : 0;
  /* Start at a line boundary when cutting.  */
  if (start > 0)
    {
      const char *nl = memchr (output + start, '\n', n - start);
      if (nl != NULL && (size_t) (nl - output) + 1 < n)
        start = (size_t) (nl - output) + 1;
    }
  len = n - start;
  s = malloc (len * 2 + 1);
  if (s == NULL)
    return NULL;
  w = s;
  for (size_t i = start; i < n; i++)
    {
      char c = output[i];
      if (c == '\n')
        {
          /* Collapse blank lines.  */
          if (w > s && w[-1] != ' ')
            {
              *w++ = ';';
              *w++ = ' ';
            }
        }
      else if (c == '\r' || c == '\t')
        *w++ = ' ';
      else if ((unsigned char) c < 0x20)
        continue;
      else
        *w++ = c;
    }
  *w = '\0';
  return s;
}
