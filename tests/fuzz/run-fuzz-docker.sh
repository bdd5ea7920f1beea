#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the docker fuzzers (frames demuxer, JSON parsers) with libFuzzer +
# ASan/UBSan and run each for SECONDS.
#   tests/fuzz/run-fuzz-docker.sh [SECONDS] [extra libFuzzer args...]
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-docker}
CC=${CC:-clang}
FLAGS="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I$srcdir"
mkdir -p "$work/frames" "$work/json"
printf '\001\000\000\000\000\000\000\005hello\002\000\000\000\000\000\000\003err' >"$work/frames/seed"
printf '{"status":"Downloading","progressDetail":{"current":1,"total":2},"id":"a"}\r\n{"errorDetail":{"message":"x"}}' >"$work/json/pull"
printf '[{"Id":"a","State":"running","Labels":{"berth.config":"x"}}]' >"$work/json/list"
printf '{"Running":false,"ExitCode":3,"Pid":1}' >"$work/json/inspect"
$CC $FLAGS "$srcdir/tests/fuzz/fuzz-docker-frames.c" "$srcdir/docker/frames.c" -o "$work/fuzz-docker-frames"
$CC $FLAGS "$srcdir/tests/fuzz/fuzz-docker-json.c" "$srcdir/docker/json.c" -lyajl -o "$work/fuzz-docker-json"
cd "$work"
./fuzz-docker-frames -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" "$@" frames
./fuzz-docker-json -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" "$@" json
