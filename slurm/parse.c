/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parse.c: what the slurm backend reads from and writes for the Slurm
   client -- salloc's messages, squeue rows, the allocation's comment,
   the srun prefix.  No I/O here (tests/unit/test-slurm-parse.c).  */
#include "config.h"

#include "slurm-private.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
slurm_parse_alloc_id (const char *out)
{
  static const char key[] = "job allocation ";
  const char *p = out;
  while (p != NULL && (p = strstr (p, key)) != NULL)
    {
      size_t n;
      p += strlen (key);
      n = strspn (p, "0123456789");
      if (n > 0 && n < 20)
        return strndup (p, n);
    }
  return NULL;
}

int
slurm_parse_job_row (char *line, slurm_job_row *ret)
{
  char *f[4];
  size_t n = 0;
  char *p = line;

  line[strcspn (line, "\r\n")] = '\0';
  while (n < 4)
    {
      f[n++] = p;
      p = strchr (p, '|');
      if (p == NULL)
        break;
      *p++ = '\0';
    }
  /* The comment may hold no '|' of ours, but the state is last: a row
     has exactly four fields and a numeric id.  */
  if (n != 4 || p != NULL || f[0][0] == '\0' || strspn (f[0], "0123456789") != strlen (f[0]))
    return -EINVAL;
  *ret = (slurm_job_row){ .id = f[0], .name = f[1], .comment = f[2], .state = f[3] };
  return 0;
}

bool
slurm_state_is_live (const char *state)
{
  return strcmp (state, "RUNNING") == 0 || strcmp (state, "CONFIGURING") == 0 || strcmp (state, "SUSPENDED") == 0;
}

char *
slurm_comment_named (const char *state_dir)
{
  char *s = NULL;
  uint64_t h = berth_fnv1a64 (state_dir ? state_dir : "", state_dir ? strlen (state_dir) : 0);
  if (asprintf (&s, "berth named %08" PRIx32, (uint32_t) (h & 0xffffffffu)) < 0)
    return NULL;
  return s;
}

char *
slurm_comment_tmp (uint32_t host, pid_t pid, unsigned long long start)
{
  char *s = NULL;
  if (asprintf (&s, "berth tmp %08" PRIx32 " %ld %llu", host, (long) pid, start) < 0)
    return NULL;
  return s;
}

int
slurm_parse_comment_tmp (const char *comment, uint32_t *ret_host, pid_t *ret_pid, unsigned long long *ret_start)
{
  unsigned int host;
  long pid;
  unsigned long long start;
  int used = 0;

  if (comment == NULL || strncmp (comment, "berth tmp ", 10) != 0)
    return -EINVAL;
  if (sscanf (comment + 10, "%8x %ld %llu%n", &host, &pid, &start, &used) != 3 || comment[10 + used] != '\0' || pid <= 0
      || pid > INT32_MAX)
    return -EINVAL;
  *ret_host = host;
  *ret_pid = (pid_t) pid;
  *ret_start = start;
  return 0;
}

char *
slurm_last_line (const char *out, size_t max)
{
  const char *end, *start;
  size_t n;

  if (out == NULL)
    return strdup ("");
  end = out + strlen (out);
  for (;;)
    {
      while (end > out && isspace ((unsigned char) end[-1]))
        end--;
      start = end;
      while (start > out && start[-1] != '\n')
        start--;
      while (start < end && isspace ((unsigned char) *start))
        start++;
      if (start < end || start == out)
        break;
      end = start;
    }
  n = (size_t) (end - start);
  if (n > max)
    {
      start = end - max;
      n = max;
    }
  return strndup (start, n);
}

/* printf's format is in single quotes for bash -c; $SLURM_* come from
   slurmstepd.  `"$@" | cat` keeps srun -u's pty away from the command;
   PIPESTATUS is the command's status.  */
static const char shim_marker[] = "printf '" SLURM_STEP_MARKER "%s.%s\\n' \"$SLURM_JOB_ID\" \"$SLURM_STEP_ID\" >&2\n"
                                  "\"$@\" | cat\nexit \"${PIPESTATUS[0]}\"";
static const char shim_plain[] = "\"$@\" | cat\nexit \"${PIPESTATUS[0]}\"";

const char *
slurm_shim_script (bool marker)
{
  return marker ? shim_marker : shim_plain;
}

char **
slurm_prefix_argv (const char *srun, const char *job, long cpus, bool interactive, bool marker, bool srun_errors,
                   const char *apptainer, const char *image)
{
  char **v = berth_strv_new (srun, NULL);
  char buf[64];
  bool ok = v != NULL;

  snprintf (buf, sizeof buf, "--jobid=%s", job);
  ok = ok && berth_strv_push (&v, buf) == 0;
  ok = ok && berth_strv_push (&v, "--overlap") == 0 && berth_strv_push (&v, "--ntasks=1") == 0
       && berth_strv_push (&v, "--nodes=1") == 0 && berth_strv_push (&v, "--quiet") == 0;
  /* Twice: not even srun's errors ("task 0: Exited with exit code 3"),
     so that a stream's stderr is the command's own.  The runtime's own
     scripts keep them (SRUN_ERRORS): their stderr is the state channel,
     off the output, and srun's words name a failure.  */
  if (!srun_errors)
    ok = ok && berth_strv_push (&v, "--quiet") == 0;
  if (cpus > 0)
    {
      snprintf (buf, sizeof buf, "--cpus-per-task=%ld", cpus);
      ok = ok && berth_strv_push (&v, buf) == 0;
    }
  if (interactive)
    ok = ok && berth_strv_push (&v, "--pty") == 0;
  else
    ok = ok && berth_strv_push (&v, "--unbuffered") == 0 && berth_strv_push (&v, "bash") == 0
         && berth_strv_push (&v, "-c") == 0 && berth_strv_push (&v, slurm_shim_script (marker)) == 0
         && berth_strv_push (&v, "berth") == 0;
  if (apptainer != NULL && image != NULL)
    ok = ok && berth_strv_push (&v, apptainer) == 0 && berth_strv_push (&v, "exec") == 0 && berth_strv_push (&v, image) == 0;
  if (!ok)
    {
      berth_strv_free (v);
      return NULL;
    }
  return v;
}
