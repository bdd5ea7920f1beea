#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The test run's container cleanup (tests/integration/setup/docker-cleanup.sh,
# called by setup/docker-stop.sh at the end of tools/test.sh) removes what
# the run created and nothing else: a container labelled berth=1 that
# existed before the run (a user's persistent environment), one created
# during the run from another image, and an unlabelled one all survive.
# Runs the cleanup on an image tag of its own so that it cannot touch the
# containers of tests running in parallel.
. "$(dirname "${BASH_SOURCE[0]}")/docker-lib.sh"
CLEAN=$BERTH_SRCDIR/tests/integration/setup/docker-cleanup.sh
IMG=berth-cleanup-$P:latest
docker tag berth-test:latest "$IMG"
# Its own containers only (docker-lib.sh removes the berth=1 ones named $P-*;
# never by image: other tests' containers share this image's id).
made=()
EXTRA_CLEANUP='[ ${#made[@]} -eq 0 ] || docker rm -f "${made[@]}" >/dev/null 2>&1; docker rmi "$IMG" >/dev/null 2>&1'
exists () { docker inspect "$1" >/dev/null 2>&1; }

# Before the run: a user's persistent environment, from the test image.
user_old=$(docker create --label berth=1 --label "berth.env=$P-user" --label berth.persistent=1 "$IMG" true)
sleep 0.2
since=$(date +%s%N)
sleep 0.2
# During the run: what the run creates (by hand and through berth) ...
run_c=$(docker create --label berth=1 --label "berth.env=$P-run" "$IMG" true)
out=$(b exec -e "$P-runb" --image "$IMG" -- 'echo made' 2>&1)
is "$out" made "berth made a container from the run's image"
run_b=$(env_containers "$P-runb")
check "... labelled berth=1" test -n "$run_b"
# ... and what is not the run's: a user's environment from another image
# (created meanwhile), a container without the berth label.
user_new=$(docker create --label berth=1 --label "berth.env=$P-user2" berth-test:latest true)
plain=$(docker create "$IMG" true)
made+=("$plain")

BERTH_TEST_SINCE=$since BERTH_TEST_IMAGES=$IMG bash "$CLEAN" >"$TDIR/clean.out" 2>&1
rc=$?
is "$rc" 0 "the cleanup succeeds"
check "a berth=1 container created before the run survives the cleanup" exists "$user_old"
check "a berth=1 container of another image created during the run survives" exists "$user_new"
check "an unlabelled container survives" exists "$plain"
check "the run's own container is removed" bash -c "! docker inspect '$run_c' >/dev/null 2>&1"
check "the container berth made during the run is removed" bash -c "! docker inspect '$run_b' >/dev/null 2>&1"
like "$(cat "$TDIR/clean.out")" "*removed 2 container(s) of this test run*" "it says what it removed"

# Without a start time it removes nothing.
run_c=$(docker create --label berth=1 --label "berth.env=$P-run2" "$IMG" true)
BERTH_TEST_SINCE= BERTH_TEST_IMAGES=$IMG bash "$CLEAN" >/dev/null 2>&1
check "without BERTH_TEST_SINCE nothing is removed" exists "$run_c"

# setup/docker-stop.sh removes containers only through the scoped cleanup.
check "docker-stop.sh has no unscoped 'docker rm' of label berth=1" \
  bash -c "! grep -q 'docker rm' '$BERTH_SRCDIR/tests/integration/setup/docker-stop.sh' \
           && grep -q 'docker-cleanup.sh' '$BERTH_SRCDIR/tests/integration/setup/docker-stop.sh'"
done_testing
