#!/bin/bash
# The singularity backend's integration tests against a REAL apptainer:
# BERTH_TEST_APPTAINER=/path/to/apptainer, else an `apptainer` or
# `singularity` on PATH that is not berth's test double.  Apptainer is not
# packaged for Debian 12, so on CI machines this reports SKIP with the
# reason: that is the one allowed skip (singularity-double.sh covers the
# same tests against the CLI double and must pass).
. "$(dirname "$0")/singularity-lib.sh"

real=${BERTH_TEST_APPTAINER:-}
if [ -z "$real" ]; then
  for c in apptainer singularity; do
    p=$(command -v "$c" 2>/dev/null) || continue
    grep -q 'TEST DOUBLE' "$p" 2>/dev/null && continue
    real=$p
    break
  done
fi
if [ -z "$real" ]; then
  echo "1..0 # SKIP no real apptainer/singularity (not packaged for Debian 12; set BERTH_TEST_APPTAINER=/path to run); the CLI test double run (singularity-double.sh) covers these tests"
  exit 0
fi
if [ ! -x "$real" ] || ! "$real" version > /dev/null 2>&1; then
  echo "1..1"
  echo "not ok 1 - BERTH_TEST_APPTAINER=$real does not run ('version' failed)"
  exit 1
fi
[ -x "$BERTH" ] || { echo "1..1"; echo "not ok 1 - the berth CLI was not built ($BERTH)"; exit 1; }
sing_setup real "$real"
sing_run_all
