#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# agent-bench.sh: per-command `true` through libberth over berth-agent,
# over exec-per-command, and a peer, interleaved in one run per backend
# (tests/bench/bench-agent.c); ratios only.  Budgets (issue 13), median
# agent/peer:
#   local  <= 1.3   peer: bash -c true
#   docker <= 0.05  peer: docker exec <ctr> bash -c true
#   ssh    <= 0.4   peer: ssh -S <warm master> host true
#   bwrap  <= 0.3   peer: a fresh bwrap --unshare-all ... bash -c true
# Usage: agent-bench.sh [BACKEND...] (default: each one ready here).
# N=<commands> (default 30).  Exits 1 when any backend is over budget.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$SRC/tests/bench/bench-env.sh" agent-bench
BENCH=${BENCH_AGENT:-$B/tests/bench/bench-agent}
N=${N:-30}
E=ab$$
status=0
ready () { "$BERTH" backends 2>/dev/null | grep -q "^$1 *ready"; }

run_one ()
{
  local b=$1 budget=$2 cfg=$3
  shift 3
  "$BENCH" -n "$N" -b "$b" ${cfg:+-c "$cfg"} -B "$budget" -e "$E$b" -- "$@" || status=1
}

backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(local docker ssh bwrap)
for b in "${backends[@]}"; do
  case $b in
    local)
      CLEAN+=("\"$BERTH\" rm ${E}local >/dev/null 2>&1")
      run_one local 1.3 "" bash -c true
      ;;
    docker)
      command -v docker >/dev/null && docker image inspect berth-test:latest >/dev/null 2>&1 || { echo "agent-bench: docker: no engine with berth-test:latest"; continue; }
      cfg=$T/docker.yaml
      printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n' >"$cfg"
      CLEAN+=("\"$BERTH\" --config $cfg rm ${E}docker >/dev/null 2>&1")
      "$BERTH" --config "$cfg" exec -b docker -e "${E}docker" -- true || { status=1; continue; }
      cid=$(docker ps -q --no-trunc --filter label=berth=1 --filter "label=berth.env=${E}docker")
      run_one docker 0.05 "$cfg" docker exec "$cid" bash -c true
      ;;
    ssh)
      env=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
      [ -f "$env" ] || { echo "agent-bench: ssh: no test sshd"; continue; }
      . "$env"
      CLEAN+=("\"$BERTH\" --config $BERTH_SSHD_CONFIG rm ${E}ssh >/dev/null 2>&1")
      "$BERTH" --config "$BERTH_SSHD_CONFIG" exec -b ssh -e "${E}ssh" -- true || { status=1; continue; }
      run_one ssh 0.4 "$BERTH_SSHD_CONFIG" ssh -S "$XDG_RUNTIME_DIR/berth/${E}ssh/cm" -p "$BERTH_SSHD_PORT" "$BERTH_SSHD_USER@$BERTH_SSHD_HOST" true
      ;;
    bwrap)
      ready bwrap && command -v bwrap >/dev/null || { echo "agent-bench: bwrap: not ready here"; continue; }
      CLEAN+=("\"$BERTH\" rm ${E}bwrap >/dev/null 2>&1")
      run_one bwrap 0.3 "" bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp bash -c true
      ;;
    *) echo "agent-bench: unknown backend $b" >&2; status=2 ;;
  esac
done
exit $status
