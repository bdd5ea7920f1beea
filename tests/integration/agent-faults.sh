#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# agent-faults.sh: berth-agent under faults (issue 13), on every backend
# that is ready here (local named, docker, ssh, bwrap):
#   - berth SIGKILLed mid-command: the command is gone within 2 s (the
#     agent lost its controller and kills the foreground tree);
#   - the agent SIGKILLed mid-command: an error (125), not a result, the
#     command's tree is killed, and the next command recovers with a new
#     agent;
#   - an old agent binary in the environment's cache: replaced (docker,
#     ssh);
#   - the termination cause through the agent: a CPU time limit (bwrap,
#     terminal.bwrap_cpu_seconds) is "limit" SIGXCPU, the OOM killer in a
#     container with a memory limit (docker, terminal.container_memory)
#     is "oom";
#   - an image without bash (busybox only, built here offline): one line
#     naming the fix, exit 125, through the agent and with
#     BERTH_TRANSPORT=exec;
#   - a cache directory another user made first on a shared /tmp, with
#     the genuine binary and a listening socket in it: never used (ssh;
#     and the agent itself never relays to a socket of another user).
# Only what this script starts is killed: its own berth processes and
# the agents of its own environments.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
berth_test_home
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v pgrep >/dev/null || skip_all "pgrep is not installed (procps)"
unset BERTH_TRANSPORT
ENVS=()
trap 'for e in "${ENVS[@]}"; do "$BERTH" ${CONF:+--config "$CONF"} rm "$e" >/dev/null 2>&1; done; berth_test_cleanup' EXIT

one_line () { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ]; }
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
# gone_within_2s: the marker's processes are gone within 2 s
gone_within_2s ()
{
  local i
  for i in $(seq 1 20); do
    marker_running || return 0
    sleep 0.1
  done
  return 1
}
# The agent running the marker: up the parent chain to berth-agent.
agent_of_marker ()
{
  local p
  p=$(marker_pids | head -1)
  for _ in 1 2 3 4 5 6; do
    [ -n "$p" ] && [ "$p" != 1 ] || return 1
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = berth-agent ] && { echo "$p"; return 0; }
    p=$(ps -o ppid= -p "$p" | tr -d ' ')
  done
  return 1
}

# suite NAME CONFIG: the cases on backend NAME (CONFIG: a config file or "").
suite ()
{
  local b=$1 e=af$1$$
  CONF=$2
  local C=(${CONF:+--config "$CONF"})
  ENVS+=("$e")
  run "${C[@]}" exec -b "$b" -e "$e" --json -- true
  if [ "$rc" != 0 ] || [ "$(jq -r .transport <<<"$stdout")" != agent ]; then
    not_ok "$b: a first command runs through the agent (rc $rc: $stdout $stderr)"
    return
  fi
  ok "$b: a first command runs through the agent"

  # -- berth SIGKILLed mid-command
  new_marker
  start_bg "${C[@]}" exec -b "$b" -e "$e" -- "echo part; $SLEEP"
  if wait_for marker_running; then
    kill -9 "$BG"
    wait "$BG" 2>/dev/null
    check "$b: berth SIGKILLed mid-command: the command is gone within 2 s" gone_within_2s
    for p in $(marker_pids); do kill -9 "$p"; done
  else
    finish_bg
    not_ok "$b: the command did not start ($stderr)"
  fi

  # -- the agent SIGKILLed mid-command
  new_marker
  start_bg "${C[@]}" exec -b "$b" -e "$e" -- "echo part; $SLEEP"
  if wait_for marker_running && agent=$(agent_of_marker); then
    kill -9 "$agent"
    finish_bg
    is "$rc" 125 "$b: the agent SIGKILLed mid-command is a berth error (125), not a result"
    is "$stdout" part "$b: the output so far is delivered"
    like "$stderr" "berth: $b: *agent*" "$b: one line says the agent is gone"
    check "$b: in one line" one_line "$stderr"
    check "$b: nothing of the command is left running" marker_gone
  else
    finish_bg
    not_ok "$b: the command did not start, or no agent runs it ($stderr)"
  fi
  for p in $(marker_pids); do kill -9 "$p"; done
  run "${C[@]}" exec -b "$b" -e "$e" --json -- 'echo again'
  is "$rc:$(jq -r '.output + .transport' <<<"$stdout")" "0:again
agent" "$b: the next command recovers with a new agent"
}

# old_agent NAME CONFIG: an old binary in the cache is replaced.
old_agent ()
{
  local b=$1 e=ao$1$$
  CONF=$2
  local C=(${CONF:+--config "$CONF"})
  ENVS+=("$e")
  run "${C[@]}" exec -b "$b" -e "$e" -- true
  # Put an old agent in place of every cached one (a rename: the running
  # one keeps its file).
  # The named environment's agent serves on from the file it started
  # from: it is stopped (after this command) so that the next one starts
  # an agent from the cache.  Only its own (its socket names $e): on
  # local every agent of the host is in sight, other tests' too.
  run "${C[@]}" exec -b "$b" -e "$e" -- 'n=0; for f in /tmp/.berth-agent-*/berth-agent ${TMPDIR:-/tmp}/.berth-agent-*/berth-agent ~/.cache/berth/agent-*/berth-agent; do [ -f "$f" ] || continue; printf "#!/bin/sh\necho old agent\n" >"$f.old" && chmod 700 "$f.old" && mv -f "$f.old" "$f" && n=$((n+1)); done; echo $n
    (sleep 0.3; for p in /proc/[0-9]*; do case $(tr "\0" " " <$p/cmdline 2>/dev/null) in *[b]erth-agent\ --stdio\ --socket\ *'"$e"'*) kill ${p#/proc/};; esac; done) </dev/null >/dev/null 2>&1 &'
  if [ "$rc" != 0 ] || [ "${stdout:-0}" = 0 ]; then
    not_ok "$b: an old agent put in place (rc $rc: $stdout $stderr)"
    return
  fi
  sleep 1
  want=$(sha256sum "$(dirname "$BERTH")/agent/berth-agent" | cut -d' ' -f1)
  # this build's cache directory is named after its hash
  run "${C[@]}" exec -b "$b" -e "$e" --json -- "for f in /tmp/.berth-agent-*-${want:0:12}/berth-agent ~/.cache/berth/agent-*-${want:0:12}/berth-agent; do [ -f \"\$f\" ] && sha256sum \"\$f\"; done | cut -d\" \" -f1 | sort -u"
  is "$rc:$(jq -r .transport <<<"$stdout")" "0:agent" "$b: with an old agent in place the next command runs through the agent"
  is "$(jq -r .output <<<"$stdout")" "$want" "$b: the old agent was replaced by this build's"
}

# A planted listener (run as nobody): it logs every connection and byte
# it receives to $1.log.
plant_listener ()
{
  local sock=$1
  setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys, os
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
log = open(sys.argv[2], "ab", 0)
while True:
    c, _ = s.accept()
    log.write(b"connected\n")
    c.settimeout(5)
    try:
        while True:
            b = c.recv(65536)
            if not b: break
            log.write(b)
    except Exception: pass
    c.close()
' "$sock" "$2" &
  PLANTED=$!
  for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
}

# planted_direct: the agent run by hand with --socket in a private
# directory where another user's socket was moved: it neither connects to
# it nor relays.
planted_direct ()
{
  local agent d pd
  agent=$(dirname "$BERTH")/agent/berth-agent
  d=$TEST_TMP/private; pd=$TEST_TMP/nobody
  chmod 755 "$TEST_TMP"
  mkdir -m 700 "$d"; mkdir -m 777 "$pd"
  : >"$pd/log"; chmod 666 "$pd/log"
  plant_listener "$pd/sock" "$pd/log"
  mv "$pd/sock" "$d/sock"
  timeout 10 "$agent" --stdio --socket "$d/sock" </dev/null >/dev/null 2>&1
  kill "$PLANTED" 2>/dev/null; wait "$PLANTED" 2>/dev/null
  is "$(cat "$pd/log")" "" "agent: a socket of another user where the agent listens is never connected to"
}

# planted_ssh: another user made the ssh host's /tmp cache directory
# first (the genuine binary in it, a listener at the socket path).
planted_ssh ()
{
  local e=apssh$$ want tag d
  ENVS+=("$e")
  want=$(sha256sum "$(dirname "$BERTH")/agent/berth-agent" | cut -d' ' -f1)
  tag=$("$BERTH" version --json | jq -r .version)-${want:0:12}
  d=/tmp/.berth-agent-$tag
  rm -rf "$d" "$BERTH_SSHD_HOME/.cache/berth/agent-$tag"
  install -d -o nobody -g nogroup -m 0755 "$d"
  install -o nobody -g nogroup -m 0755 "$(dirname "$BERTH")/agent/berth-agent" "$d/berth-agent"
  : >"$TEST_TMP/planted.log"; chmod 666 "$TEST_TMP/planted.log"
  chmod 755 "$TEST_TMP"
  plant_listener "$d/s-$e" "$TEST_TMP/planted.log"
  run --config "$BERTH_SSHD_CONFIG" exec -b ssh -e "$e" --json -- 'echo hi'
  is "$rc:$(jq -r '(.output|rtrimstr("\n")) + " " + .transport' <<<"$stdout")" "0:hi agent" "ssh: with another user's directory at the cache path, commands still run through the agent"
  is "$(cat "$TEST_TMP/planted.log")" "" "ssh: the planted listener received nothing"
  kill "$PLANTED" 2>/dev/null; wait "$PLANTED" 2>/dev/null
  "$BERTH" --config "$BERTH_SSHD_CONFIG" rm "$e" >/dev/null 2>&1
  rm -rf "$d" "$BERTH_SSHD_HOME/.cache/berth/agent-$tag"
}

# hash_cache CONF: the agent program's hash is remembered in the runtime
# directory by the file's identity (not the whole binary read and hashed
# by every berth process); a remembered hash that is wrong (the file
# replaced in place) costs one command its agent, never a wrong upload,
# and the next berth hashes it again.
hash_cache ()
{
  local conf=$1 e=hc$$ cache=$XDG_RUNTIME_DIR/berth/agent-hash want
  ENVS+=("$e")
  want=$(sha256sum "$(dirname "$BERTH")/agent/berth-agent" | cut -d' ' -f1)
  rm -f "$cache"
  run --config "$conf" exec -b ssh -e "$e" --json -- true
  is "$rc:$(jq -r .transport <<<"$stdout")" "0:agent" "ssh: a command through the agent"
  is "$(stat -c %a "$cache" 2>/dev/null):$(awk '{ print $NF }' "$cache" 2>/dev/null)" "600:$want" "… its program's hash is remembered (0600) in the runtime directory"
  "$BERTH" --config "$conf" rm "$e" >/dev/null 2>&1
  # the same identity, another hash: as if the file was replaced in place
  sed -i "s/$want\$/$(printf '%064d' 0)/" "$cache"
  run --config "$conf" exec -b ssh -e "$e" --json -- 'echo hi'
  is "$rc:$(jq -r '(.output|rtrimstr("\n")) + " " + .transport' <<<"$stdout")" "0:hi exec" "ssh: a wrong remembered hash: the command runs (over exec), nothing wrong is uploaded"
  check "… and the remembered hash is gone" test ! -e "$cache"
  "$BERTH" --config "$conf" rm "$e" >/dev/null 2>&1
  run --config "$conf" exec -b ssh -e "$e" --json -- true
  is "$rc:$(jq -r .transport <<<"$stdout"):$(awk '{ print $NF }' "$cache" 2>/dev/null)" "0:agent:$want" "… the next berth hashes it again and runs through the agent"
  "$BERTH" --config "$conf" rm "$e" >/dev/null 2>&1
}

# other_version: an agent of another version listens where berth looks
# (the local environment's socket): the next command stops it and runs
# through an agent of this version (never falls back to exec).
other_version ()
{
  local e=avlocal$$ other sock oldpid
  other=$(dirname "$BERTH")/tests/integration/berth-agent-other
  [ -x "$other" ] || { not_ok "local: another version's agent: $other is not built (make check builds it)"; return; }
  ENVS+=("$e")
  start_bg exec -b local -e "$e" -- 'sleep 2'
  sock=
  for _ in $(seq 1 50); do
    sock=$(find "$XDG_RUNTIME_DIR/berth/$e" -name "agent-*.sock" 2>/dev/null | head -1)
    [ -n "$sock" ] && break
    sleep 0.1
  done
  finish_bg
  [ -n "$sock" ] || { not_ok "local: the agent's socket was not found under $XDG_RUNTIME_DIR"; return; }
  # a named environment's agent serves on: this version's goes first
  pkill -f "^[^ ]*berth-agent --stdio --socket $sock" 2>/dev/null
  for _ in $(seq 1 50); do [ -e "$sock" ] || break; sleep 0.1; done
  { sleep 600 | "$other" --stdio --socket "$sock" >/dev/null 2>&1; } &
  OTHER_JOB=$!
  for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
  oldpid=$(pgrep -f -n "^$other --stdio --socket $sock")
  run exec -b local -e "$e" --json -- 'echo hi'
  is "$rc:$(jq -r '(.output|rtrimstr("\n")) + " " + .transport' <<<"$stdout")" "0:hi agent" "local: with an agent of another version at the socket, the next command runs through the agent"
  for _ in $(seq 1 30); do
    # gone, or a zombie its parent has yet to reap
    kill -0 "$oldpid" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$oldpid/stat" 2>/dev/null)" != Z ] || break
    sleep 0.1
  done
  if [ -n "$oldpid" ] && { ! kill -0 "$oldpid" 2>/dev/null || [ "$(awk '{print $3}' "/proc/$oldpid/stat" 2>/dev/null)" = Z ]; }; then
    ok "local: the agent of another version is gone"
  else
    not_ok "local: the agent of another version is gone (pid ${oldpid:-?} still runs)"
    diag "$(ps -o pid,ppid,stat,args -p "${oldpid:-1}" 2>&1)"
    [ -n "$oldpid" ] && kill -9 "$oldpid" 2>/dev/null
  fi
  pkill -P "$OTHER_JOB" sleep 2>/dev/null
  wait "$OTHER_JOB" 2>/dev/null
}

# termination_docker: a memory hog in a 64 MB container is "oom"; a
# SIGKILL of our own is not.
termination_docker ()
{
  local e=atdocker$$ cfg=$TEST_TMP/docker-mem.yaml
  printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 64\n' >"$cfg"
  CONF=$cfg
  ENVS+=("$e")
  run --config "$cfg" exec -b docker -e "$e" --json -- 'head -c 500m /dev/zero | tail'
  is "$rc:$(jq -r '[.exit_code, .termination.kind, .termination.signal, .transport] | join(" ")' <<<"$stdout")" "137:137 oom SIGKILL agent" \
    "docker: a memory hog over terminal.container_memory ends with termination oom (SIGKILL)"
  run --config "$cfg" exec -b docker -e "$e" --json -- 'sh -c "kill -9 \$\$"'
  is "$(jq -r .termination.kind <<<"$stdout")" exited "docker: a SIGKILL that is not the OOM killer's is not oom"
}

# termination_bwrap: a busy loop under terminal.bwrap_cpu_seconds: 1 is
# "limit" (SIGXCPU).
termination_bwrap ()
{
  local cfg=$TEST_TMP/bwrap-cpu.yaml
  printf 'terminal:\n  bwrap_cpu_seconds: 1\n' >"$cfg"
  run --config "$cfg" exec -b bwrap --json -- 'while :; do :; done'
  is "$rc:$(jq -r '[.exit_code, .termination.kind, .termination.signal, .transport] | join(" ")' <<<"$stdout")" "152:152 limit SIGXCPU agent" \
    "bwrap: a busy loop over terminal.bwrap_cpu_seconds ends with termination limit (SIGXCPU)"
}

# no_bash: an image with busybox only (docker import of a static busybox,
# as setup/docker.sh makes berth-test).
no_bash ()
{
  local img=berth-test-nobash:latest root t
  if ! docker image inspect "$img" >/dev/null 2>&1; then
    root=$(mktemp -d "$TEST_TMP/nobash.XXXXXX")
    mkdir -p "$root"/{bin,etc,root,tmp}
    cp "$(readlink -f "$(command -v busybox)")" "$root/bin/busybox"
    for a in $(busybox --list-full); do
      [ "${a##*/}" = bash ] && continue
      mkdir -p "$root/$(dirname "$a")"
      [ -e "$root/$a" ] || ln -s /bin/busybox "$root/$a"
    done
    echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
    tar -C "$root" -c . | docker import -c 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' -c 'CMD ["/bin/sh"]' - "$img" >/dev/null \
      || { not_ok "docker: build $img"; return; }
    rm -rf "$root"
  fi
  printf 'terminal:\n  docker_image: %s\n' "$img" >"$TEST_TMP/nobash.yaml"
  for t in agent exec; do
    if [ $t = exec ]; then export BERTH_TRANSPORT=exec; fi
    run --config "$TEST_TMP/nobash.yaml" exec -b docker -- echo hi
    unset BERTH_TRANSPORT
    is "$rc" 125 "docker ($t): an image without bash is a berth error (125)"
    like "$stderr" "berth: docker: the image $img has no bash; berth runs commands with bash: use an image that has it (terminal.docker_image)" \
      "docker ($t): one line says the image has no bash and names the key"
    check "docker ($t): in one line" one_line "$stderr"
  done
}

# doctor_bench: berth doctor says per backend whether commands run
# through the agent, and why not when they cannot; berth bench shows the
# transport next to the ratio.
doctor_bench ()
{
  local d
  run doctor -b local --json
  d=$(jq -r '.[0].checks[] | select(.check == "berth-agent") | .detail' <<<"$stdout")
  like "$d" "commands run through the agent*" "doctor: local commands run through the agent"
  mkdir -p "$TEST_TMP/badagent"
  printf '#!/bin/sh\nexit 3\n' >"$TEST_TMP/badagent/berth-agent"
  chmod 755 "$TEST_TMP/badagent/berth-agent"
  BERTH_LIBEXECDIR=$TEST_TMP/badagent${BERTH_LIBEXECDIR:+:$BERTH_LIBEXECDIR} run doctor -b local --json
  d=$(jq -r '.[0].checks[] | select(.check == "berth-agent") | .detail' <<<"$stdout")
  like "$d" "commands run one exec each here, not through the agent: the agent *" "doctor: an agent that cannot run says why ($d)"
  # a remote backend: doctor makes no container (nor pulls its image),
  # connection or allocation to find out; the first command decides
  if "$BERTH" backends 2>/dev/null | grep -q '^docker *ready'; then
    local before after
    before=$(docker ps -aq --filter label=berth=1 | wc -l)
    BERTH_DEBUG=docker run doctor -b docker --json
    d=$(jq -r '.[0].checks[] | select(.check == "berth-agent") | .detail' <<<"$stdout")
    like "$d" "*decided by its first command*" "doctor: docker's agent check makes no environment ($d)"
    after=$(docker ps -aq --filter label=berth=1 | wc -l)
    is "$before:$(grep -c 'POST .*/containers/create' <<<"$stderr")" "$after:0" "… no container was created"
  fi
  run bench -b local -n 3 --json
  is "$rc:$(jq -r .transport <<<"$stdout")" 0:agent "bench --json: the transport"
  BERTH_TRANSPORT=exec run bench -b local -n 3
  like "$stdout" "*ratio (median): *x (transport exec)*" "bench: the transport next to the ratio"
}

CAN_PLANT=
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && [ -x /usr/bin/python3 ] && command -v setpriv >/dev/null && CAN_PLANT=1
if [ -n "$CAN_PLANT" ]; then
  planted_direct
else
  skip_case "agent: a planted socket" "needs root, the user nobody, setpriv and /usr/bin/python3"
fi
suite local ""
other_version
doctor_bench

if ! command -v docker >/dev/null || ! docker image inspect berth-test:latest >/dev/null 2>&1; then
  skip_case "docker: the agent's faults" "no engine with berth-test:latest (tests/integration/setup/docker.sh)"
else
  printf 'terminal:\n  docker_image: berth-test:latest\n' >"$TEST_TMP/docker.yaml"
  suite docker "$TEST_TMP/docker.yaml"
  old_agent docker "$TEST_TMP/docker.yaml"
  termination_docker
  if command -v busybox >/dev/null; then no_bash; else skip_case "docker: an image without bash" "busybox is not installed"; fi
fi

SSHD_ENV=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
if ! command -v ssh >/dev/null || [ ! -f "$SSHD_ENV" ]; then
  skip_case "ssh: the agent's faults" "no test sshd (tests/integration/setup/sshd.sh)"
else
  . "$SSHD_ENV"
  suite ssh "$BERTH_SSHD_CONFIG"
  old_agent ssh "$BERTH_SSHD_CONFIG"
  hash_cache "$BERTH_SSHD_CONFIG"
  if [ -n "$CAN_PLANT" ]; then
    planted_ssh
  else
    skip_case "ssh: a planted cache directory" "needs root, the user nobody, setpriv and /usr/bin/python3"
  fi
fi

if ! "$BERTH" backends 2>/dev/null | grep -q '^bwrap *ready'; then
  skip_case "bwrap: the agent's faults" "the bwrap backend is not ready here"
else
  suite bwrap ""
  termination_bwrap
fi
done_testing
