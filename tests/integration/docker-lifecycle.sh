#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The docker backend's environment lifecycle against a real engine: a named
# environment is found again by label from another process (one container),
# restarted when stopped and recreated when gone (environment_recreated),
# removed by `berth rm`; `berth gc` removes exited leftovers; the engine
# going away mid-session is a clear error and berth recovers when it is
# back; images are pulled from a registry, and pull failures are one clear
# line.
. "$(dirname "$0")/docker-lib.sh"

E=$P-life
# ---- reuse across processes
b exec -e "$E" -- 'echo kept > /root/marker; export FOO=exported; cd /var' >/dev/null; rc=$?
check "named environment: first command" [ "$rc" = 0 ]
id1=$(env_containers "$E")
b exec -e "$E" --json -- 'cat /root/marker; echo "$FOO"; pwd' > "$TDIR/r.json"
check "a second berth process finds the same container" [ "$(env_containers "$E")" = "$id1" -a "$(env_containers "$E" | wc -l)" = 1 ]
check "files, exported variables and cwd persist" [ "$(json_field "$TDIR/r.json" output)" = $'kept\nexported\n/var' ]
check "not reported as recreated" [ "$(json_field "$TDIR/r.json" environment_recreated)" = false ]
check "labels: berth=1, berth.env, berth.persistent=1" \
  [ "$(docker inspect -f '{{index .Config.Labels "berth"}}/{{index .Config.Labels "berth.env"}}/{{index .Config.Labels "berth.persistent"}}' "$id1")" = "1/$E/1" ]
# two processes at once on a fresh name: still one container
E2=$P-race
b exec -e "$E2" -- true & b exec -e "$E2" -- true & wait
check "two processes creating the same environment make one container" [ "$(env_containers "$E2" | wc -l)" = 1 ]

# ---- stopped: restarted (same container, files kept)
docker kill "$id1" >/dev/null
b exec -e "$E" --json -- 'cat /root/marker' > "$TDIR/r.json" 2>"$TDIR/err"; rc=$?
check "a stopped container is started again" [ "$rc" = 0 -a "$(json_field "$TDIR/r.json" output)" = kept ]
check "... same container" [ "$(env_containers "$E")" = "$id1" ]
check "... reported as environment_recreated" [ "$(json_field "$TDIR/r.json" environment_recreated)" = true ]
[ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"

# ---- killed mid-session (one berth process, two commands) and gone: recreated
docker rm -f "$id1" >/dev/null
b exec -e "$E" --json -- 'cat /root/marker 2>/dev/null || echo fresh' > "$TDIR/r.json" 2>"$TDIR/err"; rc=$?
id2=$(env_containers "$E")
check "a removed container is recreated" [ "$rc" = 0 -a -n "$id2" -a "$id2" != "$id1" ]
check "... with a fresh filesystem, reported as environment_recreated" \
  [ "$(json_field "$TDIR/r.json" output)/$(json_field "$TDIR/r.json" environment_recreated)" = "fresh/true" ]
[ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
out=$(b exec -e "$E" --json -- 'echo again' | jq -r '(.output|rtrimstr("\n")) + "/" + (.environment_recreated|tostring)')
check "the next command is not reported as recreated" [ "$out" = "again/false" ]
# In one process: the container disappears between two commands (the
# bench runs many commands in one environment).
b bench -e "$E" -n 1 >/dev/null 2>&1
check "bench works on the environment" [ $? = 0 ]

# ---- the engine goes away mid-session and comes back
ln -s /var/run/docker.sock "$TDIR/docker.sock"
export DOCKER_HOST=unix://$TDIR/docker.sock
mkfifo "$TDIR/in" "$TDIR/out"
b exec-stream -b docker -e "$E" -- bash -c 'read a; echo "got $a"; read b; echo "got $b"' <"$TDIR/in" >"$TDIR/out" 2>&1 &
lpid=$!
exec {lin}>"$TDIR/in" {lout}<"$TDIR/out"
echo one >&$lin
read -r -t 20 l1 <&$lout
rm "$TDIR/docker.sock"
# (another environment: a stream holds its environment's lock)
out=$(timeout 60 "$BERTH" --config "$CFG" exec -e "$E-2" -- 'echo hi' 2>&1); rc=$?
check "engine unreachable: exit 125" [ "$rc" = 125 ]
check "engine unreachable: one line that says what to do" eval '[ "$(printf "%s\n" "$out" | wc -l)" = 1 ] && [[ "$out" == *"does not exist"*"start"* ]]'
diag "$out"
ln -s /var/run/docker.sock "$TDIR/docker.sock"
echo two >&$lin
exec {lin}>&-
read -r -t 20 l2 <&$lout
exec {lout}<&-
wait "$lpid"; rc=$?
check "a stream that was open (exec-stream) keeps working" [ "$l1" = "got one" -a "$l2" = "got two" -a "$rc" = 0 ]
[ "$l1/$l2/$rc" = "got one/got two/0" ] || diag "l1=$l1 l2=$l2 rc=$rc"
out=$(b exec -e "$E" -- 'echo back'); rc=$?
check "berth recovers when the engine is back" [ "$rc" = 0 -a "$out" = back ]
unset DOCKER_HOST

# ---- berth rm
b rm "$E"; rc=$?
check "berth rm removes the container" [ "$rc" = 0 -a -z "$(env_containers "$E")" ]
b rm "$E2" >/dev/null 2>&1

# ---- gc: exited berth containers older than the lifetime
TA=(--label berth=1 --label berth.persistent=0 --label "berth.uid=$(id -u)")
gcid=$(docker create "${TA[@]}" --label "berth.env=$P-gc" berth-test:latest true)
docker start "$gcid" >/dev/null; docker wait "$gcid" >/dev/null
keep=$(docker run -d "${TA[@]}" --label "berth.env=$P-gcrun" berth-test:latest sleep 60)
# A user's stopped named environment, and another user's leftover: not ours to reap.
named=$(docker create --label berth=1 --label berth.persistent=1 --label "berth.uid=$(id -u)" --label "berth.env=$P-gcnamed" berth-test:latest true)
other=$(docker create --label berth=1 --label berth.persistent=0 --label "berth.uid=4242" --label "berth.env=$P-gcother" berth-test:latest true)
for x in "$named" "$other"; do docker start "$x" >/dev/null; docker wait "$x" >/dev/null; done
write_config "$TDIR/gc.yaml" "lifetime_seconds: 1"
sleep 2
"$BERTH" --config "$TDIR/gc.yaml" gc > "$TDIR/gc.out" 2>&1; rc=$?
check "gc removes an exited berth container older than the lifetime" [ "$rc" = 0 -a -z "$(env_containers "$P-gc")" ]
check "gc leaves running ones" [ -n "$(env_containers "$P-gcrun")" ]
check "gc leaves a stopped named environment's container (only berth rm removes it)" [ -n "$(env_containers "$P-gcnamed")" ]
check "gc leaves another user's containers" [ -n "$(docker ps -aq --filter "label=berth.env=$P-gcother")" ]
docker rm -f "$keep" "$named" "$other" >/dev/null
gcid=$(docker create "${TA[@]}" --label "berth.env=$P-gc2" berth-test:latest true)
docker start "$gcid" >/dev/null; docker wait "$gcid" >/dev/null
write_config "$TDIR/gc.yaml" "lifetime_seconds: 3600"
"$BERTH" --config "$TDIR/gc.yaml" gc >/dev/null 2>&1
check "gc keeps exited ones younger than the lifetime" [ -n "$(env_containers "$P-gc2")" ]

# ---- settings that need a new container: refused, never silent (issue 11 item 12)
ES=$P-set
b exec -e "$ES" -- 'echo precious > /root/data' >/dev/null
ids=$(env_containers "$ES")
write_config "$TDIR/mem.yaml" "docker_pids_limit: 100"
out=$("$BERTH" --config "$TDIR/mem.yaml" exec -e "$ES" -- 'cat /root/data' 2>&1); rc=$?
check "a changed docker_pids_limit is refused (125) naming the key and berth rm" \
  eval '[ "$rc" = 125 ] && [[ "$out" == *"terminal.docker_pids_limit: 256 -> 100"* && "$out" == *"berth rm $ES"* ]]'
diag "$out"
write_config "$TDIR/net.yaml" "docker_network: false"
out=$("$BERTH" --config "$TDIR/net.yaml" exec -e "$ES" -- 'cat /root/data' 2>&1); rc=$?
check "a changed docker_network is refused, not applied by destroying the container" \
  eval '[ "$rc" = 125 ] && [[ "$out" == *"terminal.docker_network: true -> false"* ]]'
out=$(b exec -e "$ES" --image 127.0.0.1:5000/berth-test:latest -- 'cat /root/data' 2>&1); rc=$?
check "--image on an existing environment is refused" eval '[ "$rc" = 125 ] && [[ "$out" == *"terminal.docker_image: berth-test:latest -> "* ]]'
out=$(b exec -e "$ES" -- 'cat /root/data' 2>&1)
check "the environment is untouched: same container, its files, its image" \
  [ "$out" = precious -a "$(env_containers "$ES")" = "$ids" ]
b rm "$ES" >/dev/null 2>&1
out=$("$BERTH" --config "$TDIR/mem.yaml" exec -e "$ES" -- 'cat /root/data 2>/dev/null || echo fresh' 2>&1)
check "after berth rm the new setting applies" [ "$out" = fresh ]
b rm "$ES" >/dev/null 2>&1

# ---- images: pulled from the registry when missing
REG=127.0.0.1:5000
if curl -fsS "http://$REG/v2/" >/dev/null 2>&1; then
  docker rmi "$REG/berth-test:latest" >/dev/null 2>&1
  write_config "$TDIR/pull.yaml" "docker_image: $REG/berth-test:latest"
  out=$("$BERTH" --config "$TDIR/pull.yaml" exec -- 'echo pulled' 2>"$TDIR/err"); rc=$?
  check "a missing image is pulled through the API" [ "$rc" = 0 -a "$out" = pulled ]
  [ "$rc" = 0 ] || diag "$(cat "$TDIR/err")"
  check "... and is present afterwards" eval 'docker image inspect "$REG/berth-test:latest" >/dev/null'
  out=$(b exec --image "$REG/berth-test" -- 'echo tagless' 2>"$TDIR/err"); rc=$?
  check "--image without a tag pulls/uses :latest" [ "$rc" = 0 -a "$out" = tagless ]
  docker rmi "$REG/berth-test:latest" >/dev/null 2>&1
  write_config "$TDIR/pull.yaml" "docker_image: $REG/no-such-image:latest"
  out=$("$BERTH" --config "$TDIR/pull.yaml" exec -- true 2>&1 >/dev/null | grep -v ': info: '); rc=${PIPESTATUS[0]}
  check "no such image: exit 125, one clear line" eval '[ "$(printf "%s\n" "$out" | wc -l)" = 1 ] && [[ "$out" == *"no such image $REG/no-such-image:latest"* ]]'
  diag "$out"
else
  must_work && not_ok "no registry on $REG (tests/integration/setup/docker.sh starts it)" || ok "# SKIP no registry on $REG"
fi
write_config "$TDIR/pull.yaml" "docker_image: 127.0.0.1:5999/berth-test:latest"
out=$("$BERTH" --config "$TDIR/pull.yaml" exec -- true 2>&1 >/dev/null | grep -v ': info: ')
check "registry unreachable: one clear line" eval '[ "$(printf "%s\n" "$out" | wc -l)" = 1 ] && [[ "$out" == *"registry is unreachable"* ]]'
diag "$out"
write_config "$TDIR/pull.yaml" "docker_image: 'bad image name'"
out=$("$BERTH" --config "$TDIR/pull.yaml" exec -- true 2>&1); rc=$?
check "an invalid image reference is a configuration error (125)" eval '[ "$rc" = 125 ] && [[ "$out" == *"invalid image reference"* ]]'

# ---- a background process whose container is killed under it: lost, not an exit
EP=$P-proclost
b exec -e "$EP" -- true >/dev/null
pid=$("$BERTH" --config "$CFG" start -e "$EP" -- 'sleep 300')
docker kill "$(env_containers "$EP")" >/dev/null
st=$("$BERTH" --config "$CFG" ps -e "$EP" --json 2>"$TDIR/err" | jq -r --arg id "$pid" '.[] | select(.id == $id) | "\(.state) \(.exit_code)"')
check "a process whose container was killed is lost, not an exit code ($st)" [ "$st" = "lost null" ]
"$BERTH" --config "$CFG" logs -e "$EP" "$pid" >/dev/null 2>"$TDIR/err"
like "$?:$(cat "$TDIR/err")" "125:berth: process $pid is lost*" "… logs says it is lost (its /tmp went with the container), no hang"
b rm "$EP" >/dev/null

done_testing
