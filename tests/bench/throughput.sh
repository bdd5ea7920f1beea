#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# throughput.sh: bulk output through libberth (tests/bench/throughput.c)
# against the same transport piped into cat, per backend (DESIGN 9:
# >= 1x for docker and ssh, < 32 MiB RSS for any size).
# Usage: throughput.sh [BACKEND...] (docker ssh by default).
# BYTES=<output size> (default 1 GiB), ROUNDS=<n> (default 3).
set -u
. "$(dirname "$0")/bench-env.sh" throughput
PROG=${THROUGHPUT:-$B/tests/bench/throughput}
BYTES=${BYTES:-1073741824}
ROUNDS=${ROUNDS:-3}
E=tp$$
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
