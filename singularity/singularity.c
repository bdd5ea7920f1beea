/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* singularity.c: the Apptainer/Singularity backend.  An environment is one
   instance (`instance start --containall --no-home`); commands run through
   `exec --cleanenv instance://NAME`, which is also the exec_prefix.  The
   session semantics (cwd, snapshot, timeouts that kill the tree inside the
   instance, passthrough values sent on stdin) are libberth's.  */
#include "config.h"

#include "argv.h"
#include "cli.h"

#include <berth/provider-util.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Present while a named environment is stopped by berth_env_stop_idle.  */
#define IDLE_FILE "singularity-idle"

typedef struct sing_env
{
  char *bin;
  char *name;    /* the instance */
  char *pwd;     /* the home inside, for --pwd; NULL: Apptainer's default */
  char *overlay; /* persistent: the overlay directory */
  bool persistent;
  bool running; /* ensure succeeded */
} sing_env;

/* Release: what the block (env_data_size) points to.  */
static void
sing_release (berth_env *env)
{
  sing_env *s = berth_env_get_data (env);
  free (s->bin);
  free (s->name);
  free (s->pwd);
  free (s->overlay);
}

static const char *
base_name (const char *path)
{
  const char *s = strrchr (path, '/');
  return s ? s + 1 : path;
}

/* ---- probe, doctor, flags ---- */

static int
sing_probe (const berth_config *cfg, char **ret_reason)
{
  char *bin = NULL, *version = NULL;
  berth_error *err = NULL;
  int r;

  if (sing_find_binary (cfg, &bin, &err) < 0)
    {
      *ret_reason = strdup (berth_error_message (err));
      berth_error_free (err);
      return BERTH_PROBE_UNAVAILABLE;
    }
  r = sing_check_version (bin, SING_PROBE_TIMEOUT, &version, &err);
  if (r < 0)
    {
      *ret_reason = strdup (berth_error_message (err));
      berth_error_free (err);
      free (bin);
      return BERTH_PROBE_UNAVAILABLE;
    }
  if (asprintf (ret_reason, "%s (%s)", version, bin) < 0)
    *ret_reason = NULL;
  free (bin);
  free (version);
  return BERTH_PROBE_READY;
}

static int
sing_doctor (const berth_config *cfg, berth_check_fn fn, void *userdata)
{
  char *bin = NULL, *version = NULL, *dir, *img_name, *detail = NULL;
  const char *image = berth_config_string (cfg, "terminal.singularity_image", SING_DEFAULT_IMAGE);
  char **binds = berth_config_strv (cfg, "terminal.singularity_binds");
  berth_error *err = NULL;
  bool ok;

  ok = sing_find_binary (cfg, &bin, &err) == 0;
  fn (userdata, "apptainer or singularity binary", ok, ok ? bin : berth_error_message (err),
      ok ? NULL : "install Apptainer (https://apptainer.org/docs/admin/main/installation.html) or set terminal.singularity_binary");
  berth_error_free (err);
  err = NULL;
  if (ok)
    {
      ok = sing_check_version (bin, SING_VERSION_TIMEOUT, &version, &err) == 0;
      fn (userdata, "version", ok, ok ? version : berth_error_message (err),
          ok ? NULL : "check the installation: `apptainer version` must succeed");
      berth_error_free (err);
      err = NULL;
    }

  ok = true;
  for (char **b = binds; b != NULL && *b != NULL; b++)
    {
      char *norm = NULL;
      if (sing_parse_bind (*b, &norm, &err) < 0)
        {
          ok = false;
          fn (userdata, "binds", false, berth_error_message (err), "fix terminal.singularity_binds");
          berth_error_free (err);
          err = NULL;
          break;
        }
      free (norm);
    }
  if (ok)
    fn (userdata, "binds", true, binds ? "terminal.singularity_binds valid" : "none configured", NULL);

  dir = sing_sif_cache_dir ();
  img_name = sing_sif_name (image);
  if (img_name != NULL && dir != NULL)
    {
      struct stat st;
      char *sif = NULL;
      if (asprintf (&sif, "%s/%s", dir, img_name) >= 0)
        {
          bool have = stat (sif, &st) == 0 && S_ISREG (st.st_mode);
          if (asprintf (&detail, have ? "%s cached as %s" : "%s will be converted once into %s", image, sif) < 0)
            detail = NULL;
          fn (userdata, "image", true, detail, NULL);
          free (sif);
        }
    }
  else
    fn (userdata, "image", true, image, NULL);
  free (detail);
  free (dir);
  free (img_name);
  free (bin);
  free (version);
  berth_strv_free (binds);
  return 0;
}

static int
sing_flag (const berth_config *cfg, uint32_t flag, bool *ret)
{
  char **binds;
  bool writable = false;

  if (flag != BERTH_FLAG_SKIP_CONTAINER_GUARDS)
    return -ENOENT;
  /* A host path mounted writable makes dangerous commands dangerous to
     the host again: keep the guards on then.  */
  binds = berth_config_strv (cfg, "terminal.singularity_binds");
  for (char **b = binds; b != NULL && *b != NULL; b++)
    {
      char *norm = NULL;
      if (sing_parse_bind (*b, &norm, NULL) < 0 || sing_bind_is_writable (norm))
        writable = true;
      free (norm);
    }
  berth_strv_free (binds);
  *ret = !writable;
  return 0;
}

/* ---- create ---- */

/* Is instance NAME running?  1 yes, 0 no, < 0 could not tell.  */
static int
instance_exists (const char *bin, const char *name, berth_error **reterr)
{
  char **argv = sing_list_argv (bin, name);
  char *out = NULL, *tail;
  sing_instance *v = NULL;
  size_t n = 0;
  int status = -1, r, found = 0;

  if (argv == NULL)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  r = sing_run ((const char *const *) argv, SING_LIST_TIMEOUT, &out, &status, reterr);
  berth_strv_free (argv);
  if (r < 0)
    return r;
  if (status != 0)
    {
      /* An empty match is not an error for Apptainer, but be lenient with
         versions that report "no instance found" on stderr.  */
      if (out != NULL && strstr (out, "no instance") != NULL)
        {
          free (out);
          return 0;
        }
      tail = sing_tail (out, 300);
      r = berth_error_set (reterr, BERTH_E_BACKEND, "singularity: '%s instance list' failed (exit %d): %s",
                           base_name (bin), status, tail ? tail : "");
      free (tail);
      free (out);
      return r;
    }
  if (sing_parse_instances (out, &v, &n) < 0)
    {
      free (out);
      return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
    }
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i].name, name) == 0)
      found = 1;
  sing_instances_free (v, n);
  free (out);
  return found;
}

static int
collect_binds (const berth_config *cfg, char ***ret, berth_error **reterr)
{
  char **raw = berth_config_strv (cfg, "terminal.singularity_binds");
  char **out = NULL;
  int r = 0;

  for (char **b = raw; b != NULL && *b != NULL; b++)
    {
      char *norm = NULL;
      struct stat st;
      if ((r = sing_parse_bind (*b, &norm, reterr)) < 0)
        break;
      /* Apptainer fails late and obscurely on a missing source.  */
      *strchr (norm, ':') = '\0';
      if (stat (norm, &st) < 0)
        {
          r = berth_error_set (reterr, BERTH_E_CONFIG,
                               "singularity: bind source %s (terminal.singularity_binds) does not exist", norm);
          free (norm);
          break;
        }
      norm[strlen (norm)] = ':';
      r = berth_strv_push (&out, norm);
      free (norm);
      if (r < 0)
        {
          r = berth_error_set (reterr, ENOMEM, "singularity: out of memory");
          break;
        }
    }
  berth_strv_free (raw);
  if (r < 0)
    {
      berth_strv_free (out);
      return r;
    }
  *ret = out;
  return 0;
}

/* Where commands start: the home the instance gives us, found by asking
   it once (and checking that the image has bash, which berth needs).  */
static int
probe_home (berth_env *env, sing_env *s, berth_error **reterr)
{
  char **argv = sing_exec_prefix_argv (s->bin, NULL, s->name);
  char *out = NULL, *tail;
  int status = -1, r;

  if (argv == NULL || berth_strv_push (&argv, "bash") < 0 || berth_strv_push (&argv, "-c") < 0
      || berth_strv_push (&argv, "cd 2>/dev/null || cd /; printf '\\nBERTH-HOME:%s\\n' \"$PWD\"") < 0)
    {
      berth_strv_free (argv);
      return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
    }
  r = sing_run ((const char *const *) argv, berth_env_time_left (env, SING_START_TIMEOUT), &out, &status, reterr);
  berth_strv_free (argv);
  if (r < 0)
    return r;
  if (status != 0 || out == NULL || strstr (out, "\nBERTH-HOME:/") == NULL)
    {
      tail = sing_tail (out, 300);
      r = berth_error_set (reterr, BERTH_E_BACKEND,
                           "singularity: cannot run bash in instance %s (exit %d): %s; berth needs bash in the image",
                           s->name, status, tail ? tail : "");
      free (tail);
      free (out);
      return r;
    }
  {
    char *p = strstr (out, "\nBERTH-HOME:") + strlen ("\nBERTH-HOME:");
    char *nl = strchr (p, '\n');
    if (nl)
      *nl = '\0';
    s->pwd = strdup (p);
  }
  free (out);
  if (s->pwd == NULL)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  return 0;
}

static int
start_instance (berth_env *env, sing_env *s, berth_error **reterr)
{
  const berth_config *cfg = berth_env_config (env);
  const char *image = berth_env_image (env);
  char **binds = NULL, **argv = NULL;
  char *resolved = NULL, *out = NULL, *tail = NULL;
  int status = -1, r;
  sing_start_opts o = { 0 };

  if (image == NULL || *image == '\0')
    image = berth_config_string (cfg, "terminal.singularity_image", SING_DEFAULT_IMAGE);
  if (image == NULL || *image == '\0')
    image = SING_DEFAULT_IMAGE;
  if ((r = collect_binds (cfg, &binds, reterr)) < 0)
    return r;
  if ((r = sing_resolve_image (env, s->bin, image, &resolved, reterr)) < 0)
    goto out;
  o.bin = s->bin;
  o.image = resolved;
  o.name = s->name;
  o.overlay = s->overlay;
  o.binds = (const char *const *) binds;
  o.memory_mb = berth_config_int (cfg, "terminal.container_memory", 5120);
  o.cpus = berth_config_double (cfg, "terminal.container_cpu", 1);
  argv = sing_start_argv (&o);
  if (argv == NULL)
    {
      r = berth_error_set (reterr, ENOMEM, "singularity: out of memory");
      goto out;
    }
  r = sing_run ((const char *const *) argv, berth_env_time_left (env, SING_START_TIMEOUT), &out, &status, reterr);
  if (r < 0)
    goto out;
  if (status != 0)
    {
      /* Another process started the same named instance first.  */
      if (s->persistent && out != NULL && strstr (out, "already exists") != NULL
          && instance_exists (s->bin, s->name, NULL) == 1)
        {
          r = 0;
          goto out;
        }
      tail = sing_tail (out, 400);
      r = berth_error_set (reterr, BERTH_E_BACKEND, "singularity: failed to start instance %s from %s (exit %d): %s",
                           s->name, resolved, status, tail ? tail : "");
      goto out;
    }
  r = 0;
out:
  berth_strv_free (binds);
  berth_strv_free (argv);
  free (resolved);
  free (out);
  free (tail);
  return r;
}

/* The overlay directory of a named environment, in its state
   directory.  */
static char *
overlay_dir (berth_env *env)
{
  const char *dir = berth_env_state_dir (env);
  char *p = NULL;
  if (dir == NULL || asprintf (&p, "%s/overlay", dir) < 0)
    return NULL;
  return p;
}

/* Attach: the instance's name (nothing is run).  */
static int
sing_attach (berth_env *env, berth_error **reterr)
{
  sing_env *s = berth_env_get_data (env);
  s->persistent = berth_env_is_persistent (env);
  s->name = sing_instance_name (berth_env_id (env), s->persistent, getpid (), berth_env_state_dir (env));
  if (s->name == NULL)
    return berth_error_set (reterr, BERTH_E_ENV, "singularity: environment id '%s' cannot name an instance",
                            berth_env_id (env) ? berth_env_id (env) : "(null)");
  return 0;
}

static int
sing_ensure (berth_env *env, berth_error **reterr)
{
  sing_env *s = berth_env_get_data (env);
  char *version = NULL, *home = NULL;
  int r, exists = 0;
  bool had_marker = false;

  /* again after a stop: what the last ensure found is found anew */
  free (s->bin);
  s->bin = NULL;
  free (s->overlay);
  s->overlay = NULL;
  free (s->pwd);
  s->pwd = NULL;
  if ((r = sing_find_binary (berth_env_config (env), &s->bin, reterr)) < 0)
    goto fail;
  if ((r = sing_check_version (s->bin, SING_VERSION_TIMEOUT, &version, reterr)) < 0)
    goto fail;
  free (version);
  if (s->persistent)
    {
      s->overlay = overlay_dir (env);
      if (s->overlay == NULL)
        {
          r = berth_error_set (reterr, ENOMEM, "singularity: out of memory");
          goto fail;
        }
      if ((r = berth_mkdir_parents (s->overlay, 0700)) < 0)
        {
          r = berth_error_errno (reterr, -r, "singularity: cannot create the overlay directory %s", s->overlay);
          goto fail;
        }
      had_marker = berth_env_state_read (env, "instance", NULL) >= 0;
      exists = instance_exists (s->bin, s->name, reterr);
      if (exists < 0)
        {
          r = exists;
          goto fail;
        }
    }
  if (!exists)
    {
      if ((r = start_instance (env, s, reterr)) < 0)
        goto fail;
      /* started again over its overlay after an idle stop: the same
         workspace, not recreated */
      if (had_marker && berth_env_state_read (env, IDLE_FILE, NULL) < 0)
        berth_env_mark_recreated (env);
      berth_env_state_remove (env, IDLE_FILE);
      if (s->persistent)
        berth_env_state_write (env, "instance", s->name, strlen (s->name));
    }
  /* A named environment's home is asked once and remembered.  */
  if (exists && s->persistent && berth_env_state_read (env, "home", &home) >= 0)
    {
      home[strcspn (home, "\n")] = '\0'; /* 0.1 wrote a newline */
      if (home[0] == '/')
        s->pwd = TAKE_PTR (home);
      free (home);
      home = NULL;
    }
  /* Throw-away environments skip the question (one exec less per
     `berth exec`): Apptainer starts contained execs in the home anyway,
     and libberth's bootstrap changes to the environment's cwd.  */
  if (s->pwd == NULL && s->persistent && (r = probe_home (env, s, reterr)) < 0)
    {
      /* Do not leave an instance we just started and cannot use.  */
      if (!exists)
        {
          char **argv = sing_stop_argv (s->bin, s->name, true);
          char *out = NULL;
          int st;
          if (argv)
            sing_run ((const char *const *) argv, SING_STOP_TIMEOUT, &out, &st, NULL);
          free (out);
          berth_strv_free (argv);
        }
      goto fail;
    }
  if (s->persistent && s->pwd != NULL)
    berth_env_state_write (env, "home", s->pwd, strlen (s->pwd));
  s->running = true;
  return 0;

fail:
  return r;
}

/* ---- transport ---- */

static bool
is_invoking_user (const char *user)
{
  uid_t uid = getuid ();
  struct passwd *pw;
  char buf[32];

  snprintf (buf, sizeof buf, "%lu", (unsigned long) uid);
  if (strcmp (user, buf) == 0)
    return true;
  pw = getpwuid (uid);
  return pw != NULL && strcmp (pw->pw_name, user) == 0;
}

static int
sing_exec_prefix (berth_env *env, const char *user, bool interactive, char ***ret_argv, uint32_t *ret_flags,
                  berth_error **reterr)
{
  sing_env *s = berth_env_get_data (env);
  char **argv;

  (void) interactive; /* a TTY on stdin passes through as is */
  if (!s->running)
    return berth_error_set (reterr, BERTH_E_ENV, "singularity: the environment is not created (or was cleaned up)");
  /* Apptainer runs commands as the invoking user; joining an instance
     cannot switch users (--fakeroot is ignored on exec).  */
  if (user != NULL && *user != '\0' && !is_invoking_user (user))
    return berth_error_set (reterr, ENOTSUP,
                            "singularity: commands run as the invoking user; Apptainer cannot switch to user '%s'",
                            user);
  argv = sing_exec_prefix_argv (s->bin, s->pwd, s->name);
  if (argv == NULL)
    return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
  *ret_argv = argv;
  /* The environment does not cross (--cleanenv): libberth sends allowed
     passthrough values inside the stdin script.  */
  *ret_flags = 0;
  return 0;
}

/* ---- cleanup, gc ---- */

static int
stop_instance (const char *bin, const char *name, berth_error **reterr)
{
  for (int force = 0; force <= 1; force++)
    {
      char **argv = sing_stop_argv (bin, name, force);
      char *out = NULL, *tail;
      int status = -1, r;

      if (argv == NULL)
        return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
      r = sing_run ((const char *const *) argv, SING_STOP_TIMEOUT, &out, &status, NULL);
      berth_strv_free (argv);
      if (r == 0 && status == 0)
        {
          free (out);
          return 0;
        }
      /* Already gone: cleanup is idempotent.  */
      if (instance_exists (bin, name, NULL) == 0)
        {
          free (out);
          return 0;
        }
      if (force)
        {
          tail = sing_tail (out, 300);
          r = berth_error_set (reterr, BERTH_E_BACKEND, "singularity: cannot stop instance %s (exit %d): %s", name,
                               status, tail ? tail : "");
          free (tail);
          free (out);
          return r;
        }
      free (out);
    }
  return 0;
}

/* Remove a persistent environment's overlay and marker.  */
static void
forget_persistent (berth_env *env, const char *overlay)
{
  char *ov = overlay ? NULL : overlay_dir (env);
  if (overlay != NULL || ov != NULL)
    berth_remove_tree (overlay ? overlay : ov);
  berth_env_state_remove (env, "instance");
  berth_env_state_remove (env, "home");
  free (ov);
}

/* Idle: a named environment's instance stops, its overlay (the
   workspace) stays for the next ensure; a throw-away one has nothing to
   keep, so it runs on.  */
static int
sing_stop (berth_env *env, berth_error **reterr)
{
  sing_env *s = berth_env_get_data (env);
  if (!s->persistent || !s->running)
    return 0;
  int r = stop_instance (s->bin, s->name, reterr);
  if (r < 0)
    return r;
  s->running = false;
  berth_env_state_write (env, IDLE_FILE, "1", 1);
  return 0;
}

/* For good: stop the instance (found by name after attach alone) and,
   for a named environment, forget its overlay.  Idempotent.  */
static int
sing_remove (berth_env *env, berth_error **reterr)
{
  sing_env *s = berth_env_get_data (env);
  int r = 0;
  if (s->bin == NULL && sing_find_binary (berth_env_config (env), &s->bin, NULL) < 0)
    {
      /* no Apptainer here: no instance of it can be running */
      if (s->persistent)
        forget_persistent (env, NULL);
      return 0;
    }
  if (s->running || instance_exists (s->bin, s->name, NULL) != 0)
    r = stop_instance (s->bin, s->name, reterr);
  if (r < 0)
    return r;
  s->running = false;
  if (s->persistent)
    forget_persistent (env, s->overlay);
  return 0;
}

/* berth pull -b singularity IMAGE: the SIF cache's build, now.  */
static int
sing_pull_op (const berth_config *cfg, const char *image, berth_pull_fn fn, void *userdata, berth_error **reterr)
{
  _cleanup_free_ char *bin = NULL;
  int r = sing_find_binary (cfg, &bin, reterr);
  if (r < 0)
    return r;
  return sing_pull (bin, image, fn, userdata, reterr);
}

static int
sing_gc (const berth_config *cfg, int64_t lifetime, berth_error **reterr)
{
  char *bin = NULL, *out = NULL;
  char **argv;
  sing_instance *v = NULL;
  size_t n = 0;
  int status = -1, r, removed = 0;

  (void) lifetime; /* orphans are judged by their creator, not their age */
  if (sing_find_binary (cfg, &bin, NULL) < 0)
    return 0; /* nothing can be running */
  argv = sing_list_argv (bin, SING_TMP_PREFIX "*");
  if (argv == NULL)
    {
      free (bin);
      return berth_error_set (reterr, ENOMEM, "singularity: out of memory");
    }
  r = sing_run ((const char *const *) argv, SING_LIST_TIMEOUT, &out, &status, reterr);
  berth_strv_free (argv);
  if (r < 0 || status != 0)
    {
      if (r == 0)
        {
          char *tail = sing_tail (out, 300);
          r = berth_error_set (reterr, BERTH_E_BACKEND, "singularity: '%s instance list' failed (exit %d): %s",
                               base_name (bin), status, tail ? tail : "");
          free (tail);
        }
      free (out);
      free (bin);
      return r;
    }
  sing_parse_instances (out, &v, &n);
  for (size_t i = 0; i < n; i++)
    {
      pid_t creator = sing_instance_creator (v[i].name);
      if (creator <= 0)
        continue;
      /* The throw-away environment's process is gone: an orphan.  */
      if (kill (creator, 0) == 0 || errno != ESRCH)
        continue;
      if (stop_instance (bin, v[i].name, NULL) == 0)
        removed++;
    }
  sing_instances_free (v, n);
  free (out);
  free (bin);
  return removed;
}

static const char sing_setup[] =
  "Install Apptainer (https://apptainer.org/docs/admin/main/installation.html) or SingularityCE so that\n"
  "`apptainer` or `singularity` is on PATH, or set terminal.singularity_binary to its path.\n"
  "Images: terminal.singularity_image (a .sif, a sandbox directory, or docker://REF, converted once into\n"
  "$XDG_CACHE_HOME/berth/sif/). Host directories: terminal.singularity_binds (\"/src[:/dest[:ro]]\").\n"
  "--memory/--cpus come from terminal.container_memory (MB) and terminal.container_cpu; set them to 0\n"
  "when cgroups are not available to your user.";

static const berth_key_spec sing_config_keys[] = {
  { "singularity_image", BERTH_KEY_STRING },
  { "singularity_binary", BERTH_KEY_STRING },
  { "singularity_binds", BERTH_KEY_STRV },
  { NULL },
};

const berth_provider_ops berth_singularity_provider = {
  BERTH_PROVIDER_OPS_INIT,
  .name = "singularity",
  .display_name = "Apptainer / Singularity",
  .description = "an Apptainer/Singularity instance driven through the apptainer CLI",
  .env_description = "Commands run inside an Apptainer/Singularity container instance (a clean environment; "
                     "the host's home directory is not mounted).",
  .flags = BERTH_FLAG_IS_REMOTE | BERTH_FLAG_IS_CONTAINER | BERTH_FLAG_SKIP_CONTAINER_GUARDS
           | BERTH_FLAG_SUPPORTS_STREAMS | BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT
           | BERTH_FLAG_CLEANUP_STOPS_PROCESSES,
  .default_cwd = "~",
  .cache_path_base = NULL,
  .strip_env_keys = NULL,
  .flag = sing_flag,
  .probe = sing_probe,
  .doctor = sing_doctor,
  .setup_instructions = sing_setup,
  .config_keys = sing_config_keys,
  .env_data_size = sizeof (sing_env),
  .attach = sing_attach,
  .ensure = sing_ensure,
  .stop = sing_stop,
  .remove = sing_remove,
  .release = sing_release,
  .exec_prefix = sing_exec_prefix,
  .start = NULL,
  .gc = sing_gc,
  .pull = sing_pull_op,
};

BERTH_PROVIDER_EXPORT (berth_singularity_provider)
