#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the berth-agent frame parser fuzzer with libFuzzer + ASan/UBSan and
# run it for SECONDS.
#   tests/fuzz/run-fuzz-agent.sh [SECONDS] [extra libFuzzer args...]
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-agent}
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/inc"
[ -f "$work/inc/config.h" ] || printf '#define _GNU_SOURCE 1\n#define PACKAGE_VERSION "fuzz"\n' >"$work/inc/config.h"
# seeds: a RUN (flags 1, argc 3, inherit env, cwd "", bash -c true), an EXIT, a HELLO
printf '\000\000\000\045\002\000\000\000\000\000\000\001\000\000\000\001\000\000\000\003\377\377\377\377\000\000\000\000\000\000\000\004bash\000\000\000\002-c\000\000\000\004true' >"$work/corpus/run"
printf '\000\000\000\011\030\000\000\000\000\000\000\001\001\000\000\000\003\000\000\000\000' >"$work/corpus/exit"
printf '\000\000\000\013\001\000\000\000\000\000\000\000\000\000\000\001\000\000\000\003x/1' >"$work/corpus/hello"
$CC -g -O1 -std=gnu11 -DBERTH_LIBFUZZER -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$work/inc" -I"$srcdir" "$srcdir/tests/fuzz/fuzz-agent-proto.c" "$srcdir/agent/proto.c" -o "$work/fuzz-agent-proto"
cd "$work"
exec ./fuzz-agent-proto -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" "$@" corpus
