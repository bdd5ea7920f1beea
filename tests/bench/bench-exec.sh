#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-exec.sh: DESIGN §9's per-command table through libberth
# (tests/bench/bench-exec.c), each backend against its peer in the same
# run; with BEFORE=<build dir of an older berth> also that build's figures,
# alternated with this one's in one run (the before/after table).
#   BUILD=<this build dir> (default: $BERTH_BUILDDIR or .)  N=<commands per run> (100)
#   ROUNDS=<alternations> (3)  BACKENDS="local bwrap docker ssh"
# The after build runs through berth-agent (the default); BERTH_TRANSPORT=exec
# compares exec-per-command.  WHAT=process measures a background process
# instead (tests/bench/bench-process.c: berth_env_start_process of `echo x`
# until its first output byte) against a user's way to start one and see
# its output: `bash -c 'echo x'`, a fresh bwrap, `docker exec -d` then
# `docker exec cat` until the output is there, `ssh -f` over the master.
# Prints one line per run: build backend berth_min berth_median berth_p90
# peer_min peer_median peer_p90 ratio_median ratio_min, then the medians of
# the ratios per build and backend.  Needs root for docker and ssh (it
# starts the shared test daemons like the integration tests).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${BUILD:-${BERTH_BUILDDIR:-.}}" && pwd)
N=${N:-100}
ROUNDS=${ROUNDS:-3}
BACKENDS=${BACKENDS:-local bwrap docker ssh}
T=$(mktemp -d /tmp/berth-bench-exec.XXXXXX)
ctr=
mpid=
trap '[ -n "$ctr" ] && docker rm -f "$ctr" >/dev/null 2>&1; [ -n "$mpid" ] && kill "$mpid" 2>/dev/null; rm -rf "$T"' EXIT

WHAT=${WHAT:-exec}
case $WHAT in exec|process) ;; *) echo "bench-exec.sh: WHAT is exec or process, not $WHAT" >&2; exit 2 ;; esac

# compile DIR SRCDIR OUT: bench-$WHAT.c against the libberth of build DIR
compile ()
{
  gcc -O2 -I"$2/runtime/include" -I"$2/sdk/include" -I"$1/runtime/include" "$SRC/tests/bench/bench-$WHAT.c" \
    -o "$3" -L"$1/.libs" -lberth -Wl,-rpath,"$1/.libs"
}
builds=(after)
compile "$BUILD" "$SRC" "$T/bench-after"
declare -A dir=([after]=$BUILD)
if [ -n "${BEFORE:-}" ]; then
  BEFORE=$(cd "$BEFORE" && pwd)
  compile "$BEFORE" "$BEFORE/.." "$T/bench-before"
  builds=(before after)
  dir[before]=$BEFORE
fi

peer_of ()
{
  [ "$WHAT" = process ] && { process_peer_of "$1"; return; }
  case $1 in
    local) echo "bash -c true" ;;
    bwrap) echo "bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp bash -c true" ;;
    docker) echo "docker exec $ctr bash -c true" ;;
    ssh) echo "ssh -T -o ControlMaster=no -o ControlPath=$T/cm ${O[*]} $BERTH_SSHD_HOST true" ;;
  esac
}
process_peer_of ()
{
  case $1 in
    local) echo "bash -c echo\ x" ;;
    bwrap) echo "bwrap --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp bash -c echo\ x" ;;
    docker)
      cat >"$T/docker-peer.sh" <<EOF
docker exec -d $ctr sh -c 'echo x > /tmp/bench-peer'
until out=\$(docker exec $ctr cat /tmp/bench-peer 2>/dev/null) && [ -n "\$out" ]; do :; done
echo "\$out"
docker exec $ctr rm -f /tmp/bench-peer
EOF
      echo "bash $T/docker-peer.sh" ;;
    ssh) echo "ssh -f -T -o ControlMaster=no -o ControlPath=$T/cm ${O[*]} $BERTH_SSHD_HOST echo x" ;;
  esac
}
config_of ()
{
  case $1 in
    docker) printf 'terminal:\n  docker_image: berth-test:latest\n' >"$T/docker.yaml"; echo "$T/docker.yaml" ;;
    ssh) echo "$BERTH_SSHD_CONFIG" ;;
    *) printf 'terminal: {}\n' >"$T/none.yaml"; echo "$T/none.yaml" ;;
  esac
}

for b in $BACKENDS; do
  case $b in
    docker)
      bash "$SRC/tests/integration/setup/docker.sh" >/dev/null
      ctr=$(docker run -d --rm --network none berth-test:latest sleep 3600) ;;
    ssh)
      bash "$SRC/tests/integration/setup/sshd.sh" >/dev/null
      . /tmp/berth-sshd/env
      O=(-o BatchMode=yes -o IdentitiesOnly=yes -i "$BERTH_SSHD_KEY" -o UserKnownHostsFile="$BERTH_SSHD_KNOWN_HOSTS"
         -p "$BERTH_SSHD_PORT" -l "$BERTH_SSHD_USER")
      ssh -M -N -f -o ControlPersist=600 -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST"
      mpid=$(ssh -O check -o ControlPath="$T/cm" "${O[@]}" "$BERTH_SSHD_HOST" 2>&1 | sed -n 's/.*pid=\([0-9]*\).*/\1/p') ;;
  esac
  # not -r: "echo\ x" is one word of a peer
  # shellcheck disable=SC2162
  read -a peer <<<"$(peer_of "$b")"
  cfg=$(config_of "$b")
  for r in $(seq "$ROUNDS"); do
    for build in "${builds[@]}"; do
      d=${dir[$build]}
      line=$(env XDG_STATE_HOME="$T/state-$build" XDG_RUNTIME_DIR="$T/run-$build" XDG_CONFIG_HOME="$T/config" BERTH_CONFIG="$cfg" \
        BERTH_MODULEDIR="$d/docker/.libs:$d/bwrap/.libs:$d/local/.libs:$d/ssh/.libs:$d/singularity/.libs" \
        BERTH_LIBEXECDIR="$d:$d/agent:$d/bwrap:$d/ssh" BERTH_BINDIR="$d" \
        "$T/bench-$build" "$b" "$N" -- "${peer[@]}") || { echo "bench-exec: $build $b failed" >&2; exit 1; }
      echo "$build $line" | tee -a "$T/all"
    done
  done
done
echo "# median of the runs' median ratios (berth / peer), per build and backend"
for key in $(awk '{ print $1 "/" $2 }' "$T/all" | sort -u -t/ -k2,2 -k1,1); do
  ratios=$(awk -v b="${key%/*}" -v k="${key#*/}" '$1 == b && $2 == k { print $9 }' "$T/all" | sort -n)
  n=$(echo "$ratios" | wc -l)
  echo "${key%/*} ${key#*/} $(echo "$ratios" | sed -n "$(((n + 1) / 2))p")"
done
