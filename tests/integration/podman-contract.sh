#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the docker
# backend talking to a root Podman's Docker-compatible API (the private
# service of tests/integration/setup/podman.sh), image berth-test:latest.
# Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/podman-lib.sh"
sock=$PODMAN_RUN/podman.sock
podman_ready "$sock"
export BERTH_CONFIG=$PODMAN_TMP/config.yaml DOCKER_HOST=unix://$sock
unset DOCKER_CONTEXT
bash "$src/tests/contract/contract.sh" docker
