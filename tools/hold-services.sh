# SPDX-License-Identifier: LGPL-2.1-or-later
# hold-services.sh (sourced by bootstrap.sh): install packages without
# starting or enabling system services.  On Debian, installing
# openssh-server, docker.io and docker-registry would start sshd on :22,
# dockerd and a registry on :5000 and enable them at boot; berth's tests
# start their own (tests/integration/setup/*.sh) and stop them after.
#
#   services_hold     before `apt-get install`: a policy-rc.d that forbids
#                     every action (exit 101, honoured by invoke-rc.d and
#                     deb-systemd-invoke; a previous one is kept aside) and
#                     a list of the service enablement links that exist
#   services_release  after it (also safe from an EXIT trap, and twice):
#                     the previous policy-rc.d back, every service whose
#                     enablement link the install added disabled (and
#                     stopped, under a running systemd).  Services that
#                     were enabled before are left as they were.
# Works without systemd (CI containers): then nothing could start, and
# the links are removed with systemctl / update-rc.d when present, by
# hand otherwise.  Safe under `set -e`.

# SERVICE_ROOT: another root for the enablement links and policy-rc.d
# (tests/integration/hold-services.sh).
SERVICE_ROOT=${SERVICE_ROOT:-}
POLICY_RC=$SERVICE_ROOT/usr/sbin/policy-rc.d
__hold_dir=

# The enablement links, relative to the root: etc/systemd/system/*.wants/*,
# aliases, etc/rc?.d/S*.
__service_links ()
{
  (cd "$SERVICE_ROOT/" && find etc/systemd/system etc/rc0.d etc/rc1.d etc/rc2.d etc/rc3.d etc/rc4.d etc/rc5.d etc/rc6.d etc/rcS.d \
    -type l 2>/dev/null || true) | LC_ALL=C sort
}

services_hold ()
{
  __hold_dir=$(mktemp -d /tmp/berth-hold-services.XXXXXX) || return 1
  __service_links >"$__hold_dir/links.before"
  if [ -e "$POLICY_RC" ] || [ -L "$POLICY_RC" ]; then
    mv -f "$POLICY_RC" "$__hold_dir/policy-rc.d.saved" || return 1
  fi
  printf '#!/bin/sh\n# berth tools/bootstrap.sh: no service starts while it installs packages.\nexit 101\n' >"$POLICY_RC.berth"
  chmod 0755 "$POLICY_RC.berth"
  mv -f "$POLICY_RC.berth" "$POLICY_RC"
}

services_release ()
{
  [ -n "$__hold_dir" ] && [ -d "$__hold_dir" ] || return 0
  local d=$__hold_dir l n u
  __hold_dir=
  if [ -e "$d/policy-rc.d.saved" ] || [ -L "$d/policy-rc.d.saved" ]; then
    mv -f "$d/policy-rc.d.saved" "$POLICY_RC"
  else
    rm -f "$POLICY_RC"
  fi
  local -a units=() sysv=()
  while read -r l; do
    n=${l##*/}
    case $l in
      etc/systemd/system/*.wants/* | etc/systemd/system/*.requires/*) units+=("$n") ;;
      etc/rc?.d/S??*) sysv+=("${n:3}") ;;
    esac
  done < <(LC_ALL=C comm -13 "$d/links.before" <(__service_links))
  local running=no
  [ -d "$SERVICE_ROOT/run/systemd/system" ] && running=yes
  for u in $(printf '%s\n' "${units[@]}" | LC_ALL=C sort -u); do
    if [ $running = yes ]; then
      systemctl disable --now --quiet "$u" 2>/dev/null || true
    elif command -v systemctl >/dev/null 2>&1; then
      systemctl disable --quiet "$u" 2>/dev/null || true
    fi
    echo "bootstrap.sh: the install enabled $u: disabled$([ $running = yes ] && echo ' and stopped')"
  done
  for n in $(printf '%s\n' "${sysv[@]}" | LC_ALL=C sort -u); do
    if command -v update-rc.d >/dev/null 2>&1; then update-rc.d "$n" disable >/dev/null 2>&1 || true; fi
  done
  # Whatever enablement link the install added and is still there (no
  # systemctl to remove it): removed by hand.
  while read -r l; do
    case $l in
      etc/systemd/system/* | etc/rc?.d/S??*) rm -f "$SERVICE_ROOT/$l" ;;
    esac
  done < <(LC_ALL=C comm -13 "$d/links.before" <(__service_links))
  rm -rf "$d"
  return 0
}
