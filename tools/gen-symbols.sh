#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# gen-symbols.sh: debian/libberth0.symbols from libberth's version script.
#   tools/gen-symbols.sh [SYM [CONFIGURE_AC]]           print it
#   tools/gen-symbols.sh --check SYM SYMBOLS [CONFIGURE_AC]
#                                                       exit 1 (and show the diff) when SYMBOLS is stale
# Each node of runtime/berth.sym (BERTH_X.Y { global: name; ... }) is
# preceded by a "/* berth X.Y.Z */" comment: that release is the minimal
# version of its symbols.  The SONAME's major is CURRENT-AGE of
# LIBBERTH_VERSION_INFO in configure.ac.
set -eu
check=
if [ "${1:-}" = --check ]; then
  check=${3:?usage: gen-symbols.sh --check SYM SYMBOLS [CONFIGURE_AC]}
  set -- "$2" "${4:-}"
fi
here=$(dirname "$0")
sym=${1:-$here/../runtime/berth.sym}
ac=${2:-$(dirname "$sym")/../configure.ac}
[ -r "$sym" ] || { echo "gen-symbols.sh: cannot read $sym" >&2; exit 2; }
[ -r "$ac" ] || { echo "gen-symbols.sh: cannot read $ac (give it as the last argument)" >&2; exit 2; }

info=$(sed -n 's/.*AC_SUBST(\[LIBBERTH_VERSION_INFO\], *\[\([0-9]*:[0-9]*:[0-9]*\)\]).*/\1/p' "$ac")
[ -n "$info" ] || { echo "gen-symbols.sh: no LIBBERTH_VERSION_INFO in $ac" >&2; exit 2; }
major=$(echo "$info" | awk -F: '{ print $1 - $3 }')

generate ()
{
  printf '# Generated from runtime/berth.sym by tools/gen-symbols.sh: do not edit.\n'
  printf 'libberth.so.%s libberth%s #MINVER#\n' "$major" "$major"
  printf '* Build-Depends-Package: libberth-dev\n'
  # Strip /* */ comments except the release markers, then walk the nodes.
  awk '
    /\/\* berth [0-9][0-9.]* \*\// { match ($0, /berth [0-9][0-9.]*/); release = substr ($0, RSTART + 6, RLENGTH - 6); next }
    { sub (/\/\*.*\*\//, "") }
    /^[ \t]*(\/\*|\*)/ { next }
    /^[A-Za-z_][A-Za-z0-9_.]*[ \t]*\{/ {
      node = $1; sub (/\{.*/, "", node)
      if (release == "") { print "gen-symbols.sh: node " node " has no /* berth X.Y.Z */ comment before it" > "/dev/stderr"; exit 2 }
      print " " node "@" node " " release; global = 0; next
    }
    /^[ \t]*global:/ { global = 1; next }
    /^[ \t]*local:/ { global = 0; next }
    /^[ \t]*\}/ { node = ""; release = ""; next }
    global && node != "" && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
      s = $1; sub (/;.*/, "", s); print " " s "@" node " " release
    }
  ' "$sym" | LC_ALL=C sort
}

if [ -z "$check" ]; then
  generate
  exit 0
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
generate >"$tmp"
if ! cmp -s "$tmp" "$check"; then
  echo "gen-symbols.sh: $check does not match $sym; regenerate it: tools/gen-symbols.sh >$check" >&2
  diff -u "$check" "$tmp" >&2 || true
  exit 1
fi
