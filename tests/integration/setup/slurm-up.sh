#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# slurm-up.sh: start a private single-node Slurm cluster on this machine
# for the slurm backend's tests (idempotent; run as root).
#
#   BERTH_SLURM_DIR        its directory (default /tmp/berth-slurm)
#   BERTH_SLURM_CTLD_PORT  slurmctld's port (default 16817)
#   BERTH_SLURM_D_PORT     slurmd's port (default 16818)
#
# Everything lives under $DIR: a munge key generated here and a munged on
# its own socket ($DIR/munge/munge.socket, given to Slurm by AuthInfo),
# a minimal slurm.conf (one node = this machine with its real CPUs and
# memory, select/cons_tres, proctrack/linuxproc, task/none, no
# accounting; the partition `berth` oversubscribes its cores so that
# many environments -- allocations -- fit at once), slurmctld and slurmd
# with state, spool, logs and pid files under $DIR.  It waits until sinfo
# shows the node idle and writes
#   $DIR/env          SLURM_CONF=... and the rest, for the tests to source
#   $DIR/berth.yaml   a berth configuration selecting this cluster
# Needs slurm-wlm and munge (tools/bootstrap.sh installs them); stop it
# with slurm-down.sh.
set -eu

DIR=${BERTH_SLURM_DIR:-/tmp/berth-slurm}
CTLD_PORT=${BERTH_SLURM_CTLD_PORT:-16817}
D_PORT=${BERTH_SLURM_D_PORT:-16818}
PARTITION=berth

die () { echo "slurm-up.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (slurmd runs jobs as their users)"
for p in munged mungekey slurmctld slurmd; do
  command -v "$p" >/dev/null || [ -x "/usr/sbin/$p" ] || die "$p missing: apt-get install -y slurm-wlm munge"
done
for p in sinfo salloc srun scancel squeue scontrol; do
  command -v "$p" >/dev/null || die "$p missing: apt-get install -y slurm-wlm"
done
PATH=$PATH:/usr/sbin

install -d -m 0755 "$DIR"
# One at a time (tests call it concurrently).
exec 9>"$DIR.lock"
flock 9

install -d -m 0700 "$DIR/munge"
install -d -m 0755 "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run"

# Writes stdin to FILE when it differs (a running daemon's files stay).
put () {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat > "$tmp"
  chmod "${2:-0644}" "$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 1; fi
  mv -f "$tmp" "$1"
}

# Is the daemon of pid file $1 running with $2 in its command line?
running () {
  local pid
  [ -f "$1" ] || return 1
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}

# ---- munge: its own key and socket ----
MSOCK=$DIR/munge/munge.socket
[ -s "$DIR/munge/munge.key" ] || mungekey --create --keyfile="$DIR/munge/munge.key" --bits=1024 >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$DIR/munge/munge.key" bs=128 count=1 status=none
chmod 0600 "$DIR/munge/munge.key"
if ! running "$DIR/munge/munged.pid" "$MSOCK"; then
  rm -f "$MSOCK" "$MSOCK.lock"
  # --force: root-owned key and directories are fine for a private test
  # daemon (munged otherwise insists on a `munge` user's).
  munged 9>&- --force --socket="$MSOCK" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" \
    || die "munged did not start (see $DIR/log/munged.log)"
  for _ in $(seq 1 50); do [ -S "$MSOCK" ] && break; sleep 0.1; done
fi
[ -S "$MSOCK" ] || die "munged did not create $MSOCK (see $DIR/log/munged.log)"
chmod 0755 "$DIR/munge"   # users' srun must reach the socket (not the key: 0600)

# ---- slurm.conf: one node, this machine ----
HOST=$(hostname -s)
NODE=$(slurmd -C 2>/dev/null | head -1)
case $NODE in NodeName=*) ;; *) die "slurmd -C did not describe this machine: $NODE" ;; esac
# NodeName=HOST CPUs=... RealMemory=... ; bound to 127.0.0.1
NODE="$NODE NodeAddr=127.0.0.1 State=UNKNOWN"
config_changed=no
put "$DIR/slurm.conf" <<CONF && config_changed=yes
# berth test cluster (written by tests/integration/setup/slurm-up.sh)
ClusterName=berth
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$D_PORT
SrunPortRange=60001-60999
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
LaunchParameters=use_interactive_step
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=2
MinJobAge=5
MessageTimeout=5
$NODE
PartitionName=$PARTITION Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:32
CONF
export SLURM_CONF=$DIR/slurm.conf

# ---- the daemons ----
if running "$DIR/run/slurmctld.pid" slurmctld && [ $config_changed = yes ]; then
  scontrol reconfigure >/dev/null 2>&1 || true
fi
if ! running "$DIR/run/slurmctld.pid" slurmctld; then
  # -i: ignore state it cannot recover (a previous run's, another version)
  slurmctld -i -f "$DIR/slurm.conf" 9>&- || die "slurmctld did not start (see $DIR/log/slurmctld.log)"
fi
for _ in $(seq 1 100); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.1; done
scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld does not answer 'scontrol ping' (see $DIR/log/slurmctld.log)"
if ! running "$DIR/run/slurmd.pid" slurmd; then
  slurmd -f "$DIR/slurm.conf" -N "$HOST" 9>&- || die "slurmd did not start (see $DIR/log/slurmd.log)"
fi

# The node idle (or mixed/allocated: jobs of a run in progress).
state=
for _ in $(seq 1 150); do
  state=$(sinfo -h -n "$HOST" -o '%T' 2>/dev/null | head -1)
  case $state in
    "" | unknown* | not_responding* | future*) ;;
    down* | drain* | fail*) scontrol update nodename="$HOST" state=resume >/dev/null 2>&1 || true ;;
    *) break ;; # idle, mixed, allocated, completing: up
  esac
  sleep 0.2
done
case $state in "" | unknown* | not_responding* | future* | down* | drain* | fail*)
  die "node $HOST is '${state:-unknown}', not up (see $DIR/log/slurmd.log and $DIR/log/slurmctld.log)" ;;
esac

put "$DIR/env" <<ENV || true
SLURM_CONF='$DIR/slurm.conf'
BERTH_SLURM_DIR='$DIR'
BERTH_SLURM_PARTITION=$PARTITION
BERTH_SLURM_NODE=$HOST
BERTH_SLURM_MUNGE_SOCKET='$MSOCK'
BERTH_SLURM_CONFIG='$DIR/berth.yaml'
export SLURM_CONF
ENV

put "$DIR/berth.yaml" <<YAML || true
# berth configuration for the test cluster (tests/integration/setup/slurm-up.sh);
# commands need SLURM_CONF=$DIR/slurm.conf in their environment.
terminal:
  backend: slurm
  slurm_partition: $PARTITION
YAML

# A smoke test: an allocation and a step in it.
job=$(salloc --no-shell --immediate=20 --job-name=berth-setup-smoke -p "$PARTITION" 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p') || true
if [ -z "$job" ]; then
  job=$(squeue -h -n berth-setup-smoke -o %i | head -1)
fi
[ -n "$job" ] || die "salloc --no-shell failed on the test cluster (see $DIR/log/slurmctld.log)"
out=$(timeout 30 srun --jobid="$job" --overlap --ntasks=1 --quiet bash -c 'echo ok' 2>&1) || true
scancel "$job" 2>/dev/null || true
[ "$out" = ok ] || die "srun --jobid=$job --overlap failed: $out (see $DIR/log/slurmd.log)"
echo "slurm-up.sh: cluster berth on $HOST (partition $PARTITION, slurmctld :$CTLD_PORT); source $DIR/env"
