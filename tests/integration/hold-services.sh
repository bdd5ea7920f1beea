#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/bootstrap.sh installs packages without starting or enabling system
# services (tools/hold-services.sh): during the install a policy-rc.d
# forbids every start (exit 101), afterwards the previous policy-rc.d is
# back and every service the install enabled is disabled, while services
# enabled before are left alone.  Runs against a scratch root with fake
# systemctl/update-rc.d (no root needed, nothing on this machine touched).
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
HOLD=$BERTH_SRCDIR/tools/hold-services.sh
BOOT=$BERTH_SRCDIR/tools/bootstrap.sh
T=$(mktemp -d "${TMPDIR:-/tmp}/berth-hold.XXXXXX")
trap 'rm -rf "$T"' EXIT
[ -f "$HOLD" ] || { not_ok "tools/hold-services.sh exists"; done_testing; }

mkdir -p "$T/bin"
# Fake systemctl / update-rc.d: log the call, remove the unit's links
# like the real ones, and fail for one unit (the caller must not care).
cat >"$T/bin/systemctl" <<'EOF'
#!/bin/bash
echo "systemctl $*" >>"$SERVICE_ROOT/calls"
u=${*: -1}
rm -f "$SERVICE_ROOT"/etc/systemd/system/*.wants/"$u"
[ "$u" != fails.service ]
EOF
cat >"$T/bin/update-rc.d" <<'EOF'
#!/bin/bash
echo "update-rc.d $*" >>"$SERVICE_ROOT/calls"
for l in "$SERVICE_ROOT"/etc/rc?.d/S??"$1"; do [ -L "$l" ] && mv "$l" "${l%/*}/K01$1"; done
exit 0
EOF
chmod +x "$T/bin/"*

# scenario ROOT [systemd]: a root where ssh was enabled before and a
# previous policy-rc.d (unless "nopolicy"); the "install" enables docker.
scenario ()
{
  local root=$1
  mkdir -p "$root/usr/sbin" "$root/etc/systemd/system/multi-user.target.wants" \
    "$root/etc/systemd/system/sockets.target.wants" "$root/etc/rc2.d" "$root/etc/rc3.d"
  ln -s /lib/systemd/system/ssh.service "$root/etc/systemd/system/multi-user.target.wants/ssh.service"
  ln -s ../init.d/ssh "$root/etc/rc2.d/S01ssh"
  [ "${2:-}" = systemd ] && mkdir -p "$root/run/systemd/system"
  [ "${3:-}" = nopolicy ] || printf '#!/bin/sh\n# mine\nexit 0\n' >"$root/usr/sbin/policy-rc.d"
  (
    set -euo pipefail
    export SERVICE_ROOT=$root PATH=$T/bin:$PATH
    . "$HOLD"
    trap services_release EXIT
    services_hold
    "$root/usr/sbin/policy-rc.d" docker.service start && echo "policy: allowed" || echo "policy: $?"
    # what apt-get install docker.io does: enable units and init scripts
    for u in docker.service containerd.service fails.service; do
      ln -s "/lib/systemd/system/$u" "$root/etc/systemd/system/multi-user.target.wants/$u"
    done
    ln -s /lib/systemd/system/docker.socket "$root/etc/systemd/system/sockets.target.wants/docker.socket"
    ln -s ../init.d/docker "$root/etc/rc2.d/S01docker"
    ln -s ../init.d/docker "$root/etc/rc3.d/S01docker"
    services_release
    services_release
    echo "released"
  ) >"$root/out" 2>&1
  echo $? >"$root/rc"
}

R=$T/root1
scenario "$R"
is "$(cat "$R/rc")" 0 "hold and release succeed under set -e (a failing systemctl disable included)"
like "$(cat "$R/out")" "*policy: 101*" "while packages install, policy-rc.d forbids every start (101)"
like "$(cat "$R/out")" "*released*" "releasing twice is harmless"
check "afterwards the previous policy-rc.d is back" grep -q mine "$R/usr/sbin/policy-rc.d"
check "the units the install enabled are disabled" \
  bash -c "cd '$R/etc/systemd/system' && [ ! -e multi-user.target.wants/docker.service ] && [ ! -L multi-user.target.wants/containerd.service ] && [ ! -L sockets.target.wants/docker.socket ] && [ ! -L multi-user.target.wants/fails.service ]"
check "through systemctl disable" bash -c "grep -qx 'systemctl disable --quiet docker.service' '$R/calls' && grep -qx 'systemctl disable --quiet docker.socket' '$R/calls'"
check "its init scripts too (no S link left)" bash -c "! ls '$R'/etc/rc?.d/S??docker >/dev/null 2>&1 && grep -qx 'update-rc.d docker disable' '$R/calls'"
check "a service enabled before the install is left alone" \
  bash -c "[ -L '$R/etc/systemd/system/multi-user.target.wants/ssh.service' ] && [ -L '$R/etc/rc2.d/S01ssh' ] && ! grep -q ssh '$R/calls'"
like "$(cat "$R/out")" "*the install enabled docker.service: disabled*" "it says what it disabled"

R=$T/root2
scenario "$R" systemd nopolicy
is "$(cat "$R/rc")" 0 "under a running systemd: succeeds"
check "... and what the install enabled is also stopped (disable --now)" grep -qx 'systemctl disable --now --quiet docker.service' "$R/calls"
check "without a previous policy-rc.d none is left behind" test ! -e "$R/usr/sbin/policy-rc.d"

# bootstrap.sh holds services around its apt-get install.
order=$(grep -n -E '^(\. tools/hold-services\.sh|trap services_release EXIT|services_hold|apt-get install|services_release)' "$BOOT" | cut -d: -f2 | cut -c1-20 | tr '\n' '|')
is "$order" ". tools/hold-service|trap services_releas|services_hold|apt-get install -y -|services_release|" \
  "bootstrap.sh: hold (released on exit), apt-get install, release"
done_testing
