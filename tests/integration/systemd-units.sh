#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# systemd-units.sh: the berth-gc user unit and timer built here pass
# systemd-analyze verify, and the commands the service runs work.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze is not installed (package systemd)"
unit=$BERTH_BUILDDIR/systemd/berth-gc.service
timer=$BERTH_SRCDIR/systemd/berth-gc.timer
check "the build made berth-gc.service" test -s "$unit"
bindir=$(sed -n 's|^ExecStart=\(.*\)/berth gc$|\1|p' "$unit")
check "its first ExecStart is \$(bindir)/berth gc ($bindir)" test -n "$bindir"
if "$BERTH" help reap >/dev/null 2>&1; then
  check "berth has reap: the service runs berth reap --idle" grep -q '^ExecStart=.*/berth reap --idle ${BERTH_REAP_IDLE}$' "$unit"
else
  check "berth has no reap yet: the reap line is a comment saying so" grep -q '^# (no berth reap in this berth yet) ExecStart=' "$unit"
fi
check "the timer is daily and persistent" bash -c "grep -qx 'OnCalendar=daily' '$timer' && grep -qx 'Persistent=true' '$timer'"

# Verified with ExecStart pointing at the berth built here (verify checks
# that the program exists).
mkdir -p "$TEST_TMP/units"
sed "s|^\(#[^E]*\)\?ExecStart=$bindir/berth|\1ExecStart=$BERTH|" "$unit" >"$TEST_TMP/units/berth-gc.service"
cp "$timer" "$TEST_TMP/units/"
out=$(cd "$TEST_TMP/units" && systemd-analyze verify --man=no --user ./berth-gc.service ./berth-gc.timer 2>&1)
rc=$?
is "$rc:$out" "0:" "systemd-analyze verify --user: no complaint"

# What the service runs, as it runs it (Environment= applied).
eval "$(sed -n 's/^Environment=/export /p' "$TEST_TMP/units/berth-gc.service")"
n=0
while read -r cmd; do
  n=$((n + 1))
  eval "set -- $cmd"
  "$@" >"$TEST_TMP/out" 2>&1
  is "$?" 0 "ExecStart $n ($cmd) exits 0"
done < <(sed -n 's/^ExecStart=//p' "$TEST_TMP/units/berth-gc.service")
check "the service runs at least berth gc" test "$n" -ge 1
done_testing
