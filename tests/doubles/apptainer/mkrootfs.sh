#!/bin/bash
# mkrootfs.sh DIR: build the test rootfs the apptainer TEST DOUBLE runs
# instances in, from busybox-static and bash-static (Debian packages
# busybox-static and bash-static).  Idempotent: an existing DIR with
# bin/bash is left alone; the tree is assembled beside DIR and renamed.
set -euo pipefail
dir=${1:?usage: mkrootfs.sh DIR}
[ -x "$dir/bin/bash" ] && exit 0

busybox=
for b in /bin/busybox /usr/bin/busybox; do
  if [ -x "$b" ] && file -L "$b" 2>/dev/null | grep -q 'statically linked'; then busybox=$b; break; fi
  [ -x "$b" ] && [ -z "$busybox" ] && busybox=$b
done
bash_static=
for b in /bin/bash-static /usr/bin/bash-static; do
  [ -x "$b" ] && { bash_static=$b; break; }
done
if [ -z "$busybox" ] || [ -z "$bash_static" ]; then
  echo "mkrootfs.sh: needs busybox-static and bash-static (apt-get install busybox-static bash-static)" >&2
  exit 1
fi

tmp=$(mktemp -d "${dir%/}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc,root,home,tmp,var/tmp,proc,sys,dev,run,opt}
cp "$busybox" "$tmp/bin/busybox"
cp "$bash_static" "$tmp/bin/bash"
# One process for the ~270 applet links when we can chroot (root); links
# made inside the chroot point at /bin/busybox, valid after the rename.
if ! chroot "$tmp" /bin/busybox --install -s /bin 2>/dev/null; then
  for applet in $("$tmp/bin/busybox" --list); do
    case $applet in bash|busybox) continue ;; esac
    [ -e "$tmp/bin/$applet" ] || ln -s busybox "$tmp/bin/$applet"
  done
fi
[ -x "$tmp/bin/bash" ] && [ ! -L "$tmp/bin/bash" ] || cp "$bash_static" "$tmp/bin/bash"
ln -sf busybox "$tmp/bin/sh"
cat > "$tmp/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
EOF
cat > "$tmp/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo "apptainer-double-rootfs" > "$tmp/etc/hostname"
echo "This rootfs belongs to the apptainer TEST DOUBLE (tests/doubles/apptainer)." > "$tmp/etc/motd"
chmod 0755 "$tmp"
chmod 1777 "$tmp/tmp" "$tmp/var/tmp"
chmod 0700 "$tmp/root"
if ! mv -T "$tmp" "$dir" 2>/dev/null; then
  # Somebody else finished first.
  [ -x "$dir/bin/bash" ] || { echo "mkrootfs.sh: cannot create $dir" >&2; exit 1; }
fi
trap - EXIT
rm -rf "$tmp"
