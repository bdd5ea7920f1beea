#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The contract suite on ssh through berth-agent (the result must say
# transport agent).  The same suite through exec-per-command:
# agent-ssh-exec.sh.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
unset BERTH_TRANSPORT
export BERTH_EXPECT_TRANSPORT=agent
exec bash "$src/tests/integration/ssh-contract.sh"
