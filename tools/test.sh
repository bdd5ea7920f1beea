#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# test.sh: the whole test suite.  Starts what the integration tests talk
# to (dockerd with an offline image and a local registry, sshd on
# 127.0.0.1, a private single-node Slurm cluster, the Apptainer test
# double's rootfs), runs `make check` in
# _build/ (building first if needed), stops what it started, and prints
# a summary.  Run as root after tools/bootstrap.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
export CI=${CI:-} BERTH_TEST_MUST_WORK=${BERTH_TEST_MUST_WORK:-1}

if [ "$(id -u)" != 0 ]; then
  # A fresh Debian 12 has no sudo: suggest it only where it exists.
  if command -v sudo >/dev/null 2>&1; then how="sudo $0"; else how="log in as root, or su -c $0"; fi
  echo "test.sh: run as root (it starts dockerd and sshd): $how" >&2
  exit 1
fi
# The containers this run creates are those created from now on (from a
# test image); only they are removed at the end (setup/docker-cleanup.sh).
export BERTH_TEST_SINCE=${BERTH_TEST_SINCE:-$(date +%s%N)}
stop_daemons ()
{
  bash "$SRC/tests/integration/setup/sshd-stop.sh" >/dev/null 2>&1 || true
  bash "$SRC/tests/integration/setup/docker-stop.sh" >/dev/null 2>&1 || true
  bash "$SRC/tests/integration/setup/slurm-down.sh" >/dev/null 2>&1 || true
}
# .ci/run keeps them for its ASan pass and stops them itself; the Podman
# services (no later pass needs them) always stop here.
stop_podman () { bash "$SRC/tests/integration/setup/podman-stop.sh" >/dev/null 2>&1 || true; }
if [ "${BERTH_KEEP_DAEMONS:-0}" = 1 ]; then trap stop_podman EXIT; else trap 'stop_podman; stop_daemons' EXIT; fi
bash tests/integration/setup/docker.sh || { echo "test.sh: could not start dockerd (see above)" >&2; exit 1; }
bash tests/integration/setup/sshd.sh || { echo "test.sh: could not start sshd (see above)" >&2; exit 1; }
bash tests/integration/setup/slurm-up.sh || { echo "test.sh: could not start the test Slurm cluster (see above)" >&2; exit 1; }
bash tests/integration/setup/podman.sh || { echo "test.sh: could not start the Podman services (see above)" >&2; exit 1; }
bash tests/doubles/apptainer/ci-setup.sh || { echo "test.sh: could not prepare the apptainer test double" >&2; exit 1; }

[ -f _build/Makefile ] || { NOCONFIGURE=1 ./autogen.sh && mkdir -p _build && (cd _build && ../configure --enable-werror); } || exit 1
cd _build
make -j"$(nproc)" >/dev/null || exit 1
make -j2 check
status=$?
grep -E '^(FAIL|ERROR|SKIP):' test-suite.log
[ $status -eq 0 ] || cat test-suite.log
awk '/^# TOTAL:/{t=$3} /^# PASS:/{p=$3} /^# SKIP:/{s=$3} /^# FAIL:/{f=$3} /^# ERROR:/{e=$3}
     END{printf "tests (unit programs and TAP assertions): %d total, %d passed, %d failed, %d skipped\n", t, p, f+e, s;
         printf "tests: %d passed, %d failed, %d skipped\n", p, f+e, s}' test-suite.log
exit $status
