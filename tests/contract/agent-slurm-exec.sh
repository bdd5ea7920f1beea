#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The contract suite on slurm with the agent switched off
# (BERTH_TRANSPORT=exec): every command its own step (srun --overlap),
# the result says transport exec.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
export BERTH_TRANSPORT=exec BERTH_EXPECT_TRANSPORT=exec
exec bash "$src/tests/integration/slurm-contract.sh"
