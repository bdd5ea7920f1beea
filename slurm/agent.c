/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent.c: berth-agent's own step.  A Slurm step ends with its srun (a
   killed srun takes its tasks along at once), so an agent started in the
   step of one berth process would take with it what that process left
   running in the background.  For a named environment the agent that
   serves the environment's socket runs instead in a step of its own,
   started detached from any berth process:

     setsid srun --jobid=J --overlap --ntasks=1 --job-name=berth-agent-HASH -u \
       sh -c START-SCRIPT            (BERTH_AGENT_SERVE=1 in its environment)

   It serves the socket until the allocation ends (scancel, rm); each
   berth process then reaches it through a step of its own running the
   same start script, whose agent relays (agent/agent.c), so that a
   command costs frames only.  A throw-away environment ends with its
   berth process: its agent is the relay step's own.  */
#include "config.h"

#include "slurm-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_LOCK "agent.lock"
#define AGENT_LOG "agent.log"
#define SERVE_WAIT_S 30.0

/* The serving step's srun, in a session of its own and not our child
   (an intermediate process exits at once): stdin /dev/null, stdout the
   pipe OUT (the agent's HELLO, then nothing), stderr LOG.  */
static pid_t
spawn_detached (char *const *argv, char *const *envp, int out, int log)
{
  pid_t pid = fork ();
  if (pid != 0)
    return pid;
  if (setsid () < 0 || fork () != 0)
    _exit (0);
  int nul = open ("/dev/null", O_RDWR);
  /* srun takes no SIGPIPE from the pipe we close once the agent said
     HELLO (the agent has put /dev/null on its stdout by then).  */
  signal (SIGPIPE, SIG_IGN);
  if (nul < 0 || dup2 (nul, 0) < 0 || dup2 (out, 1) < 0 || dup2 (log >= 0 ? log : nul, 2) < 0)
    _exit (127);
  for (int fd = 3; fd < 1024; fd++)
    close (fd);
  execve (argv[0], argv, envp);
  _exit (127);
}

/* The serving step's name: berth-agent-HASH, HASH of the start script
   (which names the agent's version, hash and socket): another berth's
   agent is another step.  */
static void
step_name (const char *script, char buf[32])
{
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *) script; *p; p++)
    h = (h ^ *p) * 16777619u;
  snprintf (buf, 32, "berth-agent-%08x", h);
}

/* Whether job S->job has a step named NAME (squeue asks slurmctld: a
   fraction of an srun).  */
static bool
agent_step_runs (const slurm_env *s, const char *name, double timeout)
{
  const char *argv[] = { s->bins.squeue, "-h", "-s", "-j", s->job, "-o", "%j", NULL };
  char *out = NULL;
  int status = -1;
  bool found = false;
  if (slurm_run (argv, NULL, timeout, &out, &status, NULL) == 0 && status == 0 && out)
    for (char *l = out; l && *l && !found; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
      found = strncmp (l, name, strlen (name)) == 0 && (l[strlen (name)] == '\n' || l[strlen (name)] == '\0');
  free (out);
  return found;
}

/* SERVE_WAIT_S from now, or the call's deadline when it comes first.  */
static uint64_t
wait_until (const berth_start_req *req)
{
  uint64_t t = berth_monotonic_usec () + (uint64_t) (SERVE_WAIT_S * 1e6);
  if (BERTH_HAS_FIELD (req, berth_start_req, deadline_usec) && req->deadline_usec && req->deadline_usec < t)
    t = req->deadline_usec;
  return t;
}

int
slurm_agent_serve (berth_env *env, slurm_env *s, const berth_start_req *req)
{
  const char *const *env_in = berth_env_host_environ (env);
  const char *dir = berth_env_state_dir (env);
  char **argv = NULL, **envp = NULL, *path = NULL;
  int lock = -1, log = -1, pfd[2] = { -1, -1 }, r = 0;
  bool serving = false;
  char name[32], name_opt[48];

  if (!s->persistent || dir == NULL || berth_strv_length (req->argv) != 3)
    return 0;
  step_name (req->argv[2], name);
  snprintf (name_opt, sizeof name_opt, "--job-name=%s", name);
  /* One starter at a time: two agents binding one socket would leave
     one serving nothing until the allocation ends.  Waited for until the
     call's deadline at most; past it this berth goes on with its relay
     step's own agent (it serves this berth, not the next).  */
  if (asprintf (&path, "%s/%s", dir, AGENT_LOCK) < 0)
    return -ENOMEM;
  pid_t holder = 0;
  lock = berth_lock_file (path, wait_until (req), &holder);
  free (path);
  path = NULL;
  if (lock < 0)
    {
      berth_logf (env, BERTH_LOG_DEBUG, "slurm: the agent of %s: its start lock %s (pid %ld holds it): no agent step of its own this time", s->name,
                  strerror (-lock), (long) holder);
      return 0;
    }
  /* One serves already: the relay's start finds it.  */
  if (agent_step_runs (s, name, berth_env_time_left (env, SLURM_QUERY_TIMEOUT)))
    {
      if (lock >= 0)
        close (lock);
      return 0;
    }
  if (asprintf (&path, "%s/%s", dir, AGENT_LOG) >= 0)
    {
      log = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      free (path);
    }

  argv = slurm_prefix_argv (s->bins.srun, s->job, s->cpus, false, false, false, NULL, NULL);
  /* Not the shim: the agent's stdout is srun -u's pty (its output
     processing off: the frames pass as they are), and only its HELLO
     goes there.  */
  if (argv != NULL)
    {
      size_t n = berth_strv_length ((const char *const *) argv);
      while (n > 0 && strcmp (argv[n - 1], "--unbuffered") != 0)
        {
          free (argv[--n]);
          argv[n] = NULL;
        }
    }
  if (argv == NULL || berth_strv_push (&argv, name_opt) < 0
      || (s->apptainer && s->image
          && (berth_strv_push (&argv, s->apptainer) < 0 || berth_strv_push (&argv, "exec") < 0
              || berth_strv_push (&argv, s->image) < 0)))
    r = -ENOMEM;
  for (size_t i = 0; r == 0 && i < 3; i++)
    r = berth_strv_push (&argv, req->argv[i]);
  envp = berth_strv_new (NULL);
  for (size_t i = 0; envp && env_in && env_in[i]; i++)
    if (berth_strv_push (&envp, env_in[i]) < 0)
      envp = berth_strv_free (envp);
  if (r == 0 && (envp == NULL || berth_strv_push (&envp, "BERTH_AGENT_SERVE=1") < 0))
    r = -ENOMEM;
  if (r == 0 && pipe2 (pfd, O_CLOEXEC) < 0)
    r = -errno;
  if (r == 0)
    {
      pid_t pid = spawn_detached (argv, envp, pfd[1], log);
      close (pfd[1]);
      pfd[1] = -1;
      if (pid < 0)
        r = -errno;
      else
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
          ;
    }
  if (r == 0)
    {
      /* Its answer: a frame (HELLO: it serves, or one served already),
         or a line of the start script (BERTH-AGENT-NEED, -NO:): the
         relay's start says the same to the runtime, which acts on it.  */
      char buf[512];
      size_t have = 0;
      uint64_t deadline = wait_until (req);
      while (have < sizeof buf)
        {
          uint64_t now = berth_monotonic_usec ();
          if (now >= deadline)
            break;
          struct pollfd p = { pfd[0], POLLIN, 0 };
          int left = (int) ((deadline - now) / 1000) + 1;
          int n = poll (&p, 1, left);
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            break;
          ssize_t k = read (pfd[0], buf + have, sizeof buf - have);
          if (k <= 0)
            break;
          have += (size_t) k;
          if (buf[0] != 'B' && have >= 12)
            {
              serving = true;
              break;
            }
          if (buf[0] == 'B' && memchr (buf, '\n', have))
            break;
        }
      berth_logf (env, BERTH_LOG_DEBUG, "slurm: the agent of %s in job %s %s", s->name, s->job,
                  serving ? "serves in its own step"
                  : have ? "did not start in a step of its own (the relay's start says why)"
                         : "gave no answer in a step of its own (see " AGENT_LOG " in the state directory)");
    }
  if (pfd[0] >= 0)
    close (pfd[0]);
  if (pfd[1] >= 0)
    close (pfd[1]);
  if (log >= 0)
    close (log);
  if (lock >= 0)
    close (lock);
  berth_strv_free (argv);
  berth_strv_free (envp);
  return r;
}
