#!/bin/bash
# bootstrap.sh: on a fresh Debian 12 machine (as root): install what berth
# needs to build and test, build it with -Werror in _build/, install it
# under /usr/local, and run a first command on the local backend.
#   BERTH_NO_INSTALL=1   build only (do not `make install`)
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" != 0 ]; then
  echo "bootstrap.sh: run as root (it installs packages): sudo $0" >&2
  exit 1
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential autoconf automake libtool pkg-config autoconf-archive git ca-certificates \
  libyaml-dev libcurl4-openssl-dev libyajl-dev libcap-dev libmount-dev libseccomp-dev libcmocka-dev \
  bash bash-static busybox-static util-linux bsdutils procps iproute2 jq time xz-utils file man-db curl openssl binutils \
  openssh-server openssh-client bubblewrap docker.io docker-registry >/dev/null

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
