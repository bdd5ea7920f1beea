# SPDX-License-Identifier: LGPL-2.1-or-later
# plugins-lib.sh: shared setup of the plugin TAP tests (sourced).
# Builds sdk/examples/acmebox with its own plain Makefile, the way a third
# party would, against this build tree (an uninstalled berth.pc), and
# installs it into a scratch $XDG_DATA_HOME.

. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"

: "${BERTH_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BERTH_BUILDDIR:=$(pwd)}"
: "${BERTH:=$BERTH_BUILDDIR/berth}"
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
[ -e "$BERTH_BUILDDIR/.libs/libberth.so" ] || skip_all "libberth.so not built (configure --enable-shared)"
command -v make >/dev/null || skip_all "make not installed"
command -v pkg-config >/dev/null || skip_all "pkg-config not installed"

TDIR=$(mktemp -d /tmp/berth-plugins-test.XXXXXX)
trap 'rm -rf "$TDIR"' EXIT
export XDG_STATE_HOME=$TDIR/state XDG_RUNTIME_DIR=$TDIR/run XDG_CONFIG_HOME=$TDIR/config XDG_DATA_HOME=$TDIR/data
mkdir -p -m 0700 "$XDG_RUNTIME_DIR" "$XDG_STATE_HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"
unset BERTH_CONFIG

# berth.pc for the uninstalled tree: what `pkg-config --cflags --libs berth`
# gives a plugin author once berth is installed.
mkdir -p "$TDIR/pc"
cat > "$TDIR/pc/berth.pc" <<PC
Name: berth
Description: berth (uninstalled build tree)
Version: $("$BERTH" version | awk '{print $2}')
Libs: -L$BERTH_BUILDDIR/.libs -lberth
Cflags: -I$BERTH_SRCDIR/runtime/include -I$BERTH_SRCDIR/sdk/include
PC

# build_acmebox: copy the example (the source tree may be read-only, as
# in distcheck), build it with its plain Makefile, install it.
build_acmebox () {
  rm -rf "$TDIR/acmebox-src"
  cp -r "$BERTH_SRCDIR/sdk/examples/acmebox" "$TDIR/acmebox-src"
  chmod -R u+w "$TDIR/acmebox-src"
  PKG_CONFIG_PATH=$TDIR/pc make -C "$TDIR/acmebox-src" CFLAGS="-O2 -g -Wall -Wextra -Werror" \
    >"$TDIR/acmebox-build.log" 2>&1 \
    && PKG_CONFIG_PATH=$TDIR/pc make -C "$TDIR/acmebox-src" install >>"$TDIR/acmebox-build.log" 2>&1
}

ACMEBOX_DIR=$XDG_DATA_HOME/berth/plugins/acmebox
