#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# faults-gc.sh: what a failed creation or a killed berth leaves (issue 11,
# A.4, A.5 and the image rule of B.12).
#  - A failed `-e NAME` creation leaves nothing (state dir, runtime dir,
#    lock) for every failure kind cheap to cause here; a state directory
#    without a record (left by an older version) is listed by
#    `gc --dry-run` and removed by `gc`.
#  - berth SIGKILLed mid-command: the local command's shell dies with it
#    (parent-death signal); `berth gc` kills what a named environment's
#    command left and removes throw-away environments whose berth is gone
#    through their backend (a running container, a jail), and says so.
#  - --image on an existing named environment that was made with another
#    image is refused before anything changes, on every backend.
# Only what this script starts is killed: its own berth processes, its
# own environments' commands, containers and jails.
# What berth gc finds after berth -9 is what exec-per-command leaves (the
# agent kills a foreground command itself when its berth dies:
# tests/integration/agent-faults.sh).
export BERTH_TRANSPORT=exec
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
. "$(dirname "${BASH_SOURCE[0]}")/faults-lib.sh"
berth_test_home
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
command -v jq >/dev/null || skip_all "jq is not installed"
command -v pgrep >/dev/null || skip_all "pgrep is not installed (procps)"
mkdir -p "$TEST_TMP/work"
cd "$TEST_TMP/work" || exit 1

run ()
{
  "$BERTH" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  rc=$?
  stdout=$(cat "$TEST_TMP/out")
  stderr=$(cat "$TEST_TMP/err")
}
start_bg ()
{
  "$BERTH" "$@" >"$TEST_TMP/bg.out" 2>"$TEST_TMP/bg.err" </dev/null &
  BG=$!
}
kill_bg () { kill -9 "$BG" 2>/dev/null; wait "$BG" 2>/dev/null; }
ENVS=$XDG_STATE_HOME/berth/envs
RUNS=$XDG_RUNTIME_DIR/berth
# nothing_left NAME: no state dir, runtime dir or lock of NAME
nothing_left () { [ ! -e "$ENVS/$1" ] && [ ! -e "$RUNS/$1" ]; }
backend_ready () { "$BERTH" backends 2>/dev/null | grep -q "^$1 *ready"; }
# the throw-away environments (no meta) in our state directory
throwaways () { for d in "$ENVS"/*/; do [ -d "$d" ] && [ ! -e "$d/meta" ] && basename "$d"; done; }

# ---------------------------------------------------- A.5 failed creations
fails_clean ()
{
  local desc=$1 name=$2; shift 2
  run "$@"
  is "$rc" 125 "failed creation ($desc): a berth error"
  check "failed creation ($desc): leaves no state, runtime dir or lock" nothing_left "$name"
}
fails_clean "ssh without ssh_host" c-nohost exec -b ssh -e c-nohost -- true
printf 'terminal:\n  ssh_host: 127.0.0.1\n  ssh_port: 1\n  ssh_user: nobody\n' >"$TEST_TMP/ssh-refused.yaml"
if command -v ssh >/dev/null; then
  fails_clean "ssh to a port where nothing listens" c-refused --config "$TEST_TMP/ssh-refused.yaml" exec -b ssh -e c-refused -- true
else
  skip_case "failed creation (ssh refused)" "no ssh client"
fi
if "$BERTH" backends 2>/dev/null | grep -q '^docker '; then
  printf 'terminal:\n  docker_image: berth-test:latest\n' >"$TEST_TMP/docker.yaml"
  DOCKER_HOST=unix://$TEST_TMP/no-such-engine.sock fails_clean "docker engine down" c-noengine \
    --config "$TEST_TMP/docker.yaml" exec -b docker -e c-noengine -- true
  if docker image inspect berth-test:latest >/dev/null 2>&1; then
    fails_clean "docker image that cannot be pulled" c-nopull \
      --config "$TEST_TMP/docker.yaml" exec -b docker -e c-nopull --image 127.0.0.1:1/berth-none:latest -- true
  else
    skip_case "failed creation (docker pull)" "no engine with berth-test:latest"
  fi
else
  skip_case "failed creation (docker)" "built without the docker backend"
fi
if backend_ready bwrap; then
  (cd /etc && "$BERTH" exec -b bwrap -e c-etc -- true >/dev/null 2>&1)
  is "$?" 125 "failed creation (bwrap, /etc as workspace): a berth error"
  check "failed creation (bwrap, /etc as workspace): leaves nothing" nothing_left c-etc
else
  skip_case "failed creation (bwrap)" "the bwrap backend is not ready here"
fi
run ls --json
is "$(jq -r 'if type == "array" then length else (.environments | length) end' <<<"$stdout")" 0 "failed creations: ls lists none of them"

# Leftovers of older versions: a state dir without a record (and a
# runtime dir without state), old enough; a young one is a creation
# under way and stays.
mkdir -p "$ENVS/old-left" "$RUNS/old-run" "$ENVS/young"
: >"$ENVS/old-left/lock"
touch -d '2 hours ago' "$ENVS/old-left" "$RUNS/old-run"
run gc --dry-run --json
is "$(jq -r '[.environments[] | select(.reason == "incomplete") | .env] | sort | join(",")' <<<"$stdout")" "old-left,old-run" \
  "gc --dry-run lists a state dir without a record and a runtime dir without state"
check "... and removes nothing" test -d "$ENVS/old-left" -a -d "$RUNS/old-run"
run gc
like "$stdout" "*removed old-left *" "gc says what it removed"
check "gc removes them" nothing_left old-left
check "... the runtime one too" test ! -e "$RUNS/old-run"
check "... and leaves a young one (a creation under way)" test -d "$ENVS/young"
rmdir "$ENVS/young"

# ---------------------------------------------------- A.4 berth killed
# local, named: the shell dies with berth; gc kills what it left
new_marker
start_bg exec -e gl -- "echo part; $SLEEP"
if wait_for marker_running; then
  wrapper=$(ps -o ppid= -p "$(marker_pids | head -1)" | tr -d ' ')
  kill_bg
  check "local: berth killed with -9 takes its command's shell with it (parent-death signal)" wait_for eval "! kill -0 $wrapper 2>/dev/null"
  check "local: ... its children stay (documented), until gc" marker_running
  run gc --dry-run --json
  is "$(jq -r '.environments[] | select(.env == "gl") | .reason' <<<"$stdout")" orphaned_command "gc --dry-run names the orphaned command"
  check "... and leaves it running" marker_running
  run gc --json
  is "$(jq -r '[.environments_removed, (.environments[] | select(.env == "gl") | .reason)] | map(tostring) | join(",")' <<<"$stdout")" \
    "1,orphaned_command" "gc --json reports the command it killed"
  check "local: gc kills the orphaned command" marker_gone
  run exec -e gl -- 'echo still'
  is "$rc:$stdout" "0:still" "local: the named environment is kept and works"
else
  kill_bg
  not_ok "local: the command did not start ($(cat "$TEST_TMP/bg.err"))"
fi
"$BERTH" rm gl >/dev/null 2>&1

# local, throw-away: removed once its berth is gone, kept while it lives
new_marker
start_bg exec -- "echo part; $SLEEP"
if wait_for marker_running; then
  id=$(throwaways | head -1)
  check "local throw-away: it records its owner" grep -q "^pid=$BG\$" "$ENVS/$id/owner"
  run gc
  check "gc leaves a throw-away environment whose berth is alive" test -d "$ENVS/$id"
  check "... and its command" marker_running
  kill_bg
  run gc
  like "$stdout" "*removed $id (local): a throw-away environment whose berth (pid $BG) is gone*" "gc removes the throw-away environment of a killed berth"
  check "... its state" nothing_left "$id"
  check "... and its command" marker_gone
else
  kill_bg
  not_ok "local throw-away: the command did not start"
fi

# docker, throw-away: the container stays Up after berth -9; gc removes it
if "$BERTH" backends 2>/dev/null | grep -q '^docker ' && docker image inspect berth-test:latest >/dev/null 2>&1; then
  printf 'terminal:\n  docker_image: berth-test:latest\n  lifetime_seconds: 1\n' >"$TEST_TMP/docker1.yaml"
  new_marker
  start_bg --config "$TEST_TMP/docker1.yaml" exec -b docker -- "echo part; $SLEEP"
  if wait_for marker_running; then
    id=$(throwaways | head -1)
    kill_bg
    sleep 2
    up=$(docker ps --filter "label=berth.env=$id" --format '{{.ID}}')
    check "docker throw-away: after berth -9 its container is still Up" test -n "$up"
    run --config "$TEST_TMP/docker1.yaml" gc --json
    is "$(jq -r ".environments[] | select(.env == \"$id\") | .reason" <<<"$stdout")" owner_gone "docker: gc reports the throw-away environment of a killed berth"
    check "docker: gc removes its container (running)" wait_for eval "[ -z \"\$(docker ps -a --filter label=berth.env=$id --format '{{.ID}}')\" ]"
    check "docker: ... and its state" nothing_left "$id"
    check "docker: ... and the command" marker_gone
  else
    kill_bg
    not_ok "docker throw-away: the command did not start ($(cat "$TEST_TMP/bg.err"))"
  fi
else
  skip_case "docker throw-away after berth -9" "no docker backend or no berth-test:latest"
fi

# bwrap, throw-away: the jail outlives berth -9; gc destroys it
if backend_ready bwrap; then
  new_marker
  start_bg exec -b bwrap -- "echo part; $SLEEP"
  if wait_for marker_running; then
    id=$(throwaways | head -1)
    kill_bg
    sleep 0.5
    marker_running || diag "bwrap: the jail ended with its berth already"
    run gc
    like "$stdout" "*removed $id (bwrap)*" "bwrap: gc removes the throw-away environment of a killed berth"
    check "bwrap: ... its jail and command" marker_gone
    check "bwrap: ... and its state" nothing_left "$id"
  else
    kill_bg
    not_ok "bwrap throw-away: the command did not start ($(cat "$TEST_TMP/bg.err"))"
  fi
else
  skip_case "bwrap throw-away after berth -9" "the bwrap backend is not ready here"
fi

# docker and bwrap, named: the command keeps running in the container or
# jail after berth -9; gc kills it there, the environment is kept
named_orphan ()
{
  local be=$1 name=$2; shift 2
  new_marker
  start_bg "$@" exec -b "$be" -e "$name" -- "echo part; $SLEEP"
  if wait_for marker_running; then
    kill_bg
    sleep 0.5
    check "$be named: after berth -9 its command still runs" marker_running
    run "$@" gc
    like "$stdout" "*killed the orphaned command of $name ($be)*" "$be named: gc kills the orphaned command"
    check "$be named: ... where it runs" marker_gone
    run "$@" exec -e "$name" -- 'echo kept'
    is "$rc:$stdout" "0:kept" "$be named: ... and the environment works"
  else
    kill_bg
    not_ok "$be named: the command did not start ($(cat "$TEST_TMP/bg.err"))"
  fi
  "$BERTH" "$@" rm "$name" >/dev/null 2>&1
}
if "$BERTH" backends 2>/dev/null | grep -q '^docker ' && docker image inspect berth-test:latest >/dev/null 2>&1; then
  named_orphan docker gd --config "$TEST_TMP/docker.yaml"
else
  skip_case "docker named after berth -9" "no docker backend or no berth-test:latest"
fi
if backend_ready bwrap; then
  named_orphan bwrap gb
else
  skip_case "bwrap named after berth -9" "the bwrap backend is not ready here"
fi

# ssh, named: the master outlives berth -9, and so does the remote
# command; gc kills it through the master
SSHD_ENV=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
if command -v ssh >/dev/null && [ -f "$SSHD_ENV" ]; then
  . "$SSHD_ENV"
  printf 'terminal:\n  ssh_host: %s\n  ssh_port: %s\n  ssh_user: %s\n  ssh_key: %s\n  ssh_options:\n    - UserKnownHostsFile=%s\n' \
    "$BERTH_SSHD_HOST" "$BERTH_SSHD_PORT" "$BERTH_SSHD_USER" "$BERTH_SSHD_KEY" "$BERTH_SSHD_KNOWN_HOSTS" >"$TEST_TMP/ssh.yaml"
  new_marker
  start_bg --config "$TEST_TMP/ssh.yaml" exec -b ssh -e gs -- "echo part; $SLEEP"
  if wait_for marker_running; then
    kill_bg
    sleep 0.5
    check "ssh: after berth -9 the remote command still runs" marker_running
    run --config "$TEST_TMP/ssh.yaml" gc
    like "$stdout" "*killed the orphaned command of gs (ssh)*" "ssh: gc kills the orphaned command of a named environment"
    check "ssh: ... on the remote host" marker_gone
  else
    kill_bg
    not_ok "ssh: the command did not start ($(cat "$TEST_TMP/bg.err"))"
  fi
  "$BERTH" --config "$TEST_TMP/ssh.yaml" rm gs >/dev/null 2>&1
  for p in $(marker_pids); do kill -9 "$p"; done
else
  skip_case "ssh: the orphaned command of a killed berth" "no test sshd"
fi

# ---------------------------------------------------- B.12 the image rule
run exec -e im --image img-a -- 'echo a'
is "$rc:$stdout" "0:a" "local: a named environment made with --image img-a"
run exec -e im --image img-b -- 'echo b'
is "$rc" 125 "local: --image img-b on it is refused (125)"
is "$stderr" "berth: environment im uses image img-a; \`berth rm im\` to use img-b" "local: ... saying which image it uses and what to do"
check "local: ... and the command did not run" test -z "$stdout"
check "local: ... and the record keeps img-a" grep -qx 'image=img-a' "$ENVS/im/meta"
run exec -e im --image img-a -- 'echo same'
is "$rc:$stdout" "0:same" "local: the same image is fine"
"$BERTH" rm im >/dev/null 2>&1
if "$BERTH" backends 2>/dev/null | grep -q '^docker ' && docker image inspect berth-test:latest >/dev/null 2>&1; then
  run --config "$TEST_TMP/docker.yaml" exec -b docker -e dim --image berth-test:latest -- 'echo kept > /root/f; echo made'
  is "$rc:$stdout" "0:made" "docker: a named environment made with --image berth-test:latest"
  ids=$(docker ps -a --filter "label=berth.env=dim" --format '{{.ID}}')
  run --config "$TEST_TMP/docker.yaml" exec -b docker -e dim --image 127.0.0.1:1/other:latest -- 'echo ran'
  is "$rc" 125 "docker: another --image is refused (125)"
  like "$stderr" "berth: environment dim uses image berth-test:latest; \`berth rm dim\` to use 127.0.0.1:1/other:latest" \
    "docker: ... by the runtime's rule, before anything changes"
  run --config "$TEST_TMP/docker.yaml" exec -b docker -e dim -- 'cat /root/f'
  is "$rc:$stdout:$(docker ps -a --filter "label=berth.env=dim" --format '{{.ID}}')" "0:kept:$ids" "docker: the environment is untouched (same container, its files)"
  "$BERTH" --config "$TEST_TMP/docker.yaml" rm dim >/dev/null 2>&1
else
  skip_case "docker: the image rule" "no docker backend or no berth-test:latest"
fi

done_testing
