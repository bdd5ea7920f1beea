#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# conformance.sh: the hosted-scope conformance checks (run.sh) against
# every backend here, in one TAP stream: docker serves hosted scopes and
# must pass them all; local, bwrap, ssh and the acmebox plugin pass by
# being refused before anything is made.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/plugins-lib.sh"
n=0 failed=0
emit ()
{
  local backend=$1 line
  while IFS= read -r line; do
    case $line in
      "ok "*) n=$((n + 1)); echo "ok $n - $backend: ${line#ok * - }" ;;
      "not ok "*) n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $backend: ${line#not ok * - }" ;;
      "Bail out!"*) n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $backend: ${line#Bail out! }" ;;
      "#"*) echo "$line" ;;
    esac
  done
}
# expect BACKEND refused|served: the first check says which it is
run_one ()
{
  local backend=$1 expect=$2 out
  out=$(bash "$BERTH_SRCDIR/tests/conformance/run.sh" "$backend" "${3:-}" 2>&1)
  case $expect in
    refused) [[ "$out" == *"refused under a hosted scope"* ]] || out="not ok 1 - expected a refusal (BERTH_E_HOSTED)
$out" ;;
    served) [[ "$out" == *"admitted under a hosted scope"* ]] || out="not ok 1 - expected it to serve hosted scopes
$out" ;;
  esac
  emit "$backend" <<<"$out"
}

run_one local refused
run_one bwrap refused
if . "${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env" 2>/dev/null; then
  BERTH_CONFIG=$BERTH_SSHD_CONFIG run_one ssh refused
elif must_work; then
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - ssh: the test sshd is not running (${BERTH_SSHD_DIR:-/tmp/berth-sshd}/env is absent: tests/integration/setup/sshd.sh starts it)"
fi
if docker info >/dev/null 2>&1; then
  printf 'terminal:\n  docker_image: berth-test:latest\n' >"$TDIR/docker.yaml"
  BERTH_CONFIG=$TDIR/docker.yaml run_one docker served berth-test:latest
elif must_work; then
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - docker: the engine is not running (tools/test.sh starts it)"
fi
if build_acmebox; then
  export BERTH_PLUGINDIR=$XDG_DATA_HOME/berth/plugins
  printf 'plugins:\n  enabled: [acmebox]\n' >"$TDIR/enable-acmebox.yaml"
  BERTH_CONFIG=$TDIR/enable-acmebox.yaml run_one acmebox refused
else
  n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - acmebox builds with its plain Makefile"
fi
echo "1..$n"
[ "$failed" = 0 ]
