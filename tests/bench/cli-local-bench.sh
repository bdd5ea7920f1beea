#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cli-local-bench.sh: the cost of the berth command itself, as a ratio
# against bash: `berth exec -b local -- true` vs `bash -c true`, N rounds,
# interleaved in one run (each round runs every program once, so drift of
# the machine hits all alike).  Each round's berth time is divided by the
# same round's bash time; the median and p90 of those ratios are printed,
# never bare times.
#
#   tests/bench/cli-local-bench.sh [BUILD_DIR...]
#
# Each BUILD_DIR is a build tree (default: $BERTH_BUILDDIR or .), e.g. a
# "before" build of an older commit and the current one, compared in the
# same run.  The real binary (.libs/berth) is run, not libtool's wrapper
# script, with that tree's libberth and modules (BERTH_MODULEDIR as in
# `make check`).  N=<rounds> (default 200).  Exits 77 without bash's
# $EPOCHREALTIME (bash >= 5).
set -eu
N=${N:-200}
[ -n "${EPOCHREALTIME:-}" ] || { echo "cli-local-bench: needs bash >= 5 (\$EPOCHREALTIME)" >&2; exit 77; }
[ $# -gt 0 ] || set -- "${BERTH_BUILDDIR:-.}"
BASH_BIN=$(command -v bash)

T=$(mktemp -d /tmp/berth-cli-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

names=() bins=() libs=() mods=() libexec=()
for dir in "$@"; do
  dir=$(cd "$dir" && pwd)
  if [ -x "$dir/.libs/berth" ]; then bin=$dir/.libs/berth; elif [ -x "$dir/berth" ]; then bin=$dir/berth; else
    echo "cli-local-bench: no berth built in $dir" >&2; exit 2
  fi
  names+=("$dir") bins+=("$bin") libs+=("$dir/.libs")
  mods+=("$dir/docker/.libs:$dir/bwrap/.libs:$dir/local/.libs:$dir/ssh/.libs:$dir/singularity/.libs")
  libexec+=("$dir:$dir/bwrap:$dir/ssh")
done

export XDG_CONFIG_HOME=$T/config XDG_DATA_HOME=$T/data XDG_CACHE_HOME=$T/cache XDG_RUNTIME_DIR=$T/run
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
unset BERTH_CONFIG BERTH_DEBUG
cd "$T"

# One run of build I (or bash when I is -1); prints microseconds.
run_one () {
  local t0 t1 i=$1
  if [ "$i" -lt 0 ]; then
    t0=$EPOCHREALTIME; "$BASH_BIN" -c true; t1=$EPOCHREALTIME
  else
    t0=$EPOCHREALTIME
    XDG_STATE_HOME=$T/state$i LD_LIBRARY_PATH=${libs[$i]} BERTH_MODULEDIR=${mods[$i]} \
      BERTH_LIBEXECDIR=${libexec[$i]} BERTH_BINDIR=${names[$i]} \
      "${bins[$i]}" exec -b local -- true >/dev/null || { echo "cli-local-bench: ${bins[$i]} failed" >&2; exit 2; }
    t1=$EPOCHREALTIME
  fi
  echo $(( (${t1/./} - ${t0/./}) ))
}

# Warm the page cache and state directories.
for i in "${!bins[@]}"; do run_one "$i" >/dev/null; done
run_one -1 >/dev/null

# Each round: bash, then every build; odd rounds in the reverse order.
order=(-1 "${!bins[@]}")
for ((r = 0; r < N; r++)); do
  declare -A us=()
  if (( r % 2 )); then seq=($(printf '%s\n' "${order[@]}" | tac)); else seq=("${order[@]}"); fi
  for i in "${seq[@]}"; do
    us[$i]=$(run_one "$i")
    [[ ${us[$i]} =~ ^[0-9]+$ ]] || exit 2
  done
  for i in "${!bins[@]}"; do echo "$i ${us[$i]} ${us[-1]}"; done
  unset us
done > "$T/samples"

printf 'cli-local-bench: %d rounds of `berth exec -b local -- true` / `bash -c true` (same round)\n' "$N"
for i in "${!bins[@]}"; do
  awk -v i="$i" '$1 == i { printf "%.6f\n", $2 / $3 }' "$T/samples" | sort -g > "$T/r$i"
  n=$(wc -l < "$T/r$i")
  med=$(sed -n "$(( (n + 1) / 2 ))p" "$T/r$i")
  p90=$(sed -n "$(( (n * 9 + 9) / 10 ))p" "$T/r$i")
  printf '  %-40s median %.2f  p90 %.2f\n' "${names[$i]}" "$med" "$p90"
done
