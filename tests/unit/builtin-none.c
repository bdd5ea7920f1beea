/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in table of unit tests: empty, tests register their own.  */
#include "config.h"

#include "berth-private.h"

const berth_provider_ops *const berth_builtin_providers[] = { NULL };
