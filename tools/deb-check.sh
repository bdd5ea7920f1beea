#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# deb-check.sh: as root, build the Debian packages from a clean export of
# HEAD (git archive: nothing of the work tree's builds), run lintian
# (fails on errors, prints the rest), install them with apt-get, run the
# smoke commands with the installed /usr/bin/berth, and purge them again
# (also when a step fails), so the machine is left as it was.  Called by
# .ci/run; needs the Build-Depends of debian/control (tools/bootstrap.sh
# installs them) and runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
[ "$(id -u)" = 0 ] || { echo "deb-check.sh: run as root (it installs and purges the packages)" >&2; exit 1; }
git rev-parse --verify -q HEAD >/dev/null || { echo "deb-check.sh: needs a git checkout (it builds git archive HEAD)" >&2; exit 1; }

# The symbols file is generated: a stale one fails here, before the build.
sh tools/gen-symbols.sh --check runtime/berth.sym debian/libberth0.symbols

packages=$(sed -n 's/^Package: *//p' debian/control | tr '\n' ' ')
work=$(mktemp -d /tmp/berth-deb.XXXXXX)
installed=false
cleanup ()
{
  if $installed; then
    # shellcheck disable=SC2086
    apt-get purge -y -qq $packages >/dev/null 2>&1 || echo "deb-check.sh: could not purge $packages" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

git archive --format=tar --prefix=berth/ HEAD | tar -xf - -C "$work"
echo "deb-check: dpkg-buildpackage -us -uc -b (log: only its tail on failure)"
if ! (cd "$work/berth" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
  tail -80 "$work/build.log"
  # which test failed, and its own log, is far above the tail
  grep -E '^(FAIL|ERROR): |^not ok ' "$work/build.log" || true
  for t in $(sed -n 's/^\(FAIL\|ERROR\): \([^ ]*\).*/\2/p' "$work/build.log" | sort -u); do
    log="$work/berth/${t%.sh}.log"; [ -f "$log" ] || log="$work/berth/$t.log"
    [ -f "$log" ] && { echo "--- $log (end)"; tail -40 "$log"; }
  done
  echo "deb-check.sh: dpkg-buildpackage failed (above: the end of its log, then the failed tests)" >&2
  exit 1
fi
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR):' "$work/build.log" | tr '\n' ' '; echo

echo "deb-check: lintian"
lintian --fail-on error "$work"/*.changes 2>&1 | grep -v 'running with root privileges' || true
# --fail-on's verdict, without the pipe losing it
lintian --fail-on error "$work"/*.changes >/dev/null 2>&1 || { echo "deb-check.sh: lintian reports errors (above)" >&2; exit 1; }

echo "deb-check: packages"
debs=()
for p in $packages; do
  f=$(ls "$work"/"${p}"_*.deb)
  debs+=("$f")
  printf '  %-20s %7s bytes  (installed %s KiB)\n' "$p" "$(stat -c %s "$f")" "$(dpkg-deb -f "$f" Installed-Size)"
done

installed=true
apt-get install -y -qq "${debs[@]}" >"$work/install.log" 2>&1 || { cat "$work/install.log"; exit 1; }
home=$work/home
mkdir -p "$home"
for f in /etc/berth/config.yaml /usr/lib/systemd/user/berth-gc.service /usr/lib/systemd/user/berth-gc.timer \
  /usr/share/bash-completion/completions/berth /usr/share/zsh/vendor-completions/_berth \
  /usr/share/fish/vendor_completions.d/berth.fish /usr/share/man/man3/libberth.3.gz; do
  [ -f "$f" ] || { echo "deb-check.sh: the packages did not install $f" >&2; exit 1; }
done
if ls /etc/systemd/user/*.wants/berth-gc.* >/dev/null 2>&1; then
  echo "deb-check.sh: installing enabled berth-gc (it must only be installed)" >&2
  exit 1
fi
# bash-completion's own loader finds the installed script.
bash -c '. /usr/share/bash-completion/bash_completion && __load_completion berth && complete -p berth' | grep -q -- '-F _berth berth$' \
  || { echo "deb-check.sh: bash-completion does not load /usr/share/bash-completion/completions/berth" >&2; exit 1; }
echo "deb-check: smoke: $(/usr/bin/berth --version)"
HOME=$home XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.state XDG_CACHE_HOME=$home/.cache XDG_DATA_HOME=$home/.data \
  /usr/bin/berth exec -- true
HOME=$home XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.state XDG_CACHE_HOME=$home/.cache XDG_DATA_HOME=$home/.data \
  /usr/bin/berth backends
# the Python package, installed, runs a command through the installed berth serve
(cd / && HOME=$home XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.state XDG_CACHE_HOME=$home/.cache XDG_DATA_HOME=$home/.data \
  BERTH=/usr/bin/berth /usr/bin/python3 -c 'import berth; e = berth.Environment(); print("python3-berth:", e.execute("echo ok").output.strip()); e.cleanup()')
echo "deb-check: ok"
