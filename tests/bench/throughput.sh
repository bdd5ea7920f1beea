#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# throughput.sh: bulk output through libberth (tests/bench/throughput.c)
# against the same transport piped into cat, per backend (DESIGN 9:
# >= 1x for docker and ssh, < 32 MiB RSS for any size).
# Usage: throughput.sh [BACKEND...] (docker ssh by default).
# BYTES=<output size> (default 1 GiB), ROUNDS=<n> (default 3).
set -u
B=${BERTH_BUILDDIR:-.}
BERTH=${BERTH:-$B/berth}
PROG=${THROUGHPUT:-$B/tests/bench/throughput}
BYTES=${BYTES:-1073741824}
ROUNDS=${ROUNDS:-3}
if [ -x "$B/agent/berth-agent" ]; then
  d=$(cd "$B" && pwd)
  : "${BERTH_MODULEDIR:=$d/docker/.libs:$d/bwrap/.libs:$d/local/.libs:$d/ssh/.libs:$d/singularity/.libs:$d/slurm/.libs}"
  : "${BERTH_LIBEXECDIR:=$d:$d/agent:$d/bwrap:$d/ssh:$d/slurm}"
  : "${BERTH_BINDIR:=$d}"
  export BERTH_MODULEDIR BERTH_LIBEXECDIR BERTH_BINDIR
fi
T=$(mktemp -d /tmp/berth-throughput.XXXXXX)
export XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
E=tp$$
CLEAN=()
trap 'for c in "${CLEAN[@]}"; do eval "$c"; done; rm -rf "$T"' EXIT
status=0
backends=("$@")
[ ${#backends[@]} -gt 0 ] || backends=(docker ssh)
for b in "${backends[@]}"; do
  case $b in
    docker)
      command -v docker >/dev/null && docker image inspect berth-test:latest >/dev/null 2>&1 || { echo "throughput: docker: no engine with berth-test:latest"; continue; }
      cfg=$T/docker.yaml
      printf 'terminal:\n  docker_image: berth-test:latest\n' >"$cfg"
      CLEAN+=("\"$BERTH\" --config $cfg rm ${E}docker >/dev/null 2>&1")
      "$BERTH" --config "$cfg" exec -b docker -e "${E}docker" -- true || { status=1; continue; }
      cid=$(docker ps -q --no-trunc --filter label=berth=1 --filter "label=berth.env=${E}docker")
      BERTH_CONFIG=$cfg "$PROG" docker "${E}docker" "$BYTES" "$ROUNDS" -- docker exec "$cid" sh -c "head -c $BYTES /dev/zero" || status=1
      ;;
    ssh)
      env=${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env
      [ -f "$env" ] || { echo "throughput: ssh: no test sshd"; continue; }
      . "$env"
      CLEAN+=("\"$BERTH\" --config $BERTH_SSHD_CONFIG rm ${E}ssh >/dev/null 2>&1")
      "$BERTH" --config "$BERTH_SSHD_CONFIG" exec -b ssh -e "${E}ssh" -- true || { status=1; continue; }
      BERTH_CONFIG=$BERTH_SSHD_CONFIG "$PROG" ssh "${E}ssh" "$BYTES" "$ROUNDS" -- \
        ssh -S "$XDG_RUNTIME_DIR/berth/${E}ssh/cm" -p "$BERTH_SSHD_PORT" "$BERTH_SSHD_USER@$BERTH_SSHD_HOST" "head -c $BYTES /dev/zero" || status=1
      ;;
    *) echo "throughput: unknown backend $b" >&2; status=2 ;;
  esac
done
exit $status
