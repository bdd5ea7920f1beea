#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the docker
# backend and a real engine (tests/integration/setup/docker.sh), with the
# offline image berth-test:latest.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/libtest.sh"
if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null; then
  bash "$src/tests/integration/setup/docker.sh" >/dev/null 2>&1 || skip_all "tests/integration/setup/docker.sh failed"
fi
command -v docker >/dev/null && docker image inspect berth-test:latest >/dev/null 2>&1 \
  || skip_all "no engine with berth-test:latest: run tests/integration/setup/docker.sh as root"
d=$(mktemp -d "${TMPDIR:-/tmp}/berth-docker-contract.XXXXXX")
trap 'rm -rf "$d"' EXIT
printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n' > "$d/config.yaml"
export BERTH_CONFIG=$d/config.yaml
unset DOCKER_HOST
bash "$src/tests/contract/contract.sh" docker
