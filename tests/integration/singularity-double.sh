#!/bin/bash
# The singularity backend against the apptainer CLI TEST DOUBLE
# (tests/doubles/apptainer: real namespaces + chroot of a busybox/bash
# rootfs).  Apptainer is not packaged for Debian 12; this run is the one
# that must work in CI (a skip here fails under CI=true).
# These checks read the apptainer argv of each command: exec-per-command
# (through the agent the commands ride one stream; singularity-contract.sh
# runs the suite that way).
export BERTH_TRANSPORT=exec
. "$(dirname "$0")/singularity-lib.sh"

why=
[ "$(id -u)" = 0 ] || why="the apptainer test double needs root (mount, unshare)"
[ -n "$why" ] || [ -x /bin/busybox ] || [ -x /usr/bin/busybox ] || why="busybox-static is not installed (tests/doubles/apptainer/ci-setup.sh)"
[ -n "$why" ] || [ -x /bin/bash-static ] || [ -x /usr/bin/bash-static ] || why="bash-static is not installed (tests/doubles/apptainer/ci-setup.sh)"
[ -n "$why" ] || command -v nsenter > /dev/null || why="nsenter (util-linux) is missing"
[ -n "$why" ] || [ -x "$BERTH" ] || why="the berth CLI was not built ($BERTH)"
if [ -n "$why" ]; then
  if must_work; then echo "1..1"; echo "not ok 1 - singularity double run cannot run in CI: $why"; exit 1; fi
  echo "1..0 # SKIP $why"
  exit 0
fi
sing_setup double "$SING_DOUBLE"
sing_run_all
