#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ssh backend against a real sshd: the multiplexed master (reuse,
# recovery, isolation between environments, cleanup), transport errors
# versus command results, timeouts that kill the remote tree, and secrets
# that never reach an argv.
. "$(dirname "$0")/ssh-lib.sh"
# this script's own key: its login counts ignore the tests running beside it
SSH_TEST_KEY=$BERTH_SSHD_KEY2
write_config "$CFG"

# ---- basics ----
out=$(b exec -b ssh -- 'echo "hi $(whoami)"' 2>"$TDIR/err"); rc=$?
check "exec runs on the remote host as the test user" [ "$rc" = 0 -a "$out" = "hi $BERTH_SSHD_USER" ]
[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$(cat "$TDIR/err")"

out=$(b exec -b ssh -- pwd); rc=$?
check "the default cwd is the remote home (~ expanded remotely)" [ "$rc" = 0 -a "$out" = "$BERTH_SSHD_HOME" ]

write_config "$TDIR/nohost.yaml"
sed -i '/ssh_host\|ssh_user/d' "$TDIR/nohost.yaml"
"$BERTH" --config "$TDIR/nohost.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
check "missing host and user: exit 125 naming ssh_host and ssh_user" [ "$rc" = 125 ] && grep -q 'ssh_host and ssh_user' "$TDIR/err"
[ "$rc" = 125 ] || diag "rc=$rc $(cat "$TDIR/err")"

# ---- the master: reuse across invocations of a named environment ----
a0=$(auth_count)
b exec -e named1 -- true; rc1=$?
a1=$(auth_count)
b exec -e named1 -- true; rc2=$?
b exec -e named1 -- 'echo third' >/dev/null; rc3=$?
a2=$(auth_count)
check "a named environment authenticates once" [ "$rc1$rc2$rc3" = 000 -a $((a1 - a0)) = 1 -a "$a2" = "$a1" ]
[ $((a1 - a0)) = 1 ] && [ "$a2" = "$a1" ] || diag "auths: $a0 $a1 $a2 rcs $rc1 $rc2 $rc3"
pid1=$(env_master_pid named1)
check "its master stays up between invocations" [ -n "$pid1" ] && kill -0 "$pid1"

# ---- a sibling to the same destination never touches it ----
b exec -e named2 -- true; rc=$?
pid2=$(env_master_pid named2)
check "a sibling environment gets its own master" [ "$rc" = 0 -a -n "$pid2" -a "$pid2" != "$pid1" ]
b rm named2; rc=$?
check "berth rm closes the sibling's master" [ "$rc" = 0 ] && gone "$pid2"
check "... and leaves the first environment's master alone" kill -0 "$pid1"
a3=$(auth_count)
b exec -e named1 -- true
check "... which still serves without a new login" [ "$(auth_count)" = "$a3" ]

# throw-away environments close their master at the end
before=$(masters | wc -l)
b exec -b ssh -- true; rc=$?
sleep 0.2
check "a throw-away environment leaves no master behind" [ "$rc" = 0 -a "$(masters | wc -l)" = "$before" ]

# ---- a dead master is replaced ----
kill -9 "$pid1"; sleep 0.2
a4=$(auth_count)
out=$(b exec -e named1 -- 'echo recovered' 2>"$TDIR/err"); rc=$?
pid3=$(env_master_pid named1)
check "a killed master is re-established on the next use" [ "$rc" = 0 -a "$out" = recovered -a "$(auth_count)" = $((a4 + 1)) ]
[ "$out" = recovered ] || diag "rc=$rc out=$out err=$(cat "$TDIR/err")"
check "... by a new master process" [ -n "$pid3" -a "$pid3" != "$pid1" ] && kill -0 "$pid3"

# ---- a wedged master is replaced ----
kill -STOP "$pid3"
start=$(date +%s%N)
out=$(timeout 30 "$BERTH" --config "$CFG" exec -e named1 -- 'echo unwedged' 2>"$TDIR/err"); rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
pid4=$(env_master_pid named1)
check "a wedged master is detected and replaced (${ms} ms)" [ "$rc" = 0 -a "$out" = unwedged -a "$ms" -lt 15000 ]
[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$(cat "$TDIR/err")"
check "... and the wedged one is gone" [ -n "$pid4" -a "$pid4" != "$pid3" ] && gone "$pid3"
kill -CONT "$pid3" 2>/dev/null

# ---- a master slow to answer in a deadline's last moment stays ----
# (a kill at the end of its budget once replaced a healthy master because
# its check had only milliseconds left)
kill -STOP "$pid4"
out=$(timeout 30 "$BERTH" --config "$CFG" exec -e named1 -t 1 -- 'echo late' 2>"$TDIR/err"); rc=$?
kill -CONT "$pid4"
# it runs (not a zombie) and is still the environment's master
master_stays () { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ] && [ "$(env_master_pid named1)" = "$1" ]; }
check "a master that does not answer within a command's last second is not replaced (rc $rc)" eval '[ "$rc" != 0 ] && master_stays "$pid4"'
master_stays "$pid4" || diag "rc=$rc out=$out err=$(cat "$TDIR/err")"
out=$("$BERTH" --config "$CFG" exec -e named1 -- 'echo after' 2>"$TDIR/err"); rc=$?
check "... and serves the next command" eval '[ "$rc" = 0 ] && [ "$out" = after ] && master_stays "$pid4"'

# ---- changed settings never reuse a master made for other ones ----
write_config "$TDIR/changed.yaml" "ssh_connect_timeout: 7"
a6=$(auth_count)
out=$("$BERTH" --config "$TDIR/changed.yaml" exec -e named1 -- 'echo changed' 2>"$TDIR/err"); rc=$?
pid5=$(env_master_pid named1)
check "a named environment whose ssh settings changed gets a new master" [ "$rc" = 0 -a "$out" = changed -a "$(auth_count)" = $((a6 + 1)) -a "$pid5" != "$pid4" ]
check "... and the old one is closed" gone "$pid4"

# ---- transport errors versus command results ----
out=$(b exec -b ssh -- 'echo before; exit 255' 2>"$TDIR/err"); rc=$?
check "a command exiting 255 is a result" [ "$rc" = 255 -a "$out" = before ] && ! grep -q '^berth:' "$TDIR/err"

write_config "$TDIR/refused.yaml"
sed -i "s|ssh_key: .*|ssh_key: $BERTH_SSHD_REFUSED_KEY|" "$TDIR/refused.yaml"
"$BERTH" --config "$TDIR/refused.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
check "a refused key is an error (125) with ssh's reason" [ "$rc" = 125 ] && grep -q 'Permission denied' "$TDIR/err"
[ "$rc" = 125 ] || diag "rc=$rc $(cat "$TDIR/err")"

printf '[%s]:%s %s\n' "$BERTH_SSHD_HOST" "$BERTH_SSHD_PORT" "$(cut -d' ' -f1,2 "$BERTH_SSHD_REFUSED_KEY.pub")" > "$TDIR/bad_known_hosts"
write_config "$TDIR/hostkey.yaml"
sed -i "s|UserKnownHostsFile=.*|UserKnownHostsFile=$TDIR/bad_known_hosts|" "$TDIR/hostkey.yaml"
"$BERTH" --config "$TDIR/hostkey.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
check "a changed host key is an error (125), even with accept-new" [ "$rc" = 125 ] && grep -qi 'host key' "$TDIR/err"
[ "$rc" = 125 ] || diag "rc=$rc $(cat "$TDIR/err")"

# accept-new: an unknown host is learnt on first use
write_config "$TDIR/tofu.yaml"
sed -i "s|UserKnownHostsFile=.*|UserKnownHostsFile=$TDIR/new_known_hosts|" "$TDIR/tofu.yaml"
"$BERTH" --config "$TDIR/tofu.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
check "StrictHostKeyChecking=accept-new learns an unknown host" [ "$rc" = 0 ] && [ -s "$TDIR/new_known_hosts" ]

# nothing listening
freeport=$(( BERTH_SSHD_PORT + 1 ))
write_config "$TDIR/closed.yaml"
sed -i "s|ssh_port: .*|ssh_port: $freeport|" "$TDIR/closed.yaml"
start=$(date +%s)
"$BERTH" --config "$TDIR/closed.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
check "an unreachable host is an error (125) with the reason, at once" [ "$rc" = 125 -a $(( $(date +%s) - start )) -le 5 ] && grep -qi 'refused' "$TDIR/err"

# an unroutable address: bounded by ssh_connect_timeout
write_config "$TDIR/blackhole.yaml" "ssh_connect_timeout: 2"
sed -i "s|ssh_host: .*|ssh_host: 10.255.255.1|" "$TDIR/blackhole.yaml"
start=$(date +%s)
timeout 60 "$BERTH" --config "$TDIR/blackhole.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
el=$(( $(date +%s) - start ))
check "a silent host fails within the connect timeout (${el}s)" [ "$rc" = 125 -a "$el" -le 8 ]
[ "$rc" = 125 ] || diag "rc=$rc $(cat "$TDIR/err")"

# sshd stopped: a second private sshd (the shared one serves the other
# ssh tests running in parallel), used, then stopped
port2=$(( BERTH_SSHD_PORT + 11 ))
sed -e "s/^Port .*/Port $port2/" -e "s|^PidFile .*|PidFile $TDIR/sshd2.pid|" "$BERTH_SSHD_DIR/sshd_config" > "$TDIR/sshd2_config"
if [ "$(id -u)" = 0 ] && /usr/sbin/sshd -f "$TDIR/sshd2_config" -E "$TDIR/sshd2.log"; then
  EXTRA_CLEANUP='[ -f "$TDIR/sshd2.pid" ] && kill "$(cat "$TDIR/sshd2.pid")" 2>/dev/null'
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port2") 2>/dev/null && break; sleep 0.1; done
  write_config "$TDIR/sshd2.yaml"
  sed -i "s|ssh_port: .*|ssh_port: $port2|" "$TDIR/sshd2.yaml"
  out=$("$BERTH" --config "$TDIR/sshd2.yaml" exec -b ssh -- 'echo up'); rc=$?
  check "a second sshd serves" [ "$rc" = 0 -a "$out" = up ]
  # a background process there, then the host goes (the listener and
  # every connection of it, the master's too): poll is an error, not an
  # exit code (the process itself runs on, detached, until killed below)
  E2=sshloss$$
  "$BERTH" --config "$TDIR/sshd2.yaml" exec -b ssh -e "$E2" -- true >/dev/null
  lp=$("$BERTH" --config "$TDIR/sshd2.yaml" start -e "$E2" -- "sleep 3$$")
  is "$("$BERTH" --config "$TDIR/sshd2.yaml" ps -e "$E2" --json | jq -r --arg id "$lp" '.[] | select(.id == $id) | .state')" running \
    "a background process runs over the second sshd"
  pkill -P "$(cat "$TDIR/sshd2.pid")" 2>/dev/null
  kill "$(cat "$TDIR/sshd2.pid")"
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port2") 2>/dev/null || break; sleep 0.1; done
  start=$(date +%s)
  timeout 60 "$BERTH" --config "$TDIR/sshd2.yaml" ps -e "$E2" --json >"$TDIR/out" 2>"$TDIR/err"; rc=$?
  el=$(( $(date +%s) - start ))
  check "the host lost under a process: ps is an error (125) within ConnectTimeout (${el}s), no state, no exit code" \
    eval '[ "$rc" = 125 ] && [ "$el" -le 12 ] && ! grep -q "\"exit_code\"" "$TDIR/out" && cat "$TDIR/err" "$TDIR/out" | grep -q "cannot connect"'
  diag "$(cat "$TDIR/err")"
  pkill -f "slee[p] 3$$" 2>/dev/null
  # the "host" is this machine: what ran there goes with it, the
  # environment's serving agent too
  pkill -f "berth-agent --stdio --socket [^ ]*s-$E2 --serve" 2>/dev/null
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port2") 2>/dev/null || break; sleep 0.1; done
  start=$(date +%s)
  timeout 60 "$BERTH" --config "$TDIR/sshd2.yaml" exec -b ssh -- true 2>"$TDIR/err"; rc=$?
  el=$(( $(date +%s) - start ))
  check "sshd stopped: error 125 within ConnectTimeout (${el}s)" [ "$rc" = 125 -a "$el" -le 12 ] && grep -q 'cannot connect' "$TDIR/err"
  diag "$(cat "$TDIR/err")"
  EXTRA_CLEANUP=:
else
  not_ok "could not start a second sshd on port $port2 (root needed)"
fi

# ---- the user's ssh setup keeps working: agent keys, ProxyCommand ----
if command -v ssh-agent >/dev/null && command -v ssh-add >/dev/null; then
  agent_env=$(ssh-agent -s)
  agent_pid=$(printf '%s' "$agent_env" | sed -n 's/.*SSH_AGENT_PID=\([0-9]*\).*/\1/p')
  EXTRA_CLEANUP="kill $agent_pid 2>/dev/null"
  agent_sock=$(printf '%s' "$agent_env" | sed -n 's/.*SSH_AUTH_SOCK=\([^;]*\);.*/\1/p')
  SSH_AUTH_SOCK=$agent_sock ssh-add -q "$SSH_TEST_KEY"
  cat > "$TDIR/agent.yaml" <<YAML
terminal:
  ssh_host: $BERTH_SSHD_HOST
  ssh_port: $BERTH_SSHD_PORT
  ssh_user: $BERTH_SSHD_USER
  ssh_options:
    - UserKnownHostsFile=$BERTH_SSHD_KNOWN_HOSTS
    - ProxyCommand=ssh -o BatchMode=yes -o UserKnownHostsFile=$BERTH_SSHD_KNOWN_HOSTS -p $BERTH_SSHD_PORT -l $BERTH_SSHD_USER -W %h:%p $BERTH_SSHD_HOST
YAML
  a5=$(auth_count)
  out=$(SSH_AUTH_SOCK=$agent_sock "$BERTH" --config "$TDIR/agent.yaml" exec -b ssh -- 'echo agent-ok' 2>"$TDIR/err"); rc=$?
  check "no ssh_key: the agent's key and a ProxyCommand are used" [ "$rc" = 0 -a "$out" = agent-ok -a "$(auth_count)" = $((a5 + 2)) ]
  [ "$rc" = 0 ] || diag "rc=$rc $(cat "$TDIR/err")"
  out=$(SSH_AUTH_SOCK= "$BERTH" --config "$TDIR/agent.yaml" exec -b ssh -- true 2>"$TDIR/err"); rc=$?
  check "... and without the agent that is a clear error" [ "$rc" = 125 ] && grep -q 'Permission denied' "$TDIR/err"
  kill "$agent_pid"
  EXTRA_CLEANUP=:
else
  not_ok "ssh-agent is missing (openssh-client)"
fi

# ---- timeouts kill the remote tree ----
tag=berthto$$
start=$(date +%s)
out=$(b exec -b ssh -t 2 -- "sleep 3001 & (setsid sleep 3002 &) ; bash -c 'exec -a $tag sleep 3003'" 2>"$TDIR/err"); rc=$?
el=$(( $(date +%s) - start ))
sleep 1
left=$(remote_ps | grep -E 'sleep 300[123]|'"$tag" || true)
check "timeout: exit 124 after ~2s (${el}s)" [ "$rc" = 124 -a "$el" -le 10 ]
check "timeout: no remote process is left (incl. setsid)" [ -z "$left" ]
[ -z "$left" ] || diag "left: $left"

# ---- env_passthrough: the value reaches the command, never an argv ----
secret="berth-secret-$$-$RANDOM"
write_config "$TDIR/pass.yaml" "env_passthrough: [BERTH_TEST_PASS]"
: > "$TDIR/seen"
( end=$((SECONDS + 6)); while [ $SECONDS -lt $end ]; do
    grep -l -a -- "$secret" /proc/[0-9]*/cmdline 2>/dev/null >> "$TDIR/seen"; sleep 0.05; done ) &
watcher=$!
out=$(BERTH_TEST_PASS=$secret "$BERTH" --config "$TDIR/pass.yaml" exec -b ssh -- 'sleep 1; echo "v=$BERTH_TEST_PASS"; sleep 1'); rc=$?
wait $watcher
check "a passthrough value reaches the remote command" [ "$rc" = 0 -a "$out" = "v=$secret" ]
check "... and appears in no /proc/*/cmdline" [ ! -s "$TDIR/seen" ]
[ -s "$TDIR/seen" ] && diag "seen in: $(sort -u "$TDIR/seen" | head -3)"

# ---- a runtime directory too long for a socket path ----
long=$TDIR/run-$(printf 'x%.0s' $(seq 1 90))
mkdir -p -m 0700 "$long"
out=$(XDG_RUNTIME_DIR=$long "$BERTH" --config "$CFG" exec -e longpath -- 'echo long-ok' 2>"$TDIR/err"); rc=$?
fb=$(ls /tmp/berth-ssh-"$(id -u)"/ 2>/dev/null | grep -E '^[0-9a-f]{16}$' | head -1)
check "a long runtime dir falls back to a short private socket path" [ "$rc" = 0 -a "$out" = long-ok -a -n "$fb" ]
[ "$rc" = 0 ] || diag "rc=$rc $(cat "$TDIR/err")"
fbpid=$(cat /tmp/berth-ssh-"$(id -u)"/"$fb".pid 2>/dev/null)
XDG_RUNTIME_DIR=$long "$BERTH" --config "$CFG" rm longpath; rc=$?
check "... and berth rm closes that master too" [ "$rc" = 0 -a -n "$fbpid" ] && gone "$fbpid" && [ ! -e /tmp/berth-ssh-"$(id -u)"/"$fb" ]

# ---- a held master lock ends at the deadline (issue 12.2) ----
b exec -e locked1 -- true
lpid=$(env_master_pid locked1)
lock=$XDG_RUNTIME_DIR/berth/locked1/cm.lock
kill "$lpid" 2>/dev/null; gone "$lpid"
flock -o "$lock" sleep 60 & holder=$!
EXTRA_CLEANUP="pkill -P $holder sleep; kill $holder 2>/dev/null"
sleep 0.3
t0=$(date +%s%N)
b exec -e locked1 -t 2 -- true 2>"$TDIR/err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a master lock held elsewhere: exit 125 within the 2 s deadline" [ "$rc" = 125 -a "$ms" -lt 3500 ]
check "... with one line naming the lock and its holder" grep -q "cm.lock" "$TDIR/err" && grep -q "pid $holder\|pid [0-9]" "$TDIR/err" && [ "$(wc -l <"$TDIR/err")" = 1 ]
[ "$rc" = 125 -a "$ms" -lt 3500 ] || diag "rc=$rc ${ms}ms $(cat "$TDIR/err")"
pkill -P "$holder" sleep; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
b exec -e locked1 -t 10 -- true; rc=$?
check "... and the environment serves once the lock is free" [ "$rc" = 0 ]
b rm locked1

# ---- cleanup ----
pid=$(env_master_pid named1)
b rm named1; rc=$?
check "berth rm closes the named environment's master" [ "$rc" = 0 ] && gone "$pid"
check "no master of ours is left" [ -z "$(masters)" ]

# --- BERTH_DEBUG=ssh (issue 11.17): the master's check, start and stop ---
err=$(BERTH_DEBUG=ssh b exec -- true 2>&1 >/dev/null)
like "$err" "*berth: ssh: debug: master check*" "BERTH_DEBUG=ssh logs the master check"
like "$err" "*berth: ssh: debug: master start*" "… its start"
like "$err" "*berth: ssh: debug: spawn pid *ssh*-M*" "… the master's argv"
like "$err" "*berth: ssh: debug: master on *stopping it*" "… and its stop"
check "no master of ours is left after the debug run" [ -z "$(masters)" ]

done_testing
