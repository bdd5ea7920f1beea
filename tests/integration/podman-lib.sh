# SPDX-License-Identifier: LGPL-2.1-or-later
# podman-lib.sh: shared by podman-contract.sh and podman-rootless-contract.sh
# (sourced).  The private Podman services of tests/integration/setup/podman.sh
# (started here when we are root; idempotent), their Docker-compatible API
# as DOCKER_HOST for the docker backend, and the offline image
# berth-test:latest loaded into them.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
PODMAN_RUN=/run/berth-podman
PODMAN_USER=berthpodman
command -v podman >/dev/null \
  || skip_all "podman is not installed (apt-get install podman catatonit uidmap slirp4netns fuse-overlayfs)"
"$BERTH" backends 2>/dev/null | grep -q '^docker ' || skip_all "berth was built without the docker backend"
if [ "$(id -u)" = 0 ]; then
  out=$(bash "$BERTH_SRCDIR/tests/integration/setup/podman.sh" 2>&1) \
    || skip_all "tests/integration/setup/podman.sh failed: $(tail -n 1 <<<"$out")"
fi
# podman_ready SOCKET: the service answers and has the test image.
podman_ready ()
{
  curl -fsS --max-time 5 --unix-socket "$1" http://d/_ping >/dev/null 2>&1 \
    || skip_all "no Podman service on unix://$1: run tests/integration/setup/podman.sh as root"
  curl -fsS --max-time 10 --unix-socket "$1" http://d/images/berth-test:latest/json >/dev/null 2>&1 \
    || skip_all "the Podman service on unix://$1 has no berth-test:latest: run tests/integration/setup/podman.sh as root"
}
PODMAN_TMP=$(mktemp -d "${TMPDIR:-/tmp}/berth-podman-contract.XXXXXX")
chmod 0755 "$PODMAN_TMP"
trap 'rm -rf "$PODMAN_TMP"' EXIT
printf 'terminal:\n  docker_image: berth-test:latest\n  container_memory: 512\n' > "$PODMAN_TMP/config.yaml"
chmod 0644 "$PODMAN_TMP/config.yaml"
