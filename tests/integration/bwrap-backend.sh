#!/bin/bash
# bwrap-backend.sh: the bwrap backend through the berth CLI -- flags,
# profiles and configuration, a named environment's persistent jail (/tmp,
# background processes, exports), isolation between environments, the
# throw-away jail's lifetime, re-creation of a dead jail, timeouts killing
# the tree inside the jail, escape canaries on the execute path, and
# fail-closed errors.  TAP.  The generic contract suite runs separately
# (bwrap-contract.sh).
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
CANARY=${BERTH_CANARY:-${BERTH_BUILDDIR:-.}/tests/unit/test-bwrap-canary}
DENYNS=${BERTH_DENYNS:-${BERTH_BUILDDIR:-.}/tests/unit/test-bwrap-denyns}
berth_test_home
command -v jq >/dev/null || skip_all "jq is not installed"

probe=$("$BERTH" backends --json | jq -r '.[] | select(.name == "bwrap") | .status + ": " + (.reason // "")')
case $probe in
  ready*) ;;
  "") skip_all "no bwrap backend in this build" ;;
  *) skip_all "bwrap is not ready here: $probe" ;;
esac

# A workspace outside /tmp (the jail's /tmp is private), with a planted key.
WS=$(mktemp -d /var/tmp/berth-bwrap-cli.XXXXXX)
chmod 755 "$WS"
export HOME=$WS/home
mkdir -p "$HOME/.ssh" "$WS/proj" "$WS/ro" "$WS/rw"
echo SECRET-KEY >"$HOME/.ssh/id_rsa"
echo ro-data >"$WS/ro/f"
trap 'berth_test_cleanup; rm -rf "$WS"' EXIT
cd "$WS/proj" || exit 1
CFG=$XDG_CONFIG_HOME/bwrap.yaml
mkdir -p "$XDG_CONFIG_HOME"
cat >"$CFG" <<EOF
terminal:
  bwrap_profile: workspace
  bwrap_binds:
    - {src: $WS/ro, dest: $WS/ro, readonly: true}
    - "$WS/rw:$WS/rw:rw"
  bwrap_hide: [$WS/proj/secret.txt]
EOF
echo not-for-the-jail >"$WS/proj/secret.txt"
bx () { "$BERTH" --config "$CFG" exec -b bwrap "$@"; }
bj () { bx --json "$@"; }
out () { jq -j .output <<<"$1"; }
field () { jq -r ".$2" <<<"$1"; }

# --- flags (DESIGN 3.1) ---
flags=$("$BERTH" backends --json | jq -c '.[] | select(.name == "bwrap")')
is "$(jq -r '.flags.uses_host_filesystem' <<<"$flags")" false "uses_host_filesystem is false"
is "$(jq -r '.flags.supports_streams' <<<"$flags")" true "supports_streams"
is "$(jq -r '.flags.cleanup_stops_processes' <<<"$flags")" true "cleanup_stops_processes"
is "$(jq -r '.flags.is_remote' <<<"$flags")" false "not remote"
is "$(jq -r '.flags.is_container' <<<"$flags")" false "not a container"

# --- the jail on the execute path ---
r=$(bj -- 'echo hi; echo err >&2; exit 3')
is "$(out "$r")" $'hi\nerr' "output is merged"
is "$(field "$r" exit_code)" 3 "exit code"
is "$(field "$r" backend)" bwrap "the result names bwrap"
like "$(out "$(bj -- 'touch /usr/berth-x')")" "*Read-only file system*" "host / is read-only (scenario 70)"
r=$(bj -- 'ls /proc | grep -c "^[0-9]"')
check "the pid namespace shows < 10 processes (scenario 70)" test "$(out "$r")" -lt 10
is "$(field "$(bj -- 'echo w > in-ws.txt')" exit_code)" 0 "the workspace (initial cwd) is writable"
is "$(cat "$WS/proj/in-ws.txt" 2>/dev/null)" w "... on the host"
check "canary: the planted ~/.ssh/id_rsa is unreadable" test "$(field "$(bj -- "grep -q SECRET $HOME/.ssh/id_rsa")" exit_code)" != 0
check "canary: terminal.bwrap_hide hides a file" test "$(out "$(bj -- "cat $WS/proj/secret.txt")")" = ""
is "$(out "$(bj -- "cat $WS/ro/f")")" ro-data "a read-only bind is readable"
check "a read-only bind is not writable (scenario 71)" test "$(field "$(bj -- "echo x > $WS/ro/f")" exit_code)" != 0
is "$(field "$(bj -- "echo x > $WS/rw/g")" exit_code)" 0 "a read-write bind is writable (scenario 71)"
r=$(bj -- 'grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t " " "')
like "$(out "$r")" "*CapEff: 0000000000000000*CapBnd: 0000000000000000*NoNewPrivs: 1*Seccomp: 2*" "caps dropped, no_new_privs, seccomp on the execute path"
check "canary: unshare -U is refused" test "$(field "$(bj -- 'unshare -U true')" exit_code)" != 0
is "$(out "$(bj -- "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")")" lo "workspace profile: only lo (scenario 71)"
like "$(out "$(SSH_AUTH_SOCK=/x/agent bj -- 'echo "[${SSH_AUTH_SOCK-unset}]"')")" "*[unset]*" "SSH_AUTH_SOCK does not reach the jail (scenario 70)"
if [ -x "$CANARY" ]; then
  # a copy the jail can see: the build tree may be under the host's /tmp,
  # which the jail replaces with its own
  cp "$CANARY" "$WS/proj/.canary" && CANARY=$WS/proj/.canary
  port=$((20000 + RANDOM % 20000))
  "$CANARY" serve-tcp "$port" >/dev/null 2>&1 &
  srv=$!
  sleep 0.3
  check "canary: no network reaches a host port" test "$(field "$(bj -- "$CANARY connect-tcp $port")" exit_code)" = 1
  [ -S /run/docker.sock ] && is "$(field "$(bj -- "$CANARY connect-unix /run/docker.sock")" exit_code)" 1 "canary: docker.sock is masked"
  kill $srv 2>/dev/null
fi

# --- profiles (scenarios 67, 71) ---
BAD=$XDG_CONFIG_HOME/bad.yaml
printf 'terminal:\n  bwrap_profile: bogus\n' >"$BAD"
r=$("$BERTH" --config "$BAD" exec -b bwrap -- true 2>&1)
rc=$?
is "$rc" 125 "unknown profile is berth's own error"
like "$r" "*restricted, workspace or network*" "unknown profile lists the three (scenario 67)"
check "unknown profile created nothing" test -z "$(ls "$XDG_STATE_HOME/berth/envs" 2>/dev/null)"
printf 'terminal:\n  bwrap_profile: restricted\n' >"$XDG_CONFIG_HOME/r.yaml"
like "$("$BERTH" --config "$XDG_CONFIG_HOME/r.yaml" exec -b bwrap -- 'touch r.txt' 2>&1)" "*Read-only file system*" "restricted: cannot write the cwd"
printf 'terminal:\n  bwrap_profile: network\n' >"$XDG_CONFIG_HOME/n.yaml"
host_if=$(tail -n +3 /proc/net/dev | wc -l | tr -d ' ')
is "$("$BERTH" --config "$XDG_CONFIG_HOME/n.yaml" exec -b bwrap -- 'tail -n +3 /proc/net/dev | wc -l' | tr -d ' ')" "$host_if" "network: the host's interfaces"
printf 'terminal:\n  bwrap_memory_mb: -1\n' >"$XDG_CONFIG_HOME/m.yaml"
r=$("$BERTH" --config "$XDG_CONFIG_HOME/m.yaml" exec -b bwrap -- true 2>&1)
is "$?" 125 "a negative limit is refused"
printf 'terminal:\n  bwrap_memory_mb: 300\n  bwrap_cpu_seconds: 9\n  bwrap_max_procs: 50\n' >"$XDG_CONFIG_HOME/l.yaml"
is "$("$BERTH" --config "$XDG_CONFIG_HOME/l.yaml" exec -b bwrap -- 'echo $(ulimit -v) $(ulimit -t) $(ulimit -u)')" "307200 9 52" "rlimits from bwrap_memory_mb, bwrap_cpu_seconds, bwrap_max_procs"
# Defaults (no configuration): no address-space or CPU-time limit, 4096
# processes (issue 11 item 13: builds died at 256 MB / 30 CPU-seconds).
is "$("$BERTH" exec -b bwrap -- 'echo $(ulimit -v) $(ulimit -t) $(ulimit -u)')" "unlimited unlimited 4098" "default rlimits: no AS or CPU limit, 4096 processes"
# A CPU limit that fires is named, not a silent 137.
printf 'terminal:\n  bwrap_cpu_seconds: 1\n' >"$XDG_CONFIG_HOME/cpu.yaml"
"$BERTH" --config "$XDG_CONFIG_HOME/cpu.yaml" exec -b bwrap -- 'bash -c "while :; do :; done"' >"$TEST_TMP/cpu.out" 2>"$TEST_TMP/cpu.err"
is "$?" 152 "a process over bwrap_cpu_seconds ends with SIGXCPU (152), not SIGKILL"
like "$(cat "$TEST_TMP/cpu.out")" "*CPU time limit exceeded*" "the output says the CPU time limit was exceeded"
like "$(cat "$TEST_TMP/cpu.err")" "*terminal.bwrap_cpu_seconds*" "and berth names the key that set it"

# --- -t bounds the jail's creation too (issue 11.16 / 12.2: 30 s) ---
mkdir -p "$WS/slowjail"
printf '#!/bin/sh\nsleep 60\n' >"$WS/slowjail/berth-jail"
chmod +x "$WS/slowjail/berth-jail"
t0=$(date +%s%N)
r=$(cd "$WS/proj" && BERTH_LIBEXECDIR=$WS/slowjail "$BERTH" exec -b bwrap -e slowjail$$ -t 2 -- true 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 125 "a jail helper that hangs is berth's error (125)"
check "-t 2 bounds the jail's creation and its cleanup (took $ms ms)" test "$ms" -lt 7000
check "the failed creation left no environment" test ! -e "$XDG_STATE_HOME/berth/envs/slowjail$$"

# --- a named environment keeps its jail ---
N=keep$$
bx -e "$N" -- 'echo kept > /tmp/berth-keep; export KEEP_ME=yes; setsid sleep 4711 </dev/null >/dev/null 2>&1 &' >/dev/null
is "$(bx -e "$N" -- 'cat /tmp/berth-keep')" kept "/tmp persists between commands of a named environment"
is "$(bx -e "$N" -- 'echo $KEEP_ME')" yes "exports persist"
is "$(bx -e "$N" -- 'pgrep -c -f "sleep 4711"')" 1 "a background process persists"
check "the host /tmp is untouched" test ! -e /tmp/berth-keep
M=other$$
is "$(bx -e "$M" -- 'cat /tmp/berth-keep 2>/dev/null || echo none')" none "another environment does not see its /tmp"
is "$(bx -e "$M" -- 'pgrep -c -f "sleep 4711"')" 0 "... nor its processes"
# a jail that died is re-created, and the result says so; a background
# process that ran in it is lost (an error), not an exit code; the `ps` that
# re-created it does not swallow environment_recreated (the next execute
# reports it, in whichever berth)
ppid=$("$BERTH" --config "$CFG" start -e "$N" -- 'while :; do echo tick; sleep 0.1; done')
is "$("$BERTH" --config "$CFG" ps -e "$N" --json | jq -r --arg id "$ppid" '.[] | select(.id == $id) | .state')" running "a background process runs in the jail"
st=$XDG_STATE_HOME/berth/envs/$N
kill -9 "$(sed -n 's/^pid=//p' "$st/jail")"
sleep 0.3
pst=$("$BERTH" --config "$CFG" ps -e "$N" --json 2>"$WS/err" | jq -r --arg id "$ppid" '.[] | select(.id == $id) | "\(.state) \(.exit_code)"')
is "$pst" "lost null" "the jail killed under a process: it is lost, not an exit code"
"$BERTH" --config "$CFG" logs -e "$N" "$ppid" >/dev/null 2>"$WS/err"
like "$?:$(cat "$WS/err")" "125:berth: process $ppid is lost*" "… logs says so (125), no hang"
r=$(bj -e "$N" -- 'cat /tmp/berth-keep 2>/dev/null || echo gone')
is "$(field "$r" environment_recreated)" true "a dead jail is re-created and reported"
is "$(out "$r")" gone "... with a fresh /tmp"
is "$("$BERTH" rm "$N" >/dev/null 2>&1; echo $?)" 0 "berth rm"
check "berth rm destroys the jail" bash -c "! pgrep -f 'slee[p] 4711' >/dev/null"
"$BERTH" rm "$M" >/dev/null 2>&1

# --- timeouts kill the tree inside the jail ---
r=$(bj -t 2 -- 'sleep 4801 & setsid sleep 4802 & sleep 4803')
is "$(field "$r" exit_code)" 124 "timeout exits 124"
check "the whole tree died, setsid included" bash -c "! pgrep -f 'sleep 480[123]' >/dev/null"

# --- a throw-away jail dies with berth ---
bx -- 'setsid sleep 4901 </dev/null >/dev/null 2>&1 &' >/dev/null
sleep 0.3
check "a throw-away environment's background process dies with it" bash -c "! pgrep -f 'slee[p] 4901' >/dev/null"

# --- streams: exec-prefix joins the same jail ---
X=pref$$
bx -e "$X" -- 'echo via-execute > /tmp/berth-pref' >/dev/null
mapfile -t prefix < <("$BERTH" --config "$CFG" exec-prefix -b bwrap -e "$X" --json | jq -r '.[]')
is "$("${prefix[@]}" bash -c 'cat /tmp/berth-pref; grep NoNewPrivs /proc/self/status | tr -d "\t"')" $'via-execute\nNoNewPrivs:1' "exec-prefix joins the environment's jail, confined"
is "$(printf 'a b\n' | "${prefix[@]}" bash -c 'read x y; echo "$y|$x"; echo e >&2' 2>/dev/null)" "b|a" "exec-prefix: stdin in, stdout out, words unchanged"
"$BERTH" rm "$X" >/dev/null 2>&1

# --- fail closed ---
if [ -x "$DENYNS" ]; then
  r=$("$DENYNS" "$BERTH" --config "$CFG" exec -b bwrap -- "touch $WS/ran-unconfined" 2>&1)
  is "$?" 125 "no user namespaces: berth's own error, not a result"
  like "$r" "*seccomp filter of the enclosing container*" "the reason names the container's seccomp filter"
  check "nothing ran unconfined" test ! -e "$WS/ran-unconfined"
  r=$("$BERTH" backends --json | jq -r '.[] | select(.name == "bwrap") | .status')
  is "$r" ready "probe: ready here"
  r=$("$DENYNS" "$BERTH" backends --json | jq -r '.[] | select(.name == "bwrap") | .status + ": " + .reason')
  like "$r" "unavailable: *seccomp filter of the enclosing container*" "probe: unavailable with the reason under a container-like filter"
fi
check "no ghost files in HOME" test "$(cd "$HOME" && find . | sort | tr '\n' ' ')" = ". ./.ssh ./.ssh/id_rsa "

# --- BERTH_DEBUG=bwrap (issue 11.17): jail create, attach and destroy ---
err=$(BERTH_DEBUG=bwrap bx -- true 2>&1 >/dev/null)
like "$err" "*berth: bwrap: debug: create a jail*" "BERTH_DEBUG=bwrap logs the jail's creation"
like "$err" "*berth: bwrap: debug: spawn pid *berth-jail* 'create'*" "… the helper's argv"
like "$err" "*berth: bwrap: debug: attach to the jail*" "… the command sent to it"
like "$err" "*berth: bwrap: debug: destroy the jail*" "… and its destruction"

# --- files through the jail (DESIGN 3.3): what commands see, not the host ---
bx -e files$$ -- true >/dev/null
"$BERTH" --config "$CFG" cp "files$$:$HOME/.ssh/id_rsa" "$TEST_TMP/k" >/dev/null 2>"$TEST_TMP/err"
is "$?" 125 "files: the planted ~/.ssh/id_rsa is unreadable through the file layer on bwrap"
check "… nothing of it copied" bash -c "! grep -qs SECRET '$TEST_TMP/k'"
"$BERTH" --config "$CFG" cp "files$$:secret.txt" "$TEST_TMP/s" >/dev/null 2>&1
check "files: a bwrap_hide path is hidden from it too" bash -c "! grep -qs not-for-the-jail '$TEST_TMP/s'"
"$BERTH" exec -e fileslocal$$ -- true >/dev/null
"$BERTH" cp "fileslocal$$:$HOME/.ssh/id_rsa" "$TEST_TMP/k2" 2>/dev/null
is "$(cat "$TEST_TMP/k2" 2>/dev/null)" SECRET-KEY "… while local (uses_host_filesystem) reads it on the host"
echo x >"$TEST_TMP/x"
"$BERTH" --config "$CFG" cp "$TEST_TMP/x" "files$$:/etc/berth-test-$$" >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: cannot write /etc/berth-test-$$: Read-only file system" "files: a write to the read-only root is EROFS"
check "… and nothing reached the host" test ! -e /etc/berth-test-$$
"$BERTH" --config "$CFG" cp "$TEST_TMP/x" "files$$:$WS/ro/new" >/dev/null 2>&1
check "files: a read-only bind stays read-only" test ! -e "$WS/ro/new"
"$BERTH" --config "$CFG" cp "$TEST_TMP/x" "files$$:/tmp/in-jail-$$" && "$BERTH" --config "$CFG" cp "files$$:/tmp/in-jail-$$" "$TEST_TMP/x2"
check "files: the jail's private /tmp is written, not the host's" bash -c "cmp -s '$TEST_TMP/x' '$TEST_TMP/x2' && test ! -e /tmp/in-jail-$$"
"$BERTH" rm files$$ fileslocal$$ >/dev/null

done_testing
