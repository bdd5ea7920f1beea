#!/bin/sh
# bwrap/ci-setup.sh: what the bwrap backend's tests need on a fresh Debian
# 12 machine, run as root (idempotent).  The jail itself needs no setup:
# only unprivileged user namespaces, which Debian 12 allows by default.
#   - build: libcap-dev libmount-dev libseccomp-dev (pkg-config deps)
#   - tests: util-linux (setpriv, unshare, script), procps (pgrep), jq
#   - bench: bubblewrap (the peer command of tests/bench/bwrap-bench.sh)
set -eu
pkgs="libcap-dev libmount-dev libseccomp-dev util-linux procps jq bubblewrap"
missing=
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
# Fail loudly, with the reason, if this machine cannot run a jail at all.
for f in /proc/sys/user/max_user_namespaces /proc/sys/kernel/unprivileged_userns_clone \
         /proc/sys/kernel/apparmor_restrict_unprivileged_userns; do
  [ -r "$f" ] && echo "bwrap ci-setup: $(basename "$f") = $(cat "$f")"
done
if [ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 1)" = 0 ]; then
  sysctl -w user.max_user_namespaces=15000
fi
if [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 0 ]; then
  sysctl -w kernel.unprivileged_userns_clone=1
fi
echo "bwrap ci-setup: ok"
