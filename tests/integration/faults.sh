#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# faults.sh: infrastructure that fails under a running command (issue 11,
# A.1, A.2 and A.3).  A transport that dies mid-command -- the jail's init, the
# ssh connection master, dockerd -- is an error (exit 125, one line naming
# what died, the partial output kept for --json), the command's tree is
# killed where it ran, and the next command works again.  A command that
# dies itself (its bash SIGKILLed) stays a result.  A state that cannot be
# recorded (full or read-only $XDG_STATE_HOME) is an error after the
# command's output.
#
# Only what this script starts is killed: its own jail, its own
# environment's ssh master, a private dockerd on its own socket -- never
# the shared dockerd (/var/run/docker.sock) or sshd (127.0.0.1:2222).
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
berth_test_home
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v pgrep >/dev/null || skip_all "pgrep is not installed (procps)"

PD= ST=
trap 'docker_private_down; [ -n "$ST" ] && umount "$ST" 2>/dev/null; berth_test_cleanup' EXIT

one_line () { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ]; }

# start_bg ARGS...: berth ARGS in the background; finish_bg collects
# $rc, $stdout, $stderr.
start_bg ()
{
  "$BERTH" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null &
  BG=$!
}
finish_bg ()
{
  local i
  for i in $(seq 1 300); do
    kill -0 "$BG" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$BG" 2>/dev/null; then
    kill -9 "$BG" 2>/dev/null
    diag "berth did not return within 30 s of the fault"
  fi
  wait "$BG"
  rc=$?
  stdout=$(cat "$TEST_TMP/out")
  stderr=$(cat "$TEST_TMP/err")
}
run ()
{
  "$BERTH" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  rc=$?
  stdout=$(cat "$TEST_TMP/out")
  stderr=$(cat "$TEST_TMP/err")
}

# ---------------------------------------------------------------- local
# The command's own death is a result, not an infrastructure failure.
new_marker
start_bg exec -e loc -- "echo part; $SLEEP"
if wait_for marker_running; then
  wrapper=$(ps -o ppid= -p "$(marker_pids | head -1)" | tr -d ' ')
  kill -9 "$wrapper"
  finish_bg
  is "$rc" 137 "local: the wrapper's bash SIGKILLed is the command's own result (137)"
  is "$stdout" part "local: its output so far is delivered"
  is "$stderr" "" "local: and it is not reported as a berth error"
  for p in $(marker_pids); do kill -9 "$p"; done
else
  finish_bg
  not_ok "local: the command did not start ($stderr)"
fi
run exec -- 'exec sh -c "echo replaced; exit 3"'
is "$rc:$stdout" "3:replaced" "local: exec CMD (no exit record, a real status) stays a result"

# ---------------------------------------------------------------- bwrap
if ! "$BERTH" backends 2>/dev/null | grep -q '^bwrap *ready'; then
  skip_case "bwrap: the jail's init killed mid-command" "the bwrap backend is not ready here"
else
  for mode in plain json; do
    new_marker
    json=
    [ $mode = json ] && json=--json
    start_bg exec -b bwrap -e fj $json -- "echo part; $SLEEP"
    if wait_for marker_running; then
      init=$(pgrep -f "berth-jail create --state $XDG_STATE_HOME/berth/envs/fj " | head -1)
      [ -n "$init" ] && kill -9 "$init"
      finish_bg
      is "$rc" 125 "bwrap ($mode): the jail's init killed mid-command is a berth error (125)"
      if [ $mode = plain ]; then
        is "$stdout" part "bwrap: the output so far is delivered"
        like "$stderr" "berth: bwrap: *jail*init*died*" "bwrap: one line says the jail died"
        check "bwrap: in one line" one_line "$stderr"
      else
        is "$(jq -r '[.schema_version, .error.code > 0, (.error.message | test("jail")), .output] | map(tostring) | join(",")' <<<"$stdout")" \
          "1,true,true,part" "bwrap --json: {schema_version, error{code,message}, output} with the partial output"
      fi
      check "bwrap ($mode): nothing of the command is left running" marker_gone
    else
      finish_bg
      not_ok "bwrap ($mode): the command did not start ($stderr)"
    fi
    run exec -b bwrap -e fj -- 'echo again'
    is "$rc:$stdout" "0:again" "bwrap ($mode): the next command on the environment works"
  done
  "$BERTH" rm fj >/dev/null 2>&1
fi

# ---------------------------------------------------------------- ssh
SSHD_ENV=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
if ! command -v ssh >/dev/null || [ ! -f "$SSHD_ENV" ]; then
  skip_case "ssh: the connection master killed mid-command" "no test sshd (tests/integration/setup/sshd.sh)"
else
  . "$SSHD_ENV"
  cat >"$TEST_TMP/ssh.yaml" <<EOF
terminal:
  backend: ssh
  ssh_host: $BERTH_SSHD_HOST
  ssh_port: $BERTH_SSHD_PORT
  ssh_user: $BERTH_SSHD_USER
  ssh_key: $BERTH_SSHD_KEY
  ssh_options:
    - UserKnownHostsFile=$BERTH_SSHD_KNOWN_HOSTS
EOF
  if ! "$BERTH" --config "$TEST_TMP/ssh.yaml" exec -e fs -- true >/dev/null 2>&1; then
    skip_case "ssh: the connection master killed mid-command" "the test sshd does not answer"
  else
    for mode in plain json; do
      new_marker
      json=
      [ $mode = json ] && json=--json
      start_bg --config "$TEST_TMP/ssh.yaml" exec -e fs $json -- "echo part; $SLEEP"
      if wait_for marker_running; then
        # this environment's own master, by its pid file
        kill -9 "$(cat "$XDG_RUNTIME_DIR/berth/fs/cm.pid")"
        finish_bg
        is "$rc" 125 "ssh ($mode): the master killed mid-command is a berth error (125)"
        if [ $mode = plain ]; then
          is "$stdout" part "ssh: the output so far is delivered"
          like "$stderr" "berth: ssh: the connection to * was lost while the command ran*" "ssh: one line says the connection was lost"
          check "ssh: in one line" one_line "$stderr"
        else
          is "$(jq -r '[.schema_version, (.error.message | test("lost")), .output] | map(tostring) | join(",")' <<<"$stdout")" \
            "1,true,part" "ssh --json: the error object keeps the partial output"
        fi
        check "ssh ($mode): the remote command was killed (best effort, delivered)" marker_gone
      else
        finish_bg
        not_ok "ssh ($mode): the command did not start ($stderr)"
      fi
      run --config "$TEST_TMP/ssh.yaml" exec -e fs -- 'echo again'
      is "$rc:$stdout" "0:again" "ssh ($mode): the next command on the environment works (a new master)"
    done
    run --config "$TEST_TMP/ssh.yaml" exec -e fs -- 'echo x; kill -9 $$'
    # ssh reports a remote signal death as 255; the agent as 128+9
    want=137
    [ "${BERTH_TRANSPORT:-}" = exec ] && want=255
    is "$rc:$stdout" "$want:x" "ssh: the remote bash killed (master alive) stays a result"
    "$BERTH" --config "$TEST_TMP/ssh.yaml" rm fs >/dev/null 2>&1
  fi
fi

# ------------------------------------------------------- ssh unreachable
# The host stops answering after the master connected (A.2): packets
# dropped, simulated by a relay of ours between ssh and the test sshd,
# SIGSTOPped (the kernel still accepts, nothing comes back; a new
# connection gets no banner).  Unreachable is an error in time, a kill
# that cannot be delivered is an error, never a clean timeout, and the
# next command fails fast -- then works once the host answers again.
RELAY_PID=
relay_cont () { [ -n "$RELAY_PID" ] && kill -CONT "$RELAY_PID" 2>/dev/null; }
relay_down () { relay_cont; [ -n "$RELAY_PID" ] && kill "$RELAY_PID" 2>/dev/null; RELAY_PID=; }
trap 'relay_down; docker_private_down; [ -n "$ST" ] && umount "$ST" 2>/dev/null; berth_test_cleanup' EXIT
elapsed () { echo $(( ($(date +%s%N) - T0) / 1000000 )); }
if ! command -v ssh >/dev/null || [ ! -f "$SSHD_ENV" ] || ! command -v python3 >/dev/null; then
  skip_case "ssh: the host stops answering" "needs ssh, the test sshd and python3 (for the relay)"
else
  cat >"$TEST_TMP/relay.py" <<'EOF'
import socket, sys, threading
ls = socket.socket()
ls.bind(("127.0.0.1", 0))
ls.listen(16)
print(ls.getsockname()[1], flush=True)
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
while True:
    c, _ = ls.accept()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    for x, y in ((c, u), (u, c)):
        threading.Thread(target=pipe, args=(x, y), daemon=True).start()
EOF
  python3 "$TEST_TMP/relay.py" "$BERTH_SSHD_PORT" >"$TEST_TMP/relay.port" 2>/dev/null </dev/null &
  RELAY_PID=$!
  wait_for test -s "$TEST_TMP/relay.port"
  sed "s/^  ssh_port: .*/  ssh_port: $(cat "$TEST_TMP/relay.port")/" "$TEST_TMP/ssh.yaml" >"$TEST_TMP/relay.yaml"
  ru () { run --config "$TEST_TMP/relay.yaml" "$@"; }
  ru exec -e fu -- 'echo up'
  if [ "$rc:$stdout" != "0:up" ]; then
    skip_case "ssh: the host stops answering" "no connection through the relay ($stderr)"
  else
    # 1. before the command: it never starts
    kill -STOP "$RELAY_PID"
    T0=$(date +%s%N)
    ru exec -e fu -t 4 -- 'echo never'
    ms=$(elapsed)
    is "$rc" 125 "ssh unreachable: a command that cannot reach the host is a berth error (125), not 124"
    check "ssh unreachable: within the timeout and the kill's budget (${ms} ms < 4 s + 6 s)" test "$ms" -lt 10000
    like "$stderr" "berth: ssh: the command did not start within 4s*stopped answering*check the network*" \
      "ssh unreachable: one line says the host stopped answering and what to check"
    check "ssh unreachable: in one line" one_line "$stderr"
    check "ssh unreachable: no fake timeout note" test -z "$(grep -F 'Command timed out' <<<"$stdout")"
    T0=$(date +%s%N)
    ru exec -e fu -t 4 -- 'echo never'
    ms=$(elapsed)
    is "$rc" 125 "ssh unreachable: the next command is a berth error too"
    check "ssh unreachable: ... bounded by its own deadline (${ms} ms < 4 s + 1 s)" test "$ms" -lt 5000
    check "ssh unreachable: ... in one line, no fake timeout" eval 'one_line "$stderr" && [[ $stderr != *"timed out after 4s"* ]]'
    relay_cont
    ru exec -e fu -- 'echo back'
    is "$rc:$stdout" "0:back" "ssh unreachable: once the host answers, the next command works"

    # 2. mid-command: the kill cannot be delivered
    new_marker
    start_bg --config "$TEST_TMP/relay.yaml" exec -e fu -t 6 -- "echo part; $SLEEP"
    if wait_for marker_running; then
      T0=$(date +%s%N)
      kill -STOP "$RELAY_PID"
      finish_bg
      ms=$(elapsed)
      is "$rc" 125 "ssh unreachable mid-command: a kill that cannot be delivered is a berth error (125), not 124"
      check "ssh unreachable mid-command: within the timeout and the kill's budget (${ms} ms < 6 s + 7 s)" test "$ms" -lt 13000
      like "$stderr" "berth: ssh: the command timed out after 6s, and it may still be running there: could not kill it*" \
        "ssh unreachable mid-command: one line says it may still run there"
      check "ssh unreachable mid-command: in one line" one_line "$stderr"
      is "$stdout" part "ssh unreachable mid-command: the output so far is delivered"
      T0=$(date +%s%N)
      ru exec -e fu -t 4 -- 'echo never'
      ms=$(elapsed)
      is "$rc" 125 "ssh unreachable mid-command: the next command on the wedged master fails"
      check "ssh unreachable mid-command: ... within its deadline (${ms} ms < 5 s)" test "$ms" -lt 5000
      like "$stderr" "berth: ssh: *stopped answering*check the network*" "ssh unreachable mid-command: ... saying the host stopped answering"
      relay_cont
      ru exec -e fu -- 'echo back'
      is "$rc:$stdout" "0:back" "ssh unreachable mid-command: the host back, the next command works (a new master)"
    else
      finish_bg
      not_ok "ssh unreachable mid-command: the command did not start ($stderr)"
    fi
    for p in $(marker_pids); do kill -9 "$p"; done
  fi
  "$BERTH" --config "$TEST_TMP/relay.yaml" rm fu >/dev/null 2>&1
  relay_down
fi

# ---------------------------------------------------------------- docker
# A private dockerd on its own socket, data and exec root; killed here.
docker_private_up ()
{
  PD=$(mktemp -d /tmp/berth-faults-dockerd.XXXXXX)
  PD_SOCK=$PD/docker.sock
  setsid dockerd --data-root "$PD/data" --exec-root "$PD/exec" --pidfile "$PD/dockerd.pid" \
    -H "unix://$PD_SOCK" --iptables=false --ip-masq=false --bridge=none \
    >"$PD/dockerd.log" 2>&1 </dev/null &
  PD_PID=$!
  disown "$PD_PID" 2>/dev/null
  wait_for docker -H "unix://$PD_SOCK" version >/dev/null 2>&1 || return 1
  # the test image, offline: copied from the shared engine (read only)
  if docker image inspect berth-test:latest >/dev/null 2>&1; then
    docker save berth-test:latest | docker -H "unix://$PD_SOCK" load >/dev/null 2>&1 || return 1
  else
    return 1
  fi
}
docker_private_down ()
{
  [ -n "${PD:-}" ] || return 0
  local p
  [ -n "${PD_PID:-}" ] && kill -9 "$PD_PID" 2>/dev/null
  # its containerd, shims and what runs in its containers: by their paths
  for p in $(pgrep -f -- "$PD/"); do
    kill -9 "$p" 2>/dev/null
  done
  for p in $(pgrep -f "^sleep 30\\.$$"); do kill -9 "$p" 2>/dev/null; done
  sleep 0.5
  grep -o " $PD[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  rm -rf "$PD"
  PD=
}
if [ "$(id -u)" != 0 ] || ! command -v dockerd >/dev/null || ! command -v docker >/dev/null \
   || ! "$BERTH" backends 2>/dev/null | grep -q '^docker '; then
  skip_case "docker: dockerd killed mid-command" "needs root, dockerd, the docker CLI and the docker backend"
elif ! docker_private_up; then
  skip_case "docker: dockerd killed mid-command" "a private dockerd with berth-test:latest could not be set up"
  docker_private_down
else
  printf 'terminal:\n  backend: docker\n  docker_image: berth-test:latest\n' >"$TEST_TMP/docker.yaml"
  new_marker
  # A throw-away environment: its commands ride the engine's exec stream
  # (a named one's agent is reached past the engine, which may die under
  # it without the command noticing: agent-serve.sh).
  DOCKER_HOST=unix://$PD_SOCK start_bg --config "$TEST_TMP/docker.yaml" exec --json -- "echo part; $SLEEP"
  if wait_for marker_running; then
    kill -9 "$PD_PID"
    finish_bg
    is "$rc" 125 "docker: dockerd killed mid-command is a berth error (125)"
    like "$(jq -r .error.message <<<"$stdout")" "docker: the connection to the engine was lost while the command ran*" \
      "docker: the message says the engine was lost"
    like "$(jq -r .error.message <<<"$stdout")" "*could not kill*" "docker: and that the kill could not be delivered"
    is "$(jq -r .output <<<"$stdout")" part "docker --json: the partial output is kept"
    check "docker: in one line on stderr" one_line "$stderr"
    one_line "$stderr" || diag "$stderr"
  else
    finish_bg
    not_ok "docker: the command did not start ($stderr)"
  fi
  docker_private_down
  check "docker: the private daemon, its containers and the command are cleaned up by the test" \
    eval '! pgrep -f -- "/tmp/berth-faults-dockerd\\." >/dev/null && marker_gone'
fi

# ------------------------------------------------------ docker: hung engine
# An engine that accepts connections and never answers (a fake on a socket
# of ours): -t bounds every phase, setup included (issue 11.16: 120 s).
if ! command -v python3 >/dev/null || ! "$BERTH" backends 2>/dev/null | grep -q '^docker '; then
  skip_case "docker: a hung engine" "needs python3 and the docker backend"
else
  HUNG=$TEST_TMP/hung.sock
  python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64)
held, t = [], time.time()
s.settimeout(1)
while time.time() - t < 90:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' "$HUNG" </dev/null >/dev/null 2>&1 &
  HUNG_PID=$!
  wait_for test -S "$HUNG"
  printf 'terminal:\n  backend: docker\n  docker_image: berth-test:latest\n' >"$TEST_TMP/hung.yaml"
  for mode in throw-away named; do
    args=()
    [ "$mode" = named ] && args=(-e hung)
    t0=$(date +%s%N)
    out=$(DOCKER_HOST=unix://$HUNG "$BERTH" --config "$TEST_TMP/hung.yaml" exec "${args[@]}" -t 3 -- true 2>&1 </dev/null)
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "$rc" 125 "docker, $mode: a hung engine is a berth error (125)"
    check "docker, $mode: -t 3 bounds the setup too (took ${ms} ms, at most 3 s + 2 s for the cleanup)" test "$ms" -lt 6500
    check "docker, $mode: one line that names the engine" eval '[[ "$out" == *"Docker engine at unix://$HUNG"* ]] && one_line "$out"'
  done
  check "docker: the failed creation of 'hung' left no environment" test ! -e "$XDG_STATE_HOME/berth/envs/hung"
  kill "$HUNG_PID" 2>/dev/null
  wait "$HUNG_PID" 2>/dev/null
fi

# ---------------------------------------------------------------- state
# A full or read-only $XDG_STATE_HOME: an error, after the output.
if [ "$(id -u)" != 0 ]; then
  skip_case "state: a full state directory" "needs root to mount a small tmpfs"
else
  ST=$TEST_TMP/small-state
  mkdir -p "$ST"
  if ! mount -t tmpfs -o size=64k,mode=0700 berth-faults "$ST"; then
    skip_case "state: a full state directory" "cannot mount a tmpfs here"
  else
    sx () { XDG_STATE_HOME=$ST run "$@"; }
    sx exec -e full -- 'echo one'
    is "$rc:$stdout" "0:one" "state: a named environment on the small state disk"
    head -c 1M /dev/zero >"$ST/fill" 2>/dev/null
    sx exec -e full -- 'cd /tmp; export FAULTS_X=1; echo out'
    is "$rc" 125 "state: a state that cannot be recorded is a berth error (125)"
    is "$stdout" out "state: the command's output is still delivered"
    like "$stderr" "berth: cannot record the state of environment full in $ST/berth/envs/full/*: No space left on device*" \
      "state: one line says what could not be written and where"
    check "state: in one line" one_line "$stderr"
    # (a command that changes no state writes none: this one exports)
    sx exec -e full --json -- 'export FAULTS_Y=1; echo out'
    is "$rc:$(jq -r '.output, (.error.message | test("No space"))' <<<"$stdout" | tr '\n' ,)" "125:out,,true," "state --json: the error keeps the output"
    sx exec -e fresh -- 'echo new'
    is "$rc" 125 "state: a new named environment that cannot be recorded is an error"
    like "$stderr" "*fresh*No space left on device*" "state: naming it"
    sx ls
    check "state: and it is not left half-made" test -z "$(grep -w fresh <<<"$stdout")"
    rm -f "$ST/fill"
    sx exec -e full -- 'echo "${FAULTS_X-unset}"'
    is "$rc:$stdout" "0:unset" "state: with room again the environment works (the lost export was reported)"
    if mount -o remount,ro "$ST" 2>/dev/null; then
      sx exec -e full -- 'echo ro'
      is "$rc" 125 "state: a read-only state directory is a berth error"
      like "$stderr" "berth: *$ST/berth/envs/full*Read-only file system*" "state: naming the place"
      check "state: in one line" one_line "$stderr"
      mount -o remount,rw "$ST"
    else
      skip_case "state: a read-only state directory" "cannot remount the tmpfs read-only"
    fi
    XDG_STATE_HOME=$ST "$BERTH" rm full >/dev/null 2>&1
    umount "$ST"
  fi
fi

done_testing
