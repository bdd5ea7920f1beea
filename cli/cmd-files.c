/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-files.c: berth cp -- files between this host and an environment,
   through libberth's file layer (what the environment's commands see).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define CP_MAX (1u << 30) /* what libberth moves in one call */

/* "NAME:PATH" names an environment when NAME has no '/' and is not empty
   (as docker cp): *RET_NAME (may be NULL) gets NAME, *RET_PATH what follows
   the colon.  */
static bool
split_env (const char *arg, char **ret_name, const char **ret_path)
{
  const char *colon = strchr (arg, ':');
  if (colon == NULL || colon == arg || memchr (arg, '/', (size_t) (colon - arg)) != NULL)
    return false;
  if (ret_name && (*ret_name = strndup (arg, (size_t) (colon - arg))) == NULL)
    return false;
  if (ret_path)
    *ret_path = colon + 1;
  return true;
}

static char *
with_name_of (const char *dest, const char *src)
{
  char *copy = strdup (src), *r = NULL;
  if (copy == NULL || asprintf (&r, "%s%s%s", dest, dest[0] && dest[strlen (dest) - 1] == '/' ? "" : "/", basename (copy)) < 0)
    r = NULL;
  free (copy);
  return r;
}

static int
read_host (const char *path, char **ret, size_t *ret_len, mode_t *ret_mode)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  struct stat st;
  if (fd < 0)
    return -errno;
  if (fstat (fd, &st) < 0 || S_ISDIR (st.st_mode))
    {
      int e = S_ISDIR (st.st_mode) ? EISDIR : errno;
      close (fd);
      return -e;
    }
  size_t cap = 65536, len = 0;
  char *buf = malloc (cap);
  for (ssize_t n; buf;)
    {
      if (len == cap && (cap > CP_MAX || !(buf = realloc (buf, cap *= 2))))
        break;
      n = read (fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          int e = n < 0 ? errno : 0;
          close (fd);
          if (e)
            {
              free (buf);
              return -e;
            }
          *ret = buf;
          *ret_len = len;
          *ret_mode = st.st_mode & 0777;
          return 0;
        }
      len += (size_t) n;
    }
  close (fd);
  free (buf);
  return cap > CP_MAX ? -EFBIG : -ENOMEM;
}

static int
write_host (const char *path, const void *data, size_t len)
{
  char *tmp = NULL, *copy = strdup (path);
  if (copy == NULL || asprintf (&tmp, "%s/.berth-cp.XXXXXX", dirname (copy)) < 0)
    {
      free (copy);
      return -ENOMEM;
    }
  free (copy);
  int fd = mkostemp (tmp, O_CLOEXEC), e = 0;
  if (fd < 0)
    e = errno;
  for (size_t off = 0; fd >= 0 && e == 0 && off < len;)
    {
      ssize_t n = write (fd, (const char *) data + off, len - off);
      if (n < 0 && errno != EINTR)
        e = errno;
      else if (n > 0)
        off += (size_t) n;
    }
  /* as cp(1) makes a new file: 0666 less the umask */
  mode_t um = umask (0);
  umask (um);
  if (fd >= 0 && e == 0 && fchmod (fd, 0666 & ~um) < 0)
    e = errno;
  if (fd >= 0 && close (fd) < 0 && e == 0)
    e = errno;
  if (fd >= 0 && e == 0 && rename (tmp, path) < 0)
    e = errno;
  if (fd >= 0 && e)
    unlink (tmp);
  free (tmp);
  return -e;
}

berth_env *
cli_open_named (berth_ctx *ctx, const char *name, int *ret_exit)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  /* Under a hosted scope the name is the agent's sandbox, whatever it says:
     opening finds or makes it.  */
  if (!berth_ctx_is_hosted (ctx) && !cli_env_exists (ctx, name))
    {
      *ret_exit = cli_fail ("no environment named '%s' (see berth ls; create it with berth exec -e %s -- true)", name, name);
      return NULL;
    }
  spec.name = name;
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    {
      *ret_exit = cli_fail_err (err);
      return NULL;
    }
  return env;
}

int
cmd_cp (const cli_opts *o, int argc, char **argv)
{
  int c, opt_exit = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "cp") };
  while ((c = cli_next_option (&g, argc, argv, &opt_exit)) >= 0)
    abort (); /* cp has no options but --help */
  if (c == -2)
    return opt_exit;
  argc -= g.ind - 1;
  argv += g.ind - 1;
  if (argc != 3)
    return cli_fail ("cp: give a source and a destination, one of them NAME:PATH (berth cp --help)");
  char *name = NULL;
  const char *epath = NULL, *hpath = NULL;
  bool upload = split_env (argv[2], &name, &epath);
  if (upload)
    hpath = argv[1];
  else if (split_env (argv[1], &name, &epath))
    hpath = argv[2];
  else
    return cli_fail ("cp: one of %s and %s must be NAME:PATH, an environment's file", argv[1], argv[2]);
  if (upload && split_env (argv[1], NULL, NULL))
    {
      free (name);
      return cli_fail ("cp: copy between two environments through this host (berth cp NAME:SRC FILE, then berth cp FILE NAME2:DEST)");
    }
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    {
      free (name);
      return EXIT_BERTH;
    }
  int exit_code = EXIT_BERTH;
  berth_env *env = NULL;
  berth_error *err = NULL;
  char *data = NULL, *target = NULL;
  size_t len = 0;
  mode_t mode = 0644;
  int r;
  if (upload)
    {
      if ((r = read_host (hpath, &data, &len, &mode)) < 0)
        exit_code = cli_fail ("cp: cannot read %s: %s", hpath, r == -EISDIR ? "it is a directory (copy files one by one, or tar them)" : strerror (-r));
      else if ((env = cli_open_named (ctx, name, &exit_code)) != NULL)
        {
          target = epath[0] == '\0' || epath[strlen (epath) - 1] == '/' ? with_name_of (epath, hpath) : strdup (epath);
          if (berth_env_write_file (env, target ? target : epath, data, len, mode, &err) < 0)
            exit_code = cli_fail_err (err);
          else
            exit_code = 0;
        }
    }
  else if ((env = cli_open_named (ctx, name, &exit_code)) == NULL)
    ;
  else if (berth_env_read_file (env, epath, CP_MAX, (void **) &data, &len, &err) < 0)
    exit_code = cli_fail_err (err);
  else
    {
      struct stat st;
      bool to_dir = hpath[strlen (hpath) - 1] == '/' || (stat (hpath, &st) == 0 && S_ISDIR (st.st_mode));
      target = to_dir ? with_name_of (hpath, epath) : strdup (hpath);
      if ((r = write_host (target ? target : hpath, data, len)) < 0)
        exit_code = cli_fail ("cp: cannot write %s: %s", target ? target : hpath, strerror (-r));
      else
        exit_code = 0;
    }
  if (env)
    {
      berth_env_cleanup (env, NULL);
      berth_env_unref (env);
    }
  berth_ctx_unref (ctx);
  free (data);
  free (target);
  free (name);
  return exit_code;
}
