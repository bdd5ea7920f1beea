#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The contract suite on slurm through berth-agent (the result must say
# transport agent): in a named environment the agent serves from a step
# of its own (slurm/agent.c), each berth process relays to it.  The same
# suite through one srun per command: agent-slurm-exec.sh.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
unset BERTH_TRANSPORT
export BERTH_EXPECT_TRANSPORT=agent
exec bash "$src/tests/integration/slurm-contract.sh"
