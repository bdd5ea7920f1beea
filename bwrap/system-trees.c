/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* system-trees.c: the host directories a jail never makes writable.  As
 * root a writable /etc (ld.so.preload, cron.d, sudoers.d) or /usr is a
 * host compromise from inside the jail; as a user it is at best a way to
 * plant code the host runs later.  The caller passes canonical paths
 * (realpath): /lib -> usr/lib and friends are then caught as /usr.  */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "system-trees.h"

static const char *const system_trees[] = {
  "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/var",
  "/opt", "/srv", "/proc", "/sys", "/dev", "/run", "/root", NULL,
};

/* PATH is TREE or lies below it.  */
static bool
is_under (const char *path, const char *tree)
{
  size_t n = strlen (tree);
  return strncmp (path, tree, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Any top-level /lib* directory (/lib, /lib64, /libexec on odd systems).  */
static bool
is_lib_tree (const char *path)
{
  return strncmp (path, "/lib", 4) == 0;
}

const char *
jail_system_tree (const char *path, const char *home)
{
  if (path == NULL || path[0] != '/' || path[1] == '\0')
    return "/";
  if (is_under (path, "/var/tmp"))
    return NULL;
  if (is_under (path, "/root") && home && is_under (home, "/root") && is_under (path, home))
    return NULL;
  for (size_t i = 0; system_trees[i]; i++)
    if (is_under (path, system_trees[i]))
      return system_trees[i];
  if (is_lib_tree (path))
    return "/lib*";
  return NULL;
}
