#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Prepare PRIVATE Podman services for the docker backend's Podman tests
# (idempotent, installs nothing: tools/bootstrap.sh apt-installs podman
# catatonit uidmap slirp4netns fuse-overlayfs runc).  Their Docker-compatible
# API is what berth's docker backend talks to:
#  - root:     unix:///run/berth-podman/podman.sock, its own storage under
#              $state/podman/root (never the machine's /var/lib/containers);
#  - rootless: unix:///run/berth-podman/rootless/podman.sock, run by the
#              test user berthpodman (created here, with subuid/subgid
#              ranges), its storage in that user's home;
#  - both get the offline test image berth-test:latest: the dockerd one
#    (`docker save | podman load`) when dockerd has it, else the same
#    busybox-static + bash-static rootfs imported.
# `podman system service -t 0` serves until setup/podman-stop.sh stops it.
# Environment: BERTH_TEST_STATE (default /var/lib/berth-test).
set -euo pipefail

state=${BERTH_TEST_STATE:-/var/lib/berth-test}/podman
run=/run/berth-podman
user=berthpodman
image=berth-test:latest
say() { printf 'setup/podman: %s\n' "$*"; }
die() { printf 'setup/podman: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root"
for t in podman catatonit newuidmap newgidmap slirp4netns busybox bash-static; do
  command -v "$t" >/dev/null || [ -x "/usr/libexec/podman/$t" ] \
    || die "$t not found (apt-get install podman catatonit uidmap slirp4netns fuse-overlayfs busybox-static bash-static)"
done
mkdir -p "$state" "$run"
chmod 0755 "$run"
exec 9>"$state/setup.lock"
flock 9

# crun 1.8 refuses a hybrid cgroup v1 + v2 machine ("cgroups in hybrid
# mode not supported"); runc (docker.io's) runs there.
runtime=()
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] && command -v runc >/dev/null; then
  runtime=(--runtime "$(command -v runc)")
fi
# No systemd or journald under CI: cgroupfs and a file for the events.
common=(--cgroup-manager cgroupfs --events-backend file "${runtime[@]}")

rootfs_tar () {
  local root
  root=$(mktemp -d "$state/rootfs.XXXXXX")
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,var/tmp,run,home/user,proc,sys,dev}
  chmod 1777 "$root/tmp" "$root/var/tmp"
  chmod 700 "$root/root"
  cp "$(readlink -f "$(command -v busybox)")" "$root/bin/busybox"
  cp "$(readlink -f "$(command -v bash-static)")" "$root/bin/bash"
  for applet in $(busybox --list-full); do
    [ "$applet" = bin/bash ] && continue
    [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
  done
  ln -sf bash "$root/bin/sh"
  printf 'root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000:user:/home/user:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n' >"$root/etc/group"
  chown 1000:1000 "$root/home/user"
  tar -C "$root" -c .
  rm -rf "$root"
}

# load_image PODMAN...: berth-test:latest into that podman's storage.
load_image () {
  if "$@" image exists "localhost/$image" 2>/dev/null; then
    return 0
  fi
  if command -v docker >/dev/null && docker image inspect "$image" >/dev/null 2>&1; then
    docker save "$image" | "$@" load -q >/dev/null
  else
    rootfs_tar | "$@" import -q \
      -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      -c 'CMD ["/bin/bash"]' - "localhost/$image" >/dev/null
  fi
  "$@" image exists "localhost/$image" || die "could not load $image into podman ($*)"
}

# start NAME SOCKET PIDFILE LOG [runuser -u USER --] podman ARGS...: the
# service, unless one answers on SOCKET.
start_service () {
  local name=$1 sock=$2 pidfile=$3 log=$4; shift 4
  if curl -fsS --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1; then
    say "$name podman already answering on unix://$sock"
    return 0
  fi
  rm -f "$sock"
  setsid "$@" system service -t 0 "unix://$sock" >"$log" 2>&1 </dev/null 9>&- &
  echo $! >"$pidfile"
  for _ in $(seq 1 150); do
    curl -fsS --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 && break
    sleep 0.2
  done
  curl -fsS --max-time 2 --unix-socket "$sock" http://d/_ping >/dev/null 2>&1 \
    || { tail -n 20 "$log" >&2; die "$name podman service did not come up (log: $log)"; }
  say "$name podman up on unix://$sock ($(podman --version))"
}

# ---- root
root_podman=(podman --root "$state/root/storage" --runroot "$run/root-run" "${common[@]}")
mkdir -p "$state/root" "$run/root-run"
load_image "${root_podman[@]}"
start_service root "$run/podman.sock" "$state/root.pid" "$state/root.log" "${root_podman[@]}"

# ---- rootless: a user with subordinate ids
if ! id "$user" >/dev/null 2>&1; then
  useradd -m -s /bin/bash -c "berth rootless podman tests" "$user"
  say "created user $user"
fi
home=$(getent passwd "$user" | cut -d: -f6)
uid=$(id -u "$user")
# A free range past every one in use.
next_range () {
  awk -F: 'BEGIN { m = 100000 } { e = $2 + $3; if (e > m) m = e } END { print m }' /etc/subuid /etc/subgid 2>/dev/null
}
if ! grep -q "^$user:" /etc/subuid 2>/dev/null || ! grep -q "^$user:" /etc/subgid 2>/dev/null; then
  start=$(next_range)
  grep -q "^$user:" /etc/subuid 2>/dev/null || echo "$user:$start:65536" >>/etc/subuid
  grep -q "^$user:" /etc/subgid 2>/dev/null || echo "$user:$start:65536" >>/etc/subgid
  say "gave $user subordinate ids $start-$((start + 65535))"
fi
rl_run=$run/rootless
mkdir -p "$rl_run"
chown "$user:" "$rl_run"
chmod 0755 "$rl_run"
# The runtime directory logind would make: rootless networking
# (rootless-netns) bind-mounts it at its usual place, /run/user/UID.
xdg=/run/user/$uid
if [ ! -d "$xdg" ]; then
  mkdir -p "$xdg"
  touch "$state/made-xdg"
fi
chown "$user:" "$xdg"
chmod 0700 "$xdg"
# slirp4netns opens /dev/net/tun as the user: udev makes it 0666 on a
# stock system; a machine without udev (CI containers) leaves it 0600.
if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
  stat -c %a /dev/net/tun >"$state/tun-mode"
  chmod 0666 /dev/net/tun
  say "made /dev/net/tun 0666 as udev does (podman-stop.sh restores it)"
fi
rl_podman=(runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" PATH=/usr/sbin:/usr/bin:/sbin:/bin
  XDG_RUNTIME_DIR="$xdg" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share"
  podman "${common[@]}")
# The subordinate ids are read when the user namespace is first made.
"${rl_podman[@]}" system migrate >/dev/null 2>&1 || true
load_image "${rl_podman[@]}"
start_service rootless "$rl_run/podman.sock" "$state/rootless.pid" "$state/rootless.log" "${rl_podman[@]}"
say "ready (root: DOCKER_HOST=unix://$run/podman.sock, rootless ($user, uid $uid): DOCKER_HOST=unix://$rl_run/podman.sock)"
