#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The docker backend against a real engine: probe states with their fixes,
# execute through the API, the container's security settings (inspect),
# forwarded secrets never in inspect nor in any argv, a timeout that leaves
# no process in the container, exec_prefix round trips (docker CLI and the
# berth bridge).
. "$(dirname "$0")/docker-lib.sh"

# ---- probe
b backends --json > "$TDIR/backends.json" 2>"$TDIR/err"
check "probe: docker is ready" [ "$(jq -r '.[] | select(.name=="docker") | .status' "$TDIR/backends.json" 2>/dev/null)" = ready ] \
  || { diag "$(cat "$TDIR/backends.json" "$TDIR/err")"; }
probe_reason () { jq -r '.[] | select(.name=="docker") | .status + " " + (.reason // "")' "$1"; }
DOCKER_HOST=unix://$TDIR/nope.sock b backends --json > "$TDIR/b.json" 2>/dev/null
r=$(probe_reason "$TDIR/b.json")
check "probe: a missing socket says so and how to fix it" eval '[[ "$r" == unavailable*"does not exist"*"systemctl start docker"* ]]'
[[ "$r" == unavailable*"does not exist"* ]] || diag "$r"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -n "$(find /var/run/docker.sock -perm -o=r 2>/dev/null)" ] ; then
  ok "# SKIP probe as nobody: the socket is world-accessible"
elif [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 0755 "$TDIR"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp XDG_STATE_HOME=/tmp XDG_RUNTIME_DIR=/tmp XDG_CONFIG_HOME=/tmp \
    "$BERTH" backends --json > "$TDIR/b.json" 2>/dev/null
  r=$(probe_reason "$TDIR/b.json")
  check "probe: permission denied names the docker group" eval '[[ "$r" == needs_setup*"permission denied"*"docker group"* ]]'
  [[ "$r" == needs_setup*"permission denied"* ]] || diag "$r"
else
  ok "# SKIP probe as nobody needs root"
fi
DOCKER_HOST=tcp://127.0.0.1:1 b backends --json > "$TDIR/b.json" 2>/dev/null
r=$(probe_reason "$TDIR/b.json")
check "probe: tcp:// with nothing listening is not ready, with a reason" eval '[[ "$r" != ready* && "$r" == *"127.0.0.1:1"* ]]'
b doctor -b docker > "$TDIR/doctor" 2>&1
check "doctor reports the engine and the API version" grep -q "API 1\." "$TDIR/doctor"

# ---- execute
out=$(b exec -- 'echo hello; echo oops >&2; pwd; id -u'); rc=$?
check "exec: output merged, cwd /root, root, rc 0" [ "$rc" = 0 -a "$out" = $'hello\noops\n/root\n0' ]
[ "$out" = $'hello\noops\n/root\n0' ] || diag "rc=$rc out=$out"
b exec -- 'exit 42'; rc=$?
check "exec: exit status passes (42)" [ "$rc" = 42 ]
out=$(printf 'a\nb\nc\n' | b exec --stdin - -- 'wc -l'); rc=$?
check "exec: stdin is fed and closed" [ "$rc" = 0 -a "$(echo $out)" = 3 ]
out=$(b exec -- 'seq 1 20000 | tail -n 1; head -c 3000000 /dev/zero | wc -c')
check "exec: large output passes" [ "$out" = $'20000\n3000000' ]
b exec --json -- 'nosuchcommand' > "$TDIR/r.json" 2>/dev/null
check "exec: unknown command is 127" [ "$(json_field "$TDIR/r.json" exit_code)" = 127 ]
check "exec: the result names the backend" [ "$(json_field "$TDIR/r.json" backend)" = docker ]

# ---- the container's settings, through the engine's inspect
export BERTH_TEST_SECRET_TOKEN="s3cr3t-$$-value"
write_config "$TDIR/sec.yaml" "docker_network: false" "docker_env: {FOO: bar-literal}" \
  "docker_forward_env: [BERTH_TEST_SECRET_TOKEN]"
bs () { "$BERTH" --config "$TDIR/sec.yaml" "$@"; }
out=$(bs exec -e "$P-sec" -- 'echo "$FOO/$BERTH_TEST_SECRET_TOKEN"; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status; ls /sys/class/net'); rc=$?
check "forwarded and literal env reach the command" [ "$rc" = 0 ] && [[ "$out" == "bar-literal/$BERTH_TEST_SECRET_TOKEN"* ]]
check "capabilities: exactly CHOWN DAC_OVERRIDE FOWNER SETGID SETUID (cb)" eval '[[ "$out" == *"CapEff:"*"00000000000000cb"* ]]'
check "no-new-privileges in effect" eval '[[ "$out" == *"NoNewPrivs:"*1* ]]'
check "docker_network false: only lo" eval '[[ "$(echo "$out" | tail -n 1)" == lo ]]'
[ "$rc" = 0 ] || diag "$out"
cid=$(env_containers "$P-sec")
docker inspect "$cid" > "$TDIR/inspect.json"
ins () { jq -r ".[0].$1" "$TDIR/inspect.json"; }
check "inspect: CapDrop ALL" [ "$(ins 'HostConfig.CapDrop | join(",")')" = ALL ]
check "inspect: CapAdd the five" [ "$(ins 'HostConfig.CapAdd | sort | join(",")')" = "CHOWN,DAC_OVERRIDE,FOWNER,SETGID,SETUID" ]
check "inspect: no-new-privileges" [ "$(ins 'HostConfig.SecurityOpt | join(",")')" = no-new-privileges ]
check "inspect: NetworkMode none" [ "$(ins HostConfig.NetworkMode)" = none ]
check "inspect: Init, PidsLimit 256" [ "$(ins HostConfig.Init)/$(ins HostConfig.PidsLimit)" = true/256 ]
check "inspect: tmpfs /tmp /var/tmp /run" [ "$(ins 'HostConfig.Tmpfs | keys | join(",")')" = "/run,/tmp,/var/tmp" ]
check "inspect: memory 512 MiB, 1 CPU, shm 1 GiB" [ "$(ins HostConfig.Memory)/$(ins HostConfig.NanoCpus)/$(ins HostConfig.ShmSize)" = "536870912/1000000000/1073741824" ]
check "inspect: labels berth=1 and the environment name" [ "$(ins 'Config.Labels.berth')/$(ins 'Config.Labels["berth.env"]')" = "1/$P-sec" ]
check "inspect: the command is sleep infinity under init" [ "$(ins 'Config.Cmd | join(" ")')" = "sleep infinity" ]
check "inspect: the literal docker_env is on the container" grep -q 'FOO=bar-literal' "$TDIR/inspect.json"
printf '%s\n' "$BERTH_TEST_SECRET_TOKEN" > "$TDIR/secret.pat"
check "inspect: the forwarded secret is not" eval '! grep -qF -f "$TDIR/secret.pat" "$TDIR/inspect.json"'
# While a command runs, no argv on the host or in the container holds it.
bs exec -e "$P-sec" -- 'sleep 3; echo done' > "$TDIR/bg.out" 2>&1 &
bgpid=$!
sleep 1.5
leaks=$(grep -lasF -f "$TDIR/secret.pat" /proc/[0-9]*/cmdline | wc -l)
inner=$(docker exec "$cid" sh -c 'cat /proc/[0-9]*/cmdline | tr "\0" " "')
wait $bgpid
check "no host process has the secret in its argv" [ "$leaks" = 0 ]
check "no container process has the secret in its argv" eval '[[ "$inner" != *"$BERTH_TEST_SECRET_TOKEN"* && "$inner" == *"sleep 3"* ]]'
check "the background command finished" grep -q done "$TDIR/bg.out"

# ---- timeouts kill the tree inside the container
start=$(date +%s%N)
b exec -e "$P-to" -t 2 --json -- 'sleep 101 & (setsid sleep 102 &); sleep 103' > "$TDIR/to.json" 2>"$TDIR/err"; rc=$?
el=$(( ($(date +%s%N) - start) / 1000000 ))
check "timeout: exit 124, timed_out" [ "$rc" = 124 -a "$(json_field "$TDIR/to.json" timed_out)" = true ]
check "timeout: returns promptly (${el} ms)" [ "$el" -lt 9000 ]
cid=$(env_containers "$P-to")
sleep 0.5
top=$(docker top "$cid" -o pid,args 2>&1)
check "timeout: no process of the command is left in the container" eval '! grep -qE "sleep 10[123]" <<<"$top"'
grep -qE "sleep 10[123]" <<<"$top" && diag "$top"
out=$(b exec -e "$P-to" -- 'echo next'); rc=$?
check "timeout: the next command runs" [ "$rc" = 0 -a "$out" = next ]
out=$(b exec -e "$P-to" -t 3 -- 'sleep 100 >/dev/null 2>&1 & echo started'); rc=$?
check "a background child holding no pipe does not block" [ "$rc" = 0 -a "$out" = started ]

# ---- exec_prefix: the docker CLI form (of an environment that exists)
b exec -e "$P-px" -- true >/dev/null 2>&1
line=$(b exec-prefix -e "$P-px" 2>"$TDIR/err"); rc=$?
check "exec-prefix prints an argv" [ "$rc" = 0 -a -n "$line" ]
[ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
eval "prefix=($line)"
check "with the docker CLI on PATH it is docker -H <engine> exec -i <id>" [ "$(basename "${prefix[0]}")" = docker -a "${prefix[1]}" = -H -a "${prefix[3]}" = exec -a "${prefix[4]}" = -i ]
roundtrip () { # PREFIX...: run the tricky script through it
  local script=$'printf "<%s>\\n" "$@"; echo "it\'s \\"q\\" $((6*7)) \\$HOME"\necho ünï€😀\nprintf "no newline at end"'
  "$@" bash -c "$script" arg0 "a b" "it's" '$(touch /tmp/pwned)' $'l1\nl2' -n '' >"$TDIR/out" 2>"$TDIR/err"
}
expect=$(printf '<a b>\n<it'"'"'s>\n<$(touch /tmp/pwned)>\n<l1\nl2>\n<-n>\n<>\nit'"'"'s "q" 42 $HOME\nünï€😀\nno newline at end')
roundtrip "${prefix[@]}"; rc=$?
check "docker exec prefix round-trips quotes, \$, newlines, UTF-8" [ "$rc" = 0 ] && [ "$(cat "$TDIR/out")" = "$expect" ]
[ "$(cat "$TDIR/out")" = "$expect" ] || diag "got: $(cat "$TDIR/out") err: $(cat "$TDIR/err")"
"${prefix[@]}" sh -c 'echo out; echo err >&2; exit 3' >"$TDIR/out" 2>"$TDIR/err"; rc=$?
check "stdout and stderr stay separate, exit status passes" [ "$rc" = 3 -a "$(cat "$TDIR/out")" = out -a "$(cat "$TDIR/err")" = err ]
cat_roundtrip () { # PREFIX...
  coproc CAT { "$@" cat; }
  echo "first line" >&"${CAT[1]}"
  read -r -t 15 l1 <&"${CAT[0]}"
  echo "second ü" >&"${CAT[1]}"
  read -r -t 15 l2 <&"${CAT[0]}"
  exec {CAT[1]}>&-
  wait "$CAT_PID"; local rc=$?
  [ "$l1" = "first line" -a "$l2" = "second ü" -a "$rc" = 0 ]
}
check "a long-lived cat echoes stdin line by line (docker CLI)" cat_roundtrip "${prefix[@]}"
line=$(b exec-prefix -e "$P-px" --user user 2>"$TDIR/err")
eval "uprefix=($line)"
check "exec-prefix --user runs as that user" [ "$("${uprefix[@]}" id -u 2>&1)" = 1000 ]

# ---- exec_prefix without the docker CLI: the berth bridge over the API
mkdir -p "$TDIR/bin"
for t in bash env sh; do ln -sf "$(command -v $t)" "$TDIR/bin/$t"; done
line=$(PATH=$TDIR/bin b exec-prefix -e "$P-px" 2>"$TDIR/err"); rc=$?
eval "bprefix=($line)"
check "without the docker CLI it is berth exec-stream -e NAME --" [ "$rc" = 0 -a "${bprefix[1]}" = exec-stream -a "${bprefix[-1]}" = -- ]
[ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
roundtrip "${bprefix[@]}"; rc=$?
check "berth bridge round-trips quotes, \$, newlines, UTF-8" [ "$rc" = 0 ] && [ "$(cat "$TDIR/out")" = "$expect" ]
[ "$(cat "$TDIR/out")" = "$expect" ] || diag "rc=$rc got: $(cat "$TDIR/out") err: $(cat "$TDIR/err")"
"${bprefix[@]}" sh -c 'echo out; echo err >&2; exit 3' >"$TDIR/out" 2>"$TDIR/err"; rc=$?
check "bridge: stdout and stderr separate, exit status passes" [ "$rc" = 3 -a "$(cat "$TDIR/out")" = out -a "$(cat "$TDIR/err")" = err ]
check "a long-lived cat echoes stdin line by line (berth bridge)" cat_roundtrip "${bprefix[@]}"
head -c 3000000 /dev/urandom > "$TDIR/big"
sum_in=$("${bprefix[@]}" sha256sum < "$TDIR/big" | cut -d' ' -f1)
check "bridge: 3 MB of binary stdin arrive intact" [ "$sum_in" = "$(sha256sum < "$TDIR/big" | cut -d' ' -f1)" ]
check "nothing was executed on the way" [ ! -e /tmp/pwned ]

# ---- throw-away environments leave nothing
tid=$(json_field "$TDIR/r.json" env)
# (the removal may finish in the engine just after berth returned)
for _ in $(seq 1 50); do [ -z "$(env_containers "$tid")" ] && break; sleep 0.1; done
check "the throw-away environment's container is gone ($tid)" [ -n "$tid" ] && [ -z "$(env_containers "$tid")" ]

# ---- DOCKER_HOST=tcp:// with TLS (the listener of setup/docker.sh)
TLS=${BERTH_TEST_STATE:-/var/lib/berth-test}/tls
if [ -f "$TLS/client/cert.pem" ] && curl -fsS --cacert "$TLS/ca.pem" --cert "$TLS/client/cert.pem" --key "$TLS/client/key.pem" \
     https://127.0.0.1:2376/_ping >/dev/null 2>&1; then
  tlsb () { DOCKER_HOST=tcp://127.0.0.1:2376 DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$TLS/client b "$@"; }
  out=$(tlsb exec -- 'echo over-tls; cat' <<<"stdin via tls" 2>"$TDIR/err"); rc=$?
  check "tcp:// + TLS: a command runs" [ "$rc" = 0 ] && [[ "$out" == over-tls* ]]
  [ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
  out=$(printf 'a\nb\n' | tlsb exec --stdin - -- 'wc -l' 2>"$TDIR/err"); rc=$?
  check "tcp:// + TLS: stdin is fed and half-closed" [ "$rc" = 0 -a "$(echo $out)" = 2 ]
  [ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
  out=$(tlsb exec -e "$P-tls" -t 2 -- 'sleep 30' 2>&1); rc=$?
  check "tcp:// + TLS: a timeout still kills (124)" [ "$rc" = 124 ]
  mkdir -p "$TDIR/badca"
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=other -keyout "$TDIR/badca/key.pem" -out "$TDIR/badca/ca.pem" 2>/dev/null
  cp "$TLS/client/cert.pem" "$TDIR/badca/cert.pem"; cp "$TLS/client/key.pem" "$TDIR/badca/key.pem"
  out=$(DOCKER_HOST=tcp://127.0.0.1:2376 DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$TDIR/badca b exec -- true 2>&1); rc=$?
  check "tcp:// + TLS: an unknown server certificate is refused with a TLS hint" eval '[ "$rc" = 125 ] && [[ "$out" == *TLS*DOCKER_CERT_PATH* ]]'
  diag "$out"
  out=$(DOCKER_HOST=tcp://127.0.0.1:2376 DOCKER_TLS_VERIFY=1 DOCKER_CERT_PATH=$TDIR/nothing b exec -- true 2>&1); rc=$?
  check "tcp:// + TLS: missing certificates say where to put them" eval '[ "$rc" = 125 ] && [[ "$out" == *ca.pem* ]]'
else
  if must_work; then not_ok "no TLS listener on 127.0.0.1:2376 (tests/integration/setup/docker.sh starts dockerd with one)"
  else ok "# SKIP no TLS listener on 127.0.0.1:2376"; fi
fi

# --- BERTH_DEBUG (issue 11.17): each request with its status; secrets never logged ---
write_config "$TDIR/debug.yaml" "env_passthrough: [MY_API_KEY]" "docker_env:" "  DB_SECRET_X: dockersecret-456"
err=$(BERTH_DEBUG=all MY_API_KEY=supersecret-123 "$BERTH" --config "$TDIR/debug.yaml" exec -- 'echo "$MY_API_KEY $DB_SECRET_X"' 2>&1 >"$TDIR/debug.out")
like "$err" "*berth: docker: debug: HTTP POST /*/exec*: 201 in *" "BERTH_DEBUG=all logs each Engine API request with its status"
like "$err" "*berth: session: debug: *exit 0*" "… and the session's exit record"
is "$(cat "$TDIR/debug.out")" "supersecret-123 dockersecret-456" "the passthrough and docker_env secrets reach the command"
check "… but not the debug output" bash -c '! grep -q -e supersecret-123 -e dockersecret-456 <<<"$1"' _ "$err"
err=$(BERTH_DEBUG=docker "$BERTH" --config "$TDIR/debug.yaml" exec -- true 2>&1 >/dev/null)
check "BERTH_DEBUG=docker: only docker lines" bash -c '[ -n "$1" ] && ! grep -v "^berth: docker: debug: " <<<"$1"' _ "$err"

done_testing
