#!/bin/bash
# The generic contract suite (tests/contract/contract.sh) against the
# singularity backend, with the apptainer CLI TEST DOUBLE
# (tests/doubles/apptainer) as `apptainer` on PATH.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/libtest.sh"
why=
[ "$(id -u)" = 0 ] || why="the apptainer test double needs root (mount, unshare)"
[ -n "$why" ] || [ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || why="busybox-static is not installed (tests/doubles/apptainer/ci-setup.sh)"
[ -n "$why" ] || [ -x /bin/bash-static ] || [ -x /usr/bin/bash-static ] || why="bash-static is not installed (tests/doubles/apptainer/ci-setup.sh)"
[ -z "$why" ] || skip_all "$why"
d=$(mktemp -d "${TMPDIR:-/tmp}/berth-sing-contract.XXXXXX")
chmod 0755 "$d"
mkdir -p "$d/bin"
ln -s "$src/tests/doubles/apptainer/apptainer" "$d/bin/apptainer"
: "${APPTAINER_DOUBLE_ROOTFS:=${XDG_CACHE_HOME:-$HOME/.cache}/apptainer-double/rootfs}"
export PATH=$d/bin:$PATH APPTAINER_DOUBLE_STATEDIR=$d/double APPTAINER_DOUBLE_ROOTFS
cleanup ()
{
  # Whatever the suite left running in the double goes with it.
  "$d/bin/apptainer" instance stop --all --force > /dev/null 2>&1
  rm -rf "$d"
}
trap cleanup EXIT
bash "$src/tests/contract/contract.sh" singularity
