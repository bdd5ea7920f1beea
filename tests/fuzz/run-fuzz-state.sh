#!/bin/sh
# Build the state-channel fuzzer with libFuzzer + ASan/UBSan and run it.
#   tests/fuzz/run-fuzz-state.sh [SECONDS] [extra libFuzzer args...]
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-state}
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/inc"
[ -f "$work/inc/config.h" ] || echo '#define _GNU_SOURCE 1' >"$work/inc/config.h"
printf '\005warn\000BERTH:pid:1\000BERTH:cwd:/tmp\n\000BERTH:env:declare -x A="1"\n\000BERTH:fn:f () { :; }\000BERTH:ec:0\000' >"$work/corpus/seed"
$CC -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$work/inc" -I"$srcdir/runtime" -I"$srcdir/runtime/include" -I"$srcdir/sdk/include" \
  "$srcdir/tests/fuzz/fuzz-state.c" "$srcdir/runtime/wrapper.c" "$srcdir/runtime/snapshot.c" \
  "$srcdir/runtime/util.c" "$srcdir/runtime/shell.c" -o "$work/fuzz-state"
cd "$work"
exec ./fuzz-state -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" "$@" corpus
