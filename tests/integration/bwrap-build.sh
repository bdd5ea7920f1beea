#!/bin/bash
# bwrap-build.sh: berth builds itself inside a jail with the default
# configuration -- the jail's default limits must not break a real build
# (issue 11 item 13: 30 CPU-seconds and a 256 MB address space did).  The
# source is copied into a workspace under /var/tmp (the jail's /tmp is
# private), then configured and built there with make -j2.  TAP.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home
command -v jq >/dev/null || skip_all "jq is not installed"
case $("$BERTH" backends --json | jq -r '.[] | select(.name == "bwrap") | .status') in
  ready) ;;
  "") skip_all "no bwrap backend in this build" ;;
  *) skip_all "bwrap is not ready here" ;;
esac
[ -x "$BERTH_SRCDIR/configure" ] || skip_all "the source tree has no configure script (run autogen.sh)"
command -v cc >/dev/null && command -v make >/dev/null || skip_all "no compiler or make"

WS=$(mktemp -d /var/tmp/berth-build.XXXXXX) || exit 1
trap 'berth_test_cleanup; rm -rf "$WS"' EXIT
# The source without build trees or VCS data.
(cd "$BERTH_SRCDIR" && tar --exclude='./_*' --exclude=./.git --exclude='*.o' --exclude='*.lo' --exclude='./autom4te.cache' -cf - .) | tar -xf - -C "$WS"
cd "$WS" || exit 1
# The source tree may have been configured in place: a VPATH build needs it clean.
[ -f config.status ] && { rm -f config.status config.h config.log Makefile; }

echo "# building berth in a jail (default configuration): $WS"
# Not the outer make's flags (jobserver, TESTS=...) nor CI's must-work rule
# (the jail has no Docker socket: that unit test skips).
clean_env='unset MAKEFLAGS MFLAGS MAKELEVEL CI BERTH_TEST_MUST_WORK;'
"$BERTH" exec -b bwrap -t 1800 -- "$clean_env"'mkdir -p _jb && cd _jb && ../configure --disable-werror >configure.log 2>&1 && make -j2 >make.log 2>&1; s=$?; tail -5 make.log 2>/dev/null || tail -5 configure.log; exit $s' >"$TEST_TMP/build.out" 2>&1
rc=$?
is "$rc" 0 "berth builds inside the jail with the default limits"
[ "$rc" -eq 0 ] || diag "$(cat "$TEST_TMP/build.out")"
check "the jail-built berth runs" test -x "$WS/_jb/berth"
if [ -x "$WS/_jb/berth" ]; then
  like "$("$BERTH" exec -b bwrap -- './_jb/berth version')" "berth [0-9]*" "and prints its version (in the jail)"
  "$BERTH" exec -b bwrap -t 1800 -- "$clean_env"'cd _jb && make -j2 check TESTS="$(make -s print-unit-tests)" >check.log 2>&1; s=$?; grep -E "^(FAIL|ERROR):|^# (TOTAL|PASS|FAIL)" check.log; [ $s -eq 0 ] || cat $(grep -lE "^(FAIL|ERROR)" tests/unit/*.log) | tail -20; exit $s' >"$TEST_TMP/check.out" 2>&1
  rc=$?
  is "$rc" 0 "its unit tests pass inside the jail"
  [ "$rc" -eq 0 ] || diag "$(cat "$TEST_TMP/check.out")"
fi
# Sanitizers reserve terabytes of address space: an address-space limit by
# default (it was 256 MB) makes every ASan build fail to start.
if printf 'int main(void){return 0;}\n' | cc -fsanitize=address -x c - -o "$WS/asan-probe" 2>/dev/null; then
  out=$("$BERTH" exec -b bwrap -- './asan-probe && echo asan-ran' 2>&1)
  is "$out" asan-ran "an ASan-instrumented program starts in the default jail"
fi
done_testing
