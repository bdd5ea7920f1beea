#!/bin/bash
# python.sh: the Python package (python/berth) and the Hermes provider
# plugin (python/hermes_berth) with pytest against the build's real berth
# serve, on local, bwrap and docker.  One TAP line per pytest test.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
: "${BERTH_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
[ -x "$BERTH" ] || skip_all "berth not built ($BERTH)"
# A python3 with pytest (Debian's python3-pytest: tools/bootstrap.sh).
PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import pytest' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || skip_all "no python3 with pytest (apt-get install python3-pytest)"
# The docker tests use the shared engine with berth-test:latest (as
# docker-lib.sh prepares it).
if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null; then
  bash "$BERTH_SRCDIR/tests/integration/setup/docker.sh" >/dev/null 2>&1 || diag "tests/integration/setup/docker.sh failed"
fi
export BERTH PYTHONDONTWRITEBYTECODE=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cd "$BERTH_SRCDIR/python" || exit 1
# The tests must leave the source tree as they found it (a test that wrote
# a relative path into the server's cwd, python/, left python/rel.txt).
tree () { find . \( -type d -printf '%p d\n' \) -o -printf '%p %y %s %T@\n' | LC_ALL=C sort; }
before=$(tree)
"$PY" -m pytest tests -q -rA -p no:cacheprovider >"$out" 2>&1
rc=$?
after=$(tree)
n=0
while IFS= read -r line; do
  case $line in
    "PASSED "*) ok "${line#PASSED }" ;;
    "SKIPPED "*) __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - ${line#SKIPPED } # SKIP" ;;
    "FAILED "* | "ERROR "*) not_ok "$line" ;;
    *) continue ;;
  esac
  n=$((n + 1))
done <"$out"
if [ "$before" = "$after" ]; then
  ok "the tests leave python/ unchanged"
else
  not_ok "the tests changed python/"
  diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed 's/^/#   /' | head -20
fi
# One version: configure.ac's (berth's) is the package's and the plugin's.
want=$(sed -n 's/^AC_INIT(\[berth\], *\[\([^]]*\)\].*/\1/p' "$BERTH_SRCDIR/configure.ac")
got=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$BERTH_SRCDIR/python/pyproject.toml")
got_plugin=$(sed -n 's/^version: *//p' "$BERTH_SRCDIR/python/hermes_berth/plugin.yaml")
is "$got $got_plugin" "$want $want" "python/pyproject.toml and hermes_berth/plugin.yaml have configure.ac's version ($want)"
# pip install ./python works (offline: Debian's setuptools and wheel), and
# the installed package runs
pipdir=$(mktemp -d)
cp -r "$BERTH_SRCDIR/python" "$pipdir/src"
if "$PY" -m pip --version >/dev/null 2>&1; then
  if "$PY" -m pip install -q --no-build-isolation --no-index --target "$pipdir/site" "$pipdir/src" >"$pipdir/log" 2>&1; then
    got=$(cd / && PYTHONPATH=$pipdir/site "$PY" -c 'import berth, hermes_berth
with berth.Environment(backend="local") as e: print(e.execute("echo installed").output.strip(), hermes_berth.__file__.startswith("'"$pipdir"'"))')
    is "$got" "installed True" "pip install ./python: the installed berth and hermes_berth work"
  else
    not_ok "pip install ./python failed: $(tail -3 "$pipdir/log" | tr '\n' ' ')"
  fi
elif must_work; then
  not_ok "pip install ./python: no pip for $PY (apt-get install python3-pip python3-setuptools python3-wheel)"
fi
rm -rf "$pipdir"
if [ "$rc" -ne 0 ] || [ "$n" -eq 0 ]; then
  sed 's/^/# /' "$out" | tail -60
  [ "$rc" -ne 0 ] && [ "$__tap_failed" -eq 0 ] && not_ok "pytest exited $rc"
fi
done_testing
