#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# docker-cleanup.sh: remove the containers one test run left behind, and
# nothing else.  A container is the run's when it is labelled berth=1,
# was created at or after BERTH_TEST_SINCE and runs one of the test
# images; a user's environments (created before the run, or from an
# image of theirs) and unlabelled containers are left alone.
#   BERTH_TEST_SINCE    when the run started: `date +%s%N` (required;
#                       without it nothing is removed)
#   BERTH_TEST_IMAGES   the run's images, shell patterns matched against
#                       the image a container was created from (default:
#                       berth-test[:TAG], REGISTRY/berth-test[:TAG])
# tools/test.sh sets BERTH_TEST_SINCE; setup/docker-stop.sh calls this.
set -uo pipefail

say() { printf 'setup/docker-cleanup: %s\n' "$*"; }
since=${BERTH_TEST_SINCE:-}
case $since in
  '' | *[!0-9]*) say "BERTH_TEST_SINCE unset or not \`date +%s%N\`: no container removed"; exit 0 ;;
esac
read -r -a patterns <<<"${BERTH_TEST_IMAGES:-berth-test berth-test:* */berth-test */berth-test:*}"
docker version >/dev/null 2>&1 || exit 0

ids=$(docker ps -aq --no-trunc --filter label=berth=1)
[ -n "$ids" ] || exit 0
ours=()
# shellcheck disable=SC2086  # ids: one word each
while read -r id created image; do
  [ -n "$id" ] || continue
  t=$(date -d "$created" +%s%N 2>/dev/null) || continue
  [ "$t" -ge "$since" ] || continue
  for p in "${patterns[@]}"; do
    # shellcheck disable=SC2053  # a pattern on purpose
    if [[ $image == $p ]]; then ours+=("$id"); break; fi
  done
done < <(docker inspect --format '{{.Id}} {{.Created}} {{.Config.Image}}' $ids 2>/dev/null)
[ ${#ours[@]} -gt 0 ] || exit 0
docker rm -f "${ours[@]}" >/dev/null 2>&1
say "removed ${#ours[@]} container(s) of this test run"
exit 0
