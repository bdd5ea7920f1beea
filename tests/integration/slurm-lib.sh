# SPDX-License-Identifier: LGPL-2.1-or-later
# slurm-lib.sh (sourced): the private test cluster of
# tests/integration/setup/slurm-up.sh for the slurm backend's tests --
# started when this runs as root and Slurm is installed (idempotent),
# then its env sourced (SLURM_CONF).  Skips (fails in CI) without one.
src=${BERTH_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$src/tests/integration/libtest.sh"
SLURM_DIR=${BERTH_SLURM_DIR:-/tmp/berth-slurm}
if [ "$(id -u)" = 0 ] && { command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; }; then
  __up=$(bash "$src/tests/integration/setup/slurm-up.sh" 2>&1) \
    || skip_all "tests/integration/setup/slurm-up.sh failed: $(tail -n 1 <<<"$__up")"
fi
[ -f "$SLURM_DIR/env" ] || skip_all "no test Slurm cluster: apt-get install slurm-wlm munge; run tests/integration/setup/slurm-up.sh as root"
. "$SLURM_DIR/env"
export SLURM_CONF
export BERTH_CONFIG=$BERTH_SLURM_CONFIG
# Tests share the cluster (fd 8, shared); slurm-backend.sh takes it alone
# while it stops slurmctld.
exec 8>>"$SLURM_DIR/users.lock"
flock -s -w 1200 8 || skip_all "$SLURM_DIR/users.lock: the test cluster is held by another test for more than 1200 s"
