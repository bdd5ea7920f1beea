#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docker-bench.sh: per-command latency of `berth bench -b docker` against
# `docker exec <ctr> bash -c true` (the CLI) on the same container, in the
# same run (interleaved by berth bench).  Budget (DESIGN 9): median ratio
# <= 0.75.  Also reports the container-create time (a fresh throw-away
# environment's first command) against `docker run -d` + `docker exec`.
# Prints berth bench's JSON and the verdict; exits 1 over budget.
# N=<commands> (default 30).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BERTH=${BERTH:-${BERTH_BUILDDIR:-.}/berth}
N=${N:-30}
[ "$(id -u)" = 0 ] && bash "$SRC/tests/integration/setup/docker.sh" >/dev/null
T=$(mktemp -d /tmp/berth-docker-bench.XXXXXX)
E=bench$$
trap '"$BERTH" --config "$CFG" rm "$E" >/dev/null 2>&1; rm -rf "$T"' EXIT
export XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
CFG=$T/berth.yaml
printf 'terminal:\n  backend: docker\n  docker_image: berth-test:latest\n  container_memory: 512\n' > "$CFG"

ms () { date +%s%N; }
# container create: berth's first command in a fresh environment vs the CLI
t0=$(ms); "$BERTH" --config "$CFG" exec -e "$E" -- true; t1=$(ms)
create_berth=$(( (t1 - t0) / 1000000 ))
t0=$(ms)
cid=$(docker run -d --init --network none berth-test:latest sleep infinity)
docker exec "$cid" bash -c true
t1=$(ms)
docker rm -f "$cid" >/dev/null
create_cli=$(( (t1 - t0) / 1000000 ))

cid=$(docker ps -q --no-trunc --filter label=berth=1 --filter "label=berth.env=$E")
[ -n "$cid" ] || { echo "docker-bench: no container for $E" >&2; exit 2; }
out=$("$BERTH" --config "$CFG" bench -b docker -e "$E" -n "$N" --peer "docker exec $cid bash -c true" --json)
ratio=$(printf '%s' "$out" | sed -n 's/.*"ratio_median":\([0-9.]*\).*/\1/p')
[ -n "$ratio" ] || { echo "docker-bench: no ratio_median in: $out" >&2; exit 2; }
echo "$out"
echo "docker-bench: first command in a new environment (create + start + exec): berth ${create_berth} ms, docker run -d + docker exec ${create_cli} ms"
awk -v r="$ratio" 'BEGIN { printf "docker-bench: median ratio %.3f (budget 0.75): %s\n", r, (r <= 0.75 ? "ok" : "OVER BUDGET"); exit (r <= 0.75 ? 0 : 1) }'
