#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Undo tests/integration/setup/podman.sh: remove the containers left in
# its private storages, stop its two services (root and rootless, by the
# process groups it started: a podman it did not start is left) and the
# rootless pause process, give
# /dev/net/tun its mode back and remove the /run/user/UID it made.  The
# user berthpodman and the loaded image stay (the next run reuses them).
# Idempotent.
set -uo pipefail

state=${BERTH_TEST_STATE:-/var/lib/berth-test}/podman
run=/run/berth-podman
user=berthpodman
say() { printf 'setup/podman-stop: %s\n' "$*"; }

stop_group() {
  local f=$1 what=$2 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    # setsid made it a process group of its own (runuser + podman for
    # the rootless one)
    kill -TERM -- "-$pid" 2>/dev/null || kill "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
    say "stopped the $what podman service ($pid)"
  fi
  rm -f "$f"
}

if command -v podman >/dev/null; then
  if [ -S "$run/podman.sock" ]; then
    podman --url "unix://$run/podman.sock" rm -af -t 0 >/dev/null 2>&1 || true
  fi
  if [ -S "$run/rootless/podman.sock" ]; then
    podman --url "unix://$run/rootless/podman.sock" rm -af -t 0 >/dev/null 2>&1 || true
  fi
fi
stop_group "$state/root.pid" root
stop_group "$state/rootless.pid" rootless
rm -f "$run/podman.sock" "$run/rootless/podman.sock"
if [ -f "$state/tun-mode" ]; then
  chmod "$(cat "$state/tun-mode")" /dev/net/tun 2>/dev/null && say "restored the mode of /dev/net/tun"
  rm -f "$state/tun-mode"
fi
if id "$user" >/dev/null 2>&1; then
  xdg=/run/user/$(id -u "$user")
  # rootless podman's pause process (catatonit -P), which keeps the user
  # namespace: by its pid file, and only if it is that user's
  pause=$(cat "$xdg/libpod/tmp/pause.pid" 2>/dev/null)
  if [ -n "$pause" ] && [ "$(stat -c %U "/proc/$pause" 2>/dev/null)" = "$user" ]; then
    # it ignores SIGTERM
    kill -KILL "$pause" 2>/dev/null && say "stopped the rootless pause process ($pause)"
  fi
  if [ -f "$state/made-xdg" ]; then
    rm -rf "$xdg"
    rm -f "$state/made-xdg"
  fi
fi
exit 0
