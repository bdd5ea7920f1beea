#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# sshd.sh: start a private OpenSSH server on 127.0.0.1 for the ssh
# backend's tests (idempotent; run as root).
#
#   BERTH_SSHD_DIR   test directory (default /tmp/berth-sshd)
#   BERTH_SSHD_PORT  port (default 2222)
#   BERTH_SSHD_USER  dedicated test user (default berthtest)
#
# Creates host keys, a client key (accepted) and a second key (refused),
# the test user with a minimal home, an sshd_config of its own, starts
# /usr/sbin/sshd and writes:
#   $DIR/env              shell variables the tests source
#   $DIR/berth-ssh.yaml   a berth configuration selecting this server
# Needs openssh-server and openssh-client (apt-get install them first).
set -eu

DIR=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
PORT=${BERTH_SSHD_PORT:-2222}
TUSER=${BERTH_SSHD_USER:-berthtest}
SHUSER=${TUSER}sh   # a second user whose login shell is /bin/sh, not bash

die () { echo "sshd.sh: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (creates the user $TUSER and starts sshd)"
[ -x /usr/sbin/sshd ] || die "/usr/sbin/sshd missing: apt-get install -y openssh-server"
command -v ssh >/dev/null || die "ssh missing: apt-get install -y openssh-client"
command -v ssh-keygen >/dev/null || die "ssh-keygen missing: apt-get install -y openssh-client"

install -d -m 0755 "$DIR"
install -d -m 0755 /run/sshd   # privilege separation directory

# Tests call this script concurrently: one at a time, and files that
# running tests read are replaced atomically and only when they change
# (so a running sshd is never disturbed for nothing).
exec 9>"$DIR.lock"
flock 9
put () { # put FILE [MODE]: stdin to FILE if different
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat > "$tmp"
  chmod "${2:-0644}" "$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 1; fi
  mv -f "$tmp" "$1"
}

# Keys: generated once, kept across runs so known_hosts stays valid.
[ -f "$DIR/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C berth-test-host -f "$DIR/host_ed25519"
[ -f "$DIR/client_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C berth-test-client -f "$DIR/client_ed25519"
[ -f "$DIR/client2_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C berth-test-client2 -f "$DIR/client2_ed25519"
[ -f "$DIR/refused_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C berth-test-refused -f "$DIR/refused_ed25519"
chmod 0600 "$DIR/client_ed25519" "$DIR/client2_ed25519" "$DIR/refused_ed25519" "$DIR/host_ed25519"

# The test user: bash, a home with empty dotfiles (Debian's bash sources
# ~/.bashrc for ssh commands), an unlocked password field ('*': no
# password login, but not "locked" for sshd without PAM).
if ! id "$TUSER" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$TUSER"
fi
usermod -p '*' "$TUSER"
HOME_T=$(getent passwd "$TUSER" | cut -d: -f6)
install -d -m 0755 -o "$TUSER" -g "$TUSER" "$HOME_T"
for f in .bashrc .profile .bash_logout; do
  # a skeleton dotfile from useradd: emptied
  if [ -s "$HOME_T/$f" ] || [ ! -f "$HOME_T/$f" ]; then : > "$HOME_T/$f"; fi
  chown "$TUSER:$TUSER" "$HOME_T/$f"
done
if ! id "$SHUSER" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/sh "$SHUSER"
fi
usermod -p '*' "$SHUSER"
HOME_S=$(getent passwd "$SHUSER" | cut -d: -f6)
install -d -m 0700 -o "$SHUSER" -g "$SHUSER" "$HOME_S/.ssh"
cat "$DIR/client_ed25519.pub" "$DIR/client2_ed25519.pub" | put "$HOME_S/.ssh/authorized_keys" 0600 || true
chown "$SHUSER:$SHUSER" "$HOME_S/.ssh/authorized_keys"
install -d -m 0700 -o "$TUSER" -g "$TUSER" "$HOME_T/.ssh"
# two accepted keys: the second lets one test count its own logins in the
# sshd log (by fingerprint) while other tests run in parallel
cat "$DIR/client_ed25519.pub" "$DIR/client2_ed25519.pub" | put "$HOME_T/.ssh/authorized_keys" 0600 || true
chown "$TUSER:$TUSER" "$HOME_T/.ssh/authorized_keys"

config_changed=no
put "$DIR/sshd_config" <<CONF && config_changed=yes
# berth test sshd (written by tests/integration/setup/sshd.sh)
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_ed25519
PidFile $DIR/sshd.pid
UsePAM no
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
AllowUsers $TUSER $SHUSER
AuthorizedKeysFile .ssh/authorized_keys
MaxSessions 64
MaxStartups 64:30:128
LogLevel VERBOSE
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
CONF

/usr/sbin/sshd -t -f "$DIR/sshd_config" || die "sshd_config rejected"

running=no
if [ -f "$DIR/sshd.pid" ]; then
  pid=$(cat "$DIR/sshd.pid")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
     && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$DIR/sshd_config"; then
    running=yes
    [ $config_changed = yes ] && kill -HUP "$pid"   # re-read the configuration
  fi
fi
if [ $running = no ]; then
  /usr/sbin/sshd -f "$DIR/sshd_config" -E "$DIR/sshd.log"
fi

# Wait for the port.
for _ in $(seq 1 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  sleep 0.1
done

# known_hosts for the tests: pinned to this server's host key.
printf '[127.0.0.1]:%s %s\n' "$PORT" "$(cut -d' ' -f1,2 "$DIR/host_ed25519.pub")" | put "$DIR/known_hosts" || true

put "$DIR/env" <<ENV || true
BERTH_SSHD_DIR='$DIR'
BERTH_SSHD_HOST=127.0.0.1
BERTH_SSHD_PORT=$PORT
BERTH_SSHD_USER=$TUSER
BERTH_SSHD_HOME='$HOME_T'
BERTH_SSHD_SH_USER=$SHUSER
BERTH_SSHD_KEY='$DIR/client_ed25519'
BERTH_SSHD_KEY2='$DIR/client2_ed25519'
BERTH_SSHD_REFUSED_KEY='$DIR/refused_ed25519'
BERTH_SSHD_KNOWN_HOSTS='$DIR/known_hosts'
BERTH_SSHD_LOG='$DIR/sshd.log'
BERTH_SSHD_CONFIG='$DIR/berth-ssh.yaml'
ENV

put "$DIR/berth-ssh.yaml" <<YAML || true
# berth configuration for the test sshd (tests/integration/setup/sshd.sh)
terminal:
  backend: ssh
  ssh_host: 127.0.0.1
  ssh_port: $PORT
  ssh_user: $TUSER
  ssh_key: $DIR/client_ed25519
  ssh_options:
    - UserKnownHostsFile=$DIR/known_hosts
    - StrictHostKeyChecking=yes
YAML

# A smoke test: the server must accept the client key.
ssh -T -o BatchMode=yes -o IdentitiesOnly=yes -i "$DIR/client_ed25519" \
    -o UserKnownHostsFile="$DIR/known_hosts" -o StrictHostKeyChecking=yes \
    -o ConnectTimeout=5 -p "$PORT" -l "$TUSER" 127.0.0.1 -- true \
  || die "the test sshd on 127.0.0.1:$PORT does not accept $DIR/client_ed25519 (see $DIR/sshd.log)"
echo "sshd.sh: sshd on 127.0.0.1:$PORT for user $TUSER; source $DIR/env"
