#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build the serve protocol fuzzer (serve/request.c, serve/json.c) with
# libFuzzer + ASan/UBSan and run it for SECONDS; without clang's libFuzzer
# build the replay driver instead and run it over the corpus.
#   tests/fuzz/run-fuzz-serve.sh [SECONDS] [extra libFuzzer args...]
set -eu
seconds=${1:-60}
[ $# -gt 0 ] && shift
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
work=${BERTH_FUZZ_DIR:-/tmp/berth-fuzz-serve}
CC=${CC:-clang}
mkdir -p "$work/corpus" "$work/inc"
[ -f "$work/inc/config.h" ] || echo '#define _GNU_SOURCE 1' >"$work/inc/config.h"
printf '{"id":1,"method":"version"}' >"$work/corpus/version"
printf '{"id":"x","method":"execute","params":{"env":"e1","command":"echo hi","timeout":1.5,"stdin_b64":"AP8K"}}' >"$work/corpus/execute"
printf '{"id":2,"method":"open","params":{"scope":{"tenant":"local","agent":"a"},"x":[true,false,null,-1e-3]}}' >"$work/corpus/open"
printf '{"id":"\\ud83d\\ude00\\u00e9","method":"cancel","params":{"id":"c1"}}' >"$work/corpus/escapes"
SRC="$srcdir/tests/fuzz/fuzz-serve.c $srcdir/serve/request.c $srcdir/serve/json.c"
INC="-I$work/inc -I$srcdir/serve -I$srcdir/runtime/include"
if echo 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){return 0;}' |
  $CC -fsanitize=fuzzer -x c - -o "$work/probe" 2>/dev/null; then
  # shellcheck disable=SC2086
  $CC -g -O1 -std=gnu11 -DBERTH_LIBFUZZER -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $INC $SRC -o "$work/fuzz-serve"
  cd "$work"
  exec ./fuzz-serve -max_total_time="$seconds" -max_len=65536 -timeout=10 -artifact_prefix="$work/" "$@" corpus
fi
echo "run-fuzz-serve.sh: no libFuzzer ($CC -fsanitize=fuzzer); replaying the corpus and built-in mutations" >&2
CC=${CC_REPLAY:-cc}
# shellcheck disable=SC2086
$CC -g -O1 -std=gnu11 -fsanitize=address,undefined -fno-sanitize-recover=undefined $INC $SRC -o "$work/fuzz-serve-replay"
"$work/fuzz-serve-replay" "$work"/corpus/*
exec "$work/fuzz-serve-replay"
