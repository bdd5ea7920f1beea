#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the docker
# backend talking to a ROOTLESS Podman (the service tests/integration/setup/
# podman.sh runs as the user berthpodman, with subordinate ids), image
# berth-test:latest.  As root, berth itself runs as berthpodman, as a
# rootless user would (when it can read the build tree).  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/podman-lib.sh"
sock=$PODMAN_RUN/rootless/podman.sock
podman_ready "$sock"
export BERTH_CONFIG=$PODMAN_TMP/config.yaml DOCKER_HOST=unix://$sock
unset DOCKER_CONTEXT
# The build tree must be readable by that user (a clone under /root is
# not): otherwise berth runs as root, against the same rootless engine.
if [ "$(id -u)" = 0 ] && runuser -u "$PODMAN_USER" -- test -x "$BERTH" -a -r "$src/tests/contract/contract.sh"; then
  home=$(getent passwd "$PODMAN_USER" | cut -d: -f6)
  vars=(HOME="$home" USER="$PODMAN_USER" LOGNAME="$PODMAN_USER" PATH="$PATH" TMPDIR=/tmp LANG=C.UTF-8
    BERTH_CONFIG="$BERTH_CONFIG" DOCKER_HOST="$DOCKER_HOST" CI="${CI:-}" BERTH_TEST_MUST_WORK="${BERTH_TEST_MUST_WORK:-}")
  for v in BERTH BERTH_BUILDDIR BERTH_SRCDIR BERTH_MODULEDIR BERTH_LIBEXECDIR BERTH_BINDIR; do
    [ -n "${!v:-}" ] && vars+=("$v=${!v}")
  done
  # From a directory the user can enter.
  cd /tmp && runuser -u "$PODMAN_USER" -- env -i "${vars[@]}" bash "$src/tests/contract/contract.sh" docker
  exit $?
fi
[ "$(id -u)" = 0 ] && echo "# $PODMAN_USER cannot read the build tree: berth runs as root against the rootless engine"
bash "$src/tests/contract/contract.sh" docker
