#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# run.sh BACKEND [IMAGE]: the hosted-scope conformance checks
# (conformance.c) against BACKEND, with the audit library (audit.c)
# preloaded to observe host file accesses.  A backend that does not serve
# hosted scopes passes by being refused.  Plugin authors: build berth's
# tests (make check TESTS=), then run this with their plugin enabled.
#   BERTH_BUILDDIR  the build directory (default: .)
set -u
B=${BERTH_BUILDDIR:-.}
backend=${1:?usage: run.sh BACKEND [IMAGE]}
log=$(mktemp -u /tmp/berth-audit.XXXXXX)
# the planted paths, and berth's own spill directory (an oversized result
# under a hosted scope never touches the host)
export BERTH_AUDIT_LOG=$log BERTH_AUDIT_MATCH='berth-conformance-|/berth/output/'
LD_PRELOAD=$B/tests/conformance/.libs/libberth-audit.so "$B/tests/conformance/conformance" "$backend" "${2:-}"
rc=$?
[ -s "$log" ] && { echo "# host accesses seen:"; sed 's/^/#   /' "$log"; }
rm -f "$log"
exit $rc
