#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The generic contract suite (tests/contract/contract.sh) against the docker
# backend with DOCKER_HOST=ssh://berthtest@127.0.0.1:2222: every connection
# to the engine is `ssh ... docker system dial-stdio` through the test sshd
# (tests/integration/setup/sshd.sh) to the test dockerd
# (tests/integration/setup/docker.sh) -- as the docker CLI does it, which
# berth's streams also use.  ssh finds the test key through an `ssh` wrapper
# first in PATH (what ~/.ssh/config does for a user).  berthtest is given
# access to the engine's socket for the run (group docker) when it has none,
# and it is taken back after.  Must run in CI.
src=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$src/tests/integration/libtest.sh"
command -v ssh >/dev/null || skip_all "ssh client not installed (apt-get install openssh-client)"
if [ "$(id -u)" = 0 ]; then
  command -v dockerd >/dev/null && { bash "$src/tests/integration/setup/docker.sh" >/dev/null 2>&1 || skip_all "tests/integration/setup/docker.sh failed"; }
  [ -x /usr/sbin/sshd ] && { bash "$src/tests/integration/setup/sshd.sh" >/dev/null 2>&1 || skip_all "tests/integration/setup/sshd.sh failed"; }
fi
SSHD_DIR=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
[ -f "$SSHD_DIR/env" ] || skip_all "no test sshd: run tests/integration/setup/sshd.sh as root"
. "$SSHD_DIR/env"
command -v docker >/dev/null && docker image inspect berth-test:latest >/dev/null 2>&1 \
  || skip_all "no engine with berth-test:latest: run tests/integration/setup/docker.sh as root"
"$BERTH" backends 2>/dev/null | grep -q '^docker ' || skip_all "berth was built without the docker backend"

d=$(mktemp -d "${TMPDIR:-/tmp}/berth-docker-ssh.XXXXXX")
granted=
cleanup () {
  # the ssh masters berth left for reuse (ControlPersist): ours, by socket
  for s in "$d"/mux/*; do
    [ -S "$s" ] && ssh -o ControlPath="$s" -O exit -p "$BERTH_SSHD_PORT" "$BERTH_SSHD_USER@$BERTH_SSHD_HOST" >/dev/null 2>&1
  done
  [ -n "$granted" ] && gpasswd -d "$BERTH_SSHD_USER" "$granted" >/dev/null 2>&1
  rm -rf "$d"
}
trap cleanup EXIT
mkdir -p "$d/bin" "$d/mux"
chmod 0700 "$d/mux"
# The first value of an option wins: the masters berth starts (its
# ControlMaster=auto) get their sockets here, where cleanup finds them.
cat > "$d/bin/ssh" <<SSH
#!/bin/sh
exec $(command -v ssh) -i "$BERTH_SSHD_KEY" -o IdentitiesOnly=yes -o UserKnownHostsFile="$BERTH_SSHD_KNOWN_HOSTS" -o StrictHostKeyChecking=yes \\
  -o ControlPath="$d/mux/%C" "\$@"
SSH
chmod +x "$d/bin/ssh"
export PATH=$d/bin:$PATH
target=$BERTH_SSHD_USER@$BERTH_SSHD_HOST
sshx () { ssh -o BatchMode=yes -p "$BERTH_SSHD_PORT" "$target" "$@"; }
sshx true </dev/null || skip_all "cannot ssh to $target:$BERTH_SSHD_PORT with $BERTH_SSHD_KEY"
sshx command -v docker </dev/null >/dev/null || skip_all "no docker CLI for $BERTH_SSHD_USER on the ssh server"
if ! sshx docker version </dev/null >/dev/null 2>&1; then
  sock_group=$(stat -c %G /var/run/docker.sock 2>/dev/null)
  [ "$(id -u)" = 0 ] && [ -n "$sock_group" ] && [ "$sock_group" != root ] \
    || skip_all "$BERTH_SSHD_USER cannot reach the engine: add it to the group of /var/run/docker.sock"
  gpasswd -a "$BERTH_SSHD_USER" "$sock_group" >/dev/null && granted=$sock_group
  sshx docker version </dev/null >/dev/null 2>&1 || skip_all "$BERTH_SSHD_USER still cannot reach the engine after joining $sock_group"
fi

printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n' > "$d/config.yaml"
export BERTH_CONFIG=$d/config.yaml DOCKER_HOST=ssh://$target:$BERTH_SSHD_PORT
unset DOCKER_CONTEXT
bash "$src/tests/contract/contract.sh" docker
