#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the ssh
# backend and the private sshd of tests/integration/setup/sshd.sh (user
# berthtest on 127.0.0.1).  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/libtest.sh"
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ]; then
  bash "$src/tests/integration/setup/sshd.sh" >/dev/null 2>&1 || skip_all "tests/integration/setup/sshd.sh failed"
fi
dir=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
[ -f "$dir/env" ] || skip_all "no test sshd: run tests/integration/setup/sshd.sh as root"
. "$dir/env"
export BERTH_CONFIG=$BERTH_SSHD_CONFIG
bash "$src/tests/contract/contract.sh" ssh
