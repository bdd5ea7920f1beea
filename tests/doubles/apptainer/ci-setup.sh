#!/bin/bash
# Idempotent setup for the apptainer test double (tests/doubles/apptainer):
# its rootfs is made of busybox-static and bash-static; it needs unshare,
# nsenter and flock from util-linux.  Run as root on a fresh Debian 12.
set -euo pipefail
need=()
for p in busybox-static bash-static util-linux; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
# Build the default rootfs now so the first test does not pay for it.
here=$(cd "$(dirname "$0")" && pwd)
rootfs=${APPTAINER_DOUBLE_ROOTFS:-${XDG_CACHE_HOME:-$HOME/.cache}/apptainer-double/rootfs}
mkdir -p "$(dirname "$rootfs")"
"$here/mkrootfs.sh" "$rootfs"
