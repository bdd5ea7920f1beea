#!/bin/bash
# bwrap-jail.sh: the berth-jail helper driven directly -- the escape canary
# suite, profiles, persistence, lifetime and fail-closed reasons -- as the
# caller and, when the caller is root, again as an unprivileged user
# (setpriv to nobody).  TAP.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${BERTH_SRCDIR:=$(cd "$here/../.." && pwd)}"
. "$here/bwrap-lib.sh"

for f in "$JAIL" "$CANARY"; do
  if [ ! -x "$f" ]; then
    echo "1..0 # SKIP $f is not built"
    must_work && exit 1
    exit 0
  fi
done
if ! out=$("$JAIL" probe 2>&1); then
  if must_work; then
    echo "not ok - berth-jail probe: $out"
    echo "1..1"
    exit 1
  fi
  echo "1..0 # SKIP the jail cannot run here: $out"
  exit 0
fi

# run_pass LABEL CMD...: forward a pass's TAP lines, counting them.
run_pass ()
{
  local label=$1 line
  shift
  while IFS= read -r line; do
    case $line in
      "ok - "*) t_count=$((t_count + 1)); echo "ok - [$label] ${line#ok - }" ;;
      "not ok - "*) t_count=$((t_count + 1)); t_failed=$((t_failed + 1)); echo "not ok - [$label] ${line#not ok - }" ;;
      *) echo "$line" ;;
    esac
  done < <("$@" 2>&1)
}

# The helpers run inside jails, whose /tmp is private: a build tree under
# /tmp is invisible there.  Both passes use copies in /var/tmp, readable by
# nobody for the unprivileged pass.
bin=$(mktemp -d /var/tmp/berth-bwrap-bin.XXXXXX)
chmod 755 "$bin"
cp "$JAIL" "$CANARY" "$bin/"
[ -x "$DENYNS" ] && cp "$DENYNS" "$bin/"
cp "$here/bwrap-lib.sh" "$here/bwrap-canaries.sh" "$bin/"
# The berth command too (its real binary, libberth, the bwrap module when
# it is one), for the section that runs with no configuration, and the
# helper's credential-store table for it to plant.
cli=$bin/cli
mkdir -p "$cli/lib" "$cli/mod"
if [ -x "$BERTH_BUILDDIR/.libs/berth" ]; then
  cp "$BERTH_BUILDDIR/.libs/berth" "$cli/"
  cp -P "$BERTH_BUILDDIR"/.libs/libberth.so* "$cli/lib/"
else
  cp "$BERTH_BUILDDIR/berth" "$cli/"
fi
[ -f "$BERTH_BUILDDIR/bwrap/.libs/bwrap.so" ] && cp "$BERTH_BUILDDIR/bwrap/.libs/bwrap.so" "$cli/mod/"
cp "$JAIL" "$cli/"
sed -n '/jail_home_hides\[\] = {/,/};/p' "$BERTH_SRCDIR/bwrap/jail-mount.c" | grep -o '"[^"]*"' | tr -d '"' >"$bin/home-hides.txt"
# berth-config(5) documents the whole table.
missing=$(while read -r e; do grep -qF -- "$e" "$BERTH_SRCDIR/man/berth-config.5" || echo "$e"; done <"$bin/home-hides.txt")
[ -z "$missing" ] && ok "berth-config(5) lists every hidden credential store" || { not_ok "berth-config(5) lists every hidden credential store"; diag "missing: $missing"; }
chmod -R a+rX "$bin"
rt_nobody=/tmp/berth-65534 rt_saved=""
restore ()
{
  rm -rf "$bin"
  if [ -n "$rt_saved" ]; then rm -rf "$rt_nobody"; mv "$rt_saved" "$rt_nobody"; fi
}
trap restore EXIT
cli_env=(BERTH_CLI="$cli/berth" LD_LIBRARY_PATH="$cli/lib" BERTH_MODULEDIR="$cli/mod" BERTH_LIBEXECDIR="$cli" BERTH_HOME_HIDES="$bin/home-hides.txt")

run_pass "$(id -un)" env BERTH_JAIL="$bin/berth-jail" BERTH_CANARY="$bin/test-bwrap-canary" BERTH_DENYNS="$bin/test-bwrap-denyns" \
  "${cli_env[@]}" bash "$bin/bwrap-canaries.sh"

if [ "$(id -u)" = 0 ]; then
  if command -v setpriv >/dev/null; then
    # Another user's runtime directory fallback, planted by root as 0777:
    # the unprivileged pass must refuse it (then it is put back as it was).
    if [ -e "$rt_nobody" ] || [ -L "$rt_nobody" ]; then rt_saved=$rt_nobody.saved-$$; mv "$rt_nobody" "$rt_saved"; fi
    mkdir -m 0777 "$rt_nobody" && chmod 0777 "$rt_nobody"
    run_pass nobody setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
      env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent CI="${CI:-}" BERTH_TEST_MUST_WORK="${BERTH_TEST_MUST_WORK:-}" \
      BERTH_JAIL="$bin/berth-jail" BERTH_CANARY="$bin/test-bwrap-canary" BERTH_DENYNS="$bin/test-bwrap-denyns" \
      "${cli_env[@]}" BERTH_FOREIGN_RUNTIME_DIR=1 bash "$bin/bwrap-canaries.sh"
    rm -rf "$rt_nobody"
    if [ -n "$rt_saved" ]; then mv "$rt_saved" "$rt_nobody"; rt_saved=""; fi
  else
    skip_or_fail "unprivileged pass" "setpriv(1) is missing"
  fi
fi
t_done
