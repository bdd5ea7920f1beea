/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* snapshot.h: the exported state carried from one command to the next.
   bash prints it (`export -p`); berth drops the entries whose names must
   never be persisted before the text is kept or written anywhere.  */
#ifndef BERTH_SNAPSHOT_H
#define BERTH_SNAPSHOT_H

#include "util.h"

typedef bool (*berth_name_filter) (void *userdata, const char *name);

/* Copy the `declare -x NAME[=VALUE]` entries of TEXT whose NAME DROP
   rejects; values may span lines ("..." or $'...' quoting).  Anything that
   is not such an entry ends the copy (fail closed).  */
BERTH_INTERNAL char *berth_snapshot_filter (const char *text, size_t len, berth_name_filter drop, void *userdata);
/* SNAPSHOT (its entries, then what follows them: the functions) without
   the entries the command's starting environment ENVIRON gives it
   already, exactly as bash would print them: sourcing fifty of those is
   a third of a wrapper's own work.  */
BERTH_INTERNAL char *berth_snapshot_minus_environ (const char *snapshot, const char *const *environ_);

#endif
