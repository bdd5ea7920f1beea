/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* system-trees.h: which host directories may never become writable in a
 * jail.  One rule, used by the provider (to refuse before anything is
 * created) and by berth-jail (so the helper run by hand refuses too).  */
#ifndef BERTH_BWRAP_SYSTEM_TREES_H
#define BERTH_BWRAP_SYSTEM_TREES_H

/* The system tree that the absolute, canonical PATH is, contains or lies
   inside ("/", "/etc", "/usr", ...), or NULL when PATH may be writable.
   /var/tmp is not a system tree; /root is one unless it is (or contains)
   HOME, the caller's own canonical home directory (may be NULL).  */
const char *jail_system_tree (const char *path, const char *home);

#endif
