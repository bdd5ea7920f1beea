/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* jail-mount.c: the jail's filesystem view.
 *
 * Runs in the jail's init, in its fresh mount namespace, as root of its
 * user namespace.  Like bubblewrap: every source is resolved (opened) once
 * in the host view; a tmpfs base is pivoted to with the host at /oldroot;
 * the new root is assembled in /newroot; then a second pivot drops the
 * host tree.
 *
 *   /            host /, recursively read-only, nosuid, nodev -- one atomic
 *                mount_setattr (AT_RECURSIVE), or with --legacy-mount a walk
 *                of the mount table (libmount) remounting every submount
 *   /tmp         private tmpfs
 *   /dev         tmpfs: null zero full random urandom tty, devpts, shm
 *   /proc        fresh procfs of the jail's pid namespace; sys, sysrq-trigger,
 *                irq, bus read-only
 *   /run/user/U  private tmpfs (agent sockets, D-Bus, ...)
 *   workspace    writable bind (read-only for the restricted profile)
 *   binds        operator binds, in order
 *   sockets      every UNIX socket under /run (docker, podman, containerd,
 *                systemd, D-Bus...), /var/tmp, /var/lib, $HOME (3 levels)
 *                and $SSH_AUTH_SOCK covered by an empty file
 *   carve-outs   .git/hooks, .git/config, shell startup files... inside
 *                writable roots stay read-only where they exist
 *   hides        credential stores, the state directory: an empty read-only
 *                tmpfs (directories) or empty file (others), only where they
 *                exist, so no mount point is ever created on the host
 *
 * A missing bind destination is created only on a jail-private tmpfs.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "jail.h"
#include "system-trees.h"

const char *const jail_home_hides[] = {
  ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".npmrc", ".pypirc", ".pgpass",
  ".git-credentials", ".git-credential-cache", ".password-store", ".vault-token", ".boto", ".s3cmd",
  ".pki", ".terraform.d", ".config/gh", ".config/gcloud", ".config/hub", ".config/glab-cli",
  ".config/op", ".config/rclone", ".config/1Password", ".config/Bitwarden", ".config/keepassxc",
  ".config/git/credentials", ".local/share/keyrings", ".local/share/kwalletd", ".cargo/credentials",
  ".cargo/credentials.toml", ".m2/settings.xml", ".gradle/gradle.properties",
  ".cache/huggingface/token", ".huggingface", ".mozilla", ".config/google-chrome", ".config/chromium",
  /* AI agents' and berth's own credential stores */
  ".claude", ".claude.json", ".codex", ".gemini", ".config/berth", ".hermes/.env", ".hermes/auth.json",
  ".config/hermes", ".config/openai", ".config/anthropic",
  /* cloud and registry credentials */
  ".oci", ".config/containers/auth.json", ".config/doctl", ".config/hcloud", ".gem/credentials",
  ".terraformrc", ".config/sops", NULL,
};

/* Readable by the jail's uid when the caller is root (uid 0 maps to 0).  */
const char *const jail_system_hides[] = {
  "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/security/opasswd",
  "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key",
  "/etc/ssh/ssh_host_dsa_key", "/root/.ssh", "/root/.gnupg", "/root/.docker", "/root/.aws",
  "/root/.kube", "/root/.netrc", "/root/.git-credentials", NULL,
};

/* Inside a writable root, these stay read-only where they exist: they
   would run code on the host later (git hooks and config, shell startup
   files, direnv, editor tasks).  */
const char *const jail_protected_in_root[] = {
  ".git/hooks", ".git/config", ".gitmodules", ".envrc", ".vscode", ".idea", NULL,
};
const char *const jail_protected_in_home[] = {
  ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
  ".zprofile", ".zlogin", ".config/fish", ".pam_environment", ".config/environment.d", ".gitconfig",
  ".config/git", ".ssh/rc", ".config/autostart", ".config/systemd", NULL,
};

#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

static bool legacy_mode;
static struct jail_host_facts facts;

/* Die with the root cause when one explains the failure (AppArmor, a
   container's seccomp filter, a missing kernel feature), else DETAIL.  */
static _Noreturn void __attribute__ ((format (printf, 3, 4)))
die_step (int step, int err, const char *fmt, ...)
{
  char detail[4096];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (detail, sizeof detail, fmt, ap);
  va_end (ap);
  if (step == JAIL_STEP_PROC || ((err == EPERM || err == EACCES) && (facts.apparmor_restrict_userns == 1 || facts.seccomp_mode == 2))
      || err == ENOSYS)
    die ("%s (%s)", jail_diagnose (&facts, step, err), detail);
  die ("%s: %s", detail, strerror (err));
}

static void
xmount (const char *src, const char *dest, const char *type, unsigned long flags, const char *data)
{
  if (mount (src, dest, type, flags, data) < 0)
    die_step (JAIL_STEP_MOUNT, errno, "mount %s on %s", type ? type : src ? src : "(remount)", dest);
}

static char *
in_newroot (const char *path)
{
  return xasprintf (NEWROOT "%s", strcmp (path, "/") == 0 ? "" : path);
}

/* ---- recursive attribute changes ---- */

/* Legacy path: remount DEST and every mount below it with ADD flags on top
   of each mount's own flags (locked flags must be kept or the kernel says
   EPERM).  The mount table comes from libmount.  */
static void
remount_tree_legacy (const char *dest, unsigned long add)
{
  struct libmnt_table *tb;
  struct libmnt_iter *it;
  struct libmnt_fs *fs;
  size_t dlen = strlen (dest);

  tb = mnt_new_table_from_file (OLDROOT "/proc/self/mountinfo");
  if (tb == NULL)
    tb = mnt_new_table_from_file ("/proc/self/mountinfo");
  if (tb == NULL)
    die ("cannot parse the mount table (libmount)");
  it = mnt_new_iter (MNT_ITER_FORWARD);
  if (it == NULL)
    die ("out of memory");
  while (mnt_table_next_fs (tb, it, &fs) == 0)
    {
      const char *target = mnt_fs_get_target (fs);
      const char *vfs = mnt_fs_get_vfs_options (fs);
      unsigned long flags = 0;
      if (target == NULL || strncmp (target, dest, dlen) != 0 || (target[dlen] != '\0' && target[dlen] != '/'))
        continue;
      if (vfs)
        mnt_optstr_get_flags (vfs, &flags, mnt_get_builtin_optmap (MNT_LINUX_MAP));
      flags &= MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME;
      if (mount (NULL, target, NULL, MS_REMOUNT | MS_BIND | flags | add, NULL) < 0)
        {
          /* A mount hidden under another one is reported by path but
             cannot be reached; only the visible top matters.  EACCES: the
             path cannot even be looked up by the jail's root (a directory
             of an unmapped owner), so neither can any jailed command.  */
          if (errno == EINVAL || errno == ENOENT || errno == EACCES)
            continue;
          die_step (JAIL_STEP_MOUNT, errno, "cannot remount %s read-only", target);
        }
    }
  mnt_free_iter (it);
  mnt_unref_table (tb);
}

/* Bind the tree at SRCFD (an O_PATH fd resolved in the host view) on DEST,
   recursively, with ADD attributes (read-only, nosuid, nodev).  */
static void
bind_tree (int srcfd, const char *dest, bool ro)
{
  if (!legacy_mode)
    {
      /* Private: a clone stays in its source's peer group (a slave of the
         host), and a mount made later on the host would show up in the
         jail, writable.  */
      struct mount_attr attr = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
                                 .propagation = MS_PRIVATE };
      int t = open_tree (srcfd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      bool walk = false;
      if (t < 0 && errno == ENOSYS)
        legacy_mode = true; /* Linux < 5.2: bind and walk the mount table */
      else if (t < 0)
        die_step (JAIL_STEP_MOUNT, errno, "cannot clone the mount tree for %s", dest);
      else
        {
          /* One call, atomic across every submount (unlike a remount walk).  */
          if (mount_setattr (t, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
            {
              if (errno != ENOSYS)
                die_step (JAIL_STEP_MOUNT, errno, "cannot make %s%s nosuid,nodev", dest, ro ? " read-only," : "");
              walk = true; /* Linux < 5.12: attach, then walk */
            }
          if (move_mount (t, "", AT_FDCWD, dest, MOVE_MOUNT_F_EMPTY_PATH) < 0)
            die_step (JAIL_STEP_MOUNT, errno, "cannot attach the bind on %s", dest);
          close (t);
          if (walk)
            {
              xmount (NULL, dest, NULL, MS_REC | MS_PRIVATE, NULL);
              remount_tree_legacy (dest, MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0));
            }
          return;
        }
    }
  {
    char src[64];
    snprintf (src, sizeof src, OLDROOT "/proc/self/fd/%d", srcfd);
    xmount (src, dest, NULL, MS_BIND | MS_REC, NULL);
    xmount (NULL, dest, NULL, MS_REC | MS_PRIVATE, NULL);
    remount_tree_legacy (dest, MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0));
  }
}

/* ---- destinations ---- */

static dev_t private_devs[8];
static size_t n_private_devs;

static void
add_private (const char *path)
{
  struct stat sb;
  if (stat (path, &sb) == 0 && n_private_devs < sizeof private_devs / sizeof private_devs[0])
    private_devs[n_private_devs++] = sb.st_dev;
}

/* Make sure DEST (inside /newroot) exists with the right type.  A missing
   one is created only when its nearest existing ancestor is one of the
   jail's private tmpfs mounts: never a ghost file on the host.  */
static void
ensure_dest (const char *dest, bool dir, const char *what)
{
  char buf[PATH_MAX];
  struct stat sb;
  bool ok = false;
  if (stat (dest, &sb) == 0)
    {
      if (S_ISDIR (sb.st_mode) != dir)
        die ("%s: %s is %sa directory in the jail", what, dest + strlen (NEWROOT), dir ? "not " : "");
      return;
    }
  if (strlen (dest) >= sizeof buf)
    die ("%s: path too long", what);
  strcpy (buf, dest);
  for (;;)
    {
      char *slash = strrchr (buf, '/');
      if (slash == NULL || slash == buf)
        break;
      *slash = '\0';
      if (stat (buf, &sb) == 0)
        {
          for (size_t i = 0; i < n_private_devs; i++)
            if (private_devs[i] == sb.st_dev)
              ok = true;
          break;
        }
    }
  if (!ok)
    die ("%s: %s does not exist and would have to be created on the host; create it first",
         what, dest + strlen (NEWROOT));
  {
    char *parent = xstrdup (dest);
    *strrchr (parent, '/') = '\0';
    if (mkdir_parents (parent, 0755) < 0)
      die_errno (errno, "%s: cannot create %s in the jail", what, dest + strlen (NEWROOT));
    free (parent);
  }
  if (dir ? mkdir (dest, 0755) < 0 : mknod (dest, S_IFREG | 0644, 0) < 0)
    die_errno (errno, "%s: cannot create %s in the jail", what, dest + strlen (NEWROOT));
}

/* ---- sources, resolved once in the host view ---- */

struct source
{
  int fd;        /* O_PATH */
  char *path;    /* canonical host path */
  bool dir;
};

static void
open_source (const char *path, struct source *s, const char *what)
{
  char link[64], buf[PATH_MAX];
  struct stat sb;
  ssize_t n;
  if (path[0] != '/')
    die ("%s: %s is not an absolute path", what, path);
  s->fd = open (path, O_PATH | O_CLOEXEC);
  if (s->fd < 0)
    die_errno (errno, "%s: %s", what, path);
  if (fstat (s->fd, &sb) < 0)
    die_errno (errno, "%s: %s", what, path);
  snprintf (link, sizeof link, "/proc/self/fd/%d", s->fd);
  n = readlink (link, buf, sizeof buf - 1);
  if (n <= 0)
    die_errno (errno, "%s: cannot resolve %s", what, path);
  buf[n] = '\0';
  s->path = xstrdup (buf);
  s->dir = S_ISDIR (sb.st_mode);
}

/* A canonical destination: the resolved host path when it exists there,
   else the path as given (it must be absolute and free of "..").  */
static char *
canonical_dest (const char *dest, const char *what)
{
  char buf[PATH_MAX];
  if (dest[0] != '/' || strstr (dest, "/../") || (strlen (dest) >= 3 && strcmp (dest + strlen (dest) - 3, "/..") == 0))
    die ("%s: destination %s must be an absolute path without '..'", what, dest);
  if (realpath (dest, buf))
    return xstrdup (buf);
  return xstrdup (dest);
}

static bool
path_under (const char *path, const char *top)
{
  size_t n = strlen (top);
  if (strcmp (top, "/") == 0)
    return true;
  return strncmp (path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* ---- pieces ---- */

static void
mount_tmpfs (const char *dest, const char *mode, unsigned long flags)
{
  char data[64];
  snprintf (data, sizeof data, "mode=%s", mode);
  xmount ("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV | flags, data);
}

static void
setup_dev (void)
{
  static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty", NULL };
  static const char *const links[][2] = {
    { "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
    { "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" }, { "/proc/kcore", "core" },
  };
  mount_tmpfs (NEWROOT "/dev", "0755", MS_NOEXEC);
  for (size_t i = 0; nodes[i]; i++)
    {
      char *src = xasprintf (OLDROOT "/dev/%s", nodes[i]);
      char *dst = xasprintf (NEWROOT "/dev/%s", nodes[i]);
      int fd = open (dst, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (fd < 0)
        die_errno (errno, "cannot create %s", dst);
      close (fd);
      xmount (src, dst, NULL, MS_BIND, NULL);
      free (src);
      free (dst);
    }
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    {
      char *dst = xasprintf (NEWROOT "/dev/%s", links[i][1]);
      if (symlink (links[i][0], dst) < 0)
        die_errno (errno, "cannot create %s", dst);
      free (dst);
    }
  if (mkdir (NEWROOT "/dev/pts", 0755) < 0 || mkdir (NEWROOT "/dev/shm", 01777) < 0)
    die_errno (errno, "cannot create /dev/pts and /dev/shm");
  xmount ("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620");
  mount_tmpfs (NEWROOT "/dev/shm", "1777", 0);
  /* The node list is fixed: the tmpfs itself goes read-only.  */
  xmount (NULL, NEWROOT "/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755");
}

static void
setup_proc (void)
{
  static const char *const ro[] = { "sys", "sysrq-trigger", "irq", "bus", NULL };
  if (mount ("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
    die_step (JAIL_STEP_PROC, errno, "mount proc on /proc");
  for (size_t i = 0; ro[i]; i++)
    {
      char *p = xasprintf (NEWROOT "/proc/%s", ro[i]);
      if (access (p, F_OK) == 0)
        {
          xmount (p, p, NULL, MS_BIND | MS_REC, NULL);
          xmount (NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
        }
      free (p);
    }
}

static void
mask_with_empty_file (const char *dest)
{
  xmount ("/empty", dest, NULL, MS_BIND, NULL);
  xmount (NULL, dest, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

static unsigned n_socket_masks;

/* Cover every UNIX socket below DIR (inside /newroot), DEPTH levels.  */
static void
mask_sockets (const char *dir, int depth, const char *skip)
{
  DIR *d;
  struct dirent *e;
  if (depth < 0 || (skip && strcmp (dir, skip) == 0))
    return;
  d = opendir (dir);
  if (d == NULL)
    return;
  while ((e = readdir (d)))
    {
      char *p;
      struct stat sb;
      if (strcmp (e->d_name, ".") == 0 || strcmp (e->d_name, "..") == 0)
        continue;
      p = xasprintf ("%s/%s", dir, e->d_name);
      if (lstat (p, &sb) == 0)
        {
          if (S_ISSOCK (sb.st_mode) && n_socket_masks++ < 512)
            mask_with_empty_file (p);
          else if (S_ISDIR (sb.st_mode))
            mask_sockets (p, depth - 1, skip);
        }
      free (p);
    }
  closedir (d);
}

/* Re-bind P (inside /newroot) read-only over itself, when it exists and is
   not a symlink (a symlink's target is outside or protected elsewhere).  */
static void
protect (const char *p)
{
  struct stat sb;
  if (lstat (p, &sb) < 0 || S_ISLNK (sb.st_mode))
    return;
  xmount (p, p, NULL, MS_BIND | MS_REC, NULL);
  if (!legacy_mode)
    {
      struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
      if (mount_setattr (AT_FDCWD, p, AT_RECURSIVE, &attr, sizeof attr) == 0)
        return;
      if (errno != ENOSYS)
        die_step (JAIL_STEP_MOUNT, errno, "cannot make %s read-only", p + strlen (NEWROOT));
    }
  remount_tree_legacy (p, MS_RDONLY | MS_NOSUID | MS_NODEV);
}

static void
protect_root (const char *root, const char *home)
{
  for (size_t i = 0; jail_protected_in_root[i]; i++)
    {
      char *p = xasprintf (NEWROOT "%s/%s", strcmp (root, "/") == 0 ? "" : root, jail_protected_in_root[i]);
      protect (p);
      free (p);
    }
  if (home && path_under (home, root))
    for (size_t i = 0; jail_protected_in_home[i]; i++)
      {
        char *p = xasprintf (NEWROOT "%s/%s", home, jail_protected_in_home[i]);
        protect (p);
        free (p);
      }
}

static void
hide (const char *resolved)
{
  char *p = in_newroot (resolved);
  struct stat sb;
  /* Only what exists: a missing path needs no hiding, and creating a mount
     point for it would leave a ghost file on the host.  */
  if (lstat (p, &sb) == 0)
    {
      if (S_ISDIR (sb.st_mode))
        mount_tmpfs (p, "0755", MS_RDONLY | MS_NOEXEC);
      else if (!S_ISLNK (sb.st_mode))
        mask_with_empty_file (p);
    }
  free (p);
}

static void
add_resolved_hide (char ***list, size_t *n, const char *path)
{
  char buf[PATH_MAX];
  if (path == NULL || path[0] != '/' || realpath (path, buf) == NULL || strcmp (buf, "/") == 0)
    return;
  *list = realloc (*list, (*n + 2) * sizeof **list);
  if (*list == NULL)
    die ("out of memory");
  (*list)[(*n)++] = xstrdup (buf);
  (*list)[*n] = NULL;
}

void
jail_setup_mounts (const struct jail_opts *o, bool legacy)
{
  struct source ws = { .fd = -1 }, binds[JAIL_MAX_BINDS];
  char *bind_dest[JAIL_MAX_BINDS];
  char **hides = NULL, *run_user, *ssh_sock = NULL;
  size_t n_hides = 0;
  int rootfd;
  char home_buf[PATH_MAX];
  const char *home_real = NULL, *tree;

  legacy_mode = legacy;
  jail_host_facts_read ("/", &facts);

  /* 1. Resolve everything once, in the host view.  */
  if (o->home && o->home[0] == '/' && realpath (o->home, home_buf))
    home_real = home_buf;
  if (o->workspace)
    {
      open_source (o->workspace, &ws, "workspace");
      if (!ws.dir)
        die ("workspace %s is not a directory", o->workspace);
      if (o->profile != JAIL_PROFILE_RESTRICTED && (tree = jail_system_tree (ws.path, home_real)))
        die ("the workspace %s %s %s, which cannot be writable in the jail; pick a project directory or the "
             "restricted profile", ws.path, strcmp (tree, ws.path) == 0 ? "is the system directory" : "lies in the system directory", tree);
    }
  for (size_t i = 0; i < o->n_binds; i++)
    {
      open_source (o->binds[i].src, &binds[i], "bind");
      bind_dest[i] = canonical_dest (o->binds[i].dest, "bind");
      if (!o->binds[i].ro && (tree = jail_system_tree (binds[i].path, home_real)))
        die ("bind: the writable source %s is in the system directory %s; bind it read-only", binds[i].path, tree);
      if (strcmp (bind_dest[i], "/") == 0)
        die ("bind: cannot bind over /");
    }
  if (o->home && strcmp (o->home, "/") != 0)
    for (size_t i = 0; jail_home_hides[i]; i++)
      {
        char *p = xasprintf ("%s/%s", o->home, jail_home_hides[i]);
        add_resolved_hide (&hides, &n_hides, p);
        free (p);
      }
  for (size_t i = 0; jail_system_hides[i]; i++)
    add_resolved_hide (&hides, &n_hides, jail_system_hides[i]);
  for (size_t i = 0; i < o->n_hides; i++)
    {
      if (o->hides[i][0] != '/')
        die ("hide: %s is not an absolute path", o->hides[i]);
      add_resolved_hide (&hides, &n_hides, o->hides[i]);
    }
  add_resolved_hide (&hides, &n_hides, o->state);
  if (getenv ("SSH_AUTH_SOCK") && getenv ("SSH_AUTH_SOCK")[0] == '/')
    {
      char buf[PATH_MAX];
      if (realpath (getenv ("SSH_AUTH_SOCK"), buf))
        ssh_sock = xstrdup (buf);
    }
  /* A bind source inside a writable root could be replaced by a symlink
     from within the jail and be resolved to anything the next time the
     jail is built: refuse it.  */
  for (size_t i = 0; i < o->n_binds; i++)
    {
      if (ws.path && o->profile != JAIL_PROFILE_RESTRICTED && path_under (binds[i].path, ws.path))
        die ("bind: the source %s lies inside the writable workspace %s, where a command could swap it; "
             "bind something outside it", binds[i].path, ws.path);
      for (size_t j = 0; j < o->n_binds; j++)
        if (j != i && !o->binds[j].ro && path_under (binds[i].path, bind_dest[j]))
          die ("bind: the source %s lies inside the writable bind %s, where a command could swap it", binds[i].path,
               bind_dest[j]);
    }
  for (size_t i = 0; i < n_hides && ws.path; i++)
    if (path_under (ws.path, hides[i]))
      die ("workspace %s is inside the hidden path %s; pick another working directory", ws.path, hides[i]);

  /* 2. Private propagation: nothing we do reaches the host.  */
  if (mount (NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
    die_step (JAIL_STEP_MOUNT, errno, "cannot make / a slave mount");

  /* 3. A tmpfs base holding newroot/ and oldroot/.  */
  xmount ("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755");
  if (chdir ("/tmp") < 0 || mkdir ("newroot", 0755) < 0 || mkdir ("oldroot", 0755) < 0)
    die_errno (errno, "cannot prepare the jail's base directory");
  {
    int fd = open ("empty", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
    if (fd < 0)
      die_errno (errno, "cannot create the empty mask file");
    close (fd);
  }
  if (syscall (SYS_pivot_root, "/tmp", "/tmp/oldroot") < 0)
    die_step (JAIL_STEP_MOUNT, errno, "pivot_root to the jail's base");
  if (chdir ("/") < 0)
    die_errno (errno, "chdir /");

  /* 4. Host /, recursively read-only.  */
  rootfd = open (OLDROOT, O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (rootfd < 0)
    die_errno (errno, "open " OLDROOT);
  bind_tree (rootfd, NEWROOT, true);
  close (rootfd);

  /* 5. Private /tmp, /dev, /proc, /run/user/UID.  */
  mount_tmpfs (NEWROOT "/tmp", "1777", 0);
  add_private (NEWROOT "/tmp");
  setup_dev ();
  setup_proc ();
  run_user = xasprintf (NEWROOT "/run/user/%u", (unsigned) getuid ());
  if (access (NEWROOT "/run/user", F_OK) == 0)
    {
      /* Every user's runtime directory: agent sockets, D-Bus, pulse...  */
      mount_tmpfs (NEWROOT "/run/user", "0755", 0);
      add_private (NEWROOT "/run/user");
      if (mkdir (run_user, 0700) < 0)
        die_errno (errno, "cannot create %s", run_user + strlen (NEWROOT));
    }

  /* 6. Workspace and operator binds.  */
  if (ws.path)
    {
      char *dest = in_newroot (ws.path);
      ensure_dest (dest, true, "workspace");
      bind_tree (ws.fd, dest, o->profile == JAIL_PROFILE_RESTRICTED);
      free (dest);
      close (ws.fd);
    }
  for (size_t i = 0; i < o->n_binds; i++)
    {
      char *dest = in_newroot (bind_dest[i]);
      ensure_dest (dest, binds[i].dir, "bind");
      bind_tree (binds[i].fd, dest, o->binds[i].ro);
      free (dest);
      close (binds[i].fd);
    }

  /* 7. Code-execution vectors inside the writable roots: read-only.  */
  if (ws.path && o->profile != JAIL_PROFILE_RESTRICTED)
    protect_root (ws.path, home_real);
  for (size_t i = 0; i < o->n_binds; i++)
    if (!o->binds[i].ro && binds[i].dir)
      protect_root (bind_dest[i], home_real);

  /* 8. Sockets of host daemons and agents.  */
  mask_sockets (NEWROOT "/run", 5, NEWROOT "/run/user");
  {
    char buf[PATH_MAX];
    if (realpath ("/oldroot/var/run", buf) && strcmp (buf, "/oldroot/run") != 0)
      {
        char *p = xasprintf (NEWROOT "%s", buf + strlen (OLDROOT));
        mask_sockets (p, 5, NULL);
        free (p);
      }
  }
  /* Other usual homes of daemon sockets (a read-only mount does not stop
     connect(2)).  Sockets created on the host later, elsewhere, are not
     covered: see the backend documentation.  */
  mask_sockets (NEWROOT "/var/tmp", 3, NULL);
  mask_sockets (NEWROOT "/var/lib", 3, NULL);
  if (home_real && strcmp (home_real, "/") != 0)
    {
      char *p = in_newroot (home_real);
      mask_sockets (p, 3, NULL);
      free (p);
    }
  if (ssh_sock)
    {
      char *p = in_newroot (ssh_sock);
      struct stat sb;
      if (lstat (p, &sb) == 0 && S_ISSOCK (sb.st_mode))
        mask_with_empty_file (p);
      free (p);
    }

  /* 9. Credential stores and the state directory.  */
  for (size_t i = 0; i < n_hides; i++)
    hide (hides[i]);

  /* 10. Nothing mounted on the host from now on reaches the jail; drop the
     host tree and the base.  */
  if (mount (NULL, NEWROOT, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    die_step (JAIL_STEP_MOUNT, errno, "cannot make the jail's mounts private");
  if (mount (NULL, OLDROOT, NULL, MS_REC | MS_PRIVATE, NULL) < 0 || umount2 (OLDROOT, MNT_DETACH) < 0)
    die_step (JAIL_STEP_MOUNT, errno, "cannot detach the host tree");
  if (chdir (NEWROOT) < 0)
    die_errno (errno, "chdir " NEWROOT);
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    die_step (JAIL_STEP_MOUNT, errno, "pivot_root into the jail");
  if (umount2 (".", MNT_DETACH) < 0)
    die_step (JAIL_STEP_MOUNT, errno, "cannot detach the jail's base");
  if (chdir ("/") < 0)
    die_errno (errno, "chdir /");

  for (size_t i = 0; i < n_hides; i++)
    free (hides[i]);
  free (hides);
  free (run_user);
  free (ssh_sock);
}
