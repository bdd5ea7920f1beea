#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# berth pull against the real engine and the local registry of
# tests/integration/setup/docker.sh (127.0.0.1:5000): an image of its own
# (one random layer, pushed here, removed locally) is pulled with plain
# progress lines when stdout is no terminal, a bar per layer on one
# (script(1)), nothing with --quiet; a missing image is one line, exit 125.
. "$(dirname "$0")/docker-lib.sh"
REG=127.0.0.1:5000
curl -fsS "http://$REG/v2/" >/dev/null 2>&1 || skip_all "no registry on $REG: run tests/integration/setup/docker.sh as root"
IMG=$REG/berth-pull-$P:latest
EXTRA_CLEANUP='docker rmi -f "$IMG" >/dev/null 2>&1; unregister'
# remove the pushed image from the registry again (its manifest)
unregister () {
  local digest
  digest=$(curl -fsSI -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' "http://$REG/v2/berth-pull-$P/manifests/latest" 2>/dev/null \
    | tr -d '\r' | awk -F': ' 'tolower($1) == "docker-content-digest" { print $2 }')
  [ -n "$digest" ] && curl -fsS -X DELETE "http://$REG/v2/berth-pull-$P/manifests/$digest" >/dev/null 2>&1
  return 0
}
mkdir -p "$TDIR/layer"
head -c 1500000 /dev/urandom > "$TDIR/layer/blob"
tar -C "$TDIR/layer" -c blob | docker import - "$IMG" >/dev/null && docker push -q "$IMG" >/dev/null \
  && docker rmi "$IMG" >/dev/null || skip_all "cannot push a test image to $REG"
present () { docker image inspect "$IMG" >/dev/null 2>&1; }
check "the pushed image is not present locally" test "$(present && echo yes)" = ""

# ---- plain lines (stdout is a file)
b pull -b docker "$IMG" > "$TDIR/out" 2> "$TDIR/err"
is "$?" 0 "berth pull exits 0"
check "the image is present after it" present
out=$(cat "$TDIR/out")
like "$out" "*Pulling from berth-pull-$P*" "a line for the image"
like "$out" "*: Pulling fs layer*" "a line when the layer starts"
like "$out" "*: Pull complete*" "a line when the layer is complete"
like "$out" "*Status: Downloaded newer image for $IMG*" "the engine's closing status"
check "plain lines: no terminal escapes" test "$(grep -c $'\033' "$TDIR/out")" = 0
check "one line per change, not per chunk" test "$(grep -c ': Downloading' "$TDIR/out")" -le 1
is "$(cat "$TDIR/err")" "" "nothing on stderr"

# ---- --quiet
docker rmi "$IMG" >/dev/null
b pull --quiet -b docker "$IMG" > "$TDIR/out" 2> "$TDIR/err"
is "$?" 0 "berth pull --quiet exits 0"
is "$(cat "$TDIR/out" "$TDIR/err")" "" "--quiet prints nothing"
check "… and pulled it" present
b pull -q -b docker "$IMG" > "$TDIR/out" 2>&1
is "$?$(cat "$TDIR/out")" "0" "pulling an image that is present again is no error"

# ---- a terminal: a bar per layer, redrawn in place
if command -v script >/dev/null; then
  docker rmi "$IMG" >/dev/null
  script -qec "$(printf '%q ' "$BERTH" --config "$CFG" pull -b docker "$IMG")" /dev/null > "$TDIR/tty" 2>&1
  is "$?" 0 "berth pull on a terminal exits 0"
  tty=$(cat "$TDIR/tty")
  esc=$'\033'
  like "$tty" "*${esc}\[1A*${esc}\[2K*" "on a terminal a layer's line is redrawn in place"
  like "$tty" "*: Pull complete*" "… up to Pull complete"
  if grep -q 'Downloading \[' "$TDIR/tty"; then ok "… with a bar, bytes and percent while it downloads"
  else like "$tty" "*\[*\]*B/*B*%*" "… with a bar, bytes and percent"; fi
else
  diag "script(1) not installed: the terminal rendering is not checked"
fi

# ---- errors: one line, exit 125
out=$(b pull -b docker "$REG/berth-nope-$P:latest" 2>&1 >/dev/null); rc=$?
is "$rc" 125 "a missing image exits 125"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "… with one line"
like "$out" "berth: no such image $REG/berth-nope-$P:latest*" "… that names it"
out=$(b pull -b docker 'Bad Name' 2>&1); rc=$?
is "$rc" 125 "an invalid reference exits 125"
like "$out" "berth: invalid image reference*" "… and says so"
out=$(b pull -b local "$IMG" 2>&1); rc=$?
is "$rc" 125 "a backend without images exits 125"
like "$out" "*local has no images to pull*" "… and says so"
out=$(b pull 2>&1); rc=$?
is "$rc" 125 "no image given exits 125"
out=$(DOCKER_HOST=unix://$TDIR/none.sock b pull -b docker "$IMG" 2>&1); rc=$?
is "$rc" 125 "an unreachable engine exits 125"
like "$out" "berth: *none.sock*" "… naming the socket"
done_testing
