#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the slurm
# backend and the private single-node cluster of
# tests/integration/setup/slurm-up.sh.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/slurm-lib.sh"
# Through berth-agent unless BERTH_TRANSPORT=exec (the wrappers
# tests/contract/agent-slurm.sh and agent-slurm-exec.sh run it both ways).
bash "$src/tests/contract/contract.sh" slurm
