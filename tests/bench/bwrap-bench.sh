#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bwrap-bench.sh: per-command latency of `berth bench -b bwrap` (one
# persistent jail, joined by every execute) against what other agents spawn
# per command -- a fresh bubblewrap sandbox:
#   bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all
#         --die-with-parent --new-session bash -c true
# interleaved in the same run.  Budget: median ratio <= 0.5.  Prints berth
# bench's JSON and the verdict; exits 1 over budget, 77 without bwrap(1).
# N=<commands> (default 50).  BUDGET=<ratio> overrides 0.5.
set -eu
BERTH=${BERTH:-${BERTH_BUILDDIR:-.}/berth}
N=${N:-50}
BUDGET=${BUDGET:-0.5}
BWRAP=$(command -v bwrap || true)
[ -n "$BWRAP" ] || { echo "bwrap-bench: bwrap(1) is not installed (apt-get install bubblewrap)" >&2; exit 77; }
export BERTH_LIBEXECDIR=${BERTH_LIBEXECDIR:-${BERTH_BUILDDIR:-.}/bwrap}
T=$(mktemp -d /tmp/berth-bwrap-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
export XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config XDG_CACHE_HOME=$T/cache
mkdir -p -m 0700 "$XDG_RUNTIME_DIR" "$T/ws"
cd "$T/ws"
PEER="$BWRAP --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent --new-session bash -c true"
out=$("$BERTH" bench -b bwrap -n "$N" --peer "$PEER" --json)
ratio=$(printf '%s' "$out" | sed -n 's/.*"ratio_median":\([0-9.]*\).*/\1/p')
[ -n "$ratio" ] || { echo "bwrap-bench: no ratio_median in: $out" >&2; exit 2; }
echo "$out"
awk -v r="$ratio" -v b="$BUDGET" 'BEGIN { printf "bwrap-bench: median ratio %.3f (budget %s): %s\n", r, b, (r <= b ? "ok" : "OVER BUDGET"); exit (r <= b ? 0 : 1) }'
