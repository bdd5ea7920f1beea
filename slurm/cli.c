/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.c: running the Slurm client commands (salloc, srun, squeue,
   scancel, scontrol, sinfo) with a bound, and the one-line errors that
   name the command that failed and what to check.  */
#include "config.h"

#include "slurm-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
slurm_bins_clear (slurm_bins *b)
{
  free (b->salloc);
  free (b->srun);
  free (b->squeue);
  free (b->scancel);
  free (b->scontrol);
  free (b->sinfo);
  *b = (slurm_bins){ 0 };
}

int
slurm_bins_find (slurm_bins *b, berth_error **reterr)
{
  struct
  {
    const char *name;
    char **slot;
  } want[] = {
    { "salloc", &b->salloc }, { "srun", &b->srun }, { "squeue", &b->squeue },
    { "scancel", &b->scancel }, { "scontrol", &b->scontrol }, { "sinfo", &b->sinfo },
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    {
      if (*want[i].slot != NULL)
        continue;
      *want[i].slot = berth_find_program (want[i].name);
      if (*want[i].slot == NULL)
        {
          slurm_bins_clear (b);
          return berth_error_set (reterr, BERTH_E_UNAVAILABLE,
                                  "slurm: '%s' was not found in PATH; install the Slurm client commands (Debian: "
                                  "apt-get install slurm-client) and point SLURM_CONF at the cluster's slurm.conf",
                                  want[i].name);
        }
    }
  return 0;
}

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

int
slurm_run (const char *const *argv, const char *stdin_data, double timeout, char **ret_out, int *ret_status,
           berth_error **reterr)
{
  int r = berth_run_capture (argv, NULL, stdin_data, timeout, SLURM_CAPTURE_MAX, ret_out, ret_status, reterr);
  berth_debugf ("slurm", "%s %s: %s %d", base_name (argv[0]), argv[1] ? argv[1] : "", r < 0 ? "error" : "exit",
                r < 0 ? -r : *ret_status);
  return r;
}

/* $XDG_RUNTIME_DIR/berth, else /tmp/berth-UID: the ping cache's home.  */
char *
slurm_ping_cache_path (void)
{
  const char *x = getenv ("XDG_RUNTIME_DIR");
  const char *conf = getenv ("SLURM_CONF");
  char *dir = NULL, *p = NULL;
  uint32_t h = (uint32_t) (berth_fnv1a64 (conf ? conf : "", conf ? strlen (conf) : 0) & 0xffffffffu);
  if (x != NULL && x[0] == '/')
    {
      if (asprintf (&dir, "%s/berth", x) < 0)
        return NULL;
    }
  else if (asprintf (&dir, "/tmp/berth-%lu", (unsigned long) getuid ()) < 0)
    return NULL;
  if (berth_private_dir (dir, NULL) < 0 || asprintf (&p, "%s/slurm-ping-%08x", dir, h) < 0)
    p = NULL;
  free (dir);
  return p;
}

/* Cache an answer (UP), forget one when the controller is down.  */
static void
ping_cache_update (bool up, const char *detail)
{
  char *path = slurm_ping_cache_path (), *rec = NULL;
  if (path == NULL)
    return;
  if (!up)
    unlink (path);
  else if (asprintf (&rec, "%lld 1 %s", (long long) time (NULL), detail ? detail : "scontrol ping") >= 0)
    berth_state_file_write (path, rec, strlen (rec));
  free (rec);
  free (path);
}

int
slurm_ping (const char *scontrol, double timeout, char **ret_detail)
{
  const char *argv[] = { scontrol, "ping", NULL };
  char *out = NULL;
  int status = -1, r;

  r = slurm_run (argv, NULL, timeout, &out, &status, NULL);
  if (r < 0)
    {
      ping_cache_update (false, NULL);
      if (ret_detail)
        *ret_detail = strdup (r == -ETIMEDOUT ? "'scontrol ping' did not answer" : "'scontrol ping' could not run");
      return r;
    }
  if (ret_detail)
    {
      /* "Slurmctld(primary) at HOST is UP" */
      char *line = out ? strstr (out, "Slurmctld") : NULL;
      *ret_detail = line ? strndup (line, strcspn (line, "\n")) : slurm_last_line (out, 200);
    }
  r = status == 0 && out != NULL && strstr (out, " is UP") != NULL ? 1 : 0;
  ping_cache_update (r == 1, ret_detail ? *ret_detail : NULL);
  free (out);
  return r;
}

/* ARGV as one line for a message (the words, space-separated).  */
static char *
argv_line (const char *const *argv)
{
  size_t len = 1;
  char *s, *p;
  for (size_t i = 0; argv[i]; i++)
    len += strlen (i == 0 ? base_name (argv[0]) : argv[i]) + 1;
  s = p = malloc (len);
  if (s == NULL)
    return NULL;
  for (size_t i = 0; argv[i]; i++)
    p += sprintf (p, "%s%s", i ? " " : "", i == 0 ? base_name (argv[0]) : argv[i]);
  *p = '\0';
  return s;
}

int
slurm_cmd_error (berth_error **reterr, const char *scontrol, const char *const *argv, int r, double timeout, int status,
                 const char *out)
{
  char *cmd = argv_line (argv), *last = slurm_last_line (out, 300), *ping = NULL;
  const char *check = "check that slurmctld runs and answers (scontrol ping) and that SLURM_CONF names the cluster's slurm.conf";
  int up = -1, code = BERTH_E_BACKEND;

  /* The controller's own answer says whether it is the cluster or us.  */
  if (scontrol != NULL && (r < 0 || (last && (strstr (last, "Unable to contact") || strstr (last, "connect failure")
                                              || strstr (last, "Socket timed out")))))
    up = slurm_ping (scontrol, SLURM_PING_TIMEOUT, &ping);
  if (last && (strstr (last, "invalid partition") || strstr (last, "Invalid partition")))
    check = "check terminal.slurm_partition: `sinfo -s` lists the partitions you may use";
  else if (last && (strstr (last, "Invalid account") || strstr (last, "invalid account")))
    check = "check terminal.slurm_account: `sacctmgr show assoc user=$USER` lists yours";
  else if (last && strstr (last, "Invalid qos"))
    check = "check terminal.slurm_qos";
  else if (last && (strstr (last, "time limit") || strstr (last, "Invalid time")))
    check = "check terminal.slurm_time (a Slurm time: MINUTES, HH:MM:SS or D-HH:MM:SS) against the partition's limit";
  else if (last && (strstr (last, "memory") || strstr (last, "Memory")))
    check = "check terminal.slurm_mem (a Slurm size, e.g. 4G) against what the partition's nodes have";
  else if (up == 0)
    check = "slurmctld does not answer: start it (on the controller: systemctl start slurmctld) or fix SLURM_CONF";
  if (up == 1 && r == -ETIMEDOUT)
    check = "slurmctld answers `scontrol ping`, but not in time: the cluster is busy, or the request waits in the queue "
            "(squeue); raise -t or terminal.timeout";

  if (r == -ETIMEDOUT)
    code = ETIMEDOUT;
  if (r < 0 && r != -ETIMEDOUT)
    code = BERTH_E_UNAVAILABLE;
  if (r == -ETIMEDOUT)
    r = berth_error_set (reterr, code, "slurm: '%s' did not finish within %.3gs%s%s%s; %s", cmd ? cmd : argv[0], timeout,
                         ping ? " (" : "", ping ? ping : "", ping ? ")" : "", check);
  else if (r < 0)
    r = berth_error_set (reterr, code, "slurm: '%s' could not run; %s", cmd ? cmd : argv[0], check);
  else
    r = berth_error_set (reterr, code, "slurm: '%s' failed (exit %d): %s%s%s%s; %s", cmd ? cmd : argv[0], status,
                         last && *last ? last : "(no output)", ping ? " (" : "", ping ? ping : "", ping ? ")" : "", check);
  free (cmd);
  free (last);
  free (ping);
  return r;
}

int
slurm_squeue (const slurm_bins *b, const char *name, const char *job, double timeout, slurm_job_row **ret, size_t *ret_n,
              char **ret_buf, berth_error **reterr)
{
  char uid[32], sel[256];
  const char *argv[12];
  size_t k = 0, n = 0;
  slurm_job_row *rows = NULL;
  char *out = NULL, *save = NULL;
  int status = -1, r;

  snprintf (uid, sizeof uid, "--user=%lu", (unsigned long) getuid ());
  argv[k++] = b->squeue;
  argv[k++] = "--noheader";
  argv[k++] = uid;
  if (name)
    {
      snprintf (sel, sizeof sel, "--name=%s", name);
      argv[k++] = sel;
    }
  else if (job)
    {
      snprintf (sel, sizeof sel, "--jobs=%s", job);
      argv[k++] = sel;
      argv[k++] = "--states=all";
    }
  argv[k++] = "--format=%i|%j|%k|%T";
  argv[k] = NULL;
  r = slurm_run (argv, NULL, timeout, &out, &status, reterr);
  if (r < 0 || status != 0)
    {
      /* A job Slurm has forgotten (MinJobAge passed) is no job.  */
      if (r == 0 && job && out && strstr (out, "Invalid job id"))
        {
          free (out);
          *ret = NULL;
          *ret_n = 0;
          *ret_buf = NULL;
          return 0;
        }
      if (r < 0)
        {
          berth_error *e = NULL;
          if (reterr)
            {
              e = *reterr;
              *reterr = NULL;
            }
          berth_error_free (e);
        }
      r = slurm_cmd_error (reterr, b->scontrol, argv, r, timeout, status, out);
      free (out);
      return r;
    }
  for (char *line = strtok_r (out, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      slurm_job_row row;
      if (slurm_parse_job_row (line, &row) < 0)
        continue;
      slurm_job_row *nr = realloc (rows, (n + 1) * sizeof *rows);
      if (nr == NULL)
        {
          free (rows);
          free (out);
          return berth_error_set (reterr, ENOMEM, "slurm: out of memory");
        }
      rows = nr;
      rows[n++] = row;
    }
  *ret = rows;
  *ret_n = n;
  *ret_buf = out;
  return 0;
}

int
slurm_scancel (const slurm_bins *b, const char *what, bool kill_signal, double timeout, berth_error **reterr)
{
  const char *argv[] = { b->scancel, kill_signal ? "--signal=KILL" : what, kill_signal ? what : NULL, NULL };
  char *out = NULL;
  int status = -1, r;

  r = slurm_run (argv, NULL, timeout, &out, &status, reterr);
  if (r == 0 && status != 0 && out
      && (strstr (out, "Invalid job id") || strstr (out, "already completing or completed")
          || strstr (out, "does not exist")))
    status = 0; /* gone already: fine */
  if (r < 0 || status != 0)
    {
      if (r < 0 && reterr)
        *reterr = berth_error_free (*reterr);
      r = slurm_cmd_error (reterr, b->scontrol, argv, r, timeout, status, out);
    }
  free (out);
  return r;
}

unsigned long long
slurm_proc_start (pid_t pid)
{
  return berth_proc_start_time (pid);
}

uint32_t
slurm_host_hash (void)
{
  char host[256] = "";
  gethostname (host, sizeof host - 1);
  return (uint32_t) (berth_fnv1a64 (host, strlen (host)) & 0xffffffffu);
}
