#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Undo tests/integration/setup/docker.sh: remove berth containers, stop the
# registry and the dockerd it started (a daemon it did not start is left).
set -uo pipefail

state=${BERTH_TEST_STATE:-/var/lib/berth-test}
say() { printf 'setup/docker-stop: %s\n' "$*"; }

if docker version >/dev/null 2>&1; then
  ids=$(docker ps -aq --filter label=berth=1)
  [ -n "$ids" ] && docker rm -f $ids >/dev/null && say "removed berth containers"
fi
stop_pid() {
  local f=$1 what=$2 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    say "stopped $what ($pid)"
  fi
  rm -f "$f"
}
stop_pid "$state/registry.pid" docker-registry
stop_pid "$state/dockerd.pid" dockerd
exit 0
