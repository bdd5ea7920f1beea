#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ssh-bench.sh: per-command latency of `berth bench -b ssh` against plain
# `ssh -o ControlPath=<warm master> host true`, in the same run.
# Budget (DESIGN 9): median ratio <= 1.2.  Prints berth bench's JSON and
# the verdict; exits 1 over budget.   N=<commands> (default 50).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BERTH=${BERTH:-${BERTH_BUILDDIR:-.}/berth}
N=${N:-50}
DIR=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
[ "$(id -u)" = 0 ] && bash "$SRC/tests/integration/setup/sshd.sh" >/dev/null
. "$DIR/env"
T=$(mktemp -d /tmp/berth-ssh-bench.XXXXXX)
trap '[ -n "${mpid:-}" ] && kill "$mpid" 2>/dev/null; rm -rf "$T"' EXIT
export XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
CFG=$BERTH_SSHD_CONFIG

# the baseline: a warm master, then N x `ssh ... true` through it
O=(-o BatchMode=yes -o IdentitiesOnly=yes -i "$BERTH_SSHD_KEY" -o UserKnownHostsFile="$BERTH_SSHD_KNOWN_HOSTS"
   -p "$BERTH_SSHD_PORT" -l "$BERTH_SSHD_USER")
ssh -M -N -f -o ControlPersist=120 -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST"
mpid=$(ssh -O check -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST" 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
PEER="ssh -T -o ControlMaster=no -o ControlPath=$T/cm ${O[*]} $BERTH_SSHD_HOST true"
# berth bench interleaves one execute and one peer run, N times each
out=$("$BERTH" --config "$CFG" bench -b ssh -n "$N" --peer "$PEER" --json)
ratio=$(printf '%s' "$out" | sed -n 's/.*"ratio_median":\([0-9.]*\).*/\1/p')
[ -n "$ratio" ] || { echo "ssh-bench: no ratio_median in: $out" >&2; exit 2; }
echo "$out"
awk -v r="$ratio" 'BEGIN { printf "ssh-bench: median ratio %.3f (budget 1.2): %s\n", r, (r <= 1.2 ? "ok" : "OVER BUDGET"); exit (r <= 1.2 ? 0 : 1) }'
