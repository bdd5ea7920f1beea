#!/bin/bash
# exports.sh: libberth exports only berth_* and each module only its entry.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
B=${BERTH_BUILDDIR:-.}
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
lib=$B/.libs/libberth.so
[ -e "$lib" ] || skip_all "no shared libberth in this build"
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBR]/ {print $3}' | sed 's/@.*//' | grep -v '^berth_' | grep -v '^BERTH_' || true)
is "$bad" "" "libberth.so exports only berth_* symbols"
check "libberth.so has a SONAME" bash -c "objdump -p '$lib' | grep -q 'SONAME.*libberth.so.0'"
check "the public API is exported" bash -c "nm -D --defined-only '$lib' | grep -q ' berth_env_execute'"
check "internals are hidden" bash -c "! nm -D --defined-only '$lib' | grep -q 'berth_output_add\|berth_script_build\|berth_ctx_register'"
for m in "$B"/*/.libs/*.so; do
  [ -e "$m" ] || continue
  case $m in */sdk/*|*/tests/*) continue ;; esac
  syms=$(nm -D --defined-only "$m" | awk '$2 ~ /[TDBR]/ {print $3}' | sort | tr '\n' ' ')
  is "$syms" "berth_provider_entry_v1 " "module $(basename "$m") exports only its entry point"
done
done_testing
