# SPDX-License-Identifier: LGPL-2.1-or-later
# ssh-lib.sh: shared setup for the ssh backend's TAP tests (sourced).
# Uses the private sshd of tests/integration/setup/sshd.sh (started here
# when we are root and it is not running), an isolated XDG state/runtime
# directory, and a berth configuration pointing at the test server.

. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"

: "${BERTH_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BERTH:=${BERTH_BUILDDIR:-.}/berth}"
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
command -v ssh >/dev/null || skip_all "ssh client not installed (apt-get install openssh-client)"

SSHD_DIR=${BERTH_SSHD_DIR:-/tmp/berth-sshd}
if [ "$(id -u)" = 0 ] && [ -x /usr/sbin/sshd ]; then
  bash "$BERTH_SRCDIR/tests/integration/setup/sshd.sh" >/dev/null 2>&1 \
    || skip_all "tests/integration/setup/sshd.sh failed"
fi
[ -f "$SSHD_DIR/env" ] || skip_all "no test sshd: run tests/integration/setup/sshd.sh as root"
. "$SSHD_DIR/env"

TDIR=$(mktemp -d /tmp/berth-ssh-test.XXXXXX)
chmod 0755 "$TDIR"
export XDG_STATE_HOME=$TDIR/state XDG_RUNTIME_DIR=$TDIR/run XDG_CONFIG_HOME=$TDIR/config XDG_DATA_HOME=$TDIR/data
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
unset BERTH_CONFIG
trap 'cleanup_all' EXIT
EXTRA_CLEANUP=:
cleanup_all () {
  eval "$EXTRA_CLEANUP"
  # stop masters this test left (by pid, only ours)
  for f in "$XDG_RUNTIME_DIR"/berth/*/cm.pid; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  rm -rf "$TDIR"
}

# write_config FILE [extra YAML lines under terminal:]
write_config () {
  local f=$1; shift
  {
    echo "terminal:"
    echo "  backend: ssh"
    echo "  ssh_host: $BERTH_SSHD_HOST"
    echo "  ssh_port: $BERTH_SSHD_PORT"
    echo "  ssh_user: $BERTH_SSHD_USER"
    echo "  ssh_key: ${SSH_TEST_KEY:-$BERTH_SSHD_KEY}"
    echo "  ssh_options:"
    echo "    - UserKnownHostsFile=$BERTH_SSHD_KNOWN_HOSTS"
    for l in "$@"; do echo "  $l"; done
  } > "$f"
}
CFG=$TDIR/berth.yaml
write_config "$CFG"

b () { "$BERTH" --config "$CFG" "$@"; }

# Logins the test sshd accepted so far with KEY (default: this test's key),
# counted by fingerprint so parallel tests using other keys do not count.
auth_count () {
  local fp
  fp=$(ssh-keygen -lf "${1:-${SSH_TEST_KEY:-$BERTH_SSHD_KEY}}.pub" | awk '{print $2}')
  grep -c "Accepted publickey for .*$fp" "$BERTH_SSHD_LOG"
}
# The control socket directory of a named environment (its runtime dir).
env_master_pid () { # NAME
  local d
  for d in "$XDG_RUNTIME_DIR"/berth/*/; do
    if [ -f "$d/cm.pid" ] && [ "$(basename "$d")" = "$1" ]; then cat "$d/cm.pid"; return 0; fi
  done
  return 1
}
# ssh master processes whose control path lies under our runtime dir
masters () { pgrep -f -- "-oControlPath=$XDG_RUNTIME_DIR/" | sort; }
# PID has exited (or is a zombie nobody reaps) within 3 s
gone () {
  local i
  for i in $(seq 1 30); do
    kill -0 "$1" 2>/dev/null || return 0
    [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}
remote_ps () { ps -u "$BERTH_SSHD_USER" -o pid=,args= 2>/dev/null; }
