#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# slurm-bench.sh: the slurm backend against the Slurm commands a user would
# run by hand, on the test cluster of tests/integration/setup/slurm-up.sh,
# interleaved in one run.  Prints ratios (berth / by hand), never times:
#  1. per command: `berth bench -b slurm -e NAME` (execute of `true` in a
#     named environment, its allocation held) against
#     `srun --jobid=J --overlap --ntasks=1 --quiet bash -c true` in the
#     same allocation J;
#     and through libberth (tests/bench/bench-agent, when built): `true`
#     over berth-agent, over one srun per command (BERTH_TRANSPORT=exec's
#     path) and the same peer, interleaved;
#  2. the first command: `berth exec -b slurm -- true` (a throw-away
#     environment: allocate, run, cancel) against
#     `salloc --no-shell` + `srun --jobid=J ... bash -c true` + `scancel J`.
#   N=<commands> (default 30), M=<first commands> (default 10).
# The per-command budget with the in-environment agent is 0.2 (DESIGN 9);
# over the exec transport (one srun per command, this backend's fallback)
# it is reported, not enforced.  Exits 1 when the agent is over budget.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=${BENCH_AGENT:-${BERTH_BUILDDIR:-.}/tests/bench/bench-agent}
N=${N:-30}
M=${M:-10}
DIR=${BERTH_SLURM_DIR:-/tmp/berth-slurm}
[ "$(id -u)" = 0 ] && bash "$SRC/tests/integration/setup/slurm-up.sh" >/dev/null
. "$DIR/env"
export SLURM_CONF
. "$SRC/tests/bench/bench-env.sh" slurm-bench
NAME=bench$$
CLEAN+=("\"$BERTH\" --config \"$BERTH_SLURM_CONFIG\" rm $NAME >/dev/null 2>&1")
export XDG_CACHE_HOME=$T/cache
CFG=$BERTH_SLURM_CONFIG
P=$BERTH_SLURM_PARTITION

# 1. per command, in one allocation
"$BERTH" --config "$CFG" exec -b slurm -e "$NAME" -- true
J=$(squeue -h -n "berth-$NAME" -t RUNNING -o %i | head -1)
[ -n "$J" ] || { echo "slurm-bench: no allocation for berth-$NAME" >&2; exit 2; }
PEER="srun --jobid=$J --overlap --ntasks=1 --quiet bash -c true"
out=$("$BERTH" --config "$CFG" bench -b slurm -e "$NAME" -n "$N" --peer "$PEER" --json)
ratio=$(printf '%s' "$out" | sed -n 's/.*"ratio_median":\([0-9.]*\).*/\1/p')
[ -n "$ratio" ] || { echo "slurm-bench: no ratio_median in: $out" >&2; exit 2; }
transport=$("$BERTH" --config "$CFG" exec -b slurm -e "$NAME" --json -- true | sed -n 's/.*"transport":"\([a-z]*\)".*/\1/p')
lib=
if [ -x "$BENCH" ]; then
  # shellcheck disable=SC2086
  lib=$("$BENCH" -n "$N" -b slurm -c "$CFG" -B 0.2 -e "$NAME" -- $PEER) || lib_status=$?
fi

# 2. the first command: allocation included, interleaved
now () { date +%s%N; }
: > "$T/first"
for _ in $(seq 1 "$M"); do
  t0=$(now)
  "$BERTH" --config "$CFG" exec -b slurm -- true
  t1=$(now)
  j=$(salloc --no-shell -p "$P" -J "berth-bench-peer" 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
  [ -n "$j" ] || { echo "slurm-bench: salloc failed" >&2; exit 2; }
  srun --jobid="$j" --overlap --ntasks=1 --quiet bash -c true
  scancel "$j"
  t2=$(now)
  echo "$((t1 - t0)) $((t2 - t1))" >> "$T/first"
done
first=$(awk '{ printf "%.6f\n", $1 / $2 }' "$T/first" | sort -g \
  | awk '{ r[NR] = $1 } END { m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2; printf "%.3f", m }')

echo "$out"
[ -n "$lib" ] && echo "$lib"
echo "slurm-bench: per command (transport $transport): median ratio $ratio (berth execute / srun --overlap bash -c true, N=$N)"
echo "slurm-bench: first command: median ratio $first (berth exec, throw-away / salloc + srun + scancel, M=$M)"
awk -v r="$ratio" -v t="$transport" 'BEGIN { if (t == "agent") { printf "slurm-bench: agent budget 0.2: %s\n", (r <= 0.2 ? "ok" : "OVER BUDGET"); exit (r <= 0.2 ? 0 : 1) } }'
exit "${lib_status:-0}"
