#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libberth-example.sh: the EXAMPLE of libberth(3) is tests/unit/libberth-example.c
# (word for word), it builds against libberth's public header alone (make
# builds it), runs on the local backend, and prints what the page says.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/libtest.sh"
berth_test_home
page=$BERTH_SRCDIR/man/libberth.3
src=$BERTH_SRCDIR/tests/unit/libberth-example.c
prog=$BERTH_BUILDDIR/tests/unit/libberth-example

# block N: the Nth .EX ... .EE block of the EXAMPLE section, roff escapes undone
block ()
{
  awk -v want="$1" '/^\.SH EXAMPLE/ { on = 1; next } /^\.SH / { on = 0 }
    on && /^\.EX/ { n++; inb = 1; next } on && /^\.EE/ { inb = 0; next }
    on && inb && n == want { print }' "$page" | sed -e 's/\\e/\\/g' -e 's/\\-/-/g'
}

is "$(block 1)" "$(sed -n '/^#include/,$p' "$src")" "the page's example is tests/unit/libberth-example.c"
is "$(grep '^#include' "$src" | grep -v -e '^#include <std' | tr '\n' ' ')" "#include <berth/berth.h> " "it includes the public header alone"
out=$("$prog" 2>&1)
rc=$?
is "$rc" 0 "the example runs on the local backend and exits 0 (its second command's 3 is data)"
is "$out" "$(block 3)" "it prints what the page says"
check "it removed its named environment" bash -c "[ -z \"\$(ls -A '$XDG_STATE_HOME/berth/envs' 2>/dev/null)\" ]"
# Every function of the consumer API is in the page.
missing=
api=$(sed -n 's/^BERTH_EXPORT .*[ *]\(berth_[a-z_0-9]*\) (.*/\1/p' "$BERTH_SRCDIR/runtime/include/berth/berth.h" "$BERTH_SRCDIR/runtime/include/berth/plugins.h")
check "the headers' BERTH_EXPORT functions are found ($(wc -w <<<"$api"))" test "$(wc -w <<<"$api")" -gt 80
for f in $api; do
  grep -q "^\.BI \".*[ *]$f (" "$page" || missing="$missing $f"
done
is "$missing" "" "libberth(3) has a synopsis line for every BERTH_EXPORT function of berth.h and plugins.h"
done_testing
