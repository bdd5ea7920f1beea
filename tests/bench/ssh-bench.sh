#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# ssh-bench.sh: per-command latency of `berth bench -b ssh` against plain
# `ssh -o ControlPath=<warm master> host true`, in the same run.
# Budget (DESIGN 9): median ratio <= 1.2.  Prints one JSON line; exits 1
# over budget.   N=<commands> (default 50).
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
median_ms () { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run_baseline () {
  for _ in $(seq 1 "$N"); do
    s=$(date +%s%N)
    ssh -T -o ControlMaster=no -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST" true
    echo $(( ($(date +%s%N) - s) / 1000 ))
  done | median_ms
}
# interleave: baseline, berth, baseline (noise on a shared machine)
base1=$(run_baseline)
bjson=$("$BERTH" --config "$CFG" bench -b ssh -n "$N" --json)
base2=$(run_baseline)
bmed=$(printf '%s' "$bjson" | sed -n 's/.*"median_ms": *\([0-9.]*\).*/\1/p')
[ -n "$bmed" ] || { echo "ssh-bench: cannot read median_ms from: $bjson" >&2; exit 2; }
awk -v b1="$base1" -v b2="$base2" -v m="$bmed" 'BEGIN {
  base = (b1 + b2) / 2000.0;  # us -> ms
  r = m / base;
  printf "{\"backend\":\"ssh\",\"berth_median_ms\":%.2f,\"ssh_true_median_ms\":%.2f,\"ratio\":%.3f,\"budget\":1.2,\"ok\":%s}\n", m, base, r, (r <= 1.2 ? "true" : "false");
  exit (r <= 1.2 ? 0 : 1) }'
