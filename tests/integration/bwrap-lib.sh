# bwrap-lib.sh: TAP helpers and paths for the bwrap backend's tests.
# Sourced, not run.  Test lines are unnumbered ("ok - ..."); the plan is
# printed last by t_done, so passes run as another user can be merged.

: "${BERTH_BUILDDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
JAIL=${BERTH_JAIL:-$BERTH_BUILDDIR/bwrap/berth-jail}
CANARY=${BERTH_CANARY:-$BERTH_BUILDDIR/tests/unit/test-bwrap-canary}
DENYNS=${BERTH_DENYNS:-$BERTH_BUILDDIR/tests/unit/test-bwrap-denyns}

t_count=0
t_failed=0
T_LABEL=${T_LABEL:-}

must_work ()
{
  [ "${CI:-}" = true ] || [ "${BERTH_TEST_MUST_WORK:-}" = 1 ]
}

ok ()
{
  t_count=$((t_count + 1))
  echo "ok - ${T_LABEL}$*"
}

not_ok ()
{
  t_count=$((t_count + 1))
  t_failed=$((t_failed + 1))
  echo "not ok - ${T_LABEL}$*"
}

diag ()
{
  sed 's/^/# /' <<<"$*"
}

# check DESC CMD...: CMD must succeed.
check ()
{
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then
    ok "$desc"
  else
    not_ok "$desc"
    diag "$out"
  fi
}

# refuse DESC CMD...: CMD must fail.
refuse ()
{
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then
    not_ok "$desc (it succeeded)"
    diag "$out"
  else
    ok "$desc"
  fi
}

# expect_out DESC PATTERN CMD...: the output of CMD (status ignored) matches
# the extended regex PATTERN.
expect_out ()
{
  local desc=$1 pat=$2 out
  shift 2
  out=$("$@" 2>&1)
  if grep -Eq -- "$pat" <<<"$out"; then
    ok "$desc"
  else
    not_ok "$desc"
    diag "expected /$pat/ in: $out"
  fi
}

# skip_or_fail DESC REASON: a skip, or a failure when the test must work.
skip_or_fail ()
{
  if must_work; then
    not_ok "$1 (cannot run: $2)"
  else
    t_count=$((t_count + 1))
    echo "ok - ${T_LABEL}$1 # SKIP $2"
  fi
}

t_done ()
{
  echo "1..$t_count"
  [ "$t_failed" -eq 0 ]
}
