#!/bin/sh
# Build the plugin.yaml fuzzer (runtime/loader.c with conf-*.c) with
# libFuzzer + ASan/UBSan and run it.
#   tests/fuzz/run-fuzz-plugin-yaml.sh [SECONDS] [extra libFuzzer args...]
# Seeds: tests/fixtures/plugins/*/plugin.yaml and the acmebox example.
# Corpus and crashes go under $BERTH_FUZZ_DIR (default
# /tmp/berth-fuzz-plugin-yaml).  Exit status is libFuzzer's.
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-plugin-yaml}
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/inc" "$work/plugins"
printf '#define _GNU_SOURCE 1\n#define PACKAGE_VERSION "0.1.0"\n' >"$work/inc/config.h"
for f in "$srcdir"/tests/fixtures/plugins/*/plugin.yaml "$srcdir/sdk/examples/acmebox/plugin.yaml"; do
  d=$(basename "$(dirname "$f")")
  sed "s/^name: .*/name: fz/" "$f" >"$work/corpus/$d.yaml"
done
$CC -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DBERTH_MODULEDIR='"/nonexistent"' \
  -I"$work/inc" -I"$srcdir/runtime" -I"$srcdir/runtime/include" -I"$srcdir/sdk/include" \
  "$srcdir/tests/fuzz/fuzz-plugin-yaml.c" "$srcdir/runtime/loader.c" "$srcdir/runtime/conf-tree.c" "$srcdir/runtime/conf-parse.c" "$srcdir/runtime/conf-schema.c" \
  "$srcdir/runtime/conf-render.c" "$srcdir/runtime/conf-edit.c" \
  "$srcdir/runtime/util.c" "$srcdir/runtime/error.c" \
  $(pkg-config --cflags --libs yaml-0.1) -ldl -lm -o "$work/fuzz-plugin-yaml"
cd "$work"
BERTH_PLUGINDIR=$work/plugins exec ./fuzz-plugin-yaml -max_total_time="$seconds" -max_len=8192 \
  -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" "$@" corpus
