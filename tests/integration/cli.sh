#!/bin/bash
# cli.sh: the berth command's exit codes, --json shapes and error messages.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home
command -v jq >/dev/null || skip_all "jq is not installed"

# run CMD...: sets $rc, $stdout, $stderr
run ()
{
  "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  rc=$?
  stdout=$(cat "$TEST_TMP/out")
  stderr=$(cat "$TEST_TMP/err")
}

one_line () { [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]; }

run "$BERTH" version
is "$rc" 0 "version exits 0"
like "$stdout" "berth [0-9]*" "version prints the version"

run "$BERTH" exec -- 'echo out; echo err >&2; exit 7'
is "$rc" 7 "exec exits with the command's status"
is "$stdout" $'out\nerr' "exec streams merged output to stdout"
is "$stderr" "" "and nothing of berth's on stderr"

run "$BERTH" exec -- 'head -c 200000 /dev/zero | tr "\0" x'
is "${#stdout}" 200000 "without --json the output is not capped"

run "$BERTH" exec --json -- 'head -c 200000 /dev/zero | tr "\0" x'
is "$(jq -r '[.output, .exit_code, .cwd, .timed_out, .interrupted, .truncated, .output_total_bytes, .full_output_path, .backend, .env, .duration_ms] | map(type) | join(",")' <<<"$stdout")" \
  "string,number,string,boolean,boolean,boolean,number,string,string,string,number" "--json has the documented fields and types"
is "$(jq -r .truncated <<<"$stdout")" true "--json output is capped"
check "--json output stays under the cap" test "$(jq -r '.output | length' <<<"$stdout")" -lt 50200

run "$BERTH" exec -t 1 -- 'sleep 30'
is "$rc" 124 "a timeout exits 124"
like "$stderr" "*timed out after 1s*" "and says so on stderr"

run "$BERTH" exec -b nosuchbackend -- true
is "$rc" 125 "an unknown backend exits 125"
like "$stderr" "berth: unknown backend 'nosuchbackend' (available: *local*)" "and lists the available ones"
check "in one line" one_line

printf 'terminal:\n  timeout: [1, 2\n' >"$TEST_TMP/bad.yaml"
run "$BERTH" --config "$TEST_TMP/bad.yaml" exec -- true
is "$rc" 125 "malformed YAML exits 125"
like "$stderr" "berth: $TEST_TMP/bad.yaml:[0-9]*:[0-9]*:*" "with file:line:col"
check "in one line" one_line

printf 'terminal:\n  timeout: soon\n' >"$TEST_TMP/type.yaml"
run "$BERTH" --config "$TEST_TMP/type.yaml" exec -- true
is "$rc" 125 "a known key of the wrong type exits 125"
like "$stderr" "berth: $TEST_TMP/type.yaml:2:*terminal.timeout*" "naming the key and its place"

printf 'terminal:\n  backend: local\n  some_future_key: 1\nmodel:\n  name: x\n' >"$TEST_TMP/other.yaml"
run "$BERTH" --config "$TEST_TMP/other.yaml" exec -- 'echo fine'
is "$stdout" fine "unknown keys and other sections are ignored"

run "$BERTH" --config "$TEST_TMP/missing.yaml" exec -- true
is "$rc" 125 "a missing --config file exits 125"
mkfifo "$TEST_TMP/fifo.yaml"
run timeout 10 "$BERTH" --config "$TEST_TMP/fifo.yaml" exec -- true
check "a FIFO as --config is refused at once with one line (125), never read" \
  bash -c "[ $rc -eq 125 ] && [ \"\$(wc -l <'$TEST_TMP/err')\" -eq 1 ] && grep -q 'not a regular file (a FIFO)' '$TEST_TMP/err'"
run timeout 10 env BERTH_CONFIG="$TEST_TMP" "$BERTH" exec -- true
check "so is a directory as \$BERTH_CONFIG" bash -c "[ $rc -eq 125 ] && grep -q 'not a regular file (a directory)' '$TEST_TMP/err'"

run "$BERTH" exec -C /nonexistent/dir -- true
is "$rc" 125 "an unusable -C exits 125"
like "$stderr" "berth: cannot use working directory /nonexistent/dir: no such directory" "and says why"

run "$BERTH" exec -t abc -- true
is "$rc" 125 "a bad timeout exits 125"
like "$stderr" "*timeout must be a number of seconds from 0 (no timeout) to 2147483648*" "and says what is expected"

run "$BERTH" exec
is "$rc" 125 "exec without a command exits 125"

run "$BERTH" frobnicate
is "$rc" 125 "an unknown command exits 125"

run "$BERTH" exec -e 'bad/name' -- true
is "$rc" 125 "an invalid environment name exits 125"
like "$stderr" "*invalid environment name*" "and says which characters are allowed"

run "$BERTH" rm nosuchenv
is "$rc" 125 "rm of an unknown environment exits 125"
like "$stderr" "*no environment named 'nosuchenv'*" "and names it"

run "$BERTH" exec -e named1 -- 'cd /tmp'
run "$BERTH" ls --json
is "$(jq -r '.[] | select(.name == "named1") | .backend + " " + .cwd' <<<"$stdout")" "local /tmp" "ls lists a named environment with its backend and cwd"
run "$BERTH" rm named1
is "$rc" 0 "rm removes it"
run "$BERTH" ls --json
is "$(jq length <<<"$stdout")" 0 "and it is gone from ls"

run "$BERTH" backends --json
is "$(jq -r '.[] | select(.name == "local") | [.status, .flags.uses_host_filesystem, .flags.is_remote] | map(tostring) | join(" ")' <<<"$stdout")" "ready true false" "backends --json describes local"
is "$(jq -r '[.[] | .strip_env_keys | type] | unique | join(" ")' <<<"$stdout")" "array" "backends --json: every backend has strip_env_keys"
if jq -e '.[] | select(.name == "slurm")' <<<"$stdout" >/dev/null; then
  is "$(jq -r '.[] | select(.name == "slurm") | .strip_env_keys | index("SLURM_JOBID") != null' <<<"$stdout")" "true" "backends --json: slurm's strip_env_keys has SLURM_JOBID"
fi
run "$BERTH" doctor -b local --json
is "$rc" 0 "doctor exits 0 for a ready backend"
is "$(jq -r '.[0].checks[0].ok' <<<"$stdout")" true "doctor --json reports checks"
run "$BERTH" doctor -b nosuch
is "$rc" 125 "doctor of an unknown backend exits 125"

run "$BERTH" config path
is "$stdout" "$XDG_CONFIG_HOME/berth/config.yaml" "config path is the user file"
run "$BERTH" config set terminal.timeout 33
is "$rc" 0 "config set writes the user file"
run "$BERTH" config get terminal.timeout
is "$stdout" 33 "config get reads it back"
run "$BERTH" config set terminal.timeout never
is "$rc" 125 "config set refuses a value of the wrong type"
run "$BERTH" config get terminal.timeout
is "$stdout" 33 "and leaves the file as it was"
run "$BERTH" config get terminal.nothing_here
is "$rc" 125 "config get of an unset key exits 125"

run "$BERTH" exec-prefix -e xp --json
is "$rc" 125 "exec-prefix of an unknown environment exits 125 (issue 11 item 14)"
like "$stderr" "*no environment named 'xp'*" "and says so"
check "and creates nothing" test -z "$("$BERTH" ls --json | jq -r '.[] | select(.name == "xp") | .name')"
"$BERTH" exec -e xp -- 'echo made' >/dev/null
run "$BERTH" exec-prefix -e xp --json
is "$(jq -r 'type' <<<"$stdout")" array "exec-prefix --json prints an argv"
run "$BERTH" exec-prefix -e xp
eval "xp=($stdout)"
is "$(eval "$stdout echo 'a  b' '\$HOME'")" 'a  b $HOME' "the documented eval \"\$(berth exec-prefix -e NAME) CMD\" form passes words unchanged"
run "$BERTH" exec-prefix
is "$rc" 125 "exec-prefix without -e exits 125"
"$BERTH" rm xp >/dev/null 2>&1

run "$BERTH" exec-stream -- bash -c 'read -r l; echo "got $l"; exit 3'
is "$rc" 3 "exec-stream returns the status of the words it ran"

"$BERTH" exec -e held -- true >/dev/null
"$BERTH" exec-stream -e held -- sleep 5 >/dev/null 2>&1 &
stream_pid=$!
sleep 0.5
run timeout 4 "$BERTH" exec -e held -- 'echo free'
is "$stdout" free "a long exec-stream does not block commands of the same environment"
wait $stream_pid
"$BERTH" rm held >/dev/null

run "$BERTH" bench -n 3 --json
is "$(jq -r '[.backend, (.ratio_median | type)] | join(" ")' <<<"$stdout")" "local number" "bench --json reports a ratio against the peer"

for sub in exec exec-prefix exec-stream backends doctor ls rm gc config plugins bench; do
  run "$BERTH" $sub --help
  check "berth $sub --help exits 0 with a usage" bash -c "[ $rc -eq 0 ] && grep -q Usage '$TEST_TMP/out'"
done
# Text from an environment is escaped before it reaches a terminal
# (issue 10 item 5): a cwd that carries an OSC title sequence.
esc_dir=$TEST_TMP/$'e\e]2;PWNED\a'
run "$BERTH" exec -e esc -- "mkdir -p '$esc_dir' && cd '$esc_dir'"
is "$rc" 0 "a cwd with control characters is accepted"
run "$BERTH" ls
is "$(printf '%s' "$stdout" | tr -dc '\033\007' | wc -c)" 0 "ls prints no raw control characters"
like "$stdout" '*e\\x1b]2;PWNED\\x07*' "ls shows them as \\xHH"
run "$BERTH" ls --json
is "$(jq -r '.[] | select(.name == "esc") | .cwd' <<<"$stdout")" "$esc_dir" "ls --json keeps the cwd exact"
run "$BERTH" exec -C "$TEST_TMP/no"$'\e]2;X\a' -- true
is "$rc" 125 "a missing -C directory with control characters is berth's error"
is "$(printf '%s' "$stderr" | tr -dc '\033\007' | wc -c)" 0 "and the error line carries no raw control characters"
"$BERTH" rm esc >/dev/null 2>&1

# --- the output cap is hard (issue 11.6) ---
bytes () { jq -r '.output | utf8bytelength' <<<"$stdout"; }
printf 'tool_output:\n  max_bytes: 10000\n' >"$TEST_TMP/cap.yaml"
run "$BERTH" --config "$TEST_TMP/cap.yaml" exec --json -- 'seq 1 100000'
check "tool_output.max_bytes 10000: the output is at most 10000 bytes, notice included ($(bytes))" test "$(bytes)" -le 10000
run "$BERTH" exec --json --max-bytes 1000 -- 'seq 1 100000'
check "--max-bytes 1000, truncated: at most 1000 bytes ($(bytes))" test "$(bytes)" -le 1000
is "$(jq -r .truncated <<<"$stdout")" true "… truncated"
like "$(jq -r .output <<<"$stdout")" "1?2?3*\[OUTPUT TRUNCATED - * chars omitted out of 588895 total\]*100000" "… head, notice and tail"
run "$BERTH" exec --json --max-bytes 1000 -t 1 -- 'seq 1 100000; sleep 30'
check "--max-bytes 1000, truncated and timed out: at most 1000 bytes ($(bytes))" test "$(bytes)" -le 1000
like "$(jq -r .output <<<"$stdout")" "*OUTPUT TRUNCATED*\[Command timed out after 1s\]" "… the timeout note last, inside the cap"
run "$BERTH" exec --json --max-bytes 1000 -t 1 -- 'head -c 990 /dev/zero | tr "\0" x; sleep 30'
check "--max-bytes 1000, 990 bytes and the timeout note: at most 1000 bytes ($(bytes))" test "$(bytes)" -le 1000
is "$(jq -r .truncated <<<"$stdout")" true "… truncated to make room for the note"
"$BERTH" exec --json --max-bytes 1000 -- 'seq 1 100000; sleep 30' >"$TEST_TMP/int.json" 2>/dev/null & pid=$!
sleep 1; kill -INT $pid; wait $pid
stdout=$(cat "$TEST_TMP/int.json")
check "--max-bytes 1000, truncated and interrupted: at most 1000 bytes ($(bytes))" test "$(bytes)" -le 1000
like "$(jq -r .output <<<"$stdout")" "*\[Command interrupted\]" "… the interrupt note last"
run "$BERTH" exec --max-bytes 500 -- 'seq 1 100000'
check "--max-bytes without --json prints the capped output (${#stdout} chars)" test "$(wc -c <"$TEST_TMP/out")" -le 500
like "$stdout" "*OUTPUT TRUNCATED*100000" "… head, notice and tail"
like "$stderr" "berth: output truncated to 500 bytes; all of it is in *" "… and names the spill file"
for bad in 0 -1 abc 1k 99999999999999999999 1073741825 ''; do
  run "$BERTH" exec --max-bytes "$bad" -- true
  check "--max-bytes '$bad' is refused (125, one line)" bash -c "[ $rc -eq 125 ] && grep -q 'max-bytes must be an integer from 1 to 1073741824' '$TEST_TMP/err' && [ \$(wc -l <'$TEST_TMP/err') -eq 1 ]"
done
run "$BERTH" exec --help
like "$stdout" "*--max-bytes N*" "exec --help documents --max-bytes"

# --- timeouts: up to 2^31 s, 0 is none, larger is refused (issue 11.8) ---
for big in 9223372036854775807 2147483649 1e20 inf nan -1; do
  run "$BERTH" exec -t "$big" -- 'echo ran'
  check "-t $big is refused with the range (125, one line)" bash -c "[ $rc -eq 125 ] && grep -q 'from 0 (no timeout) to 2147483648' '$TEST_TMP/err' && [ \$(wc -l <'$TEST_TMP/err') -eq 1 ] && ! grep -q ran '$TEST_TMP/out'"
done
run "$BERTH" exec -t 2147483648 -- 'echo ran'
is "$rc:$stdout" "0:ran" "-t 2147483648 (2^31) works"
printf 'terminal:\n  timeout: 0.5\n' >"$TEST_TMP/short.yaml"
run "$BERTH" --config "$TEST_TMP/short.yaml" exec -t 0 -- 'sleep 1.5; echo ran'
is "$rc:$stdout" "0:ran" "-t 0 means no timeout (over terminal.timeout 0.5)"
printf 'terminal:\n  timeout: 0\n' >"$TEST_TMP/none.yaml"
run "$BERTH" --config "$TEST_TMP/none.yaml" exec --json -- 'sleep 1; echo ran'
is "$(jq -r '[.exit_code, .timed_out, .output] | map(tostring) | join(" ")' <<<"$stdout")" "0 false ran" "terminal.timeout: 0 means no timeout"
printf 'terminal:\n  timeout: 1e20\n' >"$TEST_TMP/huge.yaml"
run "$BERTH" --config "$TEST_TMP/huge.yaml" exec -- 'echo ran'
is "$rc" 125 "terminal.timeout: 1e20 is refused (125)"
like "$stderr" "berth: $TEST_TMP/huge.yaml:2:12: terminal.timeout: expected a number of seconds from 0 (no timeout) to 2147483648, got '1e20'" "… with its place and the range"
run "$BERTH" config set terminal.timeout 0
is "$rc" 0 "config set terminal.timeout 0 is accepted"
run "$BERTH" config set terminal.timeout 1e20
is "$rc" 125 "config set terminal.timeout 1e20 is refused"
"$BERTH" config set terminal.timeout 180 >/dev/null 2>&1
run "$BERTH" exec --help
like "$stdout" "*0: no timeout*" "exec --help documents -t 0"

# --- berth's stdout closed by its reader (issue 11.11) ---
"$BERTH" exec -- "exec -a berth-yes-cli$$ yes" 2>"$TEST_TMP/err" | head -n1 >/dev/null
is "${PIPESTATUS[0]}" 141 "exec -- yes | head -1 exits 141"
is "$(cat "$TEST_TMP/err")" "" "… quietly"
sleep 0.2
check "… with the command stopped" bash -c "! pgrep -f '^berth-yes-cli$$' >/dev/null"
"$BERTH" exec --json --max-bytes 4000000 -- 'seq 1 500000' 2>"$TEST_TMP/err" | head -c1 >/dev/null
is "${PIPESTATUS[0]}" 141 "exec --json | head -c1 exits 141 too"
is "$(cat "$TEST_TMP/err")" "" "… quietly"
# An unreadable -C on the host, as a user it is unreadable to (issue 11.7).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  nb=$TEST_TMP/nobody; mkdir -p "$nb/noperm" && chmod 0711 "$TEST_TMP" && chmod 0777 "$nb" && chmod 000 "$nb/noperm"
  run setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$nb" XDG_STATE_HOME="$nb/s" XDG_CACHE_HOME="$nb/c" XDG_CONFIG_HOME="$nb/cf" XDG_RUNTIME_DIR= \
    "$BERTH" exec -b local -C "$nb/noperm" -- 'echo ran'
  is "$rc:$stdout" "125:" "local: -C of a directory without permission exits 125, nothing ran"
  is "$stderr" "berth: cannot use working directory $nb/noperm: permission denied" "… and says permission denied"
else
  ok "local: -C of a directory without permission # SKIP needs root and setpriv to run as nobody"
  ok "… and says permission denied # SKIP"
fi

# --- stdin streams in bounded memory (issue 11.10) ---
# It was read whole before the command started and held twice: 300 MB in,
# 594 MB RSS.  Now it is copied as the command reads it.
if [ -x /usr/bin/time ]; then
  n=$((200 * 1024 * 1024))
  got=$(head -c "$n" /dev/zero | /usr/bin/time -f %M -o "$TEST_TMP/rss" "$BERTH" exec -b local --stdin - -- 'wc -c')
  rss=$(tail -n1 "$TEST_TMP/rss")
  is "$got" "$n" "exec --stdin -: 200 MiB reach the command whole"
  check "… in bounded memory (${rss} KiB RSS < 64 MiB)" test "${rss:-999999}" -lt 65536
  head -c "$n" /dev/zero >"$TEST_TMP/in.bin"
  got=$(/usr/bin/time -f %M -o "$TEST_TMP/rss" "$BERTH" exec -b local --stdin "$TEST_TMP/in.bin" -- 'wc -c' </dev/null)
  rss=$(tail -n1 "$TEST_TMP/rss")
  is "$got" "$n" "exec --stdin FILE: 200 MiB reach the command whole"
  check "… streamed too (${rss} KiB RSS < 64 MiB)" test "${rss:-999999}" -lt 65536
  rm -f "$TEST_TMP/in.bin"
else
  check "/usr/bin/time is installed for the stdin memory check" false
fi
# A command that never reads its stdin: no hang, no error (EPIPE is fine);
# berth stops reading, so the writer sees a closed pipe.
head -c "$((200 * 1024 * 1024))" /dev/zero | "$BERTH" exec -b local --stdin - -- true >"$TEST_TMP/out" 2>&1
is "${PIPESTATUS[1]}" 0 "exec --stdin - -- true with 200 MiB waiting exits 0"
is "$(cat "$TEST_TMP/out")" "" "… quietly"
# The command takes stdin at its own pace; berth does not read ahead.
got=$( { echo first; sleep 1; echo second; } | "$BERTH" exec -b local --stdin - -- 'read -r a; echo "got $a"; read -r b; echo "got $b"')
is "$got" $'got first\ngot second' "stdin arrives as it is written (a slow writer)"
run "$BERTH" exec -b local --stdin "$TEST_TMP" -- cat
is "$rc" 125 "--stdin of a directory exits 125"
like "$stderr" "berth: cannot read --stdin $TEST_TMP: Is a directory" "… and says so"
run "$BERTH" exec -b local --stdin "$TEST_TMP/nonexistent" -- cat
is "$rc:$stderr" "125:berth: cannot read --stdin $TEST_TMP/nonexistent: No such file or directory" "--stdin of a missing file exits 125 with one line"

# --- exec-stream: ^C kills the command, 128+N (issue 11.9) ---
"$BERTH" exec-stream -b local -- bash -c "exec -a berth-xs-cli$$ sleep 300" </dev/null & pid=$!
for i in $(seq 1 50); do pgrep -f "^berth-xs-cli$$" >/dev/null && break; sleep 0.1; done
kill -HUP $pid
for i in $(seq 1 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -KILL $pid 2>/dev/null
wait $pid
is "$?" 129 "SIGHUP to exec-stream exits 129"
check "… with the command killed" bash -c "! pgrep -f '^berth-xs-cli$$' >/dev/null"
pkill -f "^berth-xs-cli$$"
# (it used to spin forever: bounded here, and what it leaves is killed)
timeout -k 5 30 "$BERTH" exec-stream -b local -- yes berth-xs-yes-cli$$ 2>"$TEST_TMP/err" </dev/null | head -n1 >/dev/null
is "${PIPESTATUS[0]}" 141 "exec-stream -- yes | head -1 exits 141"
is "$(cat "$TEST_TMP/err")" "" "… quietly"
check "… with the command stopped" bash -c "! pgrep -f '^yes berth-xs-yes-cli$$' >/dev/null"
pkill -f "^yes berth-xs-yes-cli$$"

# --- configuration: values checked, typos warned, unset, list (issue 11.18) ---
cfgfile=$XDG_CONFIG_HOME/berth/config.yaml
mkdir -p "$(dirname "$cfgfile")"
printf '# mine\nterminal:\n  backend: local  # keep\n  timeout: 33\n' >"$cfgfile"
before=$(cat "$cfgfile")
run "$BERTH" config set terminal.backend nosuch
is "$rc" 125 "config set terminal.backend nosuch is refused (125)"
like "$stderr" "berth: terminal.backend: no backend named 'nosuch' (available: *local*)" "… naming the available backends"
check "… in one line" one_line
is "$(cat "$cfgfile")" "$before" "… and the file is untouched"
run "$BERTH" config set terminal.ssh_port 70000
is "$rc:$(cat "$cfgfile")" "125:$before" "config set checks the range (ssh_port 70000), file untouched"
run "$BERTH" exec -- 'echo still works'
is "$rc:$stdout" "0:still works" "commands still work after the refused values"

printf 'terminal:\n  backend: local\n  timout: 5\n  docker_imgae: x\n  acme_nothing_like_it: 1\n' >"$TEST_TMP/typo.yaml"
run "$BERTH" --config "$TEST_TMP/typo.yaml" exec -- 'echo ran'
is "$rc:$stdout" "0:ran" "unknown terminal keys do not stop a command"
like "$stderr" "*berth: config: warning: $TEST_TMP/typo.yaml:3:3: unknown key terminal.timout; did you mean terminal.timeout?*" "a typo is warned about with file:line:col and a did-you-mean"
unlike_docker=$(printf '%s\n' "$stderr" | grep -c docker_imgae)
is "$unlike_docker" 0 "… a misspelt docker key waits for docker to be used (tests/integration/config-keys.sh)"
like "$stderr" "*$TEST_TMP/typo.yaml:5:3: unknown key terminal.acme_nothing_like_it (ignored)*" "… and one close to nothing says it is ignored"
printf 'terminal:\n  timeout: 5\nmodel:\n  timout: 1\n' >"$TEST_TMP/known.yaml"
run "$BERTH" --config "$TEST_TMP/known.yaml" exec -- true
is "$stderr" "" "known keys and other sections warn about nothing"

run "$BERTH" config unset terminal.timeout
is "$rc" 0 "config unset removes a key"
is "$(cat "$cfgfile")" $'# mine\nterminal:\n  backend: local  # keep' "… keeping the rest of the file, comments included"
run "$BERTH" config unset terminal.timeout
is "$rc" 125 "config unset of a key the file does not set exits 125"
like "$stderr" "berth: terminal.timeout is not set in $cfgfile" "… and says so"
"$BERTH" config set terminal.timeout 44 >/dev/null 2>&1
run "$BERTH" config list
like "$stdout" "*terminal.timeout=44*" "config list prints merged keys"
like "$stdout" "*tool_output.max_bytes=50000*" "… and the runtime's defaults"
run "$BERTH" --config "$TEST_TMP/known.yaml" config list --show-origin
like "$stdout" "*$TEST_TMP/known.yaml:2	terminal.timeout=5*" "config list --show-origin names the file:line a value came from"
like "$stdout" "*$cfgfile:3	terminal.backend=local*" "… for every layer"
like "$stdout" "*default	tool_output.max_bytes=50000*" "… or default"
run "$BERTH" config list --show-origin --json
is "$(jq -r '.schema_version, (.keys[] | select(.key == "terminal.timeout") | .value + " " + .origin)' <<<"$stdout" | tr '\n' ,)" "1,44 $cfgfile:4," "config list --json: {schema_version, keys: [{key, value, origin}]}"
run "$BERTH" config --help
like "$stdout" "*config unset KEY*config list ?--show-origin? ?--json?*" "config --help documents unset and list"

# --- gc prunes spill files (issue 11.18) ---
spill=$XDG_CACHE_HOME/berth/output
run "$BERTH" exec --json --max-bytes 100 -- 'seq 1 1000'
old=$(jq -r .full_output_path <<<"$stdout")
check "a truncated output leaves a spill file" test -f "$old"
touch -d '2 hours ago' "$old"
run "$BERTH" exec --json --max-bytes 100 -- 'seq 1 1000'
new=$(jq -r .full_output_path <<<"$stdout")
ln -s "$TEST_TMP/typo.yaml" "$spill/out-0000000000000000.log"
touch -h -d '3 hours ago' "$spill/out-0000000000000000.log"
echo mine >"$spill/notes.log"; touch -d '3 hours ago' "$spill/notes.log"
run "$BERTH" gc --dry-run
is "$rc" 0 "gc --dry-run exits 0"
like "$stdout" "*would remove $old *" "gc --dry-run lists the spill file older than terminal.lifetime_seconds"
check "… and removes nothing" test -f "$old"
run "$BERTH" gc --json
is "$(jq -r '[.schema_version, .dry_run, .spill_files_removed, .spill_files[0].path, .spill_files[0].reason] | map(tostring) | join(" ")' <<<"$stdout")" \
  "1 false 1 $old expired" "gc --json reports the spill file it removed"
check "… which is gone" test ! -e "$old"
check "… a recent one is kept" test -f "$new"
check "… a symlink is not berth's file (kept, not followed)" bash -c "test -L '$spill/out-0000000000000000.log' && test -f '$TEST_TMP/typo.yaml'"
check "… nor is a file of another name" test -f "$spill/notes.log"
truncate -s 200M "$spill/out-aaaaaaaaaaaaaaaa.log"; touch -d '5 minutes ago' "$spill/out-aaaaaaaaaaaaaaaa.log"
truncate -s 100M "$spill/out-bbbbbbbbbbbbbbbb.log"
printf 'terminal:\n  lifetime_seconds: 86400\n' >"$TEST_TMP/life.yaml"
run "$BERTH" --config "$TEST_TMP/life.yaml" gc
like "$stdout" "*removed $spill/out-aaaaaaaaaaaaaaaa.log (209715200 bytes, over the 256 MiB bound)*" "gc keeps the spill directory under 256 MiB, oldest first"
check "… keeping the newer ones" test -f "$spill/out-bbbbbbbbbbbbbbbb.log" -a -f "$new"
rm -f "$spill/out-bbbbbbbbbbbbbbbb.log"
chmod 755 "$spill"
run "$BERTH" gc
is "$rc" 125 "gc refuses to prune a spill directory that is not 0700"
check "… removing nothing" test -f "$new"
chmod 700 "$spill"
run "$BERTH" gc --bogus
is "$rc" 125 "gc refuses an unknown argument"

# --- --json: errors are objects too, every output has schema_version (issue 11.18) ---
printf 'terminal:\n  timeout: [1\n' >"$TEST_TMP/broken.yaml"
for cmd in "exec --json -- true" "ls --json" "backends --json" "doctor --json" "gc --json" "config list --json" "plugins list --json" "bench -n 1 --json"; do
  run "$BERTH" --config "$TEST_TMP/broken.yaml" $cmd
  check "$cmd with a broken configuration: 125, one line on stderr, {schema_version, error: {code, message}} on stdout" \
    bash -c "[ $rc -eq 125 ] && [ \$(wc -l <'$TEST_TMP/err') -eq 1 ] && jq -se 'length == 1 and (.[0] | .schema_version == 1 and (.error.code | type) == \"number\" and (.error.message | test(\"broken.yaml:[0-9]+:[0-9]+: \")))' '$TEST_TMP/out' >/dev/null"
done
run "$BERTH" doctor -b nosuch --json
is "$(jq -r '.error.message' <<<"$stdout")" "$(sed 's/^berth: //' <<<"$stderr")" "doctor -b nosuch --json: the error object has the stderr line's message"
run "$BERTH" gc --json --bogus
is "$(jq -r '.schema_version' <<<"$stdout")" 1 "a usage error after --json is an object too"
run "$BERTH" exec --json -- true
is "$(jq -r .schema_version <<<"$stdout")" 1 "exec --json carries schema_version"
run "$BERTH" exec -e sv -- true
for cmd in "ls --json" "backends --json" "doctor -b local --json" "plugins list --json"; do
  run "$BERTH" $cmd
  # a build without modules (--disable-modules) and no plugin lists none
  nonempty='length > 0 and'
  [ "$cmd" = "plugins list --json" ] && nonempty=
  check "$cmd: every element carries schema_version 1" bash -c "jq -se 'length == 1 and (.[0] | type == \"array\" and $nonempty all(.[]; .schema_version == 1))' '$TEST_TMP/out' >/dev/null"
done
"$BERTH" rm sv >/dev/null 2>&1
run "$BERTH" bench -n 1 --json
is "$(jq -r .schema_version <<<"$stdout")" 1 "bench --json carries schema_version"
run "$BERTH" version --json
is "$(jq -r '(.schema_version|tostring) + " " + (.version | type)' <<<"$stdout")" "1 string" "version --json: {schema_version, version}"
run "$BERTH" exec --json -b nosuchbackend -- true
is "$(jq -r '[.schema_version, .error.code] | map(tostring) | join(" ")' <<<"$stdout")" "1 5001" "exec --json: an unknown backend is BERTH_E_NO_PROVIDER in the object"
# --- cp: the command's own rules (tests/contract/contract.sh copies files
# and trees on every backend) ---
CPW=$TEST_TMP/cpw
mkdir -p "$CPW/into" "$TEST_TMP/cpsrc/d" && printf x >"$CPW/plain" && printf hello >"$TEST_TMP/cpsrc/f-$$"
"$BERTH" exec -b local -e "cp$$" -C "$CPW" -- true
run "$BERTH" cp "$TEST_TMP/cpsrc/f-$$" "cp$$:"
is "$rc:$(cat "$CPW/f-$$" 2>&1)" "0:hello" "cp FILE NAME: copies into the environment's cwd"
check "… not to /" test ! -e "/f-$$"
rm -f "/f-$$"
run "$BERTH" cp "$TEST_TMP/cpsrc/f-$$" "cp$$:into"
is "$rc:$(cat "$CPW/into/f-$$" 2>&1)" "0:hello" "cp FILE NAME:DIR, an existing directory there: into it"
run "$BERTH" cp "$TEST_TMP/cpsrc" "cp$$:plain"
is "$rc:$stderr" "125:berth: cp: cannot copy the directory $TEST_TMP/cpsrc over plain, which is not a directory" "cp DIR NAME:FILE is refused"
run "$BERTH" cp "cp$$:into" "$CPW/plain"
is "$rc:$stderr" "125:berth: cp: cannot copy the directory into over $CPW/plain, which is not a directory" "cp NAME:DIR FILE is refused"
run "$BERTH" cp "cp$$:." "$TEST_TMP/cwdcopy"
is "$rc:$(cat "$TEST_TMP/cwdcopy/into/f-$$" 2>&1)" "0:hello" "cp NAME:. DEST copies the environment's cwd"
run "$BERTH" cp "$TEST_TMP/cpsrc" "$TEST_TMP/x"
is "$rc:$stderr" "125:berth: cp: one of $TEST_TMP/cpsrc and $TEST_TMP/x must be NAME:PATH, an environment's file" "cp without NAME: is refused"
"$BERTH" rm "cp$$" >/dev/null

# --- BERTH_DEBUG (issue 11.17): one line per step, by area, secrets elided ---
run env BERTH_DEBUG=all "$BERTH" exec -b local -- true
is "$rc" 0 "BERTH_DEBUG=all: exec still exits 0"
like "$stderr" "*berth: config: debug: *config.yaml*" "BERTH_DEBUG=all logs the config files merged (or not present)"
like "$stderr" "*berth: local: debug: spawn*bash*" "… each spawned argv, in its backend's area"
like "$stderr" "*berth: session: debug: *exit 0*" "… and the session's steps (the exit record)"
run env BERTH_DEBUG=docker "$BERTH" exec -b local -- true
is "$rc:$stderr" "0:" "BERTH_DEBUG=docker on a local exec prints nothing"
run env BERTH_DEBUG=nosucharea "$BERTH" exec -b local -- true
is "$rc:$stderr" "0:" "an unknown BERTH_DEBUG area is ignored"
run env BERTH_DEBUG=session,config "$BERTH" exec -b local -- true
like "$stderr" "*berth: config: debug:*berth: session: debug:*" "BERTH_DEBUG=session,config: those areas"
check "… and no other" bash -c "! grep -v -e '^berth: session: debug:' -e '^berth: config: debug:' '$TEST_TMP/err'"
cat >"$TEST_TMP/secret.yaml" <<'YAML'
terminal:
  env_passthrough: [MY_API_KEY]
  docker_env:
    DB_SECRET_X: dockersecret-456
YAML
run env BERTH_DEBUG=all MY_API_KEY=supersecret-123 "$BERTH" --config "$TEST_TMP/secret.yaml" exec -b local -- 'echo "$MY_API_KEY"'
is "$stdout" "supersecret-123" "an allow-listed secret reaches the command"
like "$stderr" "*debug: spawn*" "with its argv logged"
check "… but never its debug output" bash -c "! grep -q supersecret-123 '$TEST_TMP/err'"
# words that carry the secrets themselves: the argv line shows them elided
run env BERTH_DEBUG=all MY_API_KEY=supersecret-123 "$BERTH" --config "$TEST_TMP/secret.yaml" exec-stream -b local -- echo supersecret-123 dockersecret-456 TOKEN_X=abc MY_TOKEN=plain-789
like "$stderr" "*local: debug: spawn*'echo' '<elided>' '<elided>'*'MY_TOKEN=<elided>'*" "exec-stream's argv line has the secret values elided"
check "… neither the passthrough, the docker_env nor a credential NAME=VALUE secret is in it" \
  bash -c "! grep -q -e supersecret-123 -e dockersecret-456 -e plain-789 '$TEST_TMP/err'"
# --- berth ps without -e: every environment's processes, the name first ---
"$BERTH" exec -b local -e psa -- true >/dev/null
"$BERTH" exec -b local -e psb -- true >/dev/null
pa=$("$BERTH" start -e psa -- "sleep 30")
pb=$("$BERTH" start -e psb -- 'exit 4')
sleep 0.5
run "$BERTH" ps --json
is "$rc" 0 "ps without -e exits 0"
is "$(jq -r --arg a "$pa" --arg b "$pb" '[.[] | select(.id == $a or .id == $b) | "\(.env) \(.state)"] | sort | join(",")' <<<"$stdout")" "psa running,psb exited" \
  "ps --json without -e lists the processes of every environment, with its env"
run "$BERTH" ps
like "$stdout" "ENV*ID*STATE*COMMAND*" "ps without -e: a header with the environment column"
check "… a row per process, the environment first" bash -c "grep -q '^psa  *$pa  *running  *sleep 30' '$TEST_TMP/out' && grep -q '^psb  *$pb  *exited 4' '$TEST_TMP/out'"
run "$BERTH" ps -e psa --json
is "$(jq -r '.[0].env' <<<"$stdout")" psa "ps -e NAME --json: the env field too"
"$BERTH" stop -e psa "$pa" >/dev/null
"$BERTH" rm psa >/dev/null
"$BERTH" rm psb >/dev/null
done_testing
