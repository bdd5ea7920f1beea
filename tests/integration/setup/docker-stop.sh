#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Undo tests/integration/setup/docker.sh: remove the containers of this
# test run (setup/docker-cleanup.sh: labelled berth=1, created since
# $BERTH_TEST_SINCE from a test image; never a user's environments), stop
# the registry and the dockerd it started (a daemon it did not start is left).
set -uo pipefail

state=${BERTH_TEST_STATE:-/var/lib/berth-test}
say() { printf 'setup/docker-stop: %s\n' "$*"; }

bash "$(dirname "${BASH_SOURCE[0]}")/docker-cleanup.sh"
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
