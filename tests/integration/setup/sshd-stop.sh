#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sshd-stop.sh: stop the test sshd started by sshd.sh (its listener only,
# by the pid in its PidFile).  Idempotent.
set -eu
DIR=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
[ -f "$DIR/sshd.pid" ] || exit 0
pid=$(cat "$DIR/sshd.pid")
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
   && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$DIR/sshd_config"; then
  kill "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
fi
rm -f "$DIR/sshd.pid"
