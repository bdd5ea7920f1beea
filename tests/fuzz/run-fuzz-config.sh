#!/bin/sh
# Build the configuration fuzzer with libFuzzer + ASan/UBSan and run it.
#   tests/fuzz/run-fuzz-config.sh [SECONDS] [extra libFuzzer args...]
# Seeds: tests/fixtures/config/*.yaml.  Corpus and crashes go under
# $BERTH_FUZZ_DIR (default /tmp/berth-fuzz-config).  Exit status is
# libFuzzer's: non-zero when it found a crash.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-config}
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/inc"
# The sources include autoconf's "config.h" first; a stand-in will do.
[ -f "$work/inc/config.h" ] || echo '#define _GNU_SOURCE 1' >"$work/inc/config.h"
cp -f "$srcdir"/tests/fixtures/config/*.yaml "$work/corpus/"
# Seeds for the set_in_file mode: 0x01 KEY \n VALUE \n FILE.
for kv in 'terminal.backend docker' 'terminal.timeout 30' 'plugins.enabled [a, b]' 'terminal.docker_image "x: y"'; do
  { printf '\001%s\n%s\n' "${kv%% *}" "${kv#* }"; cat "$srcdir/tests/fixtures/config/commented.yaml"; } \
    >"$work/corpus/set-${kv%% *}"
done
# shellcheck disable=SC2046
$CC -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$work/inc" -I"$srcdir/runtime" -I"$srcdir/runtime/include" -I"$srcdir/sdk/include" \
  "$srcdir/tests/fuzz/fuzz-config.c" "$srcdir/runtime/conf-tree.c" "$srcdir/runtime/conf-parse.c" "$srcdir/runtime/conf-schema.c" \
  "$srcdir/runtime/conf-render.c" "$srcdir/runtime/conf-edit.c" \
  "$srcdir/runtime/util.c" "$srcdir/runtime/error.c" \
  $(pkg-config --cflags --libs yaml-0.1) -lm -o "$work/fuzz-config"
cd "$work"
exec ./fuzz-config -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/" "$@" corpus
