#!/bin/bash
# symbols.sh: runtime/berth.sym is the exact list of what libberth.so
# exports, node by node, and each module exports only its entry point.
#
# Three sets are compared:
#   listed    the names in runtime/berth.sym, each with its node (NAME@@NODE);
#   exported  nm -D --defined-only of .libs/libberth.so (the versioned names);
#   marked    what the source marks BERTH_EXPORT: the global symbols of
#             default visibility in the objects linked into libberth.so.
# A BERTH_EXPORT function missing from berth.sym is made local by the
# version script's "local: *", so it never reaches nm -D; only the objects
# show it.  Every difference is one "not ok" that says what to edit.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
B=${BERTH_BUILDDIR:-.}
S=${BERTH_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
sym=$S/runtime/berth.sym
lib=$B/.libs/libberth.so
command -v nm >/dev/null || skip_all "nm (binutils) is not installed"
command -v readelf >/dev/null || skip_all "readelf (binutils) is not installed"
[ -e "$lib" ] || skip_all "no shared libberth in this build"
[ -r "$sym" ] || skip_all "no $sym"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# listed: strip /* */ comments, then track "NODE {" ... "}" and take every
# "name;" of a global: section.  nodes.txt keeps the nodes in file order.
awk '
  { buf = buf $0 "\n" }
  END {
    gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", buf)   # C comments
    gsub(/[{};]/, " & ", buf)
    n = split(buf, w, /[ \t\n]+/)
    node = ""; sect = ""
    for (i = 1; i <= n; i++) {
      t = w[i]
      if (t == "") continue
      if (node == "" && t != "{" && t != "}" && t != ";") { pending = t; continue }
      if (t == "{" && node == "") { node = pending; print node > NODES; continue }
      if (t == "}") { node = ""; sect = ""; continue }
      if (t == "global:" || t == "local:") { sect = t; continue }
      if (t == ";" || sect != "global:") continue
      print t "@@" node
    }
  }' NODES="$tmp/nodes.txt" "$sym" | sort >"$tmp/listed"
newest=$(tail -n 1 "$tmp/nodes.txt")
node_of () { grep "^$1@@" "$tmp/listed" | sed 's/.*@@//' | head -n 1; }

check "runtime/berth.sym parses (nodes: $(tr '\n' ' ' <"$tmp/nodes.txt"))" test -s "$tmp/listed"

# exported: the version nodes themselves are absolute (A) symbols.
nmopt=--with-symbol-versions
nm -D --defined-only $nmopt "$lib" >/dev/null 2>&1 || nmopt=
nm -D --defined-only $nmopt "$lib" | awk '$2 != "A" {print $3}' | sort >"$tmp/exported"
nm -D --defined-only $nmopt "$lib" | awk '$2 == "A" {sub(/@.*/, "", $3); print $3}' | sort >"$tmp/nodes-exported"
is "$(sort "$tmp/nodes-exported" | tr '\n' ' ')" "$(sort "$tmp/nodes.txt" | tr '\n' ' ')" \
  "libberth.so defines the version nodes runtime/berth.sym declares"

# marked: global, defined, default visibility in libberth-core and in
# libberth.la's own objects (builtin.c and the built-in backends).
objs=$(ls "$B"/.libs/libberth-core.a "$B"/.libs/libberth_la-*.o "$B"/*/.libs/libberth_la-*.o 2>/dev/null)
if [ -n "$objs" ]; then
  # shellcheck disable=SC2086
  readelf -sW $objs 2>/dev/null \
    | awk '($5 == "GLOBAL" || $5 == "WEAK") && $6 == "DEFAULT" && $7 != "UND" && ($4 == "FUNC" || $4 == "OBJECT") {print $8}' \
    | sed 's/@.*//' | sort -u >"$tmp/marked"
else
  diag "no objects of libberth.so found under $B: the BERTH_EXPORT check is skipped"
  sed 's/@@.*//' "$tmp/listed" | sort -u >"$tmp/marked"
fi

lnames=$(sed 's/@@.*//' "$tmp/listed" | sort -u)
# 1. exported under another node than the one listed (a stale build, or a
#    name listed in two nodes), or exported but not listed at all (only
#    possible without "local: *").
for s in $(comm -23 "$tmp/exported" "$tmp/listed"); do
  name=${s%%@*}
  if grep -qx "$name" <<<"$lnames"; then
    not_ok "libberth.so exports $s but runtime/berth.sym lists $name in node $(node_of "$name"): list it in exactly one node and relink libberth.la"
  else
    not_ok "libberth.so exports $s, which runtime/berth.sym does not list: add '	$name;' to the global: list of node $newest"
  fi
done
# 2. marked BERTH_EXPORT in the source but not listed: hidden by "local: *".
for name in $(comm -23 "$tmp/marked" <(echo "$lnames")); do
  not_ok "$name is BERTH_EXPORT but missing from runtime/berth.sym: add '	$name;' to the global: list of node $newest (the last node, at the end of the file)"
done
# 3. listed but not exported: a stale entry, or the definition lost BERTH_EXPORT.
exnames=$(sed 's/@.*//' "$tmp/exported" | sort -u)
for s in $(comm -13 "$tmp/exported" "$tmp/listed"); do
  name=${s%%@@*} node=${s##*@@}
  if grep -qx "$name" <<<"$exnames"; then
    continue   # reported above as exported under another node
  elif grep -qx "$name" "$tmp/marked"; then
    not_ok "$name is listed in node $node of runtime/berth.sym and marked BERTH_EXPORT but libberth.so does not export it: relink libberth.la"
  elif [ "$node" = "$newest" ]; then
    not_ok "$name is listed in node $node of runtime/berth.sym but nothing defines it with BERTH_EXPORT: remove '$name;' from node $node, or mark its definition BERTH_EXPORT"
  else
    not_ok "$name is listed in released node $node of runtime/berth.sym but libberth.so no longer exports it: that breaks the ABI; restore its BERTH_EXPORT definition (a released node is never edited)"
  fi
done
is "$(comm -3 "$tmp/exported" "$tmp/listed" | wc -l)" "0" \
  "nm -D of libberth.so is exactly runtime/berth.sym ($(wc -l <"$tmp/exported") exported, $(wc -l <"$tmp/listed") listed)"
for n in $(cat "$tmp/nodes.txt"); do
  diag "$n: $(grep -c "@@$n\$" "$tmp/listed") symbols"
done

check "libberth.so has a SONAME" bash -c "objdump -p '$lib' | grep -q 'SONAME.*libberth.so.0'"
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBR]/ {sub(/@.*/, "", $3); print $3}' | grep -v '^berth_' || true)
is "$bad" "" "libberth.so exports only berth_* names"

# Modules: exactly the entry symbol the SDK header names, unversioned or not.
entry=$(sed -n 's/^#define BERTH_PROVIDER_ENTRY "\(.*\)"/\1/p' "$S/sdk/include/berth/provider.h")
[ -n "$entry" ] || entry=berth_provider_entry_v2
for m in "$B"/*/.libs/*.so; do
  [ -e "$m" ] || continue
  case $m in */sdk/*|*/tests/*) continue ;; esac
  syms=$(nm -D --defined-only "$m" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort | tr '\n' ' ')
  is "$syms" "$entry " "module $(basename "$m") exports only $entry"
done
done_testing
