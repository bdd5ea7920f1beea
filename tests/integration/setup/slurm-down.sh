#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# slurm-down.sh: stop the test cluster slurm-up.sh started: its jobs are
# cancelled, then slurmd, slurmctld and munged go, each by the pid in its
# pid file under $BERTH_SLURM_DIR (default /tmp/berth-slurm) and only
# when that process is the one slurm-up.sh started.  Idempotent.
set -eu
DIR=${BERTH_SLURM_DIR:-/tmp/berth-slurm}
PATH=$PATH:/usr/sbin
[ -d "$DIR" ] || exit 0
exec 9>"$DIR.lock"
flock 9

# Is the daemon of pid file $1 running with $2 in its command line?
pid_of () {
  local pid
  [ -f "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2" && echo "$pid"
}
stop () { # stop PIDFILE PATTERN
  local pid
  pid=$(pid_of "$1" "$2") || { rm -f "$1"; return 0; }
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

# Leftover jobs (every job of this private cluster is a test's).
if [ -f "$DIR/slurm.conf" ] && pid_of "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
  SLURM_CONF=$DIR/slurm.conf timeout 20 scancel --partition=berth --full 2>/dev/null || true
  for _ in $(seq 1 50); do
    [ -z "$(SLURM_CONF=$DIR/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
    sleep 0.2
  done
fi
stop "$DIR/run/slurmd.pid" "slurmd -f $DIR/slurm.conf"
stop "$DIR/run/slurmctld.pid" "slurmctld -i -f $DIR/slurm.conf"
stop "$DIR/munge/munged.pid" "$DIR/munge/munge.socket"
exit 0
