# libtest.sh: TAP helpers for berth's shell tests (source it).
#   check NAME CMD... | ok NAME | not_ok NAME | is GOT WANT NAME | like GOT GLOB NAME
#   diag TEXT | skip_all REASON | done_testing
# In CI (CI=true) or with BERTH_TEST_MUST_WORK=1, skip_all FAILS: a runtime
# that can exist on this machine must not be skipped silently.
__tap_n=0
__tap_failed=0
if [ -z "${BERTH:-}" ]; then
  BERTH=${BERTH_BUILDDIR:-.}/berth
  [ -x "$BERTH" ] || BERTH=berth
fi
: "${BERTH_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"

must_work () { [ "${CI:-}" = true ] || [ "${BERTH_TEST_MUST_WORK:-0}" = 1 ]; }

skip_all ()
{
  if must_work && [ "${BERTH_TEST_ALLOW_SKIP:-0}" != 1 ]; then
    echo "1..1"
    echo "not ok 1 - cannot run here, and CI requires it: $*"
    exit 1
  fi
  echo "1..0 # SKIP $*"
  exit 0
}

# A private, throw-away berth home for this test script.
berth_test_home ()
{
  TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/berth-test.XXXXXX")
  export XDG_STATE_HOME=$TEST_TMP/state XDG_CONFIG_HOME=$TEST_TMP/config
  export XDG_CACHE_HOME=$TEST_TMP/cache XDG_DATA_HOME=$TEST_TMP/data XDG_RUNTIME_DIR=$TEST_TMP/run
  mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  trap 'berth_test_cleanup' EXIT
}

berth_test_cleanup ()
{
  local n
  if [ -d "${XDG_STATE_HOME:-/nonexistent}/berth/envs" ]; then
    for n in "$XDG_STATE_HOME"/berth/envs/*; do
      [ -e "$n" ] && "$BERTH" rm "$(basename "$n")" >/dev/null 2>&1
    done
  fi
  [ -n "${TEST_TMP:-}" ] && rm -rf "$TEST_TMP"
}

# ok DESC / not_ok DESC: record a result; check DESC CMD...: run CMD.
ok () { __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $*"; }
not_ok () { __tap_n=$((__tap_n + 1)); __tap_failed=$((__tap_failed + 1)); echo "not ok $__tap_n - $*"; }
check ()
{
  local name=$1; shift
  if "$@"; then ok "$name"; else not_ok "$name"; fi
}

is ()
{
  local got=$1 want=$2 name=$3
  if [ "$got" = "$want" ]; then
    ok "$name"
  else
    not_ok "$name"
    printf '#   got:  %q\n#   want: %q\n' "$got" "$want"
  fi
}

like ()
{
  local got=$1 pattern=$2 name=$3
  if [[ $got == $pattern ]]; then
    ok "$name"
  else
    not_ok "$name"
    printf '#   got:     %q\n#   pattern: %s\n' "${got:0:400}" "$pattern"
  fi
}

diag () { printf '%s\n' "$*" | sed 's/^/# /'; }

# Print the plan and exit: 0 when everything passed.
done_testing ()
{
  echo "1..$__tap_n"
  [ "$__tap_failed" -eq 0 ]
  exit $?
}
