# singularity-lib.sh: the singularity backend's integration tests, run by
# singularity-double.sh (against the CLI test double in
# tests/doubles/apptainer) and singularity-real.sh (against a real
# apptainer).  TAP output; source it, call sing_setup MODE BIN, then
# sing_run_all.
#
# In both modes, `apptainer` on the test PATH is a small logging shim (the
# double logs itself) so every argv berth passed can be asserted.

SING_SRCDIR=${BERTH_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SING_BUILDDIR=${BERTH_BUILDDIR:-$PWD}
: "${BERTH:=$SING_BUILDDIR/berth}"
SING_DOUBLE=$SING_SRCDIR/tests/doubles/apptainer/apptainer

. "$SING_SRCDIR/tests/integration/libtest.sh"
# check NAME CMD...: as libtest's, with the last berth output as diagnostics.
check ()
{
  local name=$1; shift
  if "$@"; then ok "$name"; else not_ok "$name"; diag "command: $*" "rc=$rc" "--- out:" "$(head -c 2000 "$T/out" 2>/dev/null)" "--- err:" "$(head -c 2000 "$T/err" 2>/dev/null)"; fi
}

# b ARGS...: run berth, output in $T/out and $T/err, status in $rc.
b ()
{
  "$BERTH" "$@" > "$T/out" 2> "$T/err" < /dev/null
  rc=$?
}
out_has () { grep -q -- "$1" "$T/out"; }
err_has () { grep -q -- "$1" "$T/err"; }
log_has () { grep -q -E -- "$1" "$SING_LOG"; }
log_count () { grep -c -E -- "$1" "$SING_LOG"; }

# sing_setup MODE BIN: MODE is "double" or "real"; BIN the CLI to test.
sing_setup ()
{
  SING_MODE=$1
  SING_BIN=$2
  # The double's rootfs is shared by every run (ci-setup.sh builds it).
  : "${APPTAINER_DOUBLE_ROOTFS:=${XDG_CACHE_HOME:-$HOME/.cache}/apptainer-double/rootfs}"
  export APPTAINER_DOUBLE_ROOTFS
  T=$(mktemp -d "${TMPDIR:-/tmp}/berth-sing.XXXXXX")
  chmod 0755 "$T"
  trap sing_teardown EXIT
  mkdir -p "$T/bin" "$T/state" "$T/cache" "$T/config/berth" "$T/run" "$T/home"
  export XDG_STATE_HOME=$T/state XDG_CACHE_HOME=$T/cache XDG_CONFIG_HOME=$T/config XDG_RUNTIME_DIR=$T/run
  unset BERTH_CONFIG
  SING_LOG=$T/argv.log
  : > "$SING_LOG"
  if [ "$SING_MODE" = double ]; then
    export APPTAINER_DOUBLE_STATEDIR=$T/double APPTAINER_DOUBLE_LOG=$SING_LOG
    ln -s "$SING_BIN" "$T/bin/apptainer"
  else
    # A logging shim in front of the real binary.
    cat > "$T/bin/apptainer" <<EOF
#!/bin/bash
line=\${0##*/}
for a in "\$@"; do printf -v line '%s %q' "\$line" "\$a"; done
printf '%s\n' "\$line" >> '$SING_LOG'
exec '$SING_BIN' "\$@"
EOF
    chmod +x "$T/bin/apptainer"
  fi
  export PATH=$T/bin:$PATH
  SING_IMAGE=${BERTH_TEST_SINGULARITY_IMAGE:-docker://nikolaik/python-nodejs:python3.11-nodejs20}
  write_config ""
}

# write_config EXTRA: the berth config, with EXTRA lines under terminal:.
write_config ()
{
  {
    echo "terminal:"
    echo "  backend: singularity"
    echo "  singularity_image: \"$SING_IMAGE\""
    [ "$SING_MODE" = real ] && [ -z "${BERTH_TEST_APPTAINER_CGROUPS:-}" ] && { echo "  container_memory: 0"; echo "  container_cpu: 0"; }
    [ -n "$1" ] && printf '%s\n' "$1"
  } > "$T/config/berth/config.yaml"
}

sing_teardown ()
{
  local n
  # Stop whatever this run left (a failed test must not leak instances).
  if [ -n "${T:-}" ] && [ -d "$T" ]; then
    for n in $("$T/bin/apptainer" instance list --json 2>/dev/null | sed -n 's/.*"instance": *"\(berth-[^"]*\)".*/\1/p'); do
      case $n in berth-tmp-*|berth-env-*) grep -q "$n" "$SING_LOG" && "$T/bin/apptainer" instance stop --force "$n" >/dev/null 2>&1 ;; esac
    done
    rm -rf "$T"
  fi
}

instances () { "$T/bin/apptainer" instance list --json 2>/dev/null | sed -n 's/.*"instance": *"\([^"]*\)".*/\1/p'; }

# ---- the tests ----

t_doctor ()
{
  b doctor -b singularity
  check "doctor: binary and version checks pass" [ $rc = 0 ]
}

t_exec_basic ()
{
  : > "$SING_LOG"
  b exec -b singularity -- 'echo hello; echo to-stderr >&2; printf "no newline"; exit 3'
  check "exec: exit status is the command's" [ $rc = 3 ]
  check "exec: stdout and stderr both arrive" grep -q 'hello' "$T/out"
  check "exec: stderr stays in the output" bash -c "grep -q to-stderr '$T/out' || grep -q to-stderr '$T/err'"
  check "exec: instance start flags (--containall --no-home --writable-tmpfs)" \
    log_has '^apptainer instance start --containall --no-home --writable-tmpfs '
  if [ "$SING_MODE" = double ]; then
    check "exec: --memory/--cpus from container_memory/container_cpu" log_has 'instance start .*--memory 5120M --cpus 1 '
  fi
  check "exec: throw-away instance named berth-tmp-<pid>-<id>" log_has 'instance start .* berth-tmp-[0-9]+-[0-9a-f]+$'
  check "exec: exec --cleanenv [--pwd HOME] instance://NAME bash -c" \
    log_has '^apptainer exec --cleanenv (--pwd /[^ ]* )?instance://berth-tmp-[0-9]+-[0-9a-f]+ bash -c '
  check "exec: throw-away instance stopped at exit" log_has '^apptainer instance stop berth-tmp-'
  check "exec: no berth-tmp instance left" bash -c "! ( '$T/bin/apptainer' instance list --json | grep -q berth-tmp- )"
}

t_sif_cache ()
{
  local img=$SING_IMAGE sif
  [ "$SING_MODE" = double ] && img=docker://example.org/sif/once:1
  sif=$XDG_CACHE_HOME/berth/sif/$(printf '%s' "${img#docker://}" | tr '/:@' '---').sif
  rm -f "$sif"
  : > "$SING_LOG"
  b exec -b singularity --image "$img" -- true
  b exec -b singularity --image "$img" -- true
  check "sif: docker:// image converted into the cache (${sif##*/})" [ -s "$sif" ]
  check "sif: built once for two environments" [ "$(log_count " build .*$img")" = 1 ]
  check "sif: build goes to a temporary name, renamed into place" log_has " build $sif[.]building[.][0-9]+ $img"
  check "sif: instances start from the cached SIF" [ "$(log_count "instance start .* $sif berth-tmp-")" = 2 ]
  check "sif: no temporary build left" bash -c "! ls '$XDG_CACHE_HOME/berth/sif/' | grep -q building"
}

t_sif_concurrent ()
{
  [ "$SING_MODE" = double ] || return 0
  local img=docker://example.org/concurrent/img:1 i
  : > "$SING_LOG"
  for i in 1 2 3; do
    APPTAINER_DOUBLE_BUILD_SLEEP=1 "$BERTH" exec -b singularity --image "$img" -- 'echo run' > "$T/out.$i" 2>&1 &
  done
  wait
  check "sif: three concurrent environments, one build (flock)" [ "$(log_count " build .*$img")" = 1 ]
  check "sif: all three ran" bash -c "grep -q run '$T/out.1' && grep -q run '$T/out.2' && grep -q run '$T/out.3'"
}

t_build_fallback ()
{
  [ "$SING_MODE" = double ] || return 0
  local img=docker://example.org/fails/img:2
  : > "$SING_LOG"
  APPTAINER_DOUBLE_BUILD_FAIL=1 b exec -b singularity --image "$img" -- 'echo fell-back'
  check "sif: failed build falls back to the docker:// URL" [ $rc = 0 ]
  check "sif: the command still ran" out_has fell-back
  check "sif: instance started from the URL itself" log_has "instance start .* $img berth-tmp-"
  check "sif: no partial SIF left" bash -c "! ls '$XDG_CACHE_HOME/berth/sif/' | grep 'example.org-fails' | grep -v '[.]lock$'"
}

# berth pull -b singularity (issue 17): the docker:// image built into the
# SIF cache now, progress lines through berth_pull; the next environment
# starts from it without a build.
t_pull ()
{
  [ "$SING_MODE" = double ] || return 0
  local img=docker://example.org/pulled/img:3 sif
  sif=$XDG_CACHE_HOME/berth/sif/example.org-pulled-img-3.sif
  : > "$SING_LOG"
  b pull -b singularity "$img"
  check "pull: exit 0" [ $rc = 0 ]
  check "pull: the SIF is in the cache" [ -s "$sif" ]
  check "pull: one build, to a temporary name" log_has " build $sif[.]building[.][0-9]+ $img"
  check "pull: progress lines (start, the build's, the status)" bash -c "grep -q 'Pulling $img' '$T/out' && grep -q 'Build complete' '$T/out' && grep -q '^Status: ' '$T/out'"
  : > "$SING_LOG"
  b exec -b singularity --image "$img" -- 'echo from-pulled'
  check "pull: the next environment starts from the SIF, no build" bash -c "[ $rc = 0 ] && grep -q from-pulled '$T/out' && ! grep -q ' build ' '$SING_LOG'"
  b pull -b singularity -q "$img"
  check "pull: again rebuilds it (a tag may move), quietly with -q" bash -c "[ $rc = 0 ] && [ ! -s '$T/out' ] && grep -q ' build ' '$SING_LOG'"
  APPTAINER_DOUBLE_BUILD_FAIL=1 b pull -b singularity docker://example.org/pulled/fails:1
  check "pull: a failed build is berth's error (125), one line" bash -c "[ $rc = 125 ] && grep -q 'building' '$T/err' && [ \$(wc -l < '$T/err') = 1 ]"
  check "pull: ... and leaves no partial SIF" bash -c "! ls '$XDG_CACHE_HOME/berth/sif/' | grep 'pulled-fails' | grep -v '[.]lock$'"
  b pull -b singularity /some/image.sif
  check "pull: a non-docker:// image is refused with why" bash -c "[ $rc = 125 ] && grep -q 'only docker://' '$T/err'"
}

# A build lock held elsewhere ends at -t (issue 12.2: it waited up to
# the build timeout + 60 s).
t_build_lock_deadline ()
{
  [ "$SING_MODE" = double ] || return 0
  local img=docker://example.org/locked/img:1 lock holder t0 ms
  lock=$XDG_CACHE_HOME/berth/sif/example.org-locked-img-1.sif.lock
  mkdir -p "${lock%/*}"
  flock -o "$lock" sleep 60 & holder=$!
  sleep 0.3
  t0=$(date +%s%N)
  b exec -b singularity --image "$img" -t 2 -- true
  ms=$((($(date +%s%N) - t0) / 1000000))
  pkill -P "$holder" sleep; kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
  check "build lock: held elsewhere -> berth error 125 within -t 2 (took $ms ms)" [ $rc = 125 -a "$ms" -lt 4000 ]
  check "build lock: one line naming the lock and its holder" bash -c "grep -q 'sif.lock' '$T/err' && grep -q 'pid $holder' '$T/err' && [ \$(wc -l < '$T/err') = 1 ]"
}

t_persistent ()
{
  local name=p$$ inst
  : > "$SING_LOG"
  b exec -b singularity -e "$name" -- 'echo data > ~/persist.txt; mkdir -p /opt/w && cd /opt/w; export KEEP=kept'
  check "persistent: first command" [ $rc = 0 ]
  check "persistent: --overlay DIR under the environment's state dir" \
    log_has "instance start --containall --no-home --overlay $XDG_STATE_HOME/berth/[^ ]*/$name/overlay "
  inst=$(sed -n 's/.*instance start .* \(berth-env-[^ ]*\)$/\1/p' "$SING_LOG" | head -1)
  check "persistent: instance named berth-env-NAME-<hash>" [ -n "$inst" ]
  check "persistent: exec --cleanenv --pwd HOME instance://NAME" log_has "^apptainer exec --cleanenv --pwd /[^ ]* instance://$inst bash -c "
  check "persistent: instance kept after the invocation" bash -c "instances() { '$T/bin/apptainer' instance list --json; }; instances | grep -q '\"$inst\"'"
  b exec -b singularity -e "$name" -- 'cat ~/persist.txt; pwd; echo "KEEP=$KEEP"'
  check "persistent: files, cwd and exports persist" bash -c "grep -q '^data' '$T/out' && grep -q '^/opt/w' '$T/out' && grep -q 'KEEP=kept' '$T/out'"
  check "persistent: found again by name (one instance start)" [ "$(log_count "instance start .* $inst")" = 1 ]
  # The instance goes away behind berth's back: restarted, overlay kept.
  "$T/bin/apptainer" instance stop "$inst" > /dev/null 2>&1
  b exec -b singularity -e "$name" --json -- 'cat ~/persist.txt'
  check "persistent: restarted instance keeps the overlay's files" out_has 'data'
  check "persistent: result reports environment_recreated" grep -q '"environment_recreated": *true' "$T/out"
  b exec -b singularity -e "$name" --json -- 'true'
  check "persistent: only once" grep -q '"environment_recreated": *false' "$T/out"
  b rm "$name"
  check "persistent: berth rm succeeds" [ $rc = 0 ]
  check "persistent: berth rm stops the instance" bash -c "! ( '$T/bin/apptainer' instance list --json | grep -q '\"$inst\"' )"
  check "persistent: berth rm removes the overlay" [ ! -e "$XDG_STATE_HOME/berth/envs/$name/overlay" ]
}

t_passthrough ()
{
  local secret=s3cr3t-$$-value leaked=0 p pid
  write_config "  env_passthrough: [BERTH_SING_PASS]"
  : > "$SING_LOG"
  export BERTH_SING_PASS=$secret MYSERVICE_API_KEY=stripped-$$ BERTH_SING_HOSTONLY=host-$$
  "$BERTH" exec -b singularity -- 'echo "pass=$BERTH_SING_PASS"; echo "key=${MYSERVICE_API_KEY-unset}"; echo "host=${BERTH_SING_HOSTONLY-unset}"; sleep 2; echo done' \
    > "$T/out" 2> "$T/err" &
  pid=$!
  sleep 1
  for p in /proc/[0-9]*; do
    if { tr '\0' ' ' < "$p/cmdline"; } 2>/dev/null | grep -q -- "$secret"; then leaked=1; diag "leak in $p: $(tr '\0' ' ' < "$p/cmdline")"; fi
  done
  wait $pid
  rc=$?
  unset BERTH_SING_PASS MYSERVICE_API_KEY BERTH_SING_HOSTONLY
  write_config ""
  check "passthrough: command ran" [ $rc = 0 ]
  check "passthrough: allow-listed value reaches the command (#90298)" out_has "pass=$secret"
  check "passthrough: credential-like key never reaches it" out_has "key=unset"
  check "passthrough: --cleanenv keeps the host environment out" out_has "host=unset"
  check "passthrough: value in no process's argv while running" [ $leaked = 0 ]
  check "passthrough: value in no apptainer argv" bash -c "! grep -q -- '$secret' '$SING_LOG'"
}

t_containall ()
{
  local marker=$T/host-marker-$$
  echo x > "$marker"
  b exec -b singularity -- "test -e '$marker' && echo VISIBLE || echo hidden; ls -A /home | wc -l"
  check "containall: host /tmp not visible inside" out_has hidden
}

t_binds ()
{
  mkdir -p "$T/bindsrc"
  echo bound-content > "$T/bindsrc/f"
  write_config "  singularity_binds: [\"$T/bindsrc:/mnt/bindtest:ro\"]"
  : > "$SING_LOG"
  b exec -b singularity -- 'cat /mnt/bindtest/f; echo y > /mnt/bindtest/g && echo WROTE || echo readonly'
  write_config ""
  check "binds: --bind src:dest:ro passed" log_has "instance start .*--bind $T/bindsrc:/mnt/bindtest:ro "
  check "binds: content visible inside" out_has bound-content
  check "binds: :ro is read-only" out_has readonly
  write_config "  singularity_binds: [\"relative:/x\"]"
  b exec -b singularity -- true
  write_config ""
  check "binds: a bad spec is a config error (125)" [ $rc = 125 ]
  check "binds: the error names the key" err_has singularity_binds
}

t_timeout ()
{
  local name=to$$ inst
  : > "$SING_LOG"
  b exec -b singularity -e "$name" -t 2 -- 'sleep 171 & setsid sleep 172 & (trap "" TERM; sleep 173) & sleep 174'
  check "timeout: exit 124" [ $rc = 124 ]
  check "timeout: message" bash -c "grep -q 'timed out' '$T/out' || grep -q 'timed out' '$T/err'"
  inst=$(sed -n 's/.*instance start .* \(berth-env-[^ ]*\)$/\1/p' "$SING_LOG" | head -1)
  sleep 0.5
  "$T/bin/apptainer" exec --cleanenv "instance://$inst" sh -c 'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline 2>/dev/null; echo; done' > "$T/procs" 2>&1
  check "timeout: no process of the command left in the instance" bash -c "! grep -q 'sleep 17[1-4]' '$T/procs'"
  check "timeout: none on the host either" bash -c "! pgrep -f 'sleep 17[1-4]' > /dev/null"
  b exec -b singularity -e "$name" -- 'echo still-usable'
  check "timeout: the environment is still usable" out_has still-usable
  b rm "$name"
}

# -t bounds the setup too: an instance start that hangs is an error by then
# (issue 11.16 / 12.2: it waited SING_START_TIMEOUT, 120 s).
t_setup_deadline ()
{
  local t0 ms
  t0=$(date +%s%N)
  APPTAINER_DOUBLE_START_SLEEP=60 b exec -b singularity -e hang$$ -t 2 -- true
  ms=$((($(date +%s%N) - t0) / 1000000))
  check "setup deadline: a hung instance start is berth's error (125)" [ $rc = 125 ]
  check "setup deadline: within -t 2 and a short cleanup (took $ms ms)" [ "$ms" -lt 8000 ]
  check "setup deadline: nothing of the environment is left" [ ! -e "$XDG_STATE_HOME/berth/envs/hang$$" ]
}

t_exec_prefix ()
{
  local name=xp$$ line got
  local -a prefix
  b exec -b singularity -e "$name" -- true
  b exec-prefix -b singularity -e "$name"
  check "exec_prefix: printed" [ $rc = 0 ]
  line=$(cat "$T/out")
  eval "prefix=($line)"
  check "exec_prefix: apptainer exec --cleanenv [--pwd D] instance://NAME" \
    bash -c "[[ '$line' =~ apptainer\ exec\ --cleanenv\ (--pwd\ [^\ ]+\ )?instance://berth-env- ]]"
  # Words pass through unchanged.
  got=$("${prefix[@]}" printf '<%s>\n' 'a b' '$HOME' "it's" 'ünï' '*' '' 2>/dev/null)
  check "exec_prefix: words arrive unchanged" [ "$got" = "$(printf '<%s>\n' 'a b' '$HOME' "it's" 'ünï' '*' '')" ]
  # stderr stays stderr.
  got=$("${prefix[@]}" sh -c 'echo out; echo err >&2' 2>/dev/null)
  check "exec_prefix: stderr kept apart from stdout" [ "$got" = out ]
  # A long-lived cat: a round trip through a coprocess.
  coproc CAT { "${prefix[@]}" cat 2>/dev/null; }
  echo "ping-1" >&"${CAT[1]}"
  read -r -t 10 got <&"${CAT[0]}"
  check "exec_prefix: long-lived cat echoes the first line" [ "$got" = ping-1 ]
  echo "ping-2" >&"${CAT[1]}"
  read -r -t 10 got <&"${CAT[0]}"
  check "exec_prefix: and the second" [ "$got" = ping-2 ]
  exec {CAT[1]}>&-
  wait "$CAT_PID"
  check "exec_prefix: cat exits 0 at end of input" [ $? = 0 ]
  b exec-prefix -b singularity -e "$name" --user nobody-else
  check "exec_prefix: another user is refused with a reason" bash -c "[ $rc != 0 ] && grep -q 'invoking user' '$T/err'"
  b rm "$name"
}

t_gc ()
{
  local img=$SING_IMAGE orphan alive
  [ "$SING_MODE" = double ] || img=$(ls "$XDG_CACHE_HOME"/berth/sif/*.sif | head -1)
  orphan=berth-tmp-2147483000-0123456789ab
  alive=berth-tmp-$$-ba9876543210
  "$T/bin/apptainer" instance start --containall --no-home --writable-tmpfs "$img" "$orphan" > /dev/null 2>&1
  "$T/bin/apptainer" instance start --containall --no-home --writable-tmpfs "$img" "$alive" > /dev/null 2>&1
  b gc
  check "gc: succeeds" [ $rc = 0 ]
  check "gc: orphaned berth instance (creator gone) stopped" bash -c "! ( '$T/bin/apptainer' instance list --json | grep -q '$orphan' )"
  check "gc: instance of a live creator kept" bash -c "'$T/bin/apptainer' instance list --json | grep -q '$alive'"
  "$T/bin/apptainer" instance stop "$alive" > /dev/null 2>&1
}

t_discovery ()
{
  local save=$PATH d=$T/only-sing
  # Neither binary: a berth error (125) naming both, and install guidance.
  mkdir -p "$T/nobin"
  ln -sf "$(command -v bash)" "$T/nobin/bash"
  PATH=$T/nobin b exec -b singularity -- true
  check "discovery: neither binary -> exit 125" [ $rc = 125 ]
  check "discovery: the error names apptainer and singularity" bash -c "grep -q apptainer '$T/err' && grep -q singularity '$T/err'"
  PATH=$T/nobin b doctor -b singularity
  check "discovery: doctor reports the missing binary" bash -c "[ $rc != 0 ] || grep -qi 'apptainer' '$T/out'"
  [ "$SING_MODE" = double ] || return 0
  # Only `singularity` on PATH: it is used.
  mkdir -p "$d"
  ln -sf "$SING_BIN" "$d/singularity"
  : > "$SING_LOG"
  PATH=$d:$T/nobin:/usr/bin:/bin b exec -b singularity -- 'echo via-singularity'
  check "discovery: only singularity -> singularity is used" bash -c "grep -q via-singularity '$T/out' && grep -q '^singularity instance start' '$SING_LOG'"
  # terminal.singularity_binary wins.
  write_config "  singularity_binary: $d/singularity"
  : > "$SING_LOG"
  b exec -b singularity -- 'echo via-config'
  write_config ""
  check "discovery: terminal.singularity_binary is used" bash -c "grep -q via-config '$T/out' && grep -q '^singularity ' '$SING_LOG' && ! grep -q '^apptainer instance' '$SING_LOG'"
  write_config "  singularity_binary: $T/does-not-exist"
  b exec -b singularity -- true
  write_config ""
  check "discovery: a missing configured binary is an error naming the key" bash -c "[ $rc = 125 ] && grep -q singularity_binary '$T/err'"
  # version must succeed.
  APPTAINER_DOUBLE_VERSION_FAIL=1 b exec -b singularity -- true
  check "version: failure -> 125 with \"version' failed\"" bash -c "[ $rc = 125 ] && grep -q \"version' failed\" '$T/err'"
  APPTAINER_DOUBLE_VERSION_SLEEP=12 b exec -b singularity -- true
  check "version: hang -> 125 \"timed out\"" bash -c "[ $rc = 125 ] && grep -q 'timed out' '$T/err'"
}

t_no_bash ()
{
  [ "$SING_MODE" = double ] || return 0
  cp -a "$APPTAINER_DOUBLE_ROOTFS" "$T/nobash" && rm -f "$T/nobash/bin/bash"
  b exec -b singularity --image "$T/nobash" -- 'echo hi'
  check "no bash: throw-away -> berth error 125 naming bash" bash -c "[ $rc = 125 ] && grep -q bash '$T/err'"
  b exec -b singularity -e nobash$$ --image "$T/nobash" -- 'echo hi'
  check "no bash: named -> 125 'berth needs bash in the image'" bash -c "[ $rc = 125 ] && grep -q 'needs bash' '$T/err'"
  check "no bash: no instance left behind" bash -c "! ( '$T/bin/apptainer' instance list --json | grep -q 'nobash' )"
  "$BERTH" rm nobash$$ > /dev/null 2>&1
}

sing_run_all ()
{
  t_doctor
  t_exec_basic
  t_sif_cache
  t_sif_concurrent
  t_build_fallback
  t_build_lock_deadline
  t_pull
  t_persistent
  t_passthrough
  t_containall
  t_binds
  t_timeout
  t_setup_deadline
  t_exec_prefix
  t_gc
  t_no_bash
  t_discovery
  done_testing
}
