#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bootstrap.sh: on a fresh Debian 12 machine (as root): install what berth
# needs to build and test (starting and enabling no system service: see
# tools/hold-services.sh), build it with -Werror in _build/, install it
# under /usr/local, and run a first command on the local backend.
#   BERTH_NO_INSTALL=1   build only (do not `make install`)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" != 0 ]; then
  # A fresh Debian 12 has no sudo: suggest it only where it exists.
  if command -v sudo >/dev/null 2>&1; then how="sudo $0"; else how="log in as root, or su -c $0"; fi
  echo "bootstrap.sh: run as root (it installs packages): $how" >&2
  exit 1
fi
# Installing openssh-server, docker.io, docker-registry, munge and slurm-wlm
# must not start sshd on :22, dockerd, a registry on :5000, munged,
# slurmctld or slurmd nor enable them at boot:
# no service starts during the install (policy-rc.d), what it enabled is
# disabled afterwards.  The tests start their own and stop them after.
. tools/hold-services.sh
trap services_release EXIT
trap 'exit 130' INT TERM HUP
apt-get update -qq
services_hold
apt-get install -y -qq --no-install-recommends \
  build-essential autoconf automake libtool pkg-config autoconf-archive git ca-certificates \
  libyaml-dev libcurl4-openssl-dev libyajl-dev libcap-dev libmount-dev libseccomp-dev libcmocka-dev \
  bash bash-static busybox-static util-linux bsdutils procps iproute2 jq time xz-utils file man-db curl openssl binutils python3 \
  python3-pytest python3-pip python3-setuptools python3-wheel \
  openssh-server openssh-client bubblewrap docker.io docker-registry \
  debhelper dpkg-dev lintian fakeroot bash-completion zsh fish systemd slurm-wlm munge \
  podman catatonit uidmap slirp4netns fuse-overlayfs runc >/dev/null
services_release

NOCONFIGURE=1 ./autogen.sh
mkdir -p _build
cd _build
[ -f Makefile ] || ../configure --enable-werror
make -j"$(nproc)"
if [ "${BERTH_NO_INSTALL:-0}" != 1 ]; then
  make install >/dev/null
  ldconfig
  BERTH=/usr/local/bin/berth
else
  # Uninstalled: find the modules and helpers in the build tree.
  BERTH=$PWD/berth
  export BERTH_MODULEDIR=$PWD/docker/.libs:$PWD/bwrap/.libs BERTH_LIBEXECDIR=$PWD:$PWD/bwrap:$PWD/ssh
fi

echo "berth is built.  Its main job: run a command in an environment."
"$BERTH" exec -e demo -- 'cd /tmp && echo "hello from $(pwd) on $(uname -sr)"'
"$BERTH" exec -e demo -- 'echo "the cwd persisted: $(pwd)"'
"$BERTH" rm demo
"$BERTH" backends
