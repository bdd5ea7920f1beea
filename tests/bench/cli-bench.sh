#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cli-bench.sh: DESIGN §9's "through the CLI" column -- one
# `berth exec -e NAME -- true` process per command on a named environment
# (the way a person or a script runs berth), against what a user would run
# instead, interleaved round by round in one run; ratios only (median and
# p90 of the per-round berth / peer), never bare times.
#   local  <= 2.5   bash -c true
#   bwrap  <= 0.6   a fresh bwrap --unshare-all ... bash -c true
#   docker <= 0.15  docker exec <ctr> bash -c true
#   ssh    <= 0.8   ssh -S <warm master> host true
# Usage: cli-bench.sh [BACKEND...] (default: local bwrap docker ssh).
# N=<rounds> (default 50).  Exits 1 when a median is over its budget.
# Needs root for docker and ssh (the shared test daemons).
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/bench/bench-env.sh" cli-bench
N=${N:-50}
E=cb$$
status=0
# the real binary, not libtool's wrapper script
[ -x "$B/.libs/berth" ] && { BERTH=$(cd "$B" && pwd)/.libs/berth; export LD_LIBRARY_PATH=$(cd "$B" && pwd)/.libs; }

# us CMD...: microseconds CMD took (its output discarded)
us () { local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || return 1; local t1=$EPOCHREALTIME; echo $((${t1/./} - ${t0/./})); }

bench_one ()
{
  local b=$1 budget=$2 cfg=$3
  shift 3
  local berth_cmd=("$BERTH" --config "$cfg" exec -e "$E$b" -- true)
  CLEAN+=("\"$BERTH\" --config $cfg rm $E$b >/dev/null 2>&1")
  "$BERTH" --config "$cfg" exec -b "$b" -e "$E$b" -- true >/dev/null || { echo "cli-bench: $b: could not make $E$b" >&2; status=1; return; }
  local r x y
  for r in $(seq "$N"); do
    if (( r % 2 )); then x=$(us "${berth_cmd[@]}") && y=$(us "$@"); else y=$(us "$@") && x=$(us "${berth_cmd[@]}"); fi || { echo "cli-bench: $b: a run failed" >&2; status=1; return; }
    echo "$x $y"
  done > "$T/$b"
  awk '{ printf "%.6f\n", $1 / $2 }' "$T/$b" | sort -g >"$T/$b.r"
  local n med p90
  n=$(wc -l <"$T/$b.r")
  med=$(sed -n "$(((n + 1) / 2))p" "$T/$b.r")
  p90=$(sed -n "$(((n * 9 + 9) / 10))p" "$T/$b.r")
  awk -v b="$b" -v m="$med" -v p="$p90" -v budget="$budget" 'BEGIN {
      printf "cli-bench: %-6s median berth/peer %.3f  p90 %.3f  (budget %s: %s)\n", b, m, p, budget, (m <= budget ? "ok" : "OVER BUDGET");
      exit (m <= budget ? 0 : 1) }' || status=1
}

printf 'terminal: {}\n' >"$T/none.yaml"
backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(local bwrap docker ssh)
for b in "${backends[@]}"; do
  case $b in
    local) bench_one local 2.5 "$T/none.yaml" bash -c true ;;
    bwrap) bench_one bwrap 0.6 "$T/none.yaml" bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp bash -c true ;;
    docker)
      bash "$SRC/tests/integration/setup/docker.sh" >/dev/null || { status=1; continue; }
      printf 'terminal:\n  docker_image: berth-test:latest\n' >"$T/docker.yaml"
      ctr=$(docker run -d --rm --network none berth-test:latest sleep 3600)
      CLEAN+=("docker rm -f $ctr >/dev/null 2>&1")
      bench_one docker 0.15 "$T/docker.yaml" docker exec "$ctr" bash -c true ;;
    ssh)
      bash "$SRC/tests/integration/setup/sshd.sh" >/dev/null || { status=1; continue; }
      . /tmp/berth-sshd/env
      O=(-o BatchMode=yes -o IdentitiesOnly=yes -i "$BERTH_SSHD_KEY" -o UserKnownHostsFile="$BERTH_SSHD_KNOWN_HOSTS" -p "$BERTH_SSHD_PORT" -l "$BERTH_SSHD_USER")
      ssh -M -N -f -o ControlPersist=600 -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST"
      CLEAN+=("ssh -O exit -o ControlPath=$T/cm $BERTH_SSHD_HOST >/dev/null 2>&1")
      bench_one ssh 0.8 "$BERTH_SSHD_CONFIG" ssh -T -o ControlMaster=no -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST" true ;;
    *) echo "cli-bench: unknown backend $b" >&2; status=2 ;;
  esac
done
exit $status
