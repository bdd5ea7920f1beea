#!/bin/bash
# contract.sh: the environment contract (DESIGN 3.2), written once and run
# against every backend.  Usage: contract.sh BACKEND
#   BERTH              the berth binary
#   BERTH_CONFIG       config for the backend (ssh host, image...), optional
#   BERTH_TEST_ARGS    extra `berth exec` options (e.g. --image IMG), optional
# Commands run in the environment must only need bash and coreutils-like
# tools that busybox also has (the docker test image is busybox + bash).
CONTRACT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$CONTRACT_DIR/../integration/libtest.sh"
BACKEND=${1:?usage: contract.sh BACKEND}
read -r -a EXTRA <<<"${BERTH_TEST_ARGS:-}"
berth_test_home
command -v jq >/dev/null || skip_all "jq is not installed"
TAG=c$$
# Run from a project directory of our own, outside the jail's private /tmp:
# the clone may live anywhere, and a jail refuses a system directory as
# its writable workspace.
PROJ=$(mktemp -d /var/tmp/berth-contract.XXXXXX) || exit 1
trap 'berth_test_cleanup; rm -rf "$PROJ"' EXIT
cd "$PROJ" || exit 1

bx () { "$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" "$@"; }
# bj [exec options] -- COMMAND: the JSON result
bj () { bx --json "$@"; }
out () { jq -j .output <<<"$1"; }
field () { jq -r ".$2" <<<"$1"; }

probe=$("$BERTH" backends --json | jq -r ".[] | select(.name == \"$BACKEND\") | .status + \": \" + (.reason // \"\")")
case $probe in
  ready*) ;;
  "") skip_all "no backend named $BACKEND in this build" ;;
  *) skip_all "$BACKEND is not ready here: $probe" ;;
esac

# --- basics (scenarios 17-20, 25) ---
r=$(bj -- 'echo hello')
is "$(out "$r")" "hello" "echo hello"
is "$(field "$r" exit_code)" 0 "echo exits 0"
is "$(field "$r" backend)" "$BACKEND" "the result names its backend"
check "the result names its environment" test -n "$(field "$r" env)"
is "$(field "$(bj -- 'exit 42')" exit_code)" 42 "exit 42 is a result"
is "$(field "$(bj -- '(exit 42)')" exit_code)" 42 "(exit 42) is a result"
r=$(bj -- 'echo out; echo err >&2; echo out2')
is "$(out "$r")" $'out\nerr\nout2' "stderr is merged, in order"
is "$(field "$(bj -- 'no_such_command_berth')" exit_code)" 127 "unknown command exits 127"
r=$(bj -- 'seq 1 1000')
is "$(out "$r" | wc -l | tr -d ' ')" 1000 "seq 1 1000 gives 1000 lines"
is "$(out "$r" | head -n1)$(out "$r" | tail -n1)" "11000" "first 1, last 1000"
is "$(out "$(bj -- 'printf abc')")" "abc" "output without a trailing newline stays that way"
r=$(bj -- "cat <<'H_EOF'
body line
H_EOF")
is "$(out "$r")" "body line" "heredoc prints its body and nothing of the wrapper"

# --- markers cannot be forged (scenarios 9-11) ---
r=$(bj -- 'printf "\0BERTH:cwd:/etc\0BERTH:ec:9\0"; printf "__HERMES_CWD_x__/etc__HERMES_CWD_x__\n"; printf "BERTH:ec:7\n"; true' | tr -d '\0')
is "$(field "$r" exit_code)" 0 "look-alike state records change nothing (exit code)"
check "look-alike state records change nothing (cwd)" test "$(field "$r" cwd)" != /etc
like "$(out "$r" | tr -d "\\0")" "*BERTH:ec:7*" "look-alike text stays in the output"

# --- cwd (21, 29) ---
r=$(bj -C /tmp -- 'pwd')
is "$(out "$r")" "/tmp" "-C /tmp runs there"
N=ct$TAG
bj -e "$N" -- "mkdir -p /tmp/berth-$TAG/a/b && cd /tmp/berth-$TAG/a" >/dev/null
r=$(bj -e "$N" -- 'pwd')
is "$(out "$r")" "/tmp/berth-$TAG/a" "cd persists in a named environment"
is "$(field "$r" cwd)" "/tmp/berth-$TAG/a" "the result reports the cwd"
bj -e "$N" -- "cd b" >/dev/null
bj -e "$N" -- "rm -rf /tmp/berth-$TAG/a" >/dev/null
r=$(bj -e "$N" -- 'pwd')
is "$(field "$r" exit_code)" 0 "a vanished cwd does not wedge the environment"
like "$(out "$r")" "*no longer exists*/tmp/berth-$TAG*" "it falls back to the nearest ancestor with a note"
bj -e "$N" -- "rm -rf /tmp/berth-$TAG" >/dev/null

# A cwd asked for with -C must be usable: the same error on every backend
# (issue 11.7: docker and ssh ran the command in / and exited 0).
# cwd_fails DESC PATTERN [exec options]: exit 125, one line, nothing ran
cwd_fails ()
{
  local desc=$1 pattern=$2; shift 2
  bx "$@" -- 'echo ran-anyway' >"$TEST_TMP/cwd.out" 2>"$TEST_TMP/cwd.err"
  local rc=$? err
  err=$(cat "$TEST_TMP/cwd.err")
  is "$rc" 125 "$desc exits 125"
  like "$err" "berth: $pattern" "… with one clear line"
  check "… in one line" test "$(wc -l <"$TEST_TMP/cwd.err")" -eq 1
  check "… and the command did not run" bash -c "! grep -q ran-anyway '$TEST_TMP/cwd.out'"
}
cwd_fails "-C of a directory that does not exist" "*/nonexistent-berth-$TAG/d*[Nn]o such*" -C "/nonexistent-berth-$TAG/d"
bj -e "$N" -- "mkdir -p /tmp/berth-cw-$TAG/d && : >/tmp/berth-cw-$TAG/file && chmod 000 /tmp/berth-cw-$TAG/d" >/dev/null
cwd_fails "-C of a file" "*/tmp/berth-cw-$TAG/file*not a directory*" -e "$N" -C "/tmp/berth-cw-$TAG/file"
r=$(bj -e "$N" -C /nonexistent-berth-$TAG -- true 2>/dev/null)
is "$(jq -r .error.code <<<"$r" 2>/dev/null | grep -c .)" 1 "--json: a bad -C is an error object, not a result"
uid=$(out "$(bj -e "$N" -- 'id -u')")
if [ "$uid" != 0 ]; then
  cwd_fails "-C of a directory without permission" "*/tmp/berth-cw-$TAG/d*permission denied*" -e "$N" -C "/tmp/berth-cw-$TAG/d"
  bj -e "$N" -- "chmod 755 /tmp/berth-cw-$TAG/d && mkdir /tmp/berth-cw-$TAG/d/e && cd /tmp/berth-cw-$TAG/d/e" >/dev/null
  bj -e "$N" -- "chmod 000 /tmp/berth-cw-$TAG/d" >/dev/null
  r=$(bj -e "$N" -- 'pwd')
  like "$(out "$r")" "*/tmp/berth-cw-$TAG/d/e: permission denied; running in /tmp/berth-cw-$TAG*" "an unreadable cwd says permission denied, not 'no longer exists'"
else
  ok "-C of a directory without permission # SKIP the environment runs as root"
  ok "an unreadable cwd says permission denied # SKIP the environment runs as root"
fi
bj -e "$N" -C / -- "chmod -R 755 /tmp/berth-cw-$TAG; rm -rf /tmp/berth-cw-$TAG" >/dev/null

# --- exported state (15, 16) ---
E=st$TAG
bj -e "$E" -- 'export KEEP=works; UNEXP=gone; f_berth() { echo "fn $1"; }; alias al_berth="echo aliased"; set -e; set -u' >/dev/null
r=$(bj -e "$E" -- 'echo "${KEEP:-} ${UNEXP:-unset}"; f_berth x; al_berth; false; echo "$UNDEFINED_BERTH_X" after')
is "$(out "$r")" $'works unset\nfn x\naliased\n after' "exported vars, functions and aliases persist; unexported and set -e/-u do not"
bj -e "$E" -- 'export N_BERTH=0' >/dev/null
for i in $(seq 1 50); do bj -e "$E" -- 'export N_BERTH=$((N_BERTH + 1))' >/dev/null; done
is "$(out "$(bj -e "$E" -- 'echo $N_BERTH')")" 50 "50 sequential commands in one named environment keep state"
# a snapshot leaves out what the command inherits anyway: a variable set
# back to the value it started with must stay so
bj -e "$E" -- 'export PATH=/berth-nowhere:$PATH' >/dev/null
bj -e "$E" -- 'export PATH=${PATH#/berth-nowhere:}' >/dev/null
r=$(bj -e "$E" -- 'case $PATH in */berth-nowhere*) echo kept;; *) echo restored;; esac')
is "$(out "$r")" restored "a variable exported back to its starting value keeps it"
# a command that changes no state rewrites no state file; when the
# environment was last used is its meta file's mtime
SD=$XDG_STATE_HOME/berth/envs/$E
ino=$(stat -c %i "$SD/snapshot.sh" "$SD/meta")
touch -d '2 hours ago' "$SD/meta"
bj -e "$E" -- true >/dev/null
is "$(stat -c %i "$SD/snapshot.sh" "$SD/meta")" "$ino" "a command that changes no state rewrites no state file"
used=$("$BERTH" ls --json | jq -r --arg n "$E" '.[] | select(.name == $n) | .last_used')
check "… and marks the environment used now (last_used $used)" test $(( $(date +%s) - ${used:-0} )) -lt 600
bj -e "$E" -- 'export KEEP=changed' >/dev/null
check "a command that exports something rewrites the snapshot" test "$(stat -c %i "$SD/snapshot.sh")" != "${ino%%$'\n'*}"
bj -e "iso1$TAG" -- 'export LEAK_BERTH=1' >/dev/null
is "$(out "$(bj -e "iso2$TAG" -- 'echo ${LEAK_BERTH:-unset}')")" unset "two environments do not share state"
check "a throw-away environment does not see a named one" test "$(out "$(bj -- 'echo ${LEAK_BERTH:-unset}')")" = unset

# --- stdin (22) ---
r=$(printf 'hello from stdin\n' | bx --json --stdin - -- cat)
is "$(out "$r")" "hello from stdin" "stdin reaches the command"
r=$(printf 'a\nb\nc\n' | bx --json --stdin - -- 'wc -l')
is "$(out "$r" | tr -d ' ')" 3 "wc -l counts stdin lines"
is "$(out "$(bj -- 'cat; echo done')")" "done" "no stdin means EOF, not a hang"

# stdin streams as the command reads it, in bounded memory, like
# `docker exec -i` and ssh (issue 11.10: all of it was read first and held
# twice: 300 MB in, 594 MB RSS).
if [ -x /usr/bin/time ]; then
  n=$((40 * 1024 * 1024))
  got=$(head -c "$n" /dev/zero | /usr/bin/time -f %M -o "$TEST_TMP/in.rss" "$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" --stdin - -- 'wc -c')
  rss=$(tail -n1 "$TEST_TMP/in.rss")
  is "$(tr -d ' ' <<<"$got")" "$n" "40 MiB of stdin reach the command whole"
  check "… streamed with bounded memory (${rss} KiB RSS < 32 MiB)" test "${rss:-999999}" -lt 32768
  head -c "$n" /dev/zero >"$TEST_TMP/in.bin"
  got=$(/usr/bin/time -f %M -o "$TEST_TMP/in.rss" "$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" --stdin "$TEST_TMP/in.bin" -- 'wc -c')
  rss=$(tail -n1 "$TEST_TMP/in.rss")
  is "$(tr -d ' ' <<<"$got")" "$n" "--stdin FILE: 40 MiB reach the command whole"
  check "… streamed too (${rss} KiB RSS < 32 MiB)" test "${rss:-999999}" -lt 32768
  rm -f "$TEST_TMP/in.bin"
else
  check "/usr/bin/time is installed for the stdin memory check" false
fi
start=$SECONDS
head -c 100000000 /dev/zero | bx --stdin - -- true >"$TEST_TMP/true.out" 2>&1
is "$?" 0 "a command that does not read its large stdin exits 0"
is "$(cat "$TEST_TMP/true.out")" "" "… quietly (EPIPE on its stdin is no error)"
check "… and promptly" test $((SECONDS - start)) -lt 30
r=$(printf 'one\ntwo\n' | bx --json --stdin - -- 'read -r a; echo "got $a"; cat')
is "$(out "$r")" $'got one\ntwo' "the script goes first, then stdin, read as the command wants it"

# --- timeouts and interrupts (23, 24, 30) ---
T=to$TAG
start=$SECONDS
r=$(bj -e "$T" -t 1 -- "echo partial; setsid bash -c 'exec -a berth-canary-$TAG sleep 300' >/dev/null 2>&1 & bash -c 'exec -a berth-canary-$TAG sleep 300' & sleep 60")
is "$(field "$r" exit_code)" 124 "timeout exits 124"
is "$(field "$r" timed_out)" true "timed_out is set"
is "$(field "$r" termination.kind)" timeout "termination: timeout"
like "$(out "$r")" "partial*\[Command timed out after 1s\]" "partial output and the timeout note"
check "timeout returns promptly" test $((SECONDS - start)) -lt 15
canaries () { bj -e "$T" -- "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -o 'berth-canar[y]-$TAG' | wc -l"; }
is "$(out "$(canaries)" | tr -d ' ')" 0 "the whole tree is killed where it runs, setsid escapees included"
is "$(out "$(bj -e "$T" -- 'echo next')")" next "the next command works after a timeout"
"$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" --json -- 'sleep 30' >"$TEST_TMP/int.json" & pid=$!
sleep 2; kill -INT $pid; wait $pid
r=$(cat "$TEST_TMP/int.json")
is "$(field "$r" exit_code)" 130 "an interrupt exits 130"
like "$(out "$r")" "*\[Command interrupted\]*" "with the interrupt note"
is "$(field "$r" termination.kind)" interrupted "termination: interrupted"

# --- the wrapper killed by a signal; berth's stdout closed (issue 11.11) ---
bx -- 'kill -SEGV $$' >"$TEST_TMP/sig.out" 2>"$TEST_TMP/sig.err"
is "$?" 139 "a shell killed by SIGSEGV exits 139"
is "$(cat "$TEST_TMP/sig.out" "$TEST_TMP/sig.err")" "" "… with no noise from berth's bootstrap"
r=$(bj -e "$T" -- 'cd /tmp; kill -SEGV $$')
is "$(field "$r" exit_code)" 139 "--json: exit_code 139"
is "$(field "$r" cwd)" /tmp "… and the state is still recorded"
is "$(field "$r" termination.kind)/$(field "$r" termination.signal)" signaled/SIGSEGV "termination: signaled, SIGSEGV (from the exit record)"
r=$(bj -e "$T" -- 'exit 139')
is "$(field "$r" exit_code)/$(field "$r" termination.kind)/$(field "$r" termination.signal)" 139/exited/null "exit 139 is exited, no signal"
r=$(bj -e "$T" -- 'true')
# BERTH_EXPECT_TRANSPORT: what the result must name (the agent wrappers
# set it); else agent, or exec when BERTH_TRANSPORT=exec forces it.
want_t=${BERTH_EXPECT_TRANSPORT:-$([ "${BERTH_TRANSPORT:-}" = exec ] && echo exec || echo agent)}
is "$(field "$r" termination.kind)/$(field "$r" transport)" "exited/$want_t" "a normal end: exited, over the $want_t transport"
bx -e "$T" -- "yes berth-yes-$TAG" 2>"$TEST_TMP/pipe.err" | head -n1 >/dev/null
is "${PIPESTATUS[0]}" 141 "stdout closed by its reader (| head -1): exit 141"
is "$(cat "$TEST_TMP/pipe.err")" "" "… quietly"
is "$(out "$(bj -e "$T" -- "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -o 'berth-ye[s]-$TAG' | wc -l")" | tr -d ' ')" 0 "… and the command's tree is stopped where it ran"

# --- background children (26) ---
# duration_ms is execute's own time: environment creation does not count.
G=bg$TAG
bj -e "$G" -- true >/dev/null
r=$(bj -e "$G" -- 'sleep 100 & echo started')
is "$(out "$r")" started "a background child does not hang execute"
check "… and it returns promptly ($(field "$r" duration_ms) ms)" test "$(field "$r" duration_ms)" -lt 2000
r=$(bj -e "$G" -- 'setsid sleep 100 >/dev/null 2>&1 & disown')
check "setsid … & disown returns promptly ($(field "$r" duration_ms) ms)" test "$(field "$r" duration_ms)" -lt 2000
bj -e "$G" -- 'pkill -f "^sleep 100$" 2>/dev/null; true' >/dev/null

# --- output cap, spill, UTF-8 (31, 32) ---
r=$(bj -- 'i=0; while [ $i -lt 2000 ]; do echo "line $i ................................................"; i=$((i+1)); done')
is "$(field "$r" truncated)" true "output over the cap is truncated"
like "$(out "$r")" "line 0 *\[OUTPUT TRUNCATED - * chars omitted out of * total\]*line 1999*" "head 40 % / tail 60 % with the note"
spill=$(field "$r" full_output_path)
check "the full output goes to a spill file" test -f "$spill"
is "$(stat -c %a "$spill" 2>/dev/null)" 600 "the spill file is 0600"
is "$(wc -l <"$spill" | tr -d ' ')" 2000 "the spill file has every line"
r=$(bj -- 'printf "ok \377\376 end\n"')
is "$(out "$r")" "ok �� end" "invalid UTF-8 becomes U+FFFD"
r=$(bj -- 'i=0; s=; while [ $i -lt 4095 ]; do s="${s}a"; i=$((i+1)); done; printf "%s€\n" "$s"')
like "$(out "$r")" "*a€" "a multibyte character split across reads stays whole"

# --- bounded memory (DESIGN 9) ---
if [ -x /usr/bin/time ]; then
  rss=$( { /usr/bin/time -f '%M' "$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" --json -- 'head -c 100000000 /dev/zero | tr "\0" a' >"$TEST_TMP/big.json"; } 2>&1 | tail -n1)
  is "$(jq -r .output_total_bytes "$TEST_TMP/big.json")" 100000000 "100 MB of output is counted"
  check "… with bounded memory (${rss} KiB RSS < 32 MiB)" test "${rss:-999999}" -lt 32768
  rm -f "$(jq -r .full_output_path "$TEST_TMP/big.json")"
else
  check "/usr/bin/time is installed for the memory check" false
fi

# --- secrets (DESIGN 10) ---
r=$(OPENAI_API_KEY=sk-berth-secret GH_TOKEN=ghp-berth bx --json -- 'echo "${OPENAI_API_KEY:-stripped} ${GH_TOKEN:-stripped}"')
is "$(out "$r")" "stripped stripped" "credentials are stripped from the environment"
mkdir -p "$XDG_CONFIG_HOME/berth"
cfg=$TEST_TMP/pass.yaml
{ [ -n "${BERTH_CONFIG:-}" ] && cat "$BERTH_CONFIG"; } >"$cfg"
if grep -q '^terminal:' "$cfg"; then
  sed -i 's/^terminal:/terminal:\n  env_passthrough: [BERTH_PASS_TOKEN]/' "$cfg"
else
  printf 'terminal:\n  env_passthrough: [BERTH_PASS_TOKEN]\n' >>"$cfg"
fi
P=pt$TAG
r=$(BERTH_CONFIG=$cfg BERTH_PASS_TOKEN='v a$l"ue' "$BERTH" exec -b "$BACKEND" "${EXTRA[@]}" -e "$P" --json -- 'echo "$BERTH_PASS_TOKEN"; export OTHER_SECRET=x')
is "$(out "$r")" 'v a$l"ue' "an allow-listed variable reaches the command intact"
check "… and is never written to the snapshot" bash -c "! grep -rq 'v a' '$XDG_STATE_HOME/berth/envs/$P'"
# berth's own files; not a plugin's environment home kept in its state
# directory (acmebox's), which holds what commands made there (the agent
# uploaded to ~/.cache, 0755)
is "$(find "$XDG_STATE_HOME/berth" -type f ! -perm 600 ! -path '*/envs/*/home/*' -printf '%m %p\n')" "" "snapshot files are 0600"
check "the state directory is 0700" test "$(stat -c %a "$XDG_STATE_HOME/berth/envs/$P")" = 700

# --- files (DESIGN 3.3): berth cp through the file layer, what commands see ---
F=fs$TAG
bj -e "$F" -- true >/dev/null
head -c 10000000 /dev/urandom >"$TEST_TMP/big.bin"
"$BERTH" cp "$TEST_TMP/big.bin" "$F:sub dir/big.bin" 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "files: a 10 MB binary file is written into the environment (parents made)"
is "$(out "$(bj -e "$F" -- 'wc -c < "sub dir/big.bin"')" | tr -d ' ')" 10000000 "… a command there sees it whole, at the path relative to the environment's cwd"
"$BERTH" cp "$F:sub dir/big.bin" "$TEST_TMP/back.bin" 2>"$TEST_TMP/err"
check "files: it reads back byte for byte" cmp -s "$TEST_TMP/big.bin" "$TEST_TMP/back.bin"
printf 'one\0two\n\xff' >"$TEST_TMP/small"
"$BERTH" cp "$TEST_TMP/small" "$F:sub dir/" && "$BERTH" cp "$F:sub dir/small" "$TEST_TMP/small.back"
check "files: a destination ending in / takes the source's name; NUL and invalid UTF-8 survive" cmp -s "$TEST_TMP/small" "$TEST_TMP/small.back"
bj -e "$F" -- 'printf new > written-by-command' >/dev/null
"$BERTH" cp "$F:written-by-command" "$TEST_TMP/wbc"
is "$(cat "$TEST_TMP/wbc")" "new" "files: a file a command wrote is read as it is"
"$BERTH" cp "$F:/no/such/file-$TAG" "$TEST_TMP/x" >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: cannot read /no/such/file-$TAG: No such file or directory" "files: a missing file is ENOENT with its path (125)"
# Directories (cp -r): a tree with a nested and an empty directory, a binary
# file, an executable (0755), a link, a name with a space, both ways.
T=$TEST_TMP/tree
mkdir -p "$T/src dir/nested/deeper" "$T/src dir/empty"
head -c 100000 /dev/urandom >"$T/src dir/nested/deeper/b.bin"
printf 'one\0two\n\xff' >"$T/src dir/small"
printf '#!/bin/sh\necho run\n' >"$T/src dir/run.sh"
chmod 0755 "$T/src dir/run.sh"
chmod 0750 "$T/src dir/nested"
ln -s small "$T/src dir/link"
treesum () { (cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "$p l $(readlink "$p")"; elif [ -d "$p" ]; then echo "$p d $(stat -c %a "$p")"
  else echo "$p f $(stat -c %a "$p") $(md5sum <"$p" | cut -d' ' -f1)"; fi; done); }
TREESUM='cd "$1" && find . -print | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "$p l $(readlink "$p")"; elif [ -d "$p" ]; then echo "$p d $(stat -c %a "$p")"
  else echo "$p f $(stat -c %a "$p") $(md5sum <"$p" | cut -d" " -f1)"; fi; done'
want=$(treesum "$T/src dir")
# in the environment's cwd, which outlives this run on ssh (the remote home)
TC="tree copy $TAG"
"$BERTH" cp "$T/src dir" "$F:$TC" 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "files: a directory is copied into the environment (cp -r: DEST made)"
is "$(out "$(bj -e "$F" -- "f () ( $TREESUM ); f '$TC'")")" "$want" "… the same tree there: nested and empty directories, bytes, modes (0755, 0750), the link as a link"
"$BERTH" cp "$T/src dir" "$F:$TC" 2>"$TEST_TMP/err"
is "$?:$(out "$(bj -e "$F" -- "f () ( $TREESUM ); f '$TC/src dir'")")" "0:$want" "files: into an existing directory it goes under its own name"
"$BERTH" cp "$F:$TC" "$T/back" 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "files: a directory is copied out of the environment"
is "$(treesum "$T/back" | grep -v '^\./src dir')" "$want" "… the same tree here (bytes, modes, empty directory, link)"
"$BERTH" cp "$F:$TC/src dir" "$T/back/" 2>"$TEST_TMP/err"
is "$?:$(treesum "$T/back/src dir")" "0:$want" "files: out into an existing directory, under its own name"
mkfifo "$T/src dir/fifo"
"$BERTH" cp "$T/src dir" "$F:$TC-fifo" >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: cp: $T/src dir/fifo is not a file, directory or symbolic link: nothing copied" "files: a fifo in a tree is refused, nothing copied"
is "$(out "$(bj -e "$F" -- "ls -d '$TC-fifo' 2>/dev/null; true")")" "" "… nothing made there"
bj -e "$F" -- "rm -rf '$TC'" >/dev/null
"$BERTH" cp "$TEST_TMP/small" "nosuch$TAG:/tmp/x" >/dev/null 2>"$TEST_TMP/err"
like "$?:$(cat "$TEST_TMP/err")" "125:berth: no environment named 'nosuch$TAG'*" "files: an unknown environment is refused, nothing made"
"$BERTH" rm "$F" >/dev/null

# --- background processes (DESIGN 3.3): start, attach, stdin, stop, exit ---
PR=pr$TAG
bj -e "$PR" -- true >/dev/null
pst () { "$BERTH" start -e "$PR" "$@"; }
pid1=$(pst -- 'for i in $(seq 1 20); do echo "line $i"; sleep 0.1; done')
check "processes: start prints an id" test -n "$pid1"
sleep 0.6
got=$(timeout 30 "$BERTH" logs -e "$PR" --follow "$pid1")
is "$(echo "$got" | head -n1):$(echo "$got" | tail -n1):$(echo "$got" | wc -l | tr -d ' ')" "line 1:line 20:20" "processes: another berth process replays the earlier lines, then the live ones, to the end"
is "$("$BERTH" logs -e "$PR" "$pid1" | wc -l | tr -d ' ')" 20 "processes: logs prints what it printed"
# the replay is bounded: at most the last 1 MiB, the drop marker first
pbig=$(pst -- "head -c 1500000 /dev/zero | tr '\\0' x; echo; echo big-end")
for _ in $(seq 100); do [ "$("$BERTH" ps -e "$PR" --json | jq -r --arg id "$pbig" '.[] | select(.id == $id) | .state')" = exited ] && break; sleep 0.1; done
timeout 30 "$BERTH" attach -e "$PR" "$pbig" </dev/null >"$TEST_TMP/big.out"
bsize=$(wc -c <"$TEST_TMP/big.out" | tr -d ' ')
like "$(head -n1 "$TEST_TMP/big.out" | cut -c1-60):$(tail -n1 "$TEST_TMP/big.out")" "\\[berth: * earlier bytes of output dropped\\]*:big-end" \
  "processes: a process that printed 1.5 MB: attach replays the drop marker first, then the end"
check "… at most ~1 MiB of it ($bsize bytes)" test "$bsize" -le $((1048576 + 100))
pid2=$(pst --stdin -- 'while read -r l; do echo "got $l"; done; echo eof')
is "$(printf 'a b\nc\n' | timeout 30 "$BERTH" attach -e "$PR" "$pid2")" $'got a b\ngot c\neof' "processes: stdin round trip through attach, EOF at its end"
# --pty: a terminal of its own through the agent; without it, refused in one line
if [ "$want_t" = agent ]; then
  ppty=$(pst --pty --stdin -- 'tty; stty size; read -r l; echo "got $l"')
  like "$(printf 'hi\n' | timeout 30 "$BERTH" attach -e "$PR" "$ppty" | tr '\r\n' '  ')" "/dev/pts/* 24 80 *got hi *" \
    "processes: --pty runs it on a terminal of its own (80x24), fed by attach"
else
  "$BERTH" start -e "$PR" --pty -- tty >/dev/null 2>"$TEST_TMP/err"
  like "$?:$(cat "$TEST_TMP/err")" "125:berth: *a process on a pty needs berth-agent*" "processes: --pty without the agent: 125, one line saying it needs berth-agent"
fi
pid3=$(pst -- 'exit 3')
pid4=$(pst -- 'kill -9 $$')
pid5=$(pst -- 'setsid sleep 300 & echo $! > "/tmp/child-'"$TAG"'"; sleep 300')
sleep 1
"$BERTH" stop -e "$PR" "$pid5" 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "processes: stop"
is "$(field "$(bj -e "$PR" -- 'c=$(cat /tmp/child-'"$TAG"'); [ -d /proc/$c ] && ! grep -q ") Z" /proc/$c/stat && echo alive || echo gone')" output)" gone "… kills the whole tree where it runs, a setsid child too"
ps=$("$BERTH" ps -e "$PR" --json)
state () { jq -r --arg id "$1" '.[] | select(.id == $id) | "\(.state) \(.exit_code) \(.termination)"' <<<"$ps"; }
is "$(state "$pid3")" "exited 3 exited" "processes: an exit 3 is exited 3"
is "$(state "$pid4")" "exited 137 signaled" "… a SIGKILL is signaled (137)"
is "$(state "$pid5")" "exited 137 stopped" "… a stopped one says so"
is "$(state "$pid1")" "exited 0 exited" "… and the first one ended"
ids=()
for i in $(seq 1 20); do ids+=("$(pst -- "sleep 1; echo done $i")"); done
sleep 4
n20=$("$BERTH" ps -e "$PR" --json | jq '[.[] | select(.command | startswith("sleep 1; echo done")) | select(.state == "exited" and .exit_code == 0)] | length')
is "$n20" 20 "processes: 20 at once in one environment all ran to the end"
"$BERTH" attach -e "$PR" p000000000000 >/dev/null 2>"$TEST_TMP/err"
like "$?:$(cat "$TEST_TMP/err")" "125:berth: no process p000000000000 in environment $PR*" "processes: an unknown id is refused (125)"
"$BERTH" rm "$PR" >/dev/null

stops=$("$BERTH" backends --json | jq -r ".[] | select(.name == \"$BACKEND\") | .flags.cleanup_stops_processes")
PL=pl$TAG
bj -e "$PL" -- true >/dev/null
idl=$("$BERTH" start -e "$PL" -- "exec -a berth-orphan-$TAG sleep 300")
"$BERTH" rm "$PL" >/dev/null
bj -e "$PL" -- true >/dev/null
"$BERTH" attach -e "$PL" "$idl" >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: process $idl was lost: environment $PL was removed" "processes: after rm, an environment made again under the name does not have it: attach says it was lost (no hang)"
"$BERTH" logs -e "$PL" "$idl" >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: process $idl was lost: environment $PL was removed" "… so does logs"
left=$(field "$(bj -e "$PL" -- "{ ps -eo args 2>/dev/null || ps; } | grep -c 'berth-orpha[n]-$TAG'; true")" output)
if [ "$stops" = true ]; then
  is "$left" 0 "processes: cleanup_stops_processes: rm stopped it"
else
  # honest to the flag: cleanup does not stop processes here (ssh, local)
  check "processes: without cleanup_stops_processes it outlives rm (${left}), as the flag says" test "$left" -ge 1
  bj -e "$PL" -- "pkill -f berth-orphan-$TAG; true" >/dev/null
fi
"$BERTH" rm "$PL" >/dev/null

# --- idle (DESIGN 3.3): reap suspends what its backend can, the next command resumes ---
RI=ri$TAG
bj -e "$RI" -- 'mkdir -p kept && echo v > kept/f && cd kept && export KEPT=yes' >/dev/null
# when it was last used: its meta file's mtime
touch -d '2 hours ago' "$XDG_STATE_HOME/berth/envs/$RI/meta"
out=$("$BERTH" reap --idle 3600 --json); rc=$?
act=$(jq -r --arg n "$RI" '.[] | select(.name == $n) | .action' <<<"$out")
# the built-in backends that have something to suspend (a stop op)
case $BACKEND in docker | ssh | singularity) want=suspended ;; *) want=left ;; esac
is "$rc:${act:-left}" "0:$want" "idle: reap --idle: $want"
r=$(bj -e "$RI" -- 'cat f; echo "$KEPT"; pwd')
is "$(out "$r")" "v"$'\n'"yes"$'\n'"$(field "$r" cwd)" "idle: the next command resumes it, files, exports and cwd kept"
is "$(field "$r" environment_recreated)" false "… not recreated"
is "$("$BERTH" ls --json | jq -r --arg n "$RI" '.[] | select(.name == $n) | .suspended')" false "… and it is no longer suspended"
"$BERTH" rm "$RI" >/dev/null

# --- berth shell: an interactive bash with the environment's state ---
SH=sh$TAG
bj -e "$SH" -- 'mkdir -p shdir && cd shdir && export SHELLVAR=kept && shfn () { echo "fn $1"; }' >/dev/null
got=$(printf 'pwd\necho "$SHELLVAR"\nshfn ran\nexit 3\n' | "$BERTH" shell -e "$SH" 2>/dev/null); rc=$?
is "$rc:$(echo "$got" | tail -n 2 | tr '\n' ' ')" "3:kept fn ran " "shell: exports and functions of the environment, its exit status"
like "$(echo "$got" | head -n 1)" "*/shdir" "… in the environment's cwd"
# on a terminal (a pty of 33x101 rows and columns): the shell has one too,
# of that size, through the backend's interactive exec_prefix
got=$(printf '[ -t 0 ] && [ -t 1 ] && echo on-a-tty; stty size; echo "$SHELLVAR"\n@resize 41 120\nstty size\nexit 4\n' |
  python3 "$CONTRACT_DIR/on-pty.py" 33 101 "$BERTH" shell -e "$SH" 2>&1); rc=$?
is "$rc:$(printf '%s\n' "$got" | grep -xE 'on-a-tty|[0-9]+ [0-9]+|kept' | tr '\n' ' ')" "4:on-a-tty 33 101 kept 41 120 " \
  "shell on a terminal: a terminal there, our window size and its change, the environment's exports, its exit status"
printf '%s\n' "$got" | grep -xE 'on-a-tty|[0-9]+ [0-9]+|kept' | tr '\n' ' ' | grep -qx 'on-a-tty 33 101 kept 41 120 ' || diag "$got"
"$BERTH" rm "$SH" >/dev/null

# --- exec_prefix (3.2) ---
X=xp$TAG
bj -e "$X" -- true >/dev/null
mapfile -t prefix < <("$BERTH" exec-prefix -b "$BACKEND" -e "$X" --json | jq -r '.[]')
script=$'printf "%s|" "$1" "$2"; echo; echo "quotes \' \\" dollar $HOME_NOT_EXPANDED_BERTH ü"'
got=$("${prefix[@]}" bash -c "$script" _ "a b" '$(echo no) `x` ; *' </dev/null)
is "$got" $'a b|$(echo no) `x` ; *|\nquotes \' " dollar  ü' "exec_prefix passes words through unchanged"
got=$(printf 'line1\nline2\n' | "${prefix[@]}" cat)
is "$got" $'line1\nline2' "a long-lived cat echoes stdin through exec_prefix"

# --- exec-stream (issue 11.9): the same answers on every backend ---
# A missing command was 255 silently on bwrap, 126 on docker, 125 on
# local; ^C, SIGTERM or SIGHUP to berth left the process running there.
S=xs$TAG
bj -e "$S" -- true >/dev/null
xs () { "$BERTH" exec-stream -b "$BACKEND" "${EXTRA[@]}" -e "$S" "$@"; }
xs -- no_such_command_berth_$TAG </dev/null >"$TEST_TMP/xs.out" 2>"$TEST_TMP/xs.err"
is "$?" 127 "exec-stream: a missing command exits 127"
like "$(cat "$TEST_TMP/xs.err")" "*no_such_command_berth_$TAG: command not found" "… saying so the shell's way"
is "$(wc -l <"$TEST_TMP/xs.err" | tr -d ' ')" 1 "… in one line"
is "$(printf 'in\n' | xs -- sh -c 'cat; exit 3'; echo "rc=$?")" $'in\nrc=3' "exec-stream: stdin through, the command's own exit status"
is "$(xs -- printf '%s|' 'a b' '$HOME' </dev/null)" 'a b|$HOME|' "exec-stream: words pass through unchanged"
# The processes of a stream: exact argv "sleep DUR" (a duration of our own).
DUR=$((600 + $$ % 1000))
stream_procs () { out "$(bj -e "$S" -- "n=0; for f in /proc/[0-9]*/cmdline; do mapfile -d '' -t a 2>/dev/null <\"\$f\" || continue; [ \"\${a[*]}\" = 'sleep $DUR' ] && { n=\$((n + 1)); ${1:-:} \"\${f//[!0-9]/}\" 2>/dev/null; }; done; echo \$n")" | tr -d ' '; }
for sig in INT TERM; do
  want=$((128 + $(kill -l "$sig")))
  # berth itself is the background job (not a subshell running it)
  "$BERTH" exec-stream -b "$BACKEND" "${EXTRA[@]}" -e "$S" -- bash -c "sleep $DUR & sleep $DUR; :" </dev/null >/dev/null 2>"$TEST_TMP/xs.err" & pid=$!
  for i in $(seq 1 50); do [ "$(stream_procs)" = 2 ] && break; sleep 0.2; done
  is "$(stream_procs)" 2 "exec-stream: the command and its background child run (SIG$sig)"
  kill -"$sig" $pid
  for i in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  kill -KILL $pid 2>/dev/null
  wait $pid
  is "$?" "$want" "SIG$sig to exec-stream: berth exits $want"
  is "$(stream_procs)" 0 "… and the command's whole tree is killed where it ran"
  stream_procs "kill -9" >/dev/null # what a failure left behind
done

for n in "$N" "$E" "iso1$TAG" "iso2$TAG" "$T" "$P" "$X" "$G" "$S"; do "$BERTH" rm "$n" >/dev/null 2>&1; done
done_testing
