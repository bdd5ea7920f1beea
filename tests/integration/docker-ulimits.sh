#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# HostConfig.Ulimits of the docker backend (issue 17): inside a container
# `ulimit -n` / `ulimit -Hn` show berth's own limits by default, the values
# of terminal.docker_ulimits when configured, and a configured value above
# berth's hard limit capped at it with a warning naming the key.  Against
# the shared dockerd, or with the argument "podman" against the root Podman
# service of tests/integration/setup/podman.sh (podman-ulimits.sh).
# berth runs with nofile lowered to 2000 (soft) / 3000 (hard), so the
# expectations do not depend on the shell the tests run in.  Each case
# shows the limits of the command (`ulimit -n`, `ulimit -Hn`) and of the
# container's PID 1 (exactly what HostConfig.Ulimits set).  The soft limit
# of an exec'd command is the configured one or, once in a while, the hard
# one: runc before 1.1.13 (Debian 12 has 1.1.5, under dockerd and Podman)
# races with the Go runtime of its init, which raises the soft nofile limit
# to the hard one (opencontainers/runc#4195, fixed by #4265); both pass.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
engine=${1:-docker}
if [ "$engine" = podman ]; then
  . "$src/tests/integration/podman-lib.sh"
  sock=$PODMAN_RUN/podman.sock
  podman_ready "$sock"
  export DOCKER_HOST=unix://$sock
  TDIR=$PODMAN_TMP
  export XDG_STATE_HOME=$TDIR/state XDG_RUNTIME_DIR=$TDIR/run XDG_CONFIG_HOME=$TDIR/config XDG_DATA_HOME=$TDIR/data
  mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
  unset BERTH_CONFIG
else
  . "$src/tests/integration/docker-lib.sh"
fi
unset DOCKER_CONTEXT
# expect WANT NAME: "$rc $out" is "0 SOFT HARD / SOFT HARD" (WANT's four
# numbers), or the command's soft limit is HARD (runc#4195, above).
expect ()
{
  local -a w=($1)
  local raced="0 ${w[1]} ${w[1]} / ${w[0]} ${w[1]}"
  if [ "$rc $out" = "$raced" ] && [ "${w[0]}" != "${w[1]}" ]; then
    ok "$2 (the command's soft limit raised to the hard one: runc#4195)"
  else
    is "$rc $out" "0 ${w[0]} ${w[1]} / ${w[0]} ${w[1]}" "$2"
  fi
}
CFG=$TDIR/ulimits.yaml

# run_case NAME [YAML line under terminal:]: "SOFT HARD / SOFT1 HARD1", the
# nofile limits of a command and of PID 1 in a throw-away container, berth
# started with nofile 2000/3000.
run_case ()
{
  {
    printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n'
    [ -n "${2:-}" ] && printf '  %s\n' "$2"
  } > "$CFG"
  (ulimit -Sn 2000 && ulimit -Hn 3000 && exec "$BERTH" --config "$CFG" exec -b docker --json -- \
    'set -- $(grep "^Max open files" /proc/1/limits); echo $(ulimit -n) $(ulimit -Hn) / $4 $5') >"$TDIR/out.json" 2>"$TDIR/err"
  rc=$?
  out=$(jq -r '.output | rtrimstr("\n")' "$TDIR/out.json" 2>/dev/null)
  err=$(cat "$TDIR/err")
  [ "$rc" = 0 ] || diag "$(cat "$TDIR/out.json" "$TDIR/err")"
  [ "$out" = "" ] || diag "$1: $out (transport $(jq -r .transport "$TDIR/out.json"))"
}

run_case default
expect "2000 3000" "$engine: by default a container has berth's own nofile limits"
is "$err" "" "$engine: no warning for the defaults"

run_case configured "docker_ulimits: {nofile: 1024:2048}"
expect "1024 2048" "$engine: terminal.docker_ulimits nofile 1024:2048 is the container's"
is "$err" "" "$engine: no warning for a configured value within berth's hard limit"

run_case above "docker_ulimits: {nofile: 1024:1048576}"
expect "1024 3000" "$engine: a configured hard limit above berth's is capped at it (the container starts)"
like "$err" "*warning: terminal.docker_ulimits: nofile: 1024:1048576 lowered to 1024:3000*" "$engine: the cap is a warning naming the key"
[ "$(grep -c . <<<"$err")" = 1 ] || diag "$err"

run_case unlimited "docker_ulimits: {nofile: unlimited}"
expect "3000 3000" "$engine: nofile unlimited is capped at berth's hard limit"
like "$err" "*terminal.docker_ulimits: nofile: unlimited:unlimited lowered to 3000:3000*" "$engine: ... with the warning"

done_testing
