#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# configure.sh: configure's backend switches say what is wrong in one
# line: a bad value lists the accepted ones, a module asked for with
# modules disabled is an error, and an `auto` backend dropped for a
# missing library is a WARNING naming the Debian packages to install.
# Each case runs configure in a temp build dir (a few seconds each).
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home
src=$BERTH_SRCDIR
[ -x "$src/configure" ] || skip_all "no configure in $src (run autogen.sh)"
[ -f "$src/config.status" ] && skip_all "$src is configured in-tree: configure runs here in other build dirs only"

# conf NAME ARGS...: configure in a fresh dir; $rc, $out (stdout+stderr)
conf ()
{
  local dir=$TEST_TMP/$1; shift
  mkdir -p "$dir"
  out=$(cd "$dir" && "$src/configure" "$@" 2>&1 </dev/null)
  rc=$?
}

conf bad --with-docker=foo
is "$rc" 1 "--with-docker=foo: configure fails"
like "$out" "*configure: error: bad value 'foo' for --with-docker: use auto, yes, builtin, module or no*" "… listing the accepted values"

conf contra --disable-modules --with-bwrap=module
is "$rc" 1 "--disable-modules --with-bwrap=module: configure fails"
like "$out" "*configure: error: --with-bwrap=module contradicts --disable-modules: use --with-bwrap=builtin, or drop --disable-modules*" "… saying what to do"

# A pkg-config that sees every library of this machine but yajl.
mkdir -p "$TEST_TMP/pc"
for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do
  for f in "$d"/*.pc; do
    [ -e "$f" ] && [ "$(basename "$f")" != yajl.pc ] && ln -sf "$f" "$TEST_TMP/pc/"
  done
done
check "yajl is found by the machine's pkg-config (the case below needs it)" pkg-config --exists yajl
PKG_CONFIG_LIBDIR=$TEST_TMP/pc conf noyajl
is "$rc" 0 "without yajl, --with-docker=auto: configure succeeds"
want="WARNING: the docker backend is not built: pkg-config did not find libcurl >= 7.40.0 yajl >= 2.0; install libcurl4-openssl-dev libyajl-dev (Debian) and run configure again, or pass --without-docker"
is "$(grep -c "^configure: $want\$" <<<"$out")" 1 "… with a WARNING line naming the Debian packages"
like "$(sed -n '/modules (dlopen)/,$p' <<<"$out")" "*docker:            no*$want*" "… repeated in the closing summary"

PKG_CONFIG_LIBDIR=$TEST_TMP/pc conf noyajl-module --with-docker=module
is "$rc" 1 "without yajl, --with-docker=module: configure fails"
like "$out" "*configure: error: --with-docker=module: missing libcurl >= 7.40.0 yajl >= 2.0; install libcurl4-openssl-dev libyajl-dev (Debian)*" "… naming the packages"

conf plain
is "$rc" 0 "with every library: configure succeeds"
is "$(grep -c WARNING <<<"$out")" 0 "… without a warning"
done_testing
