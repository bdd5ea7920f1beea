#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The slurm backend against the private single-node cluster of
# tests/integration/setup/slurm-up.sh: environments are allocations (two
# named environments are two, found again, recreated when one ended, none
# left after rm or a throw-away command), commands go through berth-agent
# serving from a step of its own (berth-agent-HASH) that outlives each berth
# process and goes with rm, a berth killed mid-command takes its command
# along within 2 s, a timed-out command leaves no step but the agent's, an
# allocation cancelled under a running command is an error
# (125), a stopped slurmctld is one clear error within the timeout, and gc
# cancels the allocations whose berth is gone.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/slurm-lib.sh"
berth_test_home
command -v jq >/dev/null || skip_all "jq is not installed"
TAG=s$$
bx () { "$BERTH" exec -b slurm "$@"; }
field () { jq -r ".$2" <<<"$1"; }
# live_jobs NAME: ids of the allocations named NAME that are not over
live_jobs () { squeue -h -n "$1" -t PENDING,RUNNING,CONFIGURING,SUSPENDED -o %i 2>/dev/null | sort; }
# gone NAME: within 15 s, no job of that name in squeue at all (not even COMPLETING)
gone ()
{
  for _ in $(seq 1 75); do
    [ -z "$(squeue -h -n "$1" -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}
# job_over ID: within 15 s, job ID holds no allocation any more
job_over ()
{
  for _ in $(seq 1 75); do
    [ -z "$(squeue -h -j "$1" -t PENDING,RUNNING,CONFIGURING,SUSPENDED -o %i 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}
now_ms () { echo $(($(date +%s%N) / 1000000)); }
# no_proc PATTERN: no process has PATTERN in its command line
no_proc () { ! pgrep -f "$1" >/dev/null; }

# --- two named environments are two allocations, found again ---
A=a$TAG B=b$TAG
is "$(field "$(bx --json -e "$A" -- 'cd /tmp; export V=1')" exit_code)" 0 "named environment $A"
is "$(field "$(bx --json -e "$B" -- true)" exit_code)" 0 "named environment $B"
ja=$(live_jobs "berth-$A") jb=$(live_jobs "berth-$B")
check "$A is one allocation named berth-$A" test "$(wc -w <<<"$ja")" = 1
check "$B is one allocation named berth-$B" test "$(wc -w <<<"$jb")" = 1
check "... two different allocations" test "$ja" != "$jb"
r=$(bx --json -e "$A" -- 'echo "$PWD $V $SLURM_JOB_ID"')
is "$(field "$r" output)" "/tmp 1 $ja" "the next command runs in the same allocation, with the state kept"
is "$(field "$r" environment_recreated)" false "... not recreated"
is "$(live_jobs "berth-$A")" "$ja" "... and no second allocation"

# --- berth-agent: one step of its own per allocation ---
# agent_steps JOB: how many steps named berth-agent-HASH job JOB has
agent_steps () { squeue -h -s -j "$1" -o '%i %j' 2>/dev/null | awk '$2 ~ /^berth-agent-/' | wc -l | tr -d ' '; }
is "$(field "$r" transport)" agent "commands go through berth-agent"
is "$(agent_steps "$ja")" 1 "... serving from one step of its own (berth-agent-HASH)"
is "$(field "$(bx --json -e "$A" -- 'echo $SLURM_STEP_ID')" output)" "$(squeue -h -s -j "$ja" -o '%i %j' | awk '$2 ~ /^berth-agent-/ {sub(/.*\./, "", $1); print $1}')" \
  "... where the commands run"
is "$(agent_steps "$ja")" 1 "... the same one for the next berth process"
# a command through the agent costs frames, not delayed ACKs: Slurm's
# step I/O has Nagle on (44 ms for each frame over 1 KiB before berth set
# TCP_NODELAY on srun's connection)
med=$("$BERTH" bench -b slurm -e "$A" -n 10 --peer true --json | jq -r '.berth.median_ms')
check "a command through the agent takes no delayed ACK (median ${med} ms < 25)" awk -v m="$med" 'BEGIN { exit !(m > 0 && m < 25) }'
# a berth killed mid-command: its command goes within 2 s (its relay step
# ends with its srun, the agent kills what the controller left)
"$BERTH" exec -b slurm -e "$A" -- "exec -a berth-k9-$TAG sleep 300" >/dev/null 2>&1 &
bp=$!
for _ in $(seq 1 100); do pgrep -f "berth-k9-$TAG" >/dev/null && break; sleep 0.1; done
check "a command runs ($(pgrep -f "berth-k9-$TAG" | head -n1))" pgrep -f "berth-k9-$TAG"
kill -9 "$bp"
t0=$(now_ms)
wait "$bp" 2>/dev/null
for _ in $(seq 1 40); do pgrep -f "berth-k9-$TAG" >/dev/null || break; sleep 0.1; done
el=$(($(now_ms) - t0))
check "berth killed with -9 mid-command: the command is gone" no_proc "berth-k9-$TAG"
check "... within 2 s ($el ms)" test "$el" -lt 2000
# a background process outlives the berth that started it
pid=$("$BERTH" start -e "$A" -- "exec -a berth-bg-$TAG sleep 300")
sleep 1
check "a background process outlives the berth that started it" pgrep -f "berth-bg-$TAG"
is "$("$BERTH" ps -e "$A" --json | jq -r --arg id "$pid" '.[] | select(.id == $id) | .state')" running "... and another berth sees it running"
"$BERTH" stop -e "$A" "$pid"

# --- a timed-out command: the tree and the step go ---
t0=$(now_ms)
r=$(bx --json -e "$A" -t 2 -- 'sleep 300')
is "$(field "$r" exit_code)" 124 "a timeout exits 124"
check "... within 8 s ($(($(now_ms) - t0)) ms)" test $(($(now_ms) - t0)) -lt 8000
steps=
for _ in $(seq 1 25); do
  steps=$(squeue -h -s -j "$ja" -o '%i %j' 2>/dev/null | awk '$2 !~ /^berth-agent-/ {print $1}')
  [ -z "$steps" ] && break
  sleep 0.2
done
is "$steps" "" "... and no step of it is left in the allocation but the agent's"

# --- an allocation cancelled from outside under a running command ---
( sleep 2; scancel "$jb" ) &
t0=$(now_ms)
bx -e "$B" -- 'echo started; sleep 60; echo not-reached' >"$TEST_TMP/c.out" 2>"$TEST_TMP/c.err"
st=$?
wait
is "$st" 125 "a command whose allocation is cancelled under it is an error (125), not a result"
like "$(cat "$TEST_TMP/c.err")" "*allocation $jb ended*" "... saying the allocation ended"
is "$(wc -l <"$TEST_TMP/c.err" | tr -d ' ')" 1 "... in one line"
check "... promptly ($(($(now_ms) - t0)) ms)" test $(($(now_ms) - t0)) -lt 20000
r=$(bx --json -e "$B" -- 'echo $SLURM_JOB_ID')
is "$(field "$r" environment_recreated)" true "the next command recreates the environment"
jb2=$(live_jobs "berth-$B")
check "... in a new allocation ($jb -> $jb2)" test -n "$jb2" -a "$jb2" != "$jb"
is "$(field "$r" output)" "$jb2" "... where it runs"

# --- rm: no job left ---
"$BERTH" rm "$A" "$B"
is "$?" 0 "berth rm $A $B"
check "rm leaves no job of $A in squeue" gone "berth-$A"
check "rm leaves no job of $B in squeue" gone "berth-$B"
for _ in $(seq 1 50); do pgrep -f "srun --jobid=$ja .*--job-name=berth-agent-" >/dev/null || break; sleep 0.1; done
check "... nor the agent's step (its srun ended)" no_proc "srun --jobid=$ja .*--job-name=berth-agent-"

# --- a throw-away environment: its allocation goes with the command ---
r=$(bx --json -- 'echo $SLURM_JOB_ID')
t0=$(now_ms)
tj=$(field "$r" output)
check "a throw-away command runs in an allocation ($tj)" test -n "$tj"
check "... which is gone after it" gone "berth-$(field "$r" env)"
# its steps end as Slurm wants them to (srun told, not killed: else
# slurmstepd waits seconds to tell it, the job stays COMPLETING and the
# node takes no new allocation meanwhile)
el=$(($(now_ms) - t0))
check "... at once, COMPLETING included ($el ms < 1500)" test "$el" -lt 1500

# --- gc: allocations whose berth was killed ---
"$BERTH" exec -b slurm -- 'sleep 300' >/dev/null 2>&1 &
bp=$!
for _ in $(seq 1 100); do
  gj=$(squeue -h -u "$(id -u)" -o '%i %k' | awk -v p="$bp" '$2 == "berth" && $3 == "tmp" && $5 == p {print $1}')
  [ -n "$gj" ] && break
  sleep 0.1
done
check "a throw-away command's allocation ($gj) names its berth (pid $bp)" test -n "$gj"
kill -9 "$bp"
wait "$bp" 2>/dev/null
# Its state directory goes too: only the allocation's comment says whose it was.
rm -rf "$XDG_STATE_HOME"/berth/envs/*
check "... is still there once its berth is killed" test -n "$(squeue -h -j "$gj" -t RUNNING -o %i 2>/dev/null)"
"$BERTH" gc >"$TEST_TMP/gc.out" 2>&1
is "$?" 0 "berth gc"
check "... cancels it" job_over "$gj"
# Its state directory kept: the runtime's gc finds the environment, kills
# its command and removes it through the backend.
"$BERTH" exec -b slurm -- 'sleep 300' >/dev/null 2>&1 &
bp=$!
gj=
for _ in $(seq 1 100); do
  gj=$(squeue -h -u "$(id -u)" -o '%i %k' | awk -v p="$bp" '$2 == "berth" && $3 == "tmp" && $5 == p {print $1}')
  [ -n "$gj" ] && break
  sleep 0.1
done
check "another throw-away allocation ($gj)" test -n "$gj"
kill -9 "$bp"
wait "$bp" 2>/dev/null
"$BERTH" gc >"$TEST_TMP/gc2.out" 2>&1
is "$?" 0 "berth gc, the environment's state kept"
check "... cancels it" job_over "$gj"
like "$(cat "$TEST_TMP/gc2.out")" "*slurm*" "... and says so"
check "... leaving no environment behind" test -z "$(ls "$XDG_STATE_HOME"/berth/envs 2>/dev/null)"
N=n$TAG
bx -e "$N" -- true >/dev/null
"$BERTH" gc >/dev/null 2>&1
check "gc leaves a named environment's allocation" test -n "$(live_jobs "berth-$N")"

# --- slurmctld stopped: one clear error within the timeout ---
# Other tests use the cluster too: they hold it shared, this part alone.
flock -u 8
flock -x -w 1200 8 || { not_ok "the test cluster to myself within 1200 s (another test holds $SLURM_DIR/users.lock)"; done_testing; }
# No job may be ending meanwhile: a step that cannot report its end to
# slurmctld is "not ending with signals" once it is back, and Slurm drains
# the node.
for _ in $(seq 1 150); do
  [ -z "$(squeue -h -t COMPLETING -o %i 2>/dev/null)" ] && break
  sleep 0.2
done
ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
kill "$ctld"
for _ in $(seq 1 50); do kill -0 "$ctld" 2>/dev/null || break; sleep 0.1; done
t0=$(now_ms)
bx -e "$N" -t 5 -- 'echo should-not-run' >"$TEST_TMP/d.out" 2>"$TEST_TMP/d.err"
st=$? el=$(($(now_ms) - t0))
check "a named environment with slurmctld stopped: an error (exit $st)" test "$st" = 125
check "... within the timeout: -t 5 returns in < 10 s ($el ms)" test "$el" -lt 10000
like "$(cat "$TEST_TMP/d.err")" "*slurm: 'squeue *slurmctld*" "... naming the command that failed and slurmctld"
is "$(wc -l <"$TEST_TMP/d.err" | tr -d ' ')" 1 "... in one line"
is "$(cat "$TEST_TMP/d.out")" "" "... and nothing ran"
t0=$(now_ms)
bx -t 5 -- 'echo should-not-run' >"$TEST_TMP/e.out" 2>"$TEST_TMP/e.err"
st=$? el=$(($(now_ms) - t0))
check "a throw-away environment with slurmctld stopped: an error (exit $st)" test "$st" = 125
check "... within the timeout ($el ms)" test "$el" -lt 10000
like "$(cat "$TEST_TMP/e.err")" "*slurm: 'salloc *slurmctld*" "... naming salloc and slurmctld"
backends=$("$BERTH" backends --json | jq -r '.[] | select(.name == "slurm") | .status')
is "$backends" unavailable "berth backends: slurm is unavailable while slurmctld is down"
bash "$src/tests/integration/setup/slurm-up.sh" >/dev/null 2>&1 8>&-
check "slurmctld back (setup/slurm-up.sh)" scontrol ping
flock -s 8
r=$(bx --json -e "$N" -- 'echo back')
is "$(field "$r" output)" back "with slurmctld back, the named environment works again"
is "$(field "$r" environment_recreated)" false "... in the allocation it had"
"$BERTH" rm "$N" >/dev/null
check "... and rm removes it" gone "berth-$N"

# --- a bad partition: one clear error naming salloc and the key ---
printf 'terminal:\n  backend: slurm\n  slurm_partition: nosuch%s\n' "$TAG" >"$TEST_TMP/bad.yaml"
BERTH_CONFIG=$TEST_TMP/bad.yaml bx -- true >/dev/null 2>"$TEST_TMP/p.err"
is "$?" 125 "an unknown partition is an error"
like "$(cat "$TEST_TMP/p.err")" "*salloc*nosuch$TAG*terminal.slurm_partition*" "... naming salloc and terminal.slurm_partition"

# --- an image, and a node without apptainer: run there, and say so ---
printf 'terminal:\n  backend: slurm\n  slurm_partition: %s\n  singularity_image: /nonexistent/img%s.sif\n' "$BERTH_SLURM_PARTITION" "$TAG" >"$TEST_TMP/img.yaml"
if ! command -v apptainer >/dev/null && ! command -v singularity >/dev/null; then
  out=$(BERTH_CONFIG=$TEST_TMP/img.yaml bx -t 60 -- 'echo on-node' 2>"$TEST_TMP/img.err")
  is "$out" on-node "singularity_image set, no apptainer on the node: the command runs on the node"
  like "$(cat "$TEST_TMP/img.err")" "*no apptainer*run on the node directly*" "... with a warning that says so"
  BERTH_CONFIG=$TEST_TMP/img.yaml "$BERTH" doctor -b slurm >"$TEST_TMP/doc-img.out" 2>&1
  like "$(cat "$TEST_TMP/doc-img.out")" "*apptainer*img$TAG.sif is set, but this host has no apptainer*" "doctor says there is no apptainer"
fi

# --- doctor ---
"$BERTH" doctor -b slurm >"$TEST_TMP/doctor.out" 2>&1
is "$?" 0 "berth doctor -b slurm passes against the test cluster"
like "$(cat "$TEST_TMP/doctor.out")" "*munge*" "... and checks munge"
done_testing
