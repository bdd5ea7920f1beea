# SPDX-License-Identifier: LGPL-2.1-or-later
# plugins-contract-module.sh: berth's contract suite against an in-tree
# backend built as a loadable module (--with-X=module; docker and bwrap are
# modules by default), proving the SDK path of the loader end to end.
# BERTH_MODULE_BACKEND picks one; else the first ready module backend,
# bwrap preferred (no daemon needed).
. "$(dirname "${BASH_SOURCE[0]}")/plugins-lib.sh"
command -v jq >/dev/null || skip_all "jq is not installed"

backends=$("$BERTH" backends --json 2>/dev/null)
# name, status and origin of every module backend.
modules=$(jq -r '.[] | select(.origin != "builtin" and (.origin | test("/plugins/") | not)) | "\(.name) \(.status) \(.origin)"' <<<"$backends")
if [ -z "$modules" ]; then
  # A configuration without modules (--disable-modules) is not a missing
  # runtime: allowed to skip even in CI.
  BERTH_TEST_ALLOW_SKIP=1 skip_all "no backend is built as a module in this configuration"
fi
echo "$modules" | sed 's/^/# module backend: /'
# usable NAME: ready, and for docker the offline test image is there.
usable () {
  grep -q "^$1 ready " <<<"$modules" || return 1
  case $1 in
    docker) docker image inspect berth-test:latest >/dev/null 2>&1 ;;
  esac
}
pick=${BERTH_MODULE_BACKEND:-}
if [ -z "$pick" ]; then
  for want in bwrap docker; do
    if usable "$want"; then pick=$want; break; fi
  done
fi
[ -n "$pick" ] || skip_all "no module backend is usable here (bwrap ready, or docker ready with berth-test:latest from tests/integration/setup/docker.sh)"
origin=$(awk -v n="$pick" '$1 == n {print $3}' <<<"$modules")
case $origin in
  /*.so) echo "# contract suite against $pick, loaded from $origin" ;;
  *) echo "1..1"; echo "not ok 1 - $pick is not loaded from a module (origin: '$origin')"; exit 1 ;;
esac
if [ "$pick" = docker ]; then
  export BERTH_CONFIG=$TDIR/docker.yaml
  printf 'terminal:\n  docker_image: berth-test:latest\n' > "$BERTH_CONFIG"
fi
bash "$BERTH_SRCDIR/tests/contract/contract.sh" "$pick"
