/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* slurm.c: the slurm backend.  An environment is one Slurm allocation on
   an existing cluster, `salloc --no-shell --job-name=berth-ID`, found
   again by job name, user and comment for named environments and
   allocated anew (environment_recreated) when it ended; commands are job
   steps in it (`srun --jobid=J --overlap`, proc.c); `scancel` removes
   it.  Built against the SDK only, as a third party would.

   The lifecycle is written as ABI 2's attach / ensure / stop / remove
   (DESIGN 3.4); ABI 1's create is attach + ensure and cleanup (REMOVE)
   is remove or stop.  */
#include "config.h"

#include "slurm-private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JOB_FILE "job"
#define APPTAINER_FILE "apptainer"

/* Release: what the block (env_data_size) points to.  */
static void
slurm_release (berth_env *env)
{
  slurm_env *s = berth_env_get_data (env);
  slurm_bins_clear (&s->bins);
  free (s->name);
  free (s->comment);
  free (s->job);
  free (s->apptainer);
  free (s->image);
  slurm_shared_unref (s->shared);
}

static int
oom (berth_error **reterr)
{
  return berth_error_set (reterr, ENOMEM, "slurm: out of memory");
}

/* terminal.KEY as a salloc option --OPT=VALUE, when set.  */
static int
push_opt (char ***argv, const berth_config *cfg, const char *key, const char *opt)
{
  const char *v = berth_config_string (cfg, key, NULL);
  char *s = NULL;
  int r;
  if (v == NULL || *v == '\0')
    return 0;
  if (asprintf (&s, "--%s=%s", opt, v) < 0)
    return -ENOMEM;
  r = berth_strv_push (argv, s);
  free (s);
  return r;
}

static double
query_timeout (const berth_env *env)
{
  return berth_env_time_left (env, SLURM_QUERY_TIMEOUT);
}

/* ---- attach: who we are, no side effects ---- */

static int
slurm_attach (berth_env *env, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  const char *id = berth_env_id (env);
  const char *image = berth_env_image (env);
  slurm_env *s = berth_env_get_data (env);
  char *job = NULL;

  if (id == NULL || *id == '\0')
    return berth_error_set (reterr, BERTH_E_ENV, "slurm: the environment has no id");
  /* No Slurm client here: nothing of ours can run here either; ensure
     says what to install, remove has nothing to do.  */
  s->no_client = slurm_bins_find (&s->bins, NULL) < 0;
  s->shared = calloc (1, sizeof *s->shared);
  if (s->shared == NULL)
    return oom (reterr);
  s->shared->refs = 1;
  s->persistent = berth_env_is_persistent (env);
  s->cpus = (long) berth_config_int (cfg, "terminal.slurm_cpus_per_task", 0);
  if (image == NULL || *image == '\0')
    image = berth_config_string (cfg, "terminal.singularity_image", NULL);
  if (image != NULL && *image != '\0')
    s->image = strdup (image);
  if (asprintf (&s->name, "berth-%s", id) < 0)
    s->name = NULL;
  s->comment = s->persistent ? slurm_comment_named (berth_env_state_dir (env))
                             : slurm_comment_tmp (slurm_host_hash (), getpid (), slurm_proc_start (getpid ()));
  if (s->name == NULL || s->comment == NULL || (image && *image && s->image == NULL))
    return oom (reterr);
  /* The allocation this environment had (throw-away: the one gc or rm
     looks for; named: a hint, checked against its name).  */
  if (berth_env_state_read (env, JOB_FILE, &job) > 0)
    {
      job[strcspn (job, "\n")] = '\0';
      if (*job && strspn (job, "0123456789") == strlen (job))
        s->job = job;
      else
        free (job);
    }
  else
    free (job);
  return 0;
}

/* The live allocations of this environment (name, user and comment
   match): the first in *RET_JOB (NULL: none).  With CANCEL_OTHERS, any
   other of them (a pending one salloc left when it was killed, a second
   one) is cancelled.  */
static int
find_allocation (berth_env *env, slurm_env *s, bool cancel_others, char **ret_job, berth_error **reterr)
{
  slurm_job_row *rows = NULL;
  char *buf = NULL, *found = NULL;
  size_t n = 0;
  int r;

  *ret_job = NULL;
  if (s->persistent)
    r = slurm_squeue (&s->bins, s->name, NULL, query_timeout (env), &rows, &n, &buf, reterr);
  else if (s->job)
    r = slurm_squeue (&s->bins, NULL, s->job, query_timeout (env), &rows, &n, &buf, reterr);
  else
    return 0;
  if (r < 0)
    return r;
  for (size_t i = 0; i < n; i++)
    {
      bool ours = strcmp (rows[i].name, s->name) == 0
                  && (!s->persistent || strcmp (rows[i].comment, s->comment) == 0);
      if (!ours)
        continue;
      if (found == NULL && slurm_state_is_live (rows[i].state))
        {
          found = strdup (rows[i].id);
          if (found == NULL)
            {
              r = oom (reterr);
              break;
            }
        }
      else if (cancel_others && (strcmp (rows[i].state, "PENDING") == 0 || slurm_state_is_live (rows[i].state)))
        slurm_scancel (&s->bins, rows[i].id, false, query_timeout (env), NULL);
    }
  free (rows);
  free (buf);
  if (r < 0)
    return r;
  *ret_job = found;
  return 0;
}

static int
allocate (berth_env *env, slurm_env *s, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  char **argv = berth_strv_new (s->bins.salloc, "--no-shell", NULL);
  char **extra = berth_config_strv (cfg, "terminal.slurm_salloc_args");
  char *name = NULL, *comment = NULL, *out = NULL, *job = NULL;
  int64_t wait_cap = berth_config_int (cfg, "terminal.slurm_alloc_timeout", (int64_t) SLURM_ALLOC_TIMEOUT);
  double timeout = berth_env_time_left (env, wait_cap > 0 ? (double) wait_cap : SLURM_ALLOC_TIMEOUT);
  int status = -1, r = 0;

  if (argv == NULL || asprintf (&name, "--job-name=%s", s->name) < 0 || asprintf (&comment, "--comment=%s", s->comment) < 0
      || berth_strv_push (&argv, name) < 0 || berth_strv_push (&argv, comment) < 0
      || push_opt (&argv, cfg, "terminal.slurm_partition", "partition") < 0
      || push_opt (&argv, cfg, "terminal.slurm_time", "time") < 0
      || push_opt (&argv, cfg, "terminal.slurm_account", "account") < 0
      || push_opt (&argv, cfg, "terminal.slurm_qos", "qos") < 0
      || push_opt (&argv, cfg, "terminal.slurm_mem", "mem") < 0)
    r = -ENOMEM;
  if (r == 0 && s->cpus > 0)
    {
      char buf[64];
      snprintf (buf, sizeof buf, "--cpus-per-task=%ld", s->cpus);
      r = berth_strv_push (&argv, buf);
    }
  for (char **e = extra; r == 0 && e && *e; e++)
    r = berth_strv_push (&argv, *e);
  berth_strv_free (extra);
  free (name);
  free (comment);
  if (r < 0)
    {
      berth_strv_free (argv);
      return oom (reterr);
    }
  berth_logf (env, BERTH_LOG_DEBUG, "allocating %s (salloc, up to %.3gs)", s->name, timeout);
  r = slurm_run ((const char *const *) argv, NULL, timeout, &out, &status, NULL);
  if (r == 0 && status == 0)
    job = slurm_parse_alloc_id (out);
  if (r == 0 && status == 0 && job == NULL)
    {
      /* granted, but said so in words we do not know: ask by name */
      slurm_job_row *rows = NULL;
      char *buf = NULL;
      size_t n = 0;
      if (slurm_squeue (&s->bins, s->name, NULL, query_timeout (env), &rows, &n, &buf, NULL) == 0)
        for (size_t i = 0; i < n && job == NULL; i++)
          if (strcmp (rows[i].comment, s->comment) == 0 && slurm_state_is_live (rows[i].state))
            job = strdup (rows[i].id);
      free (rows);
      free (buf);
    }
  if (job == NULL)
    {
      /* A salloc killed while it waited leaves its job pending: it goes.  */
      if (r < 0)
        {
          slurm_job_row *rows = NULL;
          char *buf = NULL;
          size_t n = 0;
          if (slurm_squeue (&s->bins, s->name, NULL, SLURM_STEP_KILL_TIMEOUT, &rows, &n, &buf, NULL) == 0)
            for (size_t i = 0; i < n; i++)
              if (strcmp (rows[i].comment, s->comment) == 0)
                slurm_scancel (&s->bins, rows[i].id, false, SLURM_STEP_KILL_TIMEOUT, NULL);
          free (rows);
          free (buf);
        }
      r = slurm_cmd_error (reterr, s->bins.scontrol, (const char *const *) argv, r, timeout, status, out);
      berth_strv_free (argv);
      free (out);
      return r;
    }
  berth_strv_free (argv);
  free (out);
  free (s->job);
  s->job = job;
  berth_logf (env, BERTH_LOG_DEBUG, "%s is job %s", s->name, job);
  if ((r = berth_env_state_write (env, JOB_FILE, job, strlen (job))) < 0)
    berth_logf (env, BERTH_LOG_WARNING, "cannot record job %s in %s: %s", job, berth_env_state_dir (env), strerror (-r));
  return 0;
}

/* With an image: is there an apptainer (or singularity) on the node?  */
static int
find_apptainer (berth_env *env, slurm_env *s, berth_error **reterr)
{
  char **argv;
  char *out = NULL, *cached = NULL;
  int status = -1, r;

  if (s->image == NULL)
    return 0;
  if (s->persistent && berth_env_state_read (env, APPTAINER_FILE, &cached) > 0)
    {
      cached[strcspn (cached, "\n")] = '\0';
      if (cached[0] == '/')
        {
          s->apptainer = cached;
          return 0;
        }
      free (cached);
      return 0; /* "-": the node has none (asked once per allocation) */
    }
  free (cached);
  argv = slurm_prefix_argv (s->bins.srun, s->job, 0, false, false, true, NULL, NULL);
  if (argv == NULL || berth_strv_push (&argv, "bash") < 0 || berth_strv_push (&argv, "-c") < 0
      || berth_strv_push (&argv, "command -v apptainer || command -v singularity || true") < 0)
    {
      berth_strv_free (argv);
      return oom (reterr);
    }
  r = slurm_run ((const char *const *) argv, NULL, query_timeout (env), &out, &status, NULL);
  if (r < 0 || status != 0)
    {
      r = slurm_cmd_error (reterr, s->bins.scontrol, (const char *const *) argv, r, query_timeout (env), status, out);
      berth_strv_free (argv);
      free (out);
      return r;
    }
  berth_strv_free (argv);
  {
    char *line = out ? strstr (out, "\n/") : NULL;
    char *p = out && out[0] == '/' ? out : line ? line + 1 : NULL;
    if (p != NULL)
      {
        s->apptainer = strndup (p, strcspn (p, "\n"));
        if (s->persistent && s->apptainer)
          berth_env_state_write (env, APPTAINER_FILE, s->apptainer, strlen (s->apptainer));
      }
    else
      {
        if (s->persistent)
          berth_env_state_write (env, APPTAINER_FILE, "-", 1);
        berth_logf (env, BERTH_LOG_WARNING,
                  "the image %s is set (terminal.singularity_image), but the node of job %s has no apptainer "
                  "or singularity on PATH: commands run on the node directly (berth doctor -b slurm)",
                  s->image, s->job);
      }
  }
  free (out);
  return 0;
}

/* ---- ensure: an allocation that runs ---- */

static int
slurm_ensure (berth_env *env, berth_error **reterr)
{
  slurm_env *s = berth_env_get_data (env);
  char *job = NULL;
  bool had = s->job != NULL;
  int r;

  if (s->no_client)
    return slurm_bins_find (&s->bins, reterr); /* the error: what to install */
  if ((r = find_allocation (env, s, true, &job, reterr)) < 0)
    return r;
  s->shared->gone = false;
  if (job == NULL && !s->persistent && had)
    {
      /* A throw-away environment seen again (gc of one whose berth was
         killed) whose allocation is over: nothing to run a command in,
         and none to allocate just to remove it.  */
      r = berth_error_set (reterr, ESRCH, "slurm: the allocation %s of this throw-away environment has ended", s->job);
      free (s->job);
      s->job = NULL;
      return r;
    }
  if (job == NULL)
    {
      free (s->job);
      s->job = NULL;
      if ((r = allocate (env, s, reterr)) < 0)
        return r;
      /* a named environment whose allocation ended: a new one */
      if (s->persistent && had)
        {
          berth_env_mark_recreated (env);
          berth_env_state_remove (env, APPTAINER_FILE);
        }
    }
  else
    {
      if (s->job == NULL || strcmp (s->job, job) != 0)
        berth_env_state_write (env, JOB_FILE, job, strlen (job));
      free (s->job);
      s->job = job;
    }
  return find_apptainer (env, s, reterr);
}

/* ---- stop, remove ---- */

/* No stop: an idle allocation stays as it is (suspending a job is an
   operator's right in Slurm); a named environment keeps it until rm.  */

static int
slurm_remove (berth_env *env, berth_error **reterr)
{
  slurm_env *s = berth_env_get_data (env);
  slurm_job_row *rows = NULL;
  char *buf = NULL;
  size_t n = 0;
  int r = 0;

  if (s->no_client)
    return 0; /* no Slurm client here: nothing of ours can be running */
  if (s->persistent)
    {
      /* every allocation of this name (and state directory) goes */
      if ((r = slurm_squeue (&s->bins, s->name, NULL, query_timeout (env), &rows, &n, &buf, reterr)) < 0)
        return r;
      for (size_t i = 0; i < n && r == 0; i++)
        if (strcmp (rows[i].comment, s->comment) == 0 && strcmp (rows[i].name, s->name) == 0)
          r = slurm_scancel (&s->bins, rows[i].id, false, query_timeout (env), reterr);
      free (rows);
      free (buf);
    }
  else if (s->job)
    r = slurm_scancel (&s->bins, s->job, false, query_timeout (env), reterr);
  if (r < 0)
    return r;
  free (s->job);
  s->job = NULL;
  berth_env_state_remove (env, JOB_FILE);
  berth_env_state_remove (env, APPTAINER_FILE);
  return 0;
}

/* ---- transport ---- */

static int
slurm_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags,
                   berth_error **reterr)
{
  slurm_env *s = berth_env_get_data (env);
  char **argv;
  if (s == NULL || s->job == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "slurm: the environment has no allocation (it was removed)");
  if (user != NULL && *user != '\0')
    {
      char buf[32];
      snprintf (buf, sizeof buf, "%lu", (unsigned long) getuid ());
      const char *me = getenv ("USER");
      if (strcmp (user, buf) != 0 && (me == NULL || strcmp (user, me) != 0))
        return berth_error_set (reterr, ENOTSUP,
                                "slurm: commands run as the user who holds the allocation; cannot switch to '%s'", user);
    }
  argv = slurm_prefix_argv (s->bins.srun, s->job, s->cpus, interactive, false, false, s->apptainer, s->image);
  if (argv == NULL)
    return oom (reterr);
  *ret_argv = argv;
  /* srun exports its environment (the scrubbed host one) to the step */
  *ret_flags = BERTH_PREFIX_PASSES_ENV;
  return 0;
}

static int
slurm_start (berth_env *env, const berth_start_req *req, berth_proc *ret, berth_error **reterr)
{
  return slurm_proc_start_cmd (env, berth_env_get_data (env), req, ret, reterr);
}

/* ---- probe, doctor, gc ---- */

static int
slurm_probe (const berth_config *cfg, char **ret_reason)
{
  slurm_bins b = { 0 };
  berth_error *err = NULL;
  char *path, *cached = NULL, *detail = NULL;
  int up;

  if (slurm_bins_find (&b, &err) < 0)
    {
      *ret_reason = strdup (berth_error_message (err));
      berth_error_free (err);
      return BERTH_PROBE_UNAVAILABLE;
    }
  path = slurm_ping_cache_path ();
  if (path != NULL && berth_state_file_read (path, &cached) > 0)
    {
      long long when = 0;
      int n = 0;
      if (sscanf (cached, "%lld %d %n", &when, &up, &n) == 2 && (long long) time (NULL) - when < SLURM_PROBE_TTL
          && (long long) time (NULL) >= when)
        {
          *ret_reason = strdup (cached + n);
          free (cached);
          free (path);
          slurm_bins_clear (&b);
          return up ? BERTH_PROBE_READY : BERTH_PROBE_UNAVAILABLE;
        }
    }
  free (cached);
  /* slurm_ping caches what it found (an answer only: a controller that
     is down is asked again, and it says so at once)  */
  up = slurm_ping (b.scontrol, 1.5, &detail) == 1;
  if (asprintf (ret_reason, "%s%s", detail ? detail : "scontrol ping", up ? "" : "; start slurmctld or fix SLURM_CONF") < 0)
    *ret_reason = NULL;
  free (detail);
  free (path);
  slurm_bins_clear (&b);
  (void) cfg;
  return up ? BERTH_PROBE_READY : BERTH_PROBE_UNAVAILABLE;
}

/* AuthType and the munge socket from `scontrol show config`.  */
static void
auth_config (const char *scontrol, char **ret_type, char **ret_socket)
{
  const char *argv[] = { scontrol, "show", "config", NULL };
  char *out = NULL, *save = NULL;
  int status = -1;
  *ret_type = *ret_socket = NULL;
  if (slurm_run (argv, NULL, 5.0, &out, &status, NULL) < 0 || status != 0)
    {
      free (out);
      return;
    }
  for (char *l = strtok_r (out, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      char *eq = strchr (l, '=');
      if (eq == NULL)
        continue;
      char *v = eq + 1;
      while (*v == ' ')
        v++;
      if (strncmp (l, "AuthType ", 9) == 0)
        *ret_type = strdup (v);
      else if (strncmp (l, "AuthInfo ", 9) == 0)
        {
          char *sock = strstr (v, "socket=");
          if (sock)
            *ret_socket = strndup (sock + 7, strcspn (sock + 7, ","));
        }
    }
  free (out);
}

static void
doctor_munge (const slurm_bins *b, berth_check_fn fn, void *userdata)
{
  char *type = NULL, *sock = NULL, *munge = NULL, *unmunge = NULL, *cred = NULL, *out = NULL, *detail = NULL;
  int status = -1;
  auth_config (b->scontrol, &type, &sock);
  if (type != NULL && strcmp (type, "auth/munge") != 0)
    {
      fn (userdata, "authentication", true, type, NULL);
      goto out;
    }
  munge = berth_find_program ("munge");
  unmunge = berth_find_program ("unmunge");
  if (munge == NULL || unmunge == NULL)
    {
      fn (userdata, "munge", false, "munge/unmunge not found in PATH",
          "install munge (Debian: apt-get install munge) and run munged with the cluster's key");
      goto out;
    }
  {
    char sarg[4200];
    snprintf (sarg, sizeof sarg, "--socket=%s", sock ? sock : "");
    const char *a1[] = { munge, "-n", sock ? sarg : NULL, NULL };
    const char *a2[] = { unmunge, sock ? sarg : NULL, NULL };
    bool ok = slurm_run (a1, NULL, 5.0, &cred, &status, NULL) == 0 && status == 0 && cred && *cred;
    if (ok)
      ok = slurm_run (a2, cred, 5.0, &out, &status, NULL) == 0 && status == 0;
    if (asprintf (&detail, "%s through %s", ok ? "a credential encodes and decodes" : "munge -n | unmunge fails",
                  sock ? sock : "the default socket") < 0)
      detail = NULL;
    fn (userdata, "munge", ok, detail, ok ? NULL : "start munged (with the cluster's munge.key) on this host");
  }
out:
  free (type);
  free (sock);
  free (munge);
  free (unmunge);
  free (cred);
  free (out);
  free (detail);
}

static int
slurm_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  slurm_bins b = { 0 };
  berth_error *err = NULL;
  char *detail = NULL, *out = NULL;
  const char *part = berth_config_string (cfg, "terminal.slurm_partition", NULL);
  const char *image = berth_config_string (cfg, "terminal.singularity_image", NULL);
  int status = -1, up;

  if (slurm_bins_find (&b, &err) < 0)
    {
      fn (userdata, "Slurm client commands", false, berth_error_message (err),
          "install the Slurm client (Debian: apt-get install slurm-client)");
      berth_error_free (err);
      return 0;
    }
  fn (userdata, "Slurm client commands", true, b.srun, NULL);
  doctor_munge (&b, fn, userdata);
  up = slurm_ping (b.scontrol, SLURM_PING_TIMEOUT, &detail);
  fn (userdata, "slurmctld", up == 1, detail ? detail : "scontrol ping failed",
      up == 1 ? NULL : "start slurmctld (on the controller) or point SLURM_CONF at the cluster's slurm.conf");
  free (detail);
  detail = NULL;
  {
    /* proc.c: TCP_NODELAY on srun's connection, through pidfd_getfd on
       our child (Yama: scope 1 lets a parent, 2 only CAP_SYS_PTRACE, 3
       no one).  */
    char *v = NULL;
    int scope = berth_state_file_read ("/proc/sys/kernel/yama/ptrace_scope", &v) > 0 ? atoi (v) : 0;
    bool slow = scope >= 3 || (scope == 2 && geteuid () != 0);
    free (v);
    fn (userdata, "srun connection", true,
        slow ? "Yama's ptrace_scope keeps berth from setting TCP_NODELAY on srun's connection to berth-agent's step: "
               "each command through the agent waits ~40 ms for Slurm's delayed ACKs"
             : "berth sets TCP_NODELAY on srun's connection to berth-agent's step (a command through the agent "
               "costs no delayed ACK)",
        NULL);
  }
  if (up == 1)
    {
      char parg[256];
      snprintf (parg, sizeof parg, "--partition=%s", part ? part : "");
      const char *argv[] = { b.sinfo, "--noheader", "--format=%P %a %D %T", part && *part ? parg : NULL, NULL };
      bool ok = slurm_run (argv, NULL, 10.0, &out, &status, NULL) == 0 && status == 0 && out && *out;
      char *line = ok ? strndup (out, strcspn (out, "\n")) : NULL;
      if (part && *part)
        {
          if (asprintf (&detail, ok ? "%s: %s" : "'%s' is not a partition of this cluster", part, line) < 0)
            detail = NULL;
          fn (userdata, "partition", ok, detail, ok ? NULL : "fix terminal.slurm_partition: `sinfo -s` lists them");
        }
      else
        {
          if (asprintf (&detail, "the cluster's default (terminal.slurm_partition unset); %s", line ? line : "sinfo shows none") < 0)
            detail = NULL;
          fn (userdata, "partition", ok, detail, ok ? NULL : "set terminal.slurm_partition (`sinfo -s` lists them)");
        }
      free (line);
    }
  if (image != NULL && *image != '\0')
    {
      char *a = berth_find_program ("apptainer");
      if (a == NULL)
        a = berth_find_program ("singularity");
      free (detail);
      if (asprintf (&detail, a ? "%s: commands run in it through %s exec on the node (checked there when an environment starts)"
                               : "%s is set, but this host has no apptainer or singularity: unless the nodes have one, "
                                 "commands run on the node directly", image, a ? a : "") < 0)
        detail = NULL;
      fn (userdata, "apptainer", a != NULL, detail, a ? NULL : "install Apptainer on the nodes, or unset terminal.singularity_image");
      free (a);
    }
  free (detail);
  free (out);
  slurm_bins_clear (&b);
  return 0;
}

/* Throw-away allocations of this user whose berth is gone (from this
   host: a pid means nothing elsewhere).  Named ones go with `berth rm`
   alone.  LIFETIME does not matter: an owner alive is in use.  */
static int
slurm_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  slurm_bins b = { 0 };
  slurm_job_row *rows = NULL;
  char *buf = NULL;
  size_t n = 0;
  uint32_t me = slurm_host_hash ();
  int r, removed = 0;

  (void) cfg;
  (void) lifetime;
  if (slurm_bins_find (&b, NULL) < 0)
    return 0; /* no Slurm here: nothing of ours */
  r = slurm_squeue (&b, NULL, NULL, SLURM_QUERY_TIMEOUT, &rows, &n, &buf, reterr);
  if (r < 0)
    {
      slurm_bins_clear (&b);
      return r;
    }
  for (size_t i = 0; i < n; i++)
    {
      uint32_t host;
      pid_t pid;
      unsigned long long start;
      if (strncmp (rows[i].name, "berth-", 6) != 0
          || slurm_parse_comment_tmp (rows[i].comment, &host, &pid, &start) < 0 || host != me)
        continue;
      if ((kill (pid, 0) == 0 || errno != ESRCH) && slurm_proc_start (pid) == start)
        continue; /* its berth runs */
      if (slurm_scancel (&b, rows[i].id, false, SLURM_QUERY_TIMEOUT, NULL) == 0)
        {
          berth_debugf ("slurm", "gc: cancelled job %s (%s), its berth (pid %ld) is gone", rows[i].id, rows[i].name,
                        (long) pid);
          removed++;
        }
    }
  free (rows);
  free (buf);
  slurm_bins_clear (&b);
  return removed;
}

/* What Slurm sets for a job and its steps: stale in a later step (the
   runtime's snapshot would replay the last command's), and an enclosing
   job's must not steer salloc and srun.  SLURM_CONF and the client's own
   settings pass.  */
static const char *const slurm_strip_env_keys[] = {
  "SLURM_JOB_*", "SLURM_JOBID", "SLURM_STEP_*", "SLURM_STEPID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID",
  "SLURM_TASK_PID", "SLURM_TASKS_PER_NODE", "SLURM_NTASKS*", "SLURM_NPROCS", "SLURM_NNODES", "SLURM_NODELIST",
  "SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_TASK", "SLURM_DISTRIBUTION", "SLURM_GTIDS", "SLURM_LAUNCH_NODE_IPADDR",
  "SLURM_SRUN_COMM_*", "SLURM_SUBMIT_*", "SLURM_PRIO_PROCESS", "SLURM_UMASK", "SLURM_TOPOLOGY_ADDR*",
  "SLURM_CPU_BIND*", "SLURM_OVERLAP", "SLURM_CLUSTER_NAME", "SLURM_WORKING_CLUSTER", "SLURM_MPI_TYPE",
  "SLURMD_NODENAME", "SLURM_NODENAME", "SLURM_PTY_*", "SLURM_STEPMGR", "SLURM_MEM_PER_*", "SLURM_GPUS*",
  NULL,
};

static const char slurm_setup[] =
  "Needs the Slurm client commands (salloc, srun, squeue, scancel, scontrol, sinfo) on PATH, talking to a\n"
  "running cluster (SLURM_CONF, munge). An environment is one allocation: terminal.slurm_partition,\n"
  "slurm_time, slurm_cpus_per_task, slurm_mem, slurm_account, slurm_qos and slurm_salloc_args shape it;\n"
  "terminal.singularity_image runs the commands in that image (apptainer exec on the node).";

/* The keys slurm reads (berth-config(5)).  */
static const berth_key_spec slurm_config_keys[] = {
  { "slurm_partition", BERTH_KEY_STRING },
  { "slurm_time", BERTH_KEY_STRING },
  { "slurm_cpus_per_task", BERTH_KEY_INT, 0, 65536, "an integer from 0 (the partition's default) to 65536" },
  { "slurm_mem", BERTH_KEY_STRING },
  { "slurm_account", BERTH_KEY_STRING },
  { "slurm_qos", BERTH_KEY_STRING },
  { "slurm_salloc_args", BERTH_KEY_STRV },
  { "slurm_alloc_timeout", BERTH_KEY_INT, 1, 604800, "an integer from 1 to 604800 (seconds)" },
  { NULL },
};

const berth_provider_ops berth_slurm_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "slurm",
  .display_name = "Slurm",
  .description = "an allocation on a Slurm cluster (salloc / srun / scancel)",
  .env_description = "Commands run on a compute node of a Slurm cluster, inside one allocation (job) of the "
                     "invoking user; the home directory is the node's.",
  .flags = BERTH_FLAG_IS_REMOTE | BERTH_FLAG_SUPPORTS_STREAMS | BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT
           | BERTH_FLAG_CLEANUP_STOPS_PROCESSES,
  .default_cwd = "~",
  .cache_path_base = "~/.berth",
  .strip_env_keys = slurm_strip_env_keys,
  .probe = slurm_probe,
  .doctor = slurm_doctor,
  .setup_instructions = slurm_setup,
  .config_keys = slurm_config_keys,
  .env_data_size = sizeof (slurm_env),
  .attach = slurm_attach,
  .ensure = slurm_ensure,
  .remove = slurm_remove,
  .release = slurm_release,
  .exec_prefix = slurm_exec_prefix,
  .start = slurm_start,
  .gc = slurm_gc,
  /* Commands go through berth-agent (the runtime's agent transport over
     this start): a step ends with its srun, so in a named environment
     the agent serves from a step of its own (agent.c).  */
  .start_flags = BERTH_PREFIX_PASSES_ENV,
};

BERTH_PROVIDER_EXPORT (berth_slurm_provider)
