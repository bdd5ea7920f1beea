# faults-lib.sh: helpers of the fault suites (faults.sh, faults-gc.sh).
# Sourced after libtest.sh, not run.

# skip_case DESC REASON: a real TAP skip (a failure when it must work).
skip_case ()
{
  if must_work && [ "${BERTH_TEST_ALLOW_SKIP:-0}" != 1 ]; then
    not_ok "$1 (cannot run here: $2)"
  else
    __tap_n=$((__tap_n + 1))
    echo "ok $__tap_n - $1 # SKIP $2"
  fi
}

# A unique sleep: its argv is the marker pgrep looks for.  The command
# says $SLEEP (the number is computed by the inner shell), so berth's own
# argv never matches.
new_marker ()
{
  local n=$$$RANDOM$RANDOM
  MARK="30.$n"
  SLEEP="sleep 30.\$(( $n ))"
}
marker_pids () { pgrep -f "^sleep 30\.${MARK#30.}\$"; }
marker_running () { marker_pids >/dev/null; }
# wait_for COND...: up to 15 s
wait_for ()
{
  local i
  for i in $(seq 1 150); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
marker_gone () { wait_for eval '! marker_running'; }
