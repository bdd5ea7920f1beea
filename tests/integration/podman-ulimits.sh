#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docker-ulimits.sh against the root Podman service of
# tests/integration/setup/podman.sh: Podman refuses to start a container
# whose ulimits exceed what it may grant ("error setting rlimit"), so the
# caps matter most here.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
exec bash "$src/tests/integration/docker-ulimits.sh" podman
