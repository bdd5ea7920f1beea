# SPDX-License-Identifier: LGPL-2.1-or-later
# docker-lib.sh: shared setup for the docker backend's TAP tests (sourced).
# Uses the real engine prepared by tests/integration/setup/docker.sh (run
# here when we are root), an isolated XDG state/runtime directory and a
# berth configuration using the offline image berth-test:latest.  The tests
# use the docker CLI only to inspect what berth did.

. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"

: "${BERTH_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BERTH:=${BERTH_BUILDDIR:-.}/berth}"
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null; then
  bash "$BERTH_SRCDIR/tests/integration/setup/docker.sh" >/dev/null 2>&1 \
    || skip_all "tests/integration/setup/docker.sh failed"
fi
command -v docker >/dev/null || skip_all "docker CLI not installed (the tests inspect with it)"
docker image inspect berth-test:latest >/dev/null 2>&1 || skip_all "no engine with berth-test:latest: run tests/integration/setup/docker.sh as root"
"$BERTH" backends 2>/dev/null | grep -q '^docker ' || skip_all "berth was built without the docker backend"

TDIR=$(mktemp -d /tmp/berth-docker-test.XXXXXX)
chmod 0755 "$TDIR"
export XDG_STATE_HOME=$TDIR/state XDG_RUNTIME_DIR=$TDIR/run XDG_CONFIG_HOME=$TDIR/config XDG_DATA_HOME=$TDIR/data
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
unset BERTH_CONFIG DOCKER_HOST
# Named environments of this run start with $P; the exit trap removes their
# containers whatever happened.
P=dk$$
trap 'cleanup_all' EXIT
EXTRA_CLEANUP=:
cleanup_all () {
  eval "$EXTRA_CLEANUP"
  local ids
  ids=$(docker ps -a --filter label=berth=1 --format '{{.ID}} {{.Label "berth.env"}}' | awk -v p="$P-" 'index($2, p) == 1 { print $1 }')
  [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1
  rm -rf "$TDIR"
}

# write_config FILE [extra YAML lines under terminal:]
write_config () {
  local f=$1; shift
  {
    echo "terminal:"
    echo "  backend: docker"
    case " $* " in *" docker_image:"*) ;; *) echo "  docker_image: berth-test:latest" ;; esac
    echo "  container_memory: 512"
    echo "  container_cpu: 1"
    for l in "$@"; do echo "  $l"; done
  } > "$f"
}
# The user configuration file, so that berth processes started by berth (the
# exec-stream bridge) read it too.
mkdir -p "$XDG_CONFIG_HOME/berth"
CFG=$XDG_CONFIG_HOME/berth/config.yaml
write_config "$CFG"

b () { "$BERTH" --config "$CFG" "$@"; }
# json_field FILE KEY: a scalar of berth's --json output
json_field () { jq -r ".$2" "$1"; }
# The container of named environment NAME (all states), one id per line.
env_containers () { docker ps -aq --no-trunc --filter label=berth=1 --filter "label=berth.env=$1"; }
