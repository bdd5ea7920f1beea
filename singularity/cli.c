/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.c: finding and running the Apptainer/Singularity CLI, and the SIF
   cache for docker:// images.  */
#include "config.h"

#include "cli.h"
#include "argv.h"

#include <berth/provider-util.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int
sing_find_binary (const berth_config *cfg, char **ret_path, berth_error **reterr)
{
  const char *conf = berth_config_string (cfg, "terminal.singularity_binary", NULL);
  char *p;

  if (conf != NULL && *conf != '\0')
    {
      p = berth_find_program (conf);
      if (p == NULL)
        return berth_error_set (reterr, BERTH_E_UNAVAILABLE,
                                "singularity: terminal.singularity_binary '%s' was not found or is not executable; "
                                "fix the setting or unset it to use apptainer or singularity from PATH",
                                conf);
      *ret_path = p;
      return 0;
    }
  p = berth_find_program ("apptainer");
  if (p == NULL)
    p = berth_find_program ("singularity");
  if (p == NULL)
    return berth_error_set (reterr, BERTH_E_UNAVAILABLE,
                            "singularity: neither 'apptainer' nor 'singularity' was found in PATH; "
                            "install Apptainer (https://apptainer.org/docs/admin/main/installation.html) "
                            "or set terminal.singularity_binary");
  *ret_path = p;
  return 0;
}

int
sing_run (const char *const *argv, double timeout, char **ret_output, int *ret_status, berth_error **reterr)
{
  int r = berth_run_capture (argv, NULL, NULL, timeout, SING_CAPTURE_MAX, ret_output, ret_status, reterr);
  /* instance start / stop / list: what each step of the CLI answered */
  berth_debugf ("singularity", "%s %s: %s %d", argv[1] ? argv[1] : "", argv[1] && argv[2] ? argv[2] : "", r < 0 ? "error" : "exit", r < 0 ? -r : *ret_status);
  return r;
}

int
sing_check_version (const char *bin, double timeout, char **ret_version, berth_error **reterr)
{
  const char *argv[] = { bin, "version", NULL };
  const char *base = strrchr (bin, '/') ? strrchr (bin, '/') + 1 : bin;
  char *out = NULL, *tail;
  berth_error *err = NULL;
  int status = -1, r;

  r = sing_run (argv, timeout, &out, &status, &err);
  if (r == -ETIMEDOUT)
    {
      berth_error_free (err);
      return berth_error_set (reterr, BERTH_E_UNAVAILABLE, "singularity: '%s version' timed out after %gs", base, timeout);
    }
  if (r < 0)
    {
      r = berth_error_set (reterr, BERTH_E_UNAVAILABLE, "singularity: '%s version' could not run: %s", base,
                           berth_error_message (err));
      berth_error_free (err);
      return r;
    }
  if (status != 0)
    {
      tail = sing_tail (out, 200);
      r = berth_error_set (reterr, BERTH_E_UNAVAILABLE, "singularity: '%s version' failed (exit %d): %s", base, status,
                           tail && *tail ? tail : "(no output)");
      free (tail);
      free (out);
      return r;
    }
  tail = sing_tail (out, 200);
  free (out);
  if (tail == NULL)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  *ret_version = tail;
  return 0;
}

char *
sing_sif_cache_dir (void)
{
  const char *x = getenv ("XDG_CACHE_HOME");
  const char *home = getenv ("HOME");
  char *s = NULL;
  if (x != NULL && x[0] == '/')
    {
      if (asprintf (&s, "%s/berth/sif", x) < 0)
        return NULL;
    }
  else if (asprintf (&s, "%s/.cache/berth/sif", home && home[0] == '/' ? home : "/tmp") < 0)
    return NULL;
  return s;
}

static bool
usable_sif (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0;
}

/* BASE plus KEY=VALUE unless KEY is already set.  */
static char **
environ_with (char *const *base, const char *key, const char *value)
{
  char **v = NULL;
  size_t klen = strlen (key);
  bool have = false;
  for (char *const *e = base; e != NULL && *e != NULL; e++)
    {
      if (strncmp (*e, key, klen) == 0 && (*e)[klen] == '=')
        have = true;
      if (berth_strv_push (&v, *e) < 0)
        return berth_strv_free (v);
    }
  if (!have)
    {
      char *kv = NULL;
      if (asprintf (&kv, "%s=%s", key, value) < 0 || berth_strv_push (&v, kv) < 0)
        {
          free (kv);
          return berth_strv_free (v);
        }
      free (kv);
    }
  if (v == NULL)
    v = berth_strv_new (NULL);
  return v;
}

/* The SIF cache's paths for the image file NAME: the directory, the SIF,
   its lock, this process's temporary build and the build's scratch
   directory.  -ENOMEM, or 0.  */
static int
sif_paths (const char *name, char **dir, char **sif, char **lock, char **tmp, char **tmpdir)
{
  *dir = sing_sif_cache_dir ();
  if (*dir == NULL || asprintf (sif, "%s/%s", *dir, name) < 0 || asprintf (lock, "%s/%s.lock", *dir, name) < 0
      || asprintf (tmp, "%s/%s.building.%ld", *dir, name, (long) getpid ()) < 0 || asprintf (tmpdir, "%s/tmp", *dir) < 0)
    return -ENOMEM;
  return 0;
}

/* Build IMAGE into SIF (through TMP, renamed into place; scratch space
   in TMPDIR) within TIMEOUT seconds, with the cache's lock held.  0 and
   the build's output in *RET_OUT (may be NULL); else < 0 with why in
   *RET_WHY (malloc'd: "timed out", "failed: OUTPUT'S TAIL").  */
static int
sif_build (const char *bin, const char *image, const char *sif, const char *tmp, const char *tmpdir, double timeout, char **ret_out, char **ret_why)
{
  char **argv = NULL, **envp = NULL, **envp2 = NULL;
  char *out = NULL, *tail = NULL;
  berth_error *err = NULL;
  int status = -1, r;

  *ret_why = NULL;
  unlink (tmp);
  argv = sing_build_argv (bin, tmp, image);
  /* Build scratch space next to the cache (SingularityCE reads
     SINGULARITY_TMPDIR), unless the user chose one.  */
  envp2 = environ_with (environ, "APPTAINER_TMPDIR", tmpdir);
  envp = envp2 ? environ_with (envp2, "SINGULARITY_TMPDIR", tmpdir) : NULL;
  if (argv == NULL || envp == NULL)
    r = -ENOMEM;
  else
    r = berth_run_capture ((const char *const *) argv, (const char *const *) envp, NULL, timeout, SING_CAPTURE_MAX, &out, &status, &err);
  if (r == 0 && status == 0 && usable_sif (tmp) && rename (tmp, sif) == 0)
    {
      if (ret_out)
        *ret_out = TAKE_PTR (out);
    }
  else
    {
      tail = sing_tail (out, 300);
      unlink (tmp);
      if (asprintf (ret_why, "%s%s%s", r == -ETIMEDOUT ? "timed out" : r < 0 ? "could not run" : "failed", (tail && *tail) || err ? ": " : "",
                    r < 0 && err ? berth_error_message (err) : (tail ? tail : ""))
          < 0)
        *ret_why = NULL;
      if (r >= 0)
        r = -EIO;
    }
  berth_error_free (err);
  berth_strv_free (argv);
  berth_strv_free (envp);
  berth_strv_free (envp2);
  free (out);
  free (tail);
  return r;
}

static void
pull_event (berth_pull_fn fn, void *userdata, const char *status)
{
  berth_pull_event ev = { .size = sizeof ev, .layer = NULL, .status = status, .current = -1, .total = -1 };
  if (fn)
    fn (userdata, &ev);
}

int
sing_pull (const char *bin, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  _cleanup_free_ char *name = sing_sif_name (image);
  _cleanup_free_ char *dir = NULL, *sif = NULL, *lock = NULL, *tmp = NULL, *tmpdir = NULL, *out = NULL, *why = NULL, *line = NULL;
  pid_t holder = 0;
  int r;

  if (name == NULL)
    return berth_error_set (reterr, BERTH_E_CONFIG,
                            "singularity: only docker:// images are pulled (into the SIF cache); '%s' is used as it is (a SIF, a sandbox "
                            "directory or another URI)",
                            image);
  if (sif_paths (name, &dir, &sif, &lock, &tmp, &tmpdir) < 0)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  if ((r = berth_mkdir_parents (tmpdir, 0700)) < 0)
    return berth_error_errno (reterr, -r, "singularity: cannot create the SIF cache %s", dir);
  /* a pull has no overall deadline; another berth's build of the same
     image is waited for as an environment's start would */
  _cleanup_close_ int fd = berth_lock_file (lock, berth_monotonic_usec () + (uint64_t) ((SING_BUILD_TIMEOUT + 60) * 1e6), &holder);
  if (fd == -ETIMEDOUT)
    {
      char who[32] = "another process";
      if (holder > 0)
        snprintf (who, sizeof who, "pid %d", (int) holder);
      return berth_error_set (reterr, ETIMEDOUT, "singularity: %s held the image build lock %s for longer than a build may take", who, lock);
    }
  if (fd < 0)
    return berth_error_errno (reterr, -fd, "singularity: cannot lock %s", lock);
  if (asprintf (&line, "Pulling %s (apptainer build)", image) < 0)
    line = NULL;
  pull_event (fn, userdata, line ? line : "Pulling");
  r = sif_build (bin, image, sif, tmp, tmpdir, SING_BUILD_TIMEOUT, &out, &why);
  if (r < 0)
    return berth_error_set (reterr, r == -ENOMEM ? ENOMEM : BERTH_E_UNAVAILABLE, "singularity: building %s from %s %s", sif, image,
                            why ? why : "failed");
  /* the build's own lines ("INFO: ..."), one event each */
  for (char *s = out, *nl; s && *s; s = nl ? nl + 1 : NULL)
    {
      nl = strchr (s, '\n');
      if (nl)
        *nl = '\0';
      if (*s)
        pull_event (fn, userdata, s);
    }
  free (line);
  if (asprintf (&line, "Status: %s is in the SIF cache (%s)", image, name) < 0)
    line = NULL;
  pull_event (fn, userdata, line ? line : "Status: pulled");
  return 0;
}

int
sing_resolve_image (berth_env *env, const char *bin, const char *image, char **ret_image, berth_error **reterr)
{
  char *name = sing_sif_name (image);
  char *dir = NULL, *sif = NULL, *lock = NULL, *tmp = NULL, *tmpdir = NULL, *why = NULL;
  char *result = NULL;
  int fd = -1, failed = 0, r;
  pid_t holder = 0;

  if (name == NULL)
    {
      /* Not docker://: a SIF, a sandbox directory or another URI, as is.  */
      result = strdup (image);
      goto done;
    }
  if (sif_paths (name, &dir, &sif, &lock, &tmp, &tmpdir) < 0)
    goto oom;
  if (usable_sif (sif))
    {
      result = strdup (sif);
      goto done;
    }
  if ((r = berth_mkdir_parents (tmpdir, 0700)) < 0)
    {
      berth_logf (env, BERTH_LOG_WARNING, "singularity: cannot create the SIF cache %s (%s); using %s directly", dir,
                  strerror (-r), image);
      result = strdup (image);
      goto done;
    }
  /* Another berth building the same image: wait for it, within the
     call's deadline.  */
  fd = berth_lock_file (lock, berth_monotonic_usec () + (uint64_t) (berth_env_time_left (env, SING_BUILD_TIMEOUT + 60) * 1e6), &holder);
  if (fd == -ETIMEDOUT && berth_env_deadline_usec (env) && berth_monotonic_usec () >= berth_env_deadline_usec (env))
    {
      char who[32] = "another process";
      if (holder > 0)
        snprintf (who, sizeof who, "pid %d", (int) holder);
      failed = berth_error_set (reterr, ETIMEDOUT, "singularity: the deadline passed while %s held the image build lock %s (another berth building %s)",
                                who, lock, image);
      goto done;
    }
  if (fd < 0)
    {
      berth_logf (env, BERTH_LOG_WARNING, "singularity: cannot lock %s (%s); using %s directly", lock, strerror (-fd), image);
      result = strdup (image);
      goto done;
    }
  /* Somebody else may have built it while we waited.  */
  if (usable_sif (sif))
    {
      result = strdup (sif);
      goto done;
    }
  berth_logf (env, BERTH_LOG_INFO, "singularity: building %s from %s (once; cached)", sif, image);
  r = sif_build (bin, image, sif, tmp, tmpdir, berth_env_time_left (env, SING_BUILD_TIMEOUT), NULL, &why);
  if (r == -ENOMEM)
    goto oom;
  if (r == 0)
    result = strdup (sif);
  else
    {
      berth_logf (env, BERTH_LOG_WARNING, "singularity: building %s from %s %s; falling back to the docker:// URL", sif, image, why ? why : "failed");
      result = strdup (image);
    }
  goto done;

oom:
  result = NULL;
done:
  if (fd >= 0)
    close (fd); /* releases the lock */
  free (name);
  free (dir);
  free (sif);
  free (lock);
  free (tmp);
  free (tmpdir);
  free (why);
  if (failed < 0)
    return failed;
  if (result == NULL)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  *ret_image = result;
  return 0;
}
