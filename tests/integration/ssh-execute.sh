#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ssh backend's exec_prefix and streams against a real sshd: words
# arrive unchanged (quotes, $, newlines, UTF-8, leading dashes), stdout and
# stderr stay separate, stdin stays open for long-lived processes.
. "$(dirname "$0")/ssh-lib.sh"

b exec -e px -- true >/dev/null 2>&1
line=$(b exec-prefix -e px 2>"$TDIR/err"); rc=$?
check "exec-prefix prints an argv" [ "$rc" = 0 -a -n "$line" ]
[ "$rc" = 0 ] || diag "rc=$rc $(cat "$TDIR/err")"
eval "prefix=($line)"
check "the prefix starts with berth-ssh-exec" [ "$(basename "${prefix[0]}")" = berth-ssh-exec ]

# the helper alone: ssh's argv kept, the words quoted into one argument
out=$("${prefix[0]}" /bin/sh -c 'printf "[%s]" "$@"' x -o y -- a "b c" "it's" 2>&1); rc=$?
check "berth-ssh-exec passes ssh's argv and one quoted command" [ "$rc" = 0 -a "$out" = "[-o][y][--]['a' 'b c' 'it'\\''s']" ]
[ "$rc" = 0 ] || diag "rc=$rc out=$out"
"${prefix[0]}" /bin/true a b >/dev/null 2>"$TDIR/err"; rc=$?
check "berth-ssh-exec without -- is a usage error (255)" [ "$rc" = 255 ] && grep -q usage "$TDIR/err"

script=$'printf "<%s>\\n" "$@"; echo "it\'s \\"q\\" $((6*7)) \\$HOME"\necho ünï€😀\nprintf "no newline at end"'
"${prefix[@]}" bash -c "$script" arg0 "a b" "it's" '$(touch /tmp/pwned)' $'l1\nl2' -n '' >"$TDIR/out" 2>"$TDIR/err"; rc=$?
expect=$(printf '<a b>\n<it'"'"'s>\n<$(touch /tmp/pwned)>\n<l1\nl2>\n<-n>\n<>\nit'"'"'s "q" 42 $HOME\nünï€😀\nno newline at end')
check "exec_prefix round-trips quotes, \$, newlines, UTF-8 and dashes" [ "$rc" = 0 ] && [ "$(cat "$TDIR/out")" = "$expect" ]
[ "$(cat "$TDIR/out")" = "$expect" ] || diag "got: $(cat "$TDIR/out") err: $(cat "$TDIR/err")"
check "... byte for byte (no newline added)" [ "$(tail -c 3 "$TDIR/out")" = end ]
check "... nothing was executed on the way" [ ! -e /tmp/pwned ] && ! "${prefix[@]}" test -e /tmp/pwned

"${prefix[@]}" sh -c 'echo out; echo err >&2; exit 3' >"$TDIR/out" 2>"$TDIR/err"; rc=$?
check "stdout and stderr stay separate, exit status passes" [ "$rc" = 3 -a "$(cat "$TDIR/out")" = out -a "$(cat "$TDIR/err")" = err ]

# a long-lived process keeps stdin open: a line in, the same line out
coproc CAT { "${prefix[@]}" cat; }
echo "first line" >&"${CAT[1]}"
read -r -t 10 l1 <&"${CAT[0]}"
echo "second ü" >&"${CAT[1]}"
read -r -t 10 l2 <&"${CAT[0]}"
exec {CAT[1]}>&-
wait "$CAT_PID"; rc=$?
check "a long-lived cat echoes stdin line by line, exits at EOF" [ "$l1" = "first line" -a "$l2" = "second ü" -a "$rc" = 0 ]

# a big stdin passes intact
head -c 3000000 /dev/urandom > "$TDIR/big"
"${prefix[@]}" sha256sum < "$TDIR/big" | cut -d' ' -f1 > "$TDIR/sum.remote"
sha256sum < "$TDIR/big" | cut -d' ' -f1 > "$TDIR/sum.local"
check "3 MB of binary stdin arrive intact" cmp -s "$TDIR/sum.remote" "$TDIR/sum.local"

# --no-interactive: stdin is not forwarded (ssh -n)
line=$(b exec-prefix -e px --no-interactive); eval "ni=($line)"
out=$(echo leaked | "${ni[@]}" cat); rc=$?
check "--no-interactive does not forward stdin" [ "$rc" = 0 -a -z "$out" ]

# exec-stream: words, not a shell string
out=$(echo "streamed" | b exec-stream -e px -- sh -c 'cat; printf "%s|" "$@"' x 'a b' '$HOME'); rc=$?
check "exec-stream runs words unchanged with stdin" [ "$rc" = 0 -a "$out" = "streamed
a b|\$HOME|" ]
[ "$rc" = 0 ] || diag "rc=$rc out=$out"

# the session layer over ssh: cwd and exports persist, markers never show
b exec -e px -- 'cd /tmp && export BERTH_T=persisted' >/dev/null
out=$(b exec -e px -- 'echo "$PWD $BERTH_T"'); rc=$?
check "cwd and exported variables persist in a named environment" [ "$rc" = 0 -a "$out" = "/tmp persisted" ]
out=$(b exec -e px -- 'cd ~ && pwd'); rc=$?
check "remote ~ is the remote home" [ "$rc" = 0 -a "$out" = "$BERTH_SSHD_HOME" ]
out=$(printf 'abc' | b exec -e px --stdin - -- 'cat; echo; echo "$((1+1))"'); rc=$?
check "stdin data reaches the command after the session script" [ "$rc" = 0 -a "$out" = "abc
2" ]

# a remote cwd that vanished falls back (with a note), never wedges
b exec -e px -- 'mkdir -p ~/gone && cd ~/gone' >/dev/null
b exec -e px -- 'rmdir ~/gone' >/dev/null
out=$(b exec -e px -- 'pwd' 2>&1); rc=$?
check "a vanished remote cwd falls back instead of wedging" [ "$rc" = 0 ] && printf '%s' "$out" | grep -q "^$BERTH_SSHD_HOME\$"
[ "$rc" = 0 ] || diag "rc=$rc out=$out"

# cleanup_stops_processes = false: a background job outlives its
# throw-away environment (and its master)
tag=berthbg$$
b exec -b ssh -- "nohup bash -c 'exec -a $tag sleep 600' >/dev/null 2>&1 &" >/dev/null; rc=$?
sleep 0.5
bgpid=$(remote_ps | awk -v t="$tag" '$2 == t {print $1}' | head -1)
check "a background job survives the cleanup of its environment" [ "$rc" = 0 -a -n "$bgpid" ]
[ -n "$bgpid" ] && kill "$bgpid"

# a bash login shell runs execute's script itself (one bash, not two);
# ssh_direct_bash: false, or another login shell, keeps `bash -c`
# (a bash that another bash exec'd has "_=/usr/bin/bash" in its initial
# environment; one started by sshd has no "_")
probe='tr "\0" "\n" < /proc/$$/environ | grep -c "^_=.*bash$"'
# (how ssh itself starts the script: the exec transport, not the agent)
out=$(BERTH_TRANSPORT=exec b exec -b ssh -- "$probe"); rc=$?
check "bash login shell: it runs the script itself (no second bash)" [ "$out" = 0 ]
write_config "$TDIR/nested.yaml" "ssh_direct_bash: false"
out=$(BERTH_TRANSPORT=exec "$BERTH" --config "$TDIR/nested.yaml" exec -b ssh -- "$probe"); rc=$?
check "ssh_direct_bash: false runs it in a nested bash -c" [ "$rc" = 0 -a "$out" = 1 ]
write_config "$TDIR/sh.yaml"
sed -i "s|ssh_user: .*|ssh_user: $BERTH_SSHD_SH_USER|" "$TDIR/sh.yaml"
out=$("$BERTH" --config "$TDIR/sh.yaml" exec -b ssh -- 'cd /tmp; export X=1; echo "${BASH_VERSION:+bash} $(getent passwd $(id -un) | cut -d: -f7)"' 2>"$TDIR/err"); rc=$?
check "a /bin/sh login shell still runs commands in bash" [ "$rc" = 0 -a "$out" = "bash /bin/sh" ]
[ "$rc" = 0 ] || diag "rc=$rc out=$out err=$(cat "$TDIR/err")"
"$BERTH" --config "$TDIR/sh.yaml" exec -e shp -- true >/dev/null 2>&1
line=$("$BERTH" --config "$TDIR/sh.yaml" exec-prefix -e shp); eval "shp=($line)"
"${shp[@]}" bash -c "$script" arg0 "a b" "it's" '$(touch /tmp/pwned)' $'l1\nl2' -n '' >"$TDIR/out" 2>"$TDIR/err"; rc=$?
check "... and exec_prefix round-trips words through it" [ "$rc" = 0 ] && [ "$(cat "$TDIR/out")" = "$expect" ]
"$BERTH" --config "$TDIR/sh.yaml" rm shp >/dev/null

b rm px >/dev/null
done_testing
