/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-files.c: berth cp -- files and directories between this host and
   an environment, through libberth's public file layer (what the
   environment's commands see).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <berth/provider.h>

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

/* PATH ends in "/", ".", or "..": a directory, whatever exists.  */
static bool
names_dir (const char *path)
{
  size_t n = strlen (path);
  return n == 0 || path[n - 1] == '/' || strcmp (path, ".") == 0 || strcmp (path, "..") == 0 || (n >= 2 && strcmp (path + n - 2, "/.") == 0)
         || (n >= 3 && strcmp (path + n - 3, "/..") == 0);
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

/* PATH (replaced atomically: a temporary file renamed over it) with LEN
   bytes of DATA, mode MODE; MODE (mode_t) -1: as cp(1) makes a new file,
   0666 less the umask.  */
static int
write_host (const char *path, const void *data, size_t len, mode_t mode)
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
  if (mode == (mode_t) -1)
    {
      mode_t um = umask (0);
      umask (um);
      mode = 0666 & ~um;
    }
  if (fd >= 0 && e == 0 && fchmod (fd, mode & 0777) < 0)
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

/* ---- directories ----
   A tree is copied entry by entry through the public file layer: files
   with berth_env_read_file / berth_env_write_file (their modes kept),
   directories (empty ones too) and symbolic links made, and directory
   modes set last, by a script run with berth_env_execute.  Links inside
   the tree are copied as links (their target as it is); a SRC that is a
   link is followed.  Anything else (a fifo, a socket, a device) is refused
   before anything is copied.  */

typedef struct cp_entry
{
  char *rel;    /* "." for the top, else "a/b" */
  char type;    /* 'd', 'f', 'l', 'o' (other) */
  mode_t mode;  /* permission bits */
  char *target; /* of a link */
} cp_entry;

typedef struct cp_tree
{
  cp_entry *v;
  size_t n, cap;
} cp_tree;

static void
tree_add (cp_tree *t, const char *rel, char type, mode_t mode, const char *target)
{
  if (t->n == t->cap)
    {
      t->cap = t->cap ? t->cap * 2 : 64;
      t->v = realloc (t->v, t->cap * sizeof *t->v);
      if (t->v == NULL)
        abort ();
    }
  cp_entry *e = &t->v[t->n++];
  e->rel = strdup (rel[0] ? rel : ".");
  e->target = target ? strdup (target) : NULL;
  if (e->rel == NULL || (target && e->target == NULL))
    abort ();
  e->type = type;
  e->mode = mode & 0777;
}

static void
tree_free (cp_tree *t)
{
  for (size_t i = 0; i < t->n; i++)
    {
      free (t->v[i].rel);
      free (t->v[i].target);
    }
  free (t->v);
}

/* The first entry of T that is neither a file, a directory nor a link.  */
static const cp_entry *
tree_other (const cp_tree *t)
{
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].type == 'o')
      return &t->v[i];
  return NULL;
}

static char *
path_join (const char *dir, const char *rel)
{
  char *r = NULL;
  if (strcmp (rel, ".") == 0)
    return strdup (dir);
  if (asprintf (&r, "%s%s%s", dir, dir[0] && dir[strlen (dir) - 1] == '/' ? "" : "/", rel) < 0)
    return NULL;
  return r;
}

/* nftw has no user data.  */
static cp_tree *walk_tree;
static size_t walk_root_len;
static int walk_errno;
static char *walk_failed;

static int
walk_one (const char *fpath, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void) ftw;
  const char *rel = fpath + walk_root_len;
  while (*rel == '/')
    rel++;
  char *target = NULL;
  char type;
  switch (flag)
    {
    case FTW_D: type = 'd'; break;
    case FTW_F: type = S_ISREG (sb->st_mode) ? 'f' : 'o'; break;
    case FTW_SL:
    case FTW_SLN:
      {
        size_t cap = (size_t) sb->st_size + 1 > 256 ? (size_t) sb->st_size + 1 : 256;
        target = malloc (cap + 1);
        ssize_t n = target ? readlink (fpath, target, cap) : -1;
        if (n < 0 || (size_t) n >= cap)
          {
            walk_errno = n < 0 ? errno : ENAMETOOLONG;
            free (target);
            walk_failed = strdup (fpath);
            return 1;
          }
        target[n] = '\0';
        type = 'l';
        break;
      }
    default: /* FTW_DNR, FTW_NS */
      walk_errno = flag == FTW_DNR ? EACCES : errno ? errno : EIO;
      walk_failed = strdup (fpath);
      return 1;
    }
  tree_add (walk_tree, rel, type, sb->st_mode, target);
  free (target);
  return 0;
}

/* The last non-empty line of a failed script's output, for a message.  */
static char *
last_line (const berth_result *res)
{
  size_t len = 0;
  const char *out = res ? berth_result_output (res, &len) : NULL;
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r'))
    len--;
  size_t start = len;
  while (start > 0 && out[start - 1] != '\n')
    start--;
  if (len - start > 300)
    start = len - 300;
  char *r = out ? strndup (out + start, len - start) : NULL;
  return r ? r : strdup ("");
}

/* Run SCRIPT in the environment (from its cwd; scripts run in a subshell,
   so that its cwd stays), with stdin IN (IN_LEN bytes); its exit code, or
   -1 after printing the error (*RET_EXIT; RET_EXIT NULL: quietly).
   *RET_RES (may be NULL) keeps the result.  */
static int
run_script (berth_env *env, const char *script, const void *in, size_t in_len, berth_result **ret_res, int *ret_exit)
{
  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  spec.command = script;
  spec.timeout = BERTH_TIMEOUT_NONE;
  spec.max_bytes = 65536;
  spec.stdin_data = in;
  spec.stdin_len = in_len;
  spec.has_stdin = true;
  if (berth_env_execute (env, &spec, &res, &err) < 0)
    {
      if (ret_exit)
        *ret_exit = cli_fail_err (err);
      else
        berth_error_free (err);
      return -1;
    }
  int code = berth_result_exit_code (res);
  if (ret_res)
    *ret_res = res;
  else
    berth_result_free (res);
  return code;
}

/* Copy the host directory HPATH to EPATH in ENV (cp -r: into EPATH/NAME
   when EPATH is a directory there).  */
static int
upload_tree (berth_env *env, const char *hpath, const char *epath)
{
  int exit_code = EXIT_BERTH, r;
  cp_tree tree = { 0 };
  char *root = realpath (hpath, NULL); /* a link given as SRC is followed */
  char *copy = strdup (hpath), *target = NULL, *q_dest = NULL, *q_base = NULL, *q_target = NULL, *script = NULL;
  char *in = NULL;
  size_t in_len = 0;
  FILE *f = NULL;
  berth_result *res = NULL;
  berth_error *err = NULL;
  if (root == NULL || copy == NULL)
    {
      exit_code = cli_fail ("cp: cannot read %s: %s", hpath, strerror (root ? ENOMEM : errno));
      goto out;
    }
  walk_tree = &tree;
  walk_root_len = strlen (root);
  walk_errno = 0;
  walk_failed = NULL;
  if (nftw (root, walk_one, 64, FTW_PHYS) != 0)
    {
      exit_code = cli_fail ("cp: cannot read %s: %s", walk_failed ? walk_failed : hpath, strerror (walk_errno ? walk_errno : errno));
      free (walk_failed);
      goto out;
    }
  const cp_entry *other = tree_other (&tree);
  if (other)
    {
      exit_code = cli_fail ("cp: %s/%s is not a file, directory or symbolic link: nothing copied", hpath, other->rel);
      goto out;
    }
  /* Where it goes: EPATH, or EPATH/NAME when EPATH is a directory.  */
  const char *base = basename (copy);
  q_dest = berth_shell_quote (epath);
  q_base = berth_shell_quote (base);
  if (asprintf (&script,
                "(d=%s; b=%s\n"
                "if [ -d \"$d\" ]; then t=\"$d/$b\"; elif [ -e \"$d\" ] || [ -L \"$d\" ]; then exit 12; else t=$d; fi\n"
                "if [ -e \"$t\" ] && [ ! -d \"$t\" ]; then exit 13; fi\n"
                "mkdir -p -- \"$t\" || exit 14\n"
                "[ \"$t\" = \"$d\" ] && exit 10; exit 11)",
                q_dest, q_base) < 0)
    abort ();
  r = run_script (env, script, NULL, 0, &res, &exit_code);
  if (r < 0)
    goto out;
  if (r == 10 || r == 11)
    target = r == 10 ? strdup (epath) : path_join (epath, base);
  else
    {
      char *line = last_line (res);
      if (r == 12)
        exit_code = cli_fail ("cp: cannot copy the directory %s over %s, which is not a directory", hpath, epath);
      else if (r == 13)
        exit_code = cli_fail ("cp: cannot copy the directory %s: %s/%s exists and is not a directory", hpath, epath, base);
      else
        exit_code = cli_fail ("cp: cannot make %s: %s", epath, *line ? line : "failed");
      free (line);
      goto out;
    }
  if (target == NULL)
    abort ();
  for (size_t i = 0; i < tree.n; i++)
    {
      if (tree.v[i].type != 'f')
        continue;
      char *from = path_join (root, tree.v[i].rel), *to = path_join (target, tree.v[i].rel);
      char *data = NULL;
      size_t len = 0;
      mode_t mode;
      if (from == NULL || to == NULL)
        abort ();
      bool failed = true;
      if ((r = read_host (from, &data, &len, &mode)) < 0)
        exit_code = cli_fail ("cp: cannot read %s: %s", from, strerror (-r));
      else if (berth_env_write_file (env, to, data, len, tree.v[i].mode ? tree.v[i].mode : 0600, &err) < 0)
        exit_code = cli_fail_err (err);
      else
        failed = false;
      free (data);
      free (from);
      free (to);
      if (failed)
        goto out;
    }
  /* Directories (empty ones too), links, then the directories' modes,
     deepest first: NUL-separated (kind, argument, path) on stdin.  */
  f = open_memstream (&in, &in_len);
  if (f == NULL)
    abort ();
  for (size_t i = 0; i < tree.n; i++)
    if (tree.v[i].type == 'd')
      fprintf (f, "d%c%c./%s%c", 0, 0, tree.v[i].rel, 0);
  for (size_t i = 0; i < tree.n; i++)
    if (tree.v[i].type == 'l')
      fprintf (f, "l%c%s%c./%s%c", 0, tree.v[i].target, 0, tree.v[i].rel, 0);
  for (size_t i = tree.n; i-- > 0;)
    if (tree.v[i].type == 'd')
      fprintf (f, "m%c%o%c./%s%c", 0, (unsigned) tree.v[i].mode, 0, tree.v[i].rel, 0);
  if (fclose (f) != 0)
    abort ();
  q_target = berth_shell_quote (target);
  free (script);
  script = NULL;
  if (asprintf (&script,
                "(cd -- %s || exit 2\n"
                "while IFS= read -r -d '' k && IFS= read -r -d '' a && IFS= read -r -d '' p; do\n"
                "  case $k in\n"
                "    d) mkdir -p \"$p\" || exit 2 ;;\n"
                "    l) rm -f \"$p\" 2>/dev/null; ln -s -- \"$a\" \"$p\" || exit 2 ;;\n"
                "    m) chmod \"$a\" \"$p\" || exit 2 ;;\n"
                "  esac\n"
                "done)",
                q_target) < 0)
    abort ();
  berth_result_free (res);
  res = NULL;
  r = run_script (env, script, in, in_len, &res, &exit_code);
  if (r < 0)
    goto out;
  if (r != 0)
    {
      char *line = last_line (res);
      exit_code = cli_fail ("cp: cannot make the directories and links of %s: %s", target, *line ? line : "failed");
      free (line);
      goto out;
    }
  exit_code = 0;
out:
  berth_result_free (res);
  tree_free (&tree);
  free (root);
  free (copy);
  free (target);
  free (q_dest);
  free (q_base);
  free (q_target);
  free (script);
  free (in);
  return exit_code;
}

/* Parse the listing of list_script: (type, mode, link target, path)
   NUL-separated, paths "./a/b" or ".".  False when malformed.  */
static bool
parse_listing (const char *buf, size_t len, cp_tree *tree)
{
  const char *p = buf, *end = buf + len;
  while (p < end)
    {
      const char *field[4];
      for (int i = 0; i < 4; i++)
        {
          const char *nul = memchr (p, '\0', (size_t) (end - p));
          if (nul == NULL)
            return false;
          field[i] = p;
          p = nul + 1;
        }
      const char *rel = field[3];
      if (strcmp (rel, ".") == 0)
        rel = "";
      else if (strncmp (rel, "./", 2) == 0)
        rel += 2;
      else
        return false;
      char type = field[0][0];
      if (field[0][1] != '\0' || strchr ("dflo", type) == NULL || strstr (rel, "/../") || strncmp (rel, "../", 3) == 0
          || strcmp (rel, "..") == 0)
        return false;
      char *e;
      unsigned long m = strtoul (field[1], &e, 8);
      if (*field[1] == '\0' || *e != '\0' || m > 07777)
        m = type == 'd' ? 0755 : 0644; /* no stat there */
      tree_add (tree, rel, type, (mode_t) m, type == 'l' ? field[2] : NULL);
    }
  return true;
}

/* Every entry under the environment's directory EPATH, listed by a script
   into a file there ($TMPDIR or /tmp) and read raw (names are bytes).  */
static const char list_script[] =
  "(set -o pipefail\n"
  "cd -- %s || exit 3\n"
  "l=$(mktemp \"${TMPDIR:-/tmp}/berth-cp.XXXXXX\") || exit 4\n"
  "find . -print0 | while IFS= read -r -d '' p; do\n"
  "  if [ -L \"$p\" ]; then t=l; elif [ -d \"$p\" ]; then t=d; elif [ -f \"$p\" ]; then t=f; else t=o; fi\n"
  "  m=$(stat -c %%a -- \"$p\" 2>/dev/null) || m=\n"
  "  a=; [ $t = l ] && a=$(readlink -- \"$p\")\n"
  "  printf '%%s\\0%%s\\0%%s\\0%%s\\0' \"$t\" \"$m\" \"$a\" \"$p\"\n"
  "done > \"$l\" || { rm -f -- \"$l\"; exit 5; }\n"
  "printf '\\n%%s\\n' \"$l\")";

#define LIST_MAX (64u << 20)

/* Copy the environment's directory EPATH to the host's HPATH (cp -r: into
   HPATH/NAME when HPATH is a directory).  */
static int
download_tree (berth_env *env, const char *epath, const char *hpath)
{
  int exit_code = EXIT_BERTH, r;
  cp_tree tree = { 0 };
  char *q = berth_shell_quote (epath), *script = NULL, *listing = NULL, *list_path = NULL, *target = NULL;
  char *copy = strdup (epath);
  size_t len = 0;
  berth_result *res = NULL;
  berth_error *err = NULL;
  if (q == NULL || copy == NULL || asprintf (&script, list_script, q) < 0)
    abort ();
  r = run_script (env, script, NULL, 0, &res, &exit_code);
  if (r < 0)
    goto out;
  list_path = last_line (res);
  if (r != 0 || list_path[0] != '/')
    {
      exit_code = cli_fail ("cp: cannot list %s: %s", epath, *list_path ? list_path : "failed");
      goto out;
    }
  r = berth_env_read_file (env, list_path, LIST_MAX, (void **) &listing, &len, &err);
  {
    /* the listing goes whatever happened */
    char *q_list = berth_shell_quote (list_path), *rm = NULL;
    if (q_list == NULL || asprintf (&rm, "rm -f -- %s", q_list) < 0)
      abort ();
    (void) run_script (env, rm, NULL, 0, NULL, NULL);
    free (q_list);
    free (rm);
  }
  if (r < 0)
    {
      if (berth_error_code (err) == EFBIG)
        {
          berth_error_free (err);
          exit_code = cli_fail ("cp: %s has too many entries (its listing is larger than %u MiB): copy it in parts", epath, LIST_MAX >> 20);
        }
      else
        exit_code = cli_fail_err (err);
      goto out;
    }
  if (!parse_listing (listing, len, &tree) || tree.n == 0 || strcmp (tree.v[0].rel, ".") != 0)
    {
      exit_code = cli_fail ("cp: the listing of %s is not what berth expected (find -print0 there?)", epath);
      goto out;
    }
  const cp_entry *other = tree_other (&tree);
  if (other)
    {
      exit_code = cli_fail ("cp: %s/%s is not a file, directory or symbolic link: nothing copied", epath, other->rel);
      goto out;
    }
  /* Where it goes: HPATH, or HPATH/NAME when HPATH is a directory.  */
  struct stat st;
  if (stat (hpath, &st) == 0 && S_ISDIR (st.st_mode))
    target = path_join (hpath, basename (copy));
  else if (lstat (hpath, &st) == 0)
    {
      exit_code = cli_fail ("cp: cannot copy the directory %s over %s, which is not a directory", epath, hpath);
      goto out;
    }
  else
    target = strdup (hpath);
  if (target == NULL)
    abort ();
  for (size_t i = 0; i < tree.n; i++)
    {
      const cp_entry *e = &tree.v[i];
      char *to = path_join (target, e->rel);
      if (to == NULL)
        abort ();
      if (e->type == 'd')
        {
          if (mkdir (to, 0700) < 0 && !(errno == EEXIST && stat (to, &st) == 0 && S_ISDIR (st.st_mode)))
            {
              exit_code = cli_fail ("cp: cannot make %s: %s", to, errno == EEXIST ? "it exists and is not a directory" : strerror (errno));
              free (to);
              goto out;
            }
        }
      else if (e->type == 'l')
        {
          if (lstat (to, &st) == 0 && !S_ISDIR (st.st_mode))
            (void) unlink (to);
          if (symlink (e->target, to) < 0)
            {
              exit_code = cli_fail ("cp: cannot make the link %s: %s", to, strerror (errno));
              free (to);
              goto out;
            }
        }
      else
        {
          char *from = path_join (epath, e->rel), *data = NULL;
          size_t flen = 0;
          if (from == NULL)
            abort ();
          bool failed = true;
          if (berth_env_read_file (env, from, CP_MAX, (void **) &data, &flen, &err) < 0)
            exit_code = cli_fail_err (err);
          else if ((r = write_host (to, data, flen, e->mode)) < 0)
            exit_code = cli_fail ("cp: cannot write %s: %s", to, strerror (-r));
          else
            failed = false;
          free (data);
          free (from);
          if (failed)
            {
              free (to);
              goto out;
            }
        }
      free (to);
    }
  /* The directories' modes, deepest first.  */
  for (size_t i = tree.n; i-- > 0;)
    if (tree.v[i].type == 'd')
      {
        char *to = path_join (target, tree.v[i].rel);
        if (to == NULL)
          abort ();
        if (chmod (to, tree.v[i].mode) < 0)
          {
            exit_code = cli_fail ("cp: cannot set the mode of %s: %s", to, strerror (errno));
            free (to);
            goto out;
          }
        free (to);
      }
  exit_code = 0;
out:
  berth_result_free (res);
  tree_free (&tree);
  free (q);
  free (copy);
  free (script);
  free (listing);
  free (list_path);
  free (target);
  return exit_code;
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
  if (epath[0] == '\0')
    epath = "./"; /* NAME: is the environment's cwd */
  if (upload)
    {
      r = read_host (hpath, &data, &len, &mode);
      if (r < 0 && r != -EISDIR)
        exit_code = cli_fail ("cp: cannot read %s: %s", hpath, strerror (-r));
      else if ((env = cli_open_named (ctx, name, &exit_code)) == NULL)
        ;
      else if (r == -EISDIR)
        exit_code = upload_tree (env, hpath, epath);
      else
        {
          bool into = names_dir (epath);
          target = into ? with_name_of (epath, hpath) : strdup (epath);
          r = berth_env_write_file (env, target ? target : epath, data, len, mode, &err);
          if (r < 0 && !into && berth_error_code (err) == EISDIR)
            {
              /* an existing directory there: the file goes into it */
              berth_error_free (err);
              err = NULL;
              free (target);
              target = with_name_of (epath, hpath);
              r = berth_env_write_file (env, target ? target : epath, data, len, mode, &err);
            }
          exit_code = r < 0 ? cli_fail_err (err) : 0;
        }
    }
  else if ((env = cli_open_named (ctx, name, &exit_code)) == NULL)
    ;
  else if (berth_env_read_file (env, epath, CP_MAX, (void **) &data, &len, &err) < 0)
    {
      if (berth_error_code (err) == EISDIR)
        {
          berth_error_free (err);
          exit_code = download_tree (env, epath, hpath);
        }
      else
        exit_code = cli_fail_err (err);
    }
  else
    {
      struct stat st;
      bool to_dir = names_dir (hpath) || (stat (hpath, &st) == 0 && S_ISDIR (st.st_mode));
      target = to_dir ? with_name_of (hpath, epath) : strdup (hpath);
      if ((r = write_host (target ? target : hpath, data, len, (mode_t) -1)) < 0)
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
