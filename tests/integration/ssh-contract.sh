#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the ssh
# backend and the private sshd of tests/integration/setup/sshd.sh (user
# berthtest on 127.0.0.1).  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
must_work () { [ "${CI:-}" = true ] || [ -n "${BERTH_TEST_MUST_WORK:-}" ]; }
skip () {
  if must_work; then echo "1..1"; echo "not ok 1 - cannot run in CI: $*"; exit 1; fi
  echo "1..0 # SKIP $*"; exit 77
}
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ]; then
  bash "$src/tests/integration/setup/sshd.sh" >/dev/null 2>&1 || skip "tests/integration/setup/sshd.sh failed"
fi
dir=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
[ -f "$dir/env" ] || skip "no test sshd: run tests/integration/setup/sshd.sh as root"
. "$dir/env"
export BERTH_CONFIG=$BERTH_SSHD_CONFIG
bash "$src/tests/contract/contract.sh" ssh
