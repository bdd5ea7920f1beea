#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# agent-serve.sh: a named environment's agent serves every later berth
# process (berth-agent --serve, reached through the backend's
# agent_socket), on every backend that is ready here (local, bwrap,
# docker, ssh), with no configuration beyond what the backend needs:
#   - a second berth process runs its command through the same agent,
#     connected directly: no command through the transport (docker: no
#     engine call at all; ssh: no ssh process);
#   - an env_passthrough value changed between two berth processes
#     reaches the second command (the agent is the first one's);
#   - the serving agent SIGKILLed between commands: the next command
#     runs through a new agent;
#   - berth rm stops it: no agent of the environment is left running.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
berth_test_home
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v pgrep >/dev/null || skip_all "pgrep is not installed (procps)"
unset BERTH_TRANSPORT BERTH_DEBUG
ENVS=()
trap 'for e in "${ENVS[@]}"; do "$BERTH" --config "$CONF" rm "$e" >/dev/null 2>&1; done; berth_test_cleanup' EXIT

run ()
{
  "$BERTH" --config "$CONF" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  rc=$?
  stdout=$(cat "$TEST_TMP/out")
  stderr=$(cat "$TEST_TMP/err")
}
# the agents serving environment E (their command lines name its socket)
agents_of () { pgrep -f "berth-agent --stdio --socket [^ ]*$1[^ ]* --serve"; }
agent_pid () { jq -r '.output' <<<"$stdout" | sed -n 's/^proc=\([0-9]*\)\..*/\1/p'; }

# serve NAME CONFIG-BODY QUIET-AREA QUIET-RE: the cases on backend NAME;
# with BERTH_DEBUG=QUIET-AREA a command through the serving agent prints
# no line matching QUIET-RE (a command through the transport).
serve ()
{
  local b=$1 e=as$1$$ quiet_area=$3 quiet_re=$4 first second
  CONF=$TEST_TMP/$b.yaml
  { printf '%s\n' "$2"; printf '  env_passthrough: [BERTH_T_PASS]\n'; } >"$CONF"
  ENVS+=("$e")
  BERTH_T_PASS=one run exec -b "$b" -e "$e" --json -- 'echo "proc=$BERTH_AGENT_PROC pass=$BERTH_T_PASS"'
  first=$(agent_pid)
  if [ "$rc" != 0 ] || [ "$(jq -r .transport <<<"$stdout")" != agent ] || [ -z "$first" ]; then
    not_ok "$b: a first command runs through the agent (rc $rc: $stdout $stderr)"
    return
  fi
  ok "$b: a first command runs through the agent"
  like "$(jq -r .output <<<"$stdout")" "*pass=one*" "$b: the passthrough value reaches it"

  BERTH_T_PASS=two BERTH_DEBUG="agent,$quiet_area" run exec -e "$e" --json -- 'echo "proc=$BERTH_AGENT_PROC pass=$BERTH_T_PASS"'
  second=$(agent_pid)
  is "$rc:$(jq -r .transport <<<"$stdout"):$second" "0:agent:$first" "$b: a second berth process runs through the same agent"
  like "$stderr" "*the agent at * connected*" "… connected to its socket directly"
  if grep -E "$quiet_re" <<<"$stderr" >/dev/null; then
    not_ok "$b: … with no command through the transport"
    diag "$(grep -E "$quiet_re" <<<"$stderr" | head -3)"
  else
    ok "$b: … with no command through the transport"
  fi
  like "$(jq -r .output <<<"$stdout")" "*pass=two*" "$b: a passthrough value changed since the agent started reaches the command"

  # -- the serving agent killed between commands
  kill -9 "$(agents_of "$e")" 2>/dev/null
  sleep 0.3
  run exec -e "$e" --json -- 'echo "proc=$BERTH_AGENT_PROC"'
  is "$rc:$(jq -r .transport <<<"$stdout")" "0:agent" "$b: the serving agent killed: the next command runs through a new agent"
  [ -n "$(agent_pid)" ] && [ "$(agent_pid)" != "$first" ] && ok "$b: … another one" || not_ok "$b: … another one (pid $(agent_pid), was $first)"

  # -- berth rm stops it
  [ -n "$(agents_of "$e")" ] && ok "$b: the agent serves after its berth process ended" || not_ok "$b: the agent serves after its berth process ended"
  run rm "$e"
  is "$rc" 0 "$b: berth rm"
  local i
  for i in $(seq 1 20); do [ -z "$(agents_of "$e")" ] && break; sleep 0.1; done
  if [ -z "$(agents_of "$e")" ]; then ok "$b: berth rm stops the serving agent"; else not_ok "$b: berth rm stops the serving agent ($(agents_of "$e") runs)"; fi

  # -- berth rm without the configuration that made the environment (a
  #    cleanup that does not know it): the agent goes too
  local e2=${e}x
  ENVS+=("$e2")
  run exec -b "$b" -e "$e2" -- true
  "$BERTH" rm "$e2" >/dev/null 2>&1
  for i in $(seq 1 20); do [ -z "$(agents_of "$e2")" ] && break; sleep 0.1; done
  if [ -z "$(agents_of "$e2")" ]; then ok "$b: berth rm without its configuration stops it too"; else not_ok "$b: berth rm without its configuration stops it too ($(agents_of "$e2") runs)"; kill "$(agents_of "$e2")" 2>/dev/null; fi
}

serve local "terminal:" local "spawn pid [1-9]"

# A serving agent whose socket was removed (its directory cleaned under
# it) can be reached by nobody, berth rm included: it ends by itself.
CONF=$TEST_TMP/local.yaml
e=asgone$$
ENVS+=("$e")
run exec -b local -e "$e" -- true
sock=$(find "$XDG_RUNTIME_DIR/berth/$e" -name "agent-*.sock" 2>/dev/null | head -1)
if [ -z "$sock" ] || [ -z "$(agents_of "$e")" ]; then
  not_ok "local: a serving agent with its socket ($sock)"
else
  rm -f "$sock"
  for i in $(seq 1 150); do [ -z "$(agents_of "$e")" ] && break; sleep 0.1; done
  if [ -z "$(agents_of "$e")" ]; then ok "local: a serving agent whose socket was removed ends within 15 s"; else not_ok "local: a serving agent whose socket was removed ends within 15 s"; kill "$(agents_of "$e")" 2>/dev/null; fi
fi

if ! "$BERTH" backends 2>/dev/null | grep -q '^bwrap *ready'; then
  skip_case "bwrap: the serving agent" "the bwrap backend is not ready here"
else
  serve bwrap "terminal:" bwrap "spawn pid [1-9]|berth-jail"

  # A copy of this agent in the home's cache, read-only in the jail (the
  # jail writes only its workspace, here the test's directory): the agent
  # must not run from there and serve nobody (its socket cannot be made
  # there); it is placed where it can serve.
  want=$(sha256sum "$(dirname "$BERTH")/agent/berth-agent" | cut -d' ' -f1)
  rocache=$HOME/.cache/berth/agent-$("$BERTH" version --json | jq -r .version)-${want:0:12}
  made=
  if [ ! -e "$rocache" ]; then
    mkdir -p "$(dirname "$rocache")" && mkdir -m 700 "$rocache" && install -m 700 "$(dirname "$BERTH")/agent/berth-agent" "$rocache/" && made=1
  fi
  CONF=$TEST_TMP/bwrap.yaml
  e=asro$$
  ENVS+=("$e")
  run exec -b bwrap -e "$e" -- true
  BERTH_DEBUG=agent run exec -e "$e" --json -- 'echo "proc=$BERTH_AGENT_PROC"'
  is "$rc:$(jq -r .transport <<<"$stdout")" "0:agent" "bwrap: with a copy in a home read-only there, a second berth process runs through the agent"
  like "$stderr" "*the agent at * connected*" "… the serving one, connected to its socket directly"
  "$BERTH" --config "$CONF" rm "$e" >/dev/null 2>&1
  [ -n "$made" ] && rm -rf "$rocache"
fi

if ! command -v docker >/dev/null || ! docker image inspect berth-test:latest >/dev/null 2>&1; then
  skip_case "docker: the serving agent" "no engine with berth-test:latest (tests/integration/setup/docker.sh)"
else
  serve docker "terminal:
  docker_image: berth-test:latest" docker "HTTP "
fi

SSHD_ENV=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
if ! command -v ssh >/dev/null || [ ! -f "$SSHD_ENV" ]; then
  skip_case "ssh: the serving agent" "no test sshd (tests/integration/setup/sshd.sh)"
else
  . "$SSHD_ENV"
  serve ssh "$(cat "$BERTH_SSHD_CONFIG")" ssh "spawn pid [1-9]"
fi
done_testing
