#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the slurm
# backend and the private single-node cluster of
# tests/integration/setup/slurm-up.sh.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/slurm-lib.sh"
# slurm declares BERTH_HINT_NO_AGENT (a step ends with its srun): one exec per command
export BERTH_EXPECT_TRANSPORT=exec
bash "$src/tests/contract/contract.sh" slurm
