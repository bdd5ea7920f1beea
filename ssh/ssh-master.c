/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-master.c: the ssh backend's ControlMaster lifecycle -- the master
 * recorded at establishment, its in-process check (ssh-mux.c), start and
 * stop (serialized by a lock file next to the socket), the remote login
 * shell asked once per master, and the paths derived from the runtime
 * directory.  The ops that use it are in ssh.c.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ssh-private.h"
#include "ssh-mux.h"

/* ---- deadlines ---- */

/* WANT milliseconds, or what is left before DEADLINE (monotonic usec, 0
   none) when that is less; 0 when nothing is left.  */
static int
bounded_ms (uint64_t deadline, int want)
{
  uint64_t now;
  if (deadline == 0)
    return want;
  now = berth_monotonic_usec ();
  if (now >= deadline)
    return 0;
  return (deadline - now) / 1000 < (uint64_t) want ? (int) ((deadline - now) / 1000) : want;
}

/* ---- the master ---- */

/* Merged ssh output reduced to its last meaningful line.  */
char *
ssh_last_line (const char *out)
{
  const char *best = NULL;
  size_t best_len = 0;
  for (const char *p = out ? out : ""; *p;)
    {
      size_t n = strcspn (p, "\r\n");
      if (n > 0)
        {
          best = p;
          best_len = n;
        }
      p += n;
      p += strspn (p, "\r\n");
    }
  return best ? strndup (best, best_len) : strdup ("ssh gave no reason");
}

char *
ssh_destination (const ssh_env *e)
{
  char buf[512];
  if (e->port > 0)
    snprintf (buf, sizeof buf, "%s@%s port %d", e->user, e->host, e->port);
  else
    snprintf (buf, sizeof buf, "%s@%s", e->user, e->host);
  return strdup (buf);
}

/* The master's pid recorded at establishment, if that process is still
   an ssh master for our control path (so a recycled pid is never hit).  */
static pid_t
recorded_master (const char *control_path, const char *pid_path)
{
  char buf[64], cmd[8192], want[512], *rec = NULL;
  FILE *f;
  pid_t pid;
  size_t n;
  if (berth_state_file_read (pid_path, &rec) <= 0)
    {
      free (rec);
      return 0;
    }
  pid = (pid_t) strtol (rec, NULL, 10);
  free (rec);
  if (pid <= 1)
    return 0;
  snprintf (want, sizeof want, "-oControlPath=%s", control_path);
  snprintf (buf, sizeof buf, "/proc/%d/cmdline", (int) pid);
  f = fopen (buf, "re");
  if (f == NULL)
    return 0;
  n = fread (cmd, 1, sizeof cmd - 1, f);
  fclose (f);
  for (size_t i = 0; i < n;)
    {
      if (strcmp (cmd + i, want) == 0)
        return pid;
      i += strnlen (cmd + i, n - i) + 1;
    }
  return 0;
}

static void
record_master (const ssh_env *e, pid_t pid)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d\n", (int) pid);
  if (berth_state_file_write (e->pid_path, buf, (size_t) n) < 0)
    unlink (e->pid_path);
}

static const char *
mux_state_name (int state)
{
  return state == SSH_MUX_ALIVE ? "alive" : state == SSH_MUX_ABSENT ? "absent" : strerror (-state);
}

/* Stop this environment's master (what `ssh -O exit` does, without a
   fork), and SIGKILL one that does not answer.  */
void
ssh_stop_master (berth_env *env, const char *control_path, const char *pid_path, int state)
{
  berth_logf (env, BERTH_LOG_DEBUG, "master on %s (%s): stopping it", control_path, mux_state_name (state));
  if (state == SSH_MUX_ALIVE && ssh_mux_terminate (control_path, 2000) >= 0)
    state = SSH_MUX_ABSENT;
  if (state != SSH_MUX_ABSENT)
    {
      pid_t pid = recorded_master (control_path, pid_path);
      if (pid > 0)
        {
          berth_logf (env, BERTH_LOG_INFO, "ssh: killing the unresponsive master %d", (int) pid);
          kill (pid, SIGKILL);
        }
    }
  unlink (control_path);
  unlink (pid_path);
  char stall[PATH_MAX];
  if (snprintf (stall, sizeof stall, "%s.stall", control_path) < (int) sizeof stall)
    unlink (stall);
}

/* Everything that decides where the master connects: a named
   environment whose configuration changed gets a new master.  */
char *
ssh_identity_of (const ssh_env *e)
{
  char *id = NULL, *opts = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&opts, &len);
  if (f == NULL)
    return NULL;
  for (size_t i = 0; e->options && e->options[i]; i++)
    fprintf (f, "%s\n", e->options[i]);
  fclose (f);
  if (asprintf (&id, "user=%s\nhost=%s\nport=%d\nkey=%s\ntimeout=%d\n%s", e->user, e->host, e->port, e->key ? e->key : "",
                e->connect_timeout, opts ? opts : "") < 0)
    id = NULL;
  free (opts);
  return id;
}

bool
ssh_identity_matches (const ssh_env *e)
{
  char *rec = NULL;
  bool same = berth_state_file_read (e->dest_path, &rec) >= 0 && e->identity && strcmp (rec, e->identity) == 0;
  free (rec);
  return same;
}

static void
record_identity (const ssh_env *e)
{
  if (e->identity && berth_state_file_write (e->dest_path, e->identity, strlen (e->identity)) < 0)
    unlink (e->dest_path);
}


/* The recorded answer; false when none.  */
bool
ssh_read_shell (const char *path, bool *ret_bash)
{
  char *rec = NULL;
  bool known = berth_state_file_read (path, &rec) > 0;
  if (known)
    *ret_bash = strcmp (rec, "bash\n") == 0;
  free (rec);
  return known;
}

static void
write_shell (const char *path, bool bash)
{
  const char *v = bash ? "bash\n" : "other\n";
  if (berth_state_file_write (path, v, strlen (v)) < 0)
    unlink (path);
}

/* Is the remote login shell bash?  sshd runs every command as
   `$SHELL -c STRING`: when that shell is bash, execute's `bash -c SCRIPT`
   can be sent as SCRIPT itself, saving a second bash on every command.
   One round trip over the master, when a master is started; the answer
   is kept next to the socket.  Any other shell (sh, zsh, fish, csh)
   answers differently or fails, and keeps the nested `bash -c`.  */
void
ssh_detect_shell (berth_env *env, ssh_env *e, uint64_t deadline)
{
  ssh_settings s = settings_of (e);
  char **argv = NULL, *out = NULL;
  int status = -1;
  bool bash = false, answered = false;
  char cache[128] = "";
  struct stat st;

  e->direct_bash = false;
  if (!e->allow_direct)
    return;
  /* the answer for this destination, shared by environments for a day
     (a throw-away environment would otherwise pay a round trip) */
  if (e->identity)
    {
      uint64_t h = berth_fnv1a64 (e->identity, strlen (e->identity));
      char dir[64];
      snprintf (dir, sizeof dir, "/tmp/berth-ssh-%lu", (unsigned long) geteuid ());
      if (berth_private_dir (dir, NULL) == 0)
        snprintf (cache, sizeof cache, "%s/shell-%016llx", dir, (unsigned long long) h);
    }
  if (*cache && lstat (cache, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == geteuid () && time (NULL) - st.st_mtime < 86400)
    if (ssh_read_shell (cache, &bash))
      goto record;
  if (ssh_build_argv (&s, SSH_ARGV_CLIENT, true, NULL, &argv) == 0 && berth_strv_push (&argv, "--") == 0
      && berth_strv_push (&argv, "echo \"berth-shell:${BASH_VERSION-none}\"") == 0
      && bounded_ms (deadline, 1) > 0
      && berth_run_capture ((const char *const *) argv, NULL, NULL, bounded_ms (deadline, (e->connect_timeout + 10) * 1000) / 1000.0, SSH_CAPTURE_MAX, &out,
                            &status, NULL) == 0
      && status == 0)
    {
      answered = true;
      for (const char *p = out; p && (p = strstr (p, "berth-shell:")) != NULL; p++)
        if ((p == out || p[-1] == '\n') && p[12] >= '0' && p[12] <= '9')
          bash = true;
    }
  berth_strv_free (argv);
  free (out);
  berth_logf (env, BERTH_LOG_DEBUG, "the remote login shell is %s", bash ? "bash" : "not bash");
  if (*cache && answered)
    write_shell (cache, bash);
record:
  e->direct_bash = bash;
  write_shell (e->shell_path, bash);
}


static bool
stall_marked (const ssh_env *e)
{
  return e->stall_path && access (e->stall_path, F_OK) == 0;
}

/* Does the host answer over the master?  One `true` through it, within
   MS milliseconds.  */
static bool
remote_answers (const ssh_env *e, int ms)
{
  ssh_settings s = settings_of (e);
  char **argv = NULL, *out = NULL;
  int status = -1;
  bool ok = ms > 0 && ssh_build_argv (&s, SSH_ARGV_CLIENT, true, NULL, &argv) == 0 && berth_strv_push (&argv, "--") == 0
            && berth_strv_push (&argv, "true") == 0
            && berth_run_capture ((const char *const *) argv, NULL, NULL, ms / 1000.0, SSH_CAPTURE_MAX, &out, &status, NULL) == 0 && status == 0;
  berth_strv_free (argv);
  free (out);
  return ok;
}

/* Make sure this environment's master answers; start one when it does
   not (serialized by a lock file, so concurrent berth processes on one
   named environment start one master).  A master that accepts but does
   not answer twice (2 s, then 3 s) is wedged: killed and replaced.  So
   is one that answers locally while the host behind it stopped answering
   (packets dropped): a command that got no byte back leaves a stall
   mark, and the next use first asks the host over the master.  Every
   step is bounded by DEADLINE (monotonic usec, 0 none): a host that does
   not answer is an error in time, never a wait.  */
int
ssh_ensure_master (berth_env *env, ssh_env *e, uint64_t deadline, berth_error **reterr)
{
  ssh_settings s = settings_of (e);
  char **argv = NULL;
  char *out = NULL, *why = NULL, *dest = NULL;
  int state, status = -1, lockfd, r, ms;
  bool unanswered = false;
  pid_t pid = 0;

  state = ssh_mux_check (e->control_path, bounded_ms (deadline, SSH_MUX_CHECK_MS), &pid);
  berth_logf (env, BERTH_LOG_DEBUG, "master check on %s: %s (pid %d)", e->control_path, mux_state_name (state), (int) pid);
  if (state == SSH_MUX_ALIVE && !stall_marked (e))
    return 0;

  lockfd = berth_lock_file (e->lock_path, deadline, &pid);
  if (lockfd == -ETIMEDOUT)
    {
      char who[32] = "another process";
      if (pid > 0)
        snprintf (who, sizeof who, "pid %d", (int) pid);
      return berth_error_set (reterr, ETIMEDOUT, "ssh: the deadline passed while %s held the connection master's lock %s (another berth starting this "
                              "environment's master?)", who, e->lock_path);
    }
  if (lockfd < 0)
    return berth_error_errno (reterr, -lockfd, "ssh: cannot lock %s", e->lock_path);
  /* someone else may have started it while we waited; a slow answer
     gets a second, longer chance before the master counts as wedged */
  int recheck_ms = state == SSH_MUX_ABSENT ? SSH_MUX_RECHECK_MS : 3000, waited = bounded_ms (deadline, recheck_ms);
  state = ssh_mux_check (e->control_path, waited, &pid);
  if (state == SSH_MUX_ALIVE && !stall_marked (e))
    {
      close (lockfd);
      return 0;
    }
  dest = ssh_destination (e);
  /* Not answering within what the deadline left of that chance does not
     make a master wedged (a loaded machine, a kill at the end of its
     budget): it is left alone, and this call fails for want of time.  */
  if (state == -ETIMEDOUT && waited < recheck_ms)
    {
      berth_logf (env, BERTH_LOG_DEBUG, "master on %s: no answer within the %d ms the deadline left; not replacing it", e->control_path, waited);
      r = berth_error_set (reterr, BERTH_E_BACKEND, "ssh: no time left to connect to %s (its connection master did not answer in time)", dest);
      goto out;
    }
  if (state == SSH_MUX_ALIVE)
    {
      ms = bounded_ms (deadline, SSH_PROBE_MS);
      if (remote_answers (e, ms))
        {
          unlink (e->stall_path);
          close (lockfd);
          free (dest);
          return 0;
        }
      unanswered = true;
      berth_logf (env, BERTH_LOG_DEBUG, "ssh: %s does not answer over the connection master (no reply within %.1fs); replacing the master", dest, ms / 1000.0);
    }
  else if (state != SSH_MUX_ABSENT)
    berth_logf (env, BERTH_LOG_WARNING, "ssh: the connection master at %s does not answer (%s); starting a new one",
                e->control_path, strerror (-state));
  ssh_stop_master (env, e->control_path, e->pid_path, state);

  /* the connection, bounded by the deadline */
  ms = bounded_ms (deadline, (e->connect_timeout + 20) * 1000);
  if (deadline && ms < 100)
    {
      r = berth_error_set (reterr, BERTH_E_BACKEND, unanswered ? "ssh: %s stopped answering, and no time is left to reconnect: check the network and that the host is up"
                                                               : "ssh: no time left to connect to %s", dest);
      goto out;
    }
  if (ms < (e->connect_timeout + 20) * 1000)
    s.connect_timeout = ms / 1000 < e->connect_timeout ? (ms / 1000 > 0 ? ms / 1000 : 1) : e->connect_timeout;
  r = ssh_build_argv (&s, SSH_ARGV_MASTER, false, NULL, &argv);
  if (r < 0)
    {
      r = berth_error_errno (reterr, -r, "out of memory");
      goto out;
    }
  r = berth_run_capture ((const char *const *) argv, NULL, NULL, ms / 1000.0, SSH_CAPTURE_MAX, &out, &status, NULL);
  berth_strv_free (argv);
  berth_logf (env, BERTH_LOG_DEBUG, "master start for %s: %s (status %d)", dest, r < 0 ? strerror (-r) : status == 0 ? "up" : "failed", status);
  if (unanswered && (r == -ETIMEDOUT || (r == 0 && status != 0)))
    {
      if (r == 0)
        why = ssh_last_line (out);
      else if (asprintf (&why, "timed out after %.0fs", ms / 1000.0) < 0)
        why = NULL;
      r = berth_error_set (reterr, BERTH_E_BACKEND, "ssh: %s stopped answering (nothing came back over its connection, and a new one failed: %s): "
                           "check the network and that the host is up", dest, why ? why : "unknown error");
    }
  else if (r == -ETIMEDOUT)
    r = berth_error_set (reterr, BERTH_E_BACKEND, "ssh: connecting to %s timed out after %.0fs (check terminal.ssh_host/ssh_port and the network)",
                         dest, ms / 1000.0);
  else if (r < 0)
    r = berth_error_errno (reterr, -r, "ssh: cannot run %s", e->ssh);
  else if (status != 0)
    {
      why = ssh_last_line (out);
      char port[32] = "";
      if (e->port > 0)
        snprintf (port, sizeof port, " -p %d", e->port);
      r = berth_error_set (reterr, BERTH_E_BACKEND, "ssh: cannot connect to %s: %s (check that `ssh -o BatchMode=yes%s%s%s -l %s %s true` works)",
                           dest, why ? why : "unknown error", e->key ? " -i " : "", e->key ? e->key : "", port, e->user, e->host);
    }
  else
    {
      state = ssh_mux_check (e->control_path, SSH_MUX_CHECK_MS, &pid);
      if (state == SSH_MUX_ALIVE)
        {
          record_master (e, pid);
          record_identity (e);
          ssh_detect_shell (env, e, deadline);
          berth_logf (env, BERTH_LOG_DEBUG, "master %d for %s on %s", (int) pid, dest, e->control_path);
          r = 0;
        }
      else
        r = berth_error_set (reterr, BERTH_E_BACKEND, "ssh: the connection master for %s did not come up on %s (%s)", dest,
                             e->control_path, state < 0 ? strerror (-state) : "no socket");
    }
out:
  free (out);
  free (why);
  free (dest);
  close (lockfd);
  return r;
}


/* The control socket, its directory, lock and pid files: derived from the
   runtime directory alone, so `berth rm` finds them without create().  */
int
ssh_env_paths (const char *rt, char **ret_path, char **ret_dir, char **ret_lock, char **ret_pid)
{
  char *path = NULL, *dir = NULL, *lock = NULL, *pid = NULL;
  int r = ssh_control_path (rt, geteuid (), &path, &dir);
  if (r < 0)
    return r;
  if (asprintf (&lock, "%s.lock", path) < 0)
    lock = NULL;
  if (asprintf (&pid, "%s.pid", path) < 0)
    pid = NULL;
  if (lock == NULL || pid == NULL)
    {
      free (path);
      free (dir);
      free (lock);
      free (pid);
      return -ENOMEM;
    }
  *ret_path = path;
  *ret_dir = dir;
  *ret_lock = lock;
  *ret_pid = pid;
  return 0;
}
