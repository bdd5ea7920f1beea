#!/bin/bash
# bwrap-canaries.sh: the berth-jail suite for ONE user (the caller):
# escape canaries (each attempt must fail), profiles, persistence and
# isolation, lifetime, fail-closed reasons.  Emits unnumbered TAP lines and
# no plan (bwrap-jail.sh adds it); exits non-zero when a test failed.
# Driven by bwrap-jail.sh as root and as an unprivileged user.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/bwrap-lib.sh"

base=$(mktemp -d /var/tmp/berth-bwrap-test.XXXXXX) || exit 99
chmod 755 "$base"
home=$base/home ws=$base/ws outside=$base/outside.txt
pids=()
cleanup ()
{
  for s in "$base"/st-*; do [ -d "$s" ] && "$JAIL" destroy --state "$s" >/dev/null 2>&1; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$base"
}
trap cleanup EXIT

mkdir -p "$home/.ssh" "$home/.aws" "$home/.config/gh" "$home/src" "$ws" "$base/robind" "$base/rwbind"
echo SECRET-KEY-MATERIAL >"$home/.ssh/id_ed25519"
echo aws_secret_access_key=SECRET >"$home/.aws/credentials"
echo "machine x password SECRET" >"$home/.netrc"
echo orig >"$outside"
echo ro-content >"$base/robind/f"
ln -s "$home/.ssh/id_ed25519" "$ws/key-link"
mkdir -p "$ws/.git/hooks" "$ws/.git/objects"
echo "[core]" >"$ws/.git/config"
echo "# rc" >"$home/.bashrc"
home_before=$(cd "$home" && find . | sort)

# Host side services the jail must not reach.
port=$((20000 + RANDOM % 20000))
"$CANARY" serve-unix "$base/host.sock" >"$base/s1" 2>&1 &
pids+=($!)
"$CANARY" serve-abstract "berth-test-$$" >"$base/s2" 2>&1 &
pids+=($!)
"$CANARY" serve-tcp "$port" >"$base/s3" 2>&1 &
pids+=($!)
sleep 1000 &
hostpid=$!
pids+=($hostpid)
for i in $(seq 50); do
  grep -q ready "$base/s1" 2>/dev/null && grep -q ready "$base/s2" 2>/dev/null && grep -q ready "$base/s3" 2>/dev/null && break
  sleep 0.1
done

# new_jail NAME ARGS...: create a jail with state $base/st-NAME.
new_jail ()
{
  local name=$1
  shift
  (cd "$ws" && HOME=$home "$JAIL" create --state "$base/st-$name" --home "$home" "$@")
}
# E NAME CMD...: run CMD in jail NAME from the workspace.
E ()
{
  local name=$1
  shift
  (cd "$ws" && HOME=$home "$JAIL" exec --state "$base/st-$name" -- "$@")
}
# C NAME VERB ARG: a canary attempt in jail NAME that must be refused (exit
# 1; 0 means it escaped, anything else is a broken test).
C ()
{
  local name=$1 out rc
  shift
  out=$(E "$name" "$CANARY" "$@" 2>&1)
  rc=$?
  if [ $rc -eq 1 ]; then
    ok "canary: $* is refused"
  else
    not_ok "canary: $* is refused (status $rc)"
    diag "$out"
  fi
}

# ---- jail A: the workspace profile with an ro and an rw bind ----
expect_out "create prints created" '^created$' new_jail A --workspace "$ws" --profile workspace \
  --ro-bind-to "$base/robind" "$base/robind" --bind-to "$base/rwbind" "$base/rwbind"
expect_out "create again finds it running" '^running$' new_jail A --workspace "$ws" --profile workspace
check "status reports the jail running" "$JAIL" status --state "$base/st-A"
st_mode=$(stat -c %a "$base/st-A/jail")
[ "$st_mode" = 600 ] && ok "the jail record is 0600" || not_ok "the jail record is 0600 (is $st_mode)"

# Filesystem.
refuse "canary: write a host file outside the writable roots" E A sh -c "echo pwned > $outside"
[ "$(cat "$outside")" = orig ] && ok "the host file is unchanged" || not_ok "the host file is unchanged"
expect_out "host / is read-only" 'Read-only file system' E A touch /usr/berth-canary
refuse "canary: create a file in /etc" E A sh -c 'echo x > /etc/berth-canary'
check "the workspace is writable" E A sh -c 'echo hello > in-ws.txt'
[ "$(cat "$ws/in-ws.txt" 2>/dev/null)" = hello ] && ok "workspace writes reach the host" || not_ok "workspace writes reach the host"
refuse "canary: write through a symlink out of the workspace" E A sh -c "ln -s $outside $ws/out-link && echo pwned > $ws/out-link"
[ "$(cat "$outside")" = orig ] && ok "the symlink target is unchanged" || not_ok "the symlink target is unchanged"
refuse "canary: hard link a host file into the workspace" E A ln "$outside" "$ws/hard-link"
refuse "canary: read a key through a pre-planted workspace symlink" E A grep -q SECRET "$ws/key-link"
refuse "canary: write into a read-only bind" E A sh -c "echo x > $base/robind/f"
check "a read-only bind is readable" E A grep -q ro-content "$base/robind/f"
check "a read-write bind is writable" E A sh -c "echo rw > $base/rwbind/g"

# Carve-outs: what would run code on the host later stays read-only.
refuse "canary: plant a git hook in the workspace" E A sh -c "echo pwn > $ws/.git/hooks/pre-commit"
refuse "canary: set core.hooksPath / fsmonitor in .git/config" E A sh -c "echo '[core] fsmonitor = pwn' >> $ws/.git/config"
check "the rest of .git stays writable" E A sh -c "echo obj > $ws/.git/objects/x"
expect_out "create H (workspace = HOME)" '^created$' new_jail H --workspace "$home" --profile workspace
refuse "canary: HOME as workspace: append to ~/.bashrc" E H sh -c "echo pwn >> $home/.bashrc"
check "HOME as workspace: other files are writable" E H sh -c "echo ok > $home/src/note"
[ "$(cat "$home/.bashrc")" = "# rc" ] && ok "~/.bashrc is unchanged on the host" || not_ok "~/.bashrc is unchanged on the host"
rm -f "$home/src/note"

# Credentials.
refuse "canary: read the planted ~/.ssh/id_ed25519" E A grep -q SECRET "$home/.ssh/id_ed25519"
refuse "canary: read ~/.aws/credentials" E A grep -q SECRET "$home/.aws/credentials"
refuse "canary: read ~/.netrc" E A grep -q SECRET "$home/.netrc"
expect_out "~/.ssh is an empty directory in the jail" '^0$' E A sh -c "ls -A $home/.ssh | wc -l"
refuse "canary: hard link the hidden key into the workspace" E A ln "$home/.ssh/id_ed25519" "$ws/key-hard"
if [ "$(id -u)" = 0 ]; then
  refuse "canary: read /etc/shadow as root" E A grep -q root /etc/shadow
fi

# Mounts.
C A remount-rw /
C A remount-rw "$base/robind"
C A setattr-rw /
C A setattr-rw "$base/robind"
C A mount /mnt
refuse "canary: mount(8) a tmpfs" E A mount -t tmpfs none /mnt

# User namespaces.
C A unshare-user
C A clone-user
refuse "canary: unshare -U" E A unshare -U true
refuse "canary: unshare -Ur (nested root)" E A unshare -Ur true
out=$(E A "$CANARY" clone3-user 2>&1)
if [ $? -eq 1 ] && grep -q "errno 38" <<<"$out"; then ok "canary: clone3 with CLONE_NEWUSER gets ENOSYS"; else not_ok "canary: clone3 with CLONE_NEWUSER gets ENOSYS"; diag "$out"; fi

# Processes.
C A signal "$hostpid" 9
kill -0 "$hostpid" 2>/dev/null && ok "the host process survived" || not_ok "the host process survived"
C A ptrace 1
refuse "canary: read /proc/1/environ" E A cat /proc/1/environ
expect_out "pid 1 in the jail is its own init, not the host's" '^berth-jail-init$' E A cat /proc/1/comm
expect_out "the pid namespace shows < 10 processes" '^[0-9]$' E A sh -c 'ls /proc | grep -c "^[0-9]"'
E A kill -9 1 >/dev/null 2>&1
check "the jail's init survives kill -9 1 from inside" "$JAIL" status --state "$base/st-A"
expect_out "CapEff, CapPrm, CapBnd, CapAmb are 0" '^4$' E A sh -c 'grep -Ec "^Cap(Eff|Prm|Bnd|Amb):[[:space:]]+0+$" /proc/self/status'
expect_out "NoNewPrivs is 1" 'NoNewPrivs:[[:space:]]+1' E A cat /proc/self/status
expect_out "a seccomp filter is loaded" 'Seccomp:[[:space:]]+2' E A cat /proc/self/status
expect_out "hostname is berth" '^berth$' E A hostname

# Sockets and network.
check "control: the host can reach its own UNIX socket" "$CANARY" connect-unix "$base/host.sock"
check "control: the host can reach its own TCP port" "$CANARY" connect-tcp "$port"
C A connect-unix "$base/host.sock"
C A connect-abstract "berth-test-$$"
C A connect-tcp "$port"
for s in /run/docker.sock /var/run/docker.sock /run/containerd/containerd.sock; do
  [ -S "$s" ] && C A connect-unix "$s"
done
expect_out "no network: only lo" '^lo$' E A sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"

# TIOCSTI / TIOCLINUX: on a real controlling tty (script(1) gives one).
# EPERM can only come from the seccomp filter (a kernel that disables
# TIOCSTI says EIO), so the jail canaries stand on their own; the control
# shows the attempt works outside where the kernel allows it.
if command -v script >/dev/null; then
  out=$(script -qec "$CANARY tiocsti" /dev/null </dev/null 2>&1)
  if grep -q SUCCEEDED <<<"$out"; then
    ok "control: TIOCSTI works outside the jail"
  else
    t_count=$((t_count + 1))
    echo "ok - ${T_LABEL}control: TIOCSTI works outside the jail # SKIP the kernel disables TIOCSTI (dev.tty.legacy_tiocsti=0)"
  fi
  for v in tiocsti tiocsti-hi tioclinux; do
    out=$(cd "$ws" && script -qec "'$JAIL' exec --state '$base/st-A' --keep-session -- '$CANARY' $v" /dev/null </dev/null 2>&1)
    if grep -q "refused.*errno 1)" <<<"$out"; then ok "canary: $v on the controlling tty gets EPERM"; else not_ok "canary: $v on the controlling tty gets EPERM"; diag "$out"; fi
  done
  out=$(cd "$ws" && script -qec "'$JAIL' exec --state '$base/st-A' -- '$CANARY' tiocsti" /dev/null </dev/null 2>&1)
  grep -q refused <<<"$out" && ok "canary: tiocsti in a new session is refused" || { not_ok "canary: tiocsti in a new session is refused"; diag "$out"; }
else
  skip_or_fail "TIOCSTI canaries" "script(1) is missing"
fi

# Persistence within one jail, isolation between two.
check "a /tmp file is written" E A sh -c 'echo kept > /tmp/berth-persist'
expect_out "/tmp persists between commands of one jail" '^kept$' E A cat /tmp/berth-persist
[ ! -e /tmp/berth-persist ] && ok "the jail's /tmp is not the host's" || not_ok "the jail's /tmp is not the host's"
E A sh -c 'setsid sleep 4242 </dev/null >/dev/null 2>&1 &'
check "a background process persists into the next command" E A pgrep -f "sleep 4242"
expect_out "create B" '^created$' new_jail B --workspace "$ws" --profile workspace
refuse "jail B cannot see jail A's /tmp" E B cat /tmp/berth-persist
refuse "jail B cannot see jail A's processes" E B pgrep -f "sleep 4242"

# The runtime's timeout kill: a kill script run through exec finds a job's
# processes by BERTH_JOB in the same pid namespace.
(cd "$ws" && BERTH_JOB=tok-$$ HOME=$home "$JAIL" exec --state "$base/st-A" -- sh -c 'setsid sleep 4343 & sleep 4344 & wait') >/dev/null 2>&1 &
jobpid=$!
sleep 0.5
E A sh -c 'for p in /proc/[0-9]*; do if tr "\0" "\n" 2>/dev/null <$p/environ | grep -qx "BERTH_JOB=tok-'$$'"; then kill -9 ${p#/proc/}; fi; done'
for i in $(seq 30); do kill -0 $jobpid 2>/dev/null || break; sleep 0.1; done
if ! kill -0 $jobpid 2>/dev/null && ! E A pgrep -f "sleep 434[34]" >/dev/null; then
  ok "a kill script run through exec kills the whole job tree (setsid included)"
else
  not_ok "a kill script run through exec kills the whole job tree (setsid included)"
  kill $jobpid 2>/dev/null
fi

# The init's command server refuses malformed requests and lives on.
for kind in magic argc body no-fds unterminated short words; do
  check "server: a malformed request ($kind) is refused" "$CANARY" bad-request "$base/st-A/jail.sock" "$kind"
done
refuse "server: control, a well-formed request runs (status 0)" "$CANARY" bad-request "$base/st-A/jail.sock" good
check "server: the jail still runs commands after malformed requests" E A true

# Exit status and signals pass through.
E A sh -c 'exit 7'
[ $? -eq 7 ] && ok "exit status passes through" || not_ok "exit status passes through"
E A sh -c 'kill -TERM $$'
[ $? -eq 143 ] && ok "death by signal passes through" || not_ok "death by signal passes through"
expect_out "stdin, stdout and stderr stay separate" '^in:abc err-ok$' bash -c "echo abc | (cd '$ws' && '$JAIL' exec --state '$base/st-A' -- sh -c 'read x; echo in:\$x; echo err >&2' 2>'$base/err' | tr -d '\n'; grep -q err '$base/err' && echo ' err-ok')"
expect_out "a missing command is 127" '127' bash -c "cd '$ws'; '$JAIL' exec --state '$base/st-A' -- /nonexistent/cmd; echo \$?"

# ---- profiles ----
expect_out "create N (network profile)" '^created$' new_jail N --workspace "$ws" --profile network
host_if=$(tail -n +3 /proc/net/dev | wc -l)
expect_out "network profile sees the host's interfaces" "^${host_if}\$" E N sh -c 'tail -n +3 /proc/net/dev | wc -l'
check "network profile reaches a host TCP port" E N "$CANARY" connect-tcp "$port"
expect_out "create R (restricted profile)" '^created$' new_jail R --workspace "$ws" --profile restricted
expect_out "restricted: the workspace is read-only" 'Read-only file system' E R touch restricted.txt
check "restricted: the workspace is readable" E R cat in-ws.txt
expect_out "restricted: only lo" '^lo$' E R sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
expect_out "unknown profile lists the three" 'restricted, workspace or network' "$JAIL" create --state "$base/st-X" --profile bogus
[ ! -e "$base/st-X" ] && ok "unknown profile creates nothing" || not_ok "unknown profile creates nothing"
expect_out "workspace / is refused" 'is the system directory /,' new_jail Y --workspace /
for d in /etc /usr/local /var/lib; do
  expect_out "helper: workspace $d is refused (system directory)" "system directory /" new_jail "Y$RANDOM" --workspace "$d"
done
expect_out "helper: a writable bind of /etc is refused" 'in the system directory /etc; bind it read-only' \
  new_jail Yb --workspace "$ws" --bind-to /etc "$base/etc-rw"
check "helper: /etc as a restricted (read-only) workspace is allowed" new_jail Yr --workspace /etc --profile restricted
refuse "a missing bind destination on the host is refused" new_jail Z --workspace "$ws" --bind-to "$base/robind" "$base/no-such-dir"
[ ! -e "$base/no-such-dir" ] && ok "no ghost bind destination on the host" || not_ok "no ghost bind destination on the host"
mkdir -p "$ws/sub"
expect_out "a bind source inside the writable workspace is refused (it could be swapped)" 'could swap it' \
  new_jail S --workspace "$ws" --ro-bind-to "$ws/sub" /tmp/sub
check "a bind destination under the private /tmp is created in the jail" new_jail T --workspace "$ws" --ro-bind-to "$base/robind" /tmp/deep/bind
check "... and mounted there" E T cat /tmp/deep/bind/f

# rlimits.
new_jail L --workspace "$ws" --memory-mb 300 --cpu-seconds 7 --max-procs 40 >/dev/null
expect_out "rlimits: address space, cpu, processes" '^307200 7 42$' E L bash -c 'echo $(ulimit -v) $(ulimit -t) $(ulimit -u)'

# Every mount but the writable roots is read-only (modern and legacy).
mounts_ro ()
{
  local bad
  # Candidates from the jail's mount table; a mount point the jail cannot
  # even look up (a root-only directory seen by an unprivileged jail) is
  # out of reach and does not count.
  bad=$(E "$1" cat /proc/self/mountinfo | awk -v ws="$ws" -v rw="$base/rwbind" '
    { mp = $5; opts = $6 }
    mp == "/tmp" || mp ~ "^/tmp/" || mp == "/proc" || mp == ws || mp == rw || mp ~ "^/dev/(shm|pts|null|zero|full|random|urandom|tty)$" || mp ~ "^/run/user" { next }
    opts !~ /(^|,)ro(,|$)/ { print mp }' | while read -r mp; do
      E "$1" stat "$mp" >/dev/null 2>&1 && echo "writable: $mp"
    done)
  [ -z "$bad" ] || { echo "$bad"; return 1; }
}
check "every other mount is read-only (mount_setattr)" mounts_ro A
if new_jail G --workspace "$ws" --legacy-mount --bind-to "$base/rwbind" "$base/rwbind" >/dev/null 2>&1; then
  ok "create with --legacy-mount (libmount walk)"
  check "every other mount is read-only (libmount walk)" mounts_ro G
  refuse "legacy: host / is read-only" E G touch /usr/berth-canary
  refuse "legacy: ~/.ssh key hidden" E G grep -q SECRET "$home/.ssh/id_ed25519"
else
  not_ok "create with --legacy-mount (libmount walk)"
fi

# Older kernels: no mount_setattr (< 5.12), no new mount API at all (< 5.2).
if [ -x "$DENYNS" ]; then
  for k in no-mount-setattr no-mount-api; do
    if (cd "$ws" && HOME=$home "$DENYNS" --$k "$JAIL" create --state "$base/st-K$k" --home "$home" --workspace "$ws" \
          --bind-to "$base/rwbind" "$base/rwbind") >/dev/null 2>&1; then
      ok "kernel without $k: the jail falls back to the libmount walk"
      check "kernel without $k: every other mount is read-only" mounts_ro "K$k"
      refuse "kernel without $k: ~/.ssh key hidden" E "K$k" grep -q SECRET "$home/.ssh/id_ed25519"
    else
      not_ok "kernel without $k: the jail falls back to the libmount walk"
    fi
  done
fi

# ---- lifetime ----
check "destroy A" "$JAIL" destroy --state "$base/st-A"
refuse "status after destroy" "$JAIL" status --state "$base/st-A"
refuse "the background process died with the jail" pgrep -f "sleep 4242"
check "destroy is idempotent" "$JAIL" destroy --state "$base/st-A"
sleep 1000 &
owner=$!
new_jail O --workspace "$ws" --owner-pid "$owner" >/dev/null
check "a jail with an owner runs" "$JAIL" status --state "$base/st-O"
kill "$owner"
wait "$owner" 2>/dev/null
for i in $(seq 30); do "$JAIL" status --state "$base/st-O" >/dev/null || break; sleep 0.1; done
refuse "the jail dies with its owner" "$JAIL" status --state "$base/st-O"
expect_out "exec into a dead jail fails closed" 'not running' E O touch "$ws/ran-unconfined"
[ ! -e "$ws/ran-unconfined" ] && ok "nothing ran unconfined" || not_ok "nothing ran unconfined"

# ---- fail closed, with the precise reason ----
if [ -x "$DENYNS" ]; then
  expect_out "container seccomp: the reason names it" 'seccomp filter of the enclosing container' "$DENYNS" "$JAIL" create --state "$base/st-D" --workspace "$ws"
  [ ! -e "$base/st-D/jail" ] && ok "container seccomp: no jail recorded" || not_ok "container seccomp: no jail recorded"
fi
expect_out "user.max_user_namespaces=0: the reason names it" 'user.max_user_namespaces = 0' \
  unshare -Ur sh -c "echo 0 > /proc/sys/user/max_user_namespaces && '$JAIL' probe"
expect_out "masked /proc (as in a container): the reason names it" '/proc is masked' \
  unshare -Urm sh -c "mount --bind /dev/null /proc/keys && '$JAIL' create --state '$base/st-M' --workspace '$ws'"
expect_out "masked /proc: probe names it too" '/proc is masked' \
  unshare -Urm sh -c "mount --bind /dev/null /proc/keys && '$JAIL' probe"
expect_out "container seccomp: probe names it" 'seccomp filter of the enclosing container' "$DENYNS" "$JAIL" probe
expect_out "probe (quick)" '^ok$' "$JAIL" probe
expect_out "probe --full builds and tears down a trial jail" '^ok$' "$JAIL" probe --full
expect_out "probe --network" '^ok$' "$JAIL" probe --network

# ---- the defaults, through the berth command with no configuration ----
# BERTH_CLI (set by bwrap-jail.sh) is a copy of berth runnable by this user.
if [ -n "${BERTH_CLI:-}" ]; then
  dh=$base/dhome nc=$base/noconf
  mkdir -p "$dh" "$nc/config" "$nc/state" "$nc/run" "$nc/cache"
  chmod 700 "$nc/run" "$nc/state"
  # berth exec -b bwrap from DIR with no configuration (status in $rc).
  DB ()
  {
    local dir=$1
    shift
    out=$(cd "$dir" && env HOME="$dh" XDG_CONFIG_HOME="$nc/config" XDG_STATE_HOME="$nc/state" XDG_RUNTIME_DIR="$nc/run" \
      XDG_CACHE_HOME="$nc/cache" "$BERTH_CLI" exec -b bwrap -- "$@" 2>&1)
    rc=$?
  }
  # Every credential store of the helper's table, planted with a marker
  # (names with a dot in them as files, the rest as directories), plus the
  # files the stores really hold; one visible control file.
  for f in .claude/.credentials.json .codex/auth.json .config/berth/config.yaml .hermes/.env .config/hermes/auth.json \
    .azure/accessTokens.json .oci/config .terraform.d/credentials.tfrc.json .cargo/credentials.toml .config/op/config; do
    mkdir -p "$(dirname "$dh/$f")"
    [ -d "$dh/$f" ] || echo BERTH-PLANTED-SECRET >"$dh/$f"
  done
  n_planted=0
  while read -r rel; do
    [ -n "$rel" ] || continue
    case ${rel##*/} in
      ?*.*) [ -d "$dh/$rel" ] && echo BERTH-PLANTED-SECRET >"$dh/$rel/planted" && continue
        mkdir -p "$(dirname "$dh/$rel")"; echo BERTH-PLANTED-SECRET >"$dh/$rel" ;;
      *) mkdir -p "$dh/$rel"; echo BERTH-PLANTED-SECRET >"$dh/$rel/planted" ;;
    esac
    n_planted=$((n_planted + 1))
  done <"${BERTH_HOME_HIDES:-/dev/null}"
  mkdir -p "$dh/visible" && echo BERTH-PLANTED-SECRET >"$dh/visible/control"
  echo "# BERTH-PLANTED-SECRET" >"$nc/config/berth-secret.yaml"
  mkdir -p "$nc/config/berth" && echo "# BERTH-PLANTED-SECRET docker_env" >"$nc/config/berth/config.yaml"
  [ "$n_planted" -gt 40 ] && ok "defaults: $n_planted credential stores planted from the helper's table" \
    || not_ok "defaults: the helper's hide table was read ($n_planted entries)"

  DB "$ws" "readlink /proc/self/ns/net"
  [ "$rc" -eq 0 ] && [ "$out" != "$(readlink /proc/self/ns/net)" ] && ok "defaults: the jail has its own network namespace" \
    || { not_ok "defaults: the jail has its own network namespace"; diag "$rc: $out"; }
  DB "$ws" "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
  is_lo=$out
  [ "$is_lo" = lo ] && ok "defaults: only lo" || { not_ok "defaults: only lo"; diag "$out"; }
  DB "$ws" "$CANARY" connect-tcp "$port"
  [ "$rc" -eq 1 ] && ok "defaults canary: no TCP connect to a host 127.0.0.1 listener" || { not_ok "defaults canary: no TCP connect to a host 127.0.0.1 listener (status $rc)"; diag "$out"; }
  DB "$ws" "$CANARY" connect-abstract "berth-test-$$"
  [ "$rc" -eq 1 ] && ok "defaults canary: no connect to a host abstract socket" || { not_ok "defaults canary: no connect to a host abstract socket (status $rc)"; diag "$out"; }
  DB "$ws" "grep -rl BERTH-PLANTED-SECRET '$dh' '$nc/config' 2>/dev/null | sort"
  if [ "$out" = "$dh/visible/control"$'\n'"$nc/config/berth-secret.yaml" ]; then
    ok "defaults canary: no planted credential store is readable (only the controls are)"
  else
    not_ok "defaults canary: no planted credential store is readable (only the controls are)"
    diag "$out"
  fi
  DB "$ws" "cat '$dh/.claude/.credentials.json' '$dh/.codex/auth.json' '$dh/.hermes/.env' 2>&1"
  [[ $out != *BERTH-PLANTED* ]] && ok "defaults canary: ~/.claude, ~/.codex, ~/.hermes/.env read nothing" || not_ok "defaults canary: ~/.claude, ~/.codex, ~/.hermes/.env read nothing"

  for d in /etc /usr/local /var/lib; do
    [ -d "$d" ] || continue
    probe=berth-probe-$$-$RANDOM
    DB "$d" "touch $d/$probe"
    if [ "$rc" -eq 125 ] && [[ $out == *"system directory"* ]] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
      ok "defaults canary: $d as the workspace is refused (125, one line)"
    else
      not_ok "defaults canary: $d as the workspace is refused (125, one line; got $rc)"
      diag "$out"
    fi
    [ ! -e "$d/$probe" ] && ok "defaults canary: nothing was written in $d" || { not_ok "defaults canary: nothing was written in $d"; rm -f "$d/$probe"; }
  done
  [ -z "$(ls "$nc/state/berth/envs" 2>/dev/null)" ] && ok "defaults: a refused workspace leaves no environment behind" || not_ok "defaults: a refused workspace leaves no environment behind"
  DB /var/tmp "pwd"
  [ "$rc" -eq 0 ] && [ "$out" = /var/tmp ] && ok "defaults: /var/tmp may be the workspace" || { not_ok "defaults: /var/tmp may be the workspace"; diag "$rc: $out"; }
  printf 'terminal:\n  bwrap_profile: restricted\n' >"$nc/restricted.yaml"
  out=$(cd /etc && env HOME="$dh" XDG_CONFIG_HOME="$nc/config" XDG_STATE_HOME="$nc/state" XDG_RUNTIME_DIR="$nc/run" \
    XDG_CACHE_HOME="$nc/cache" "$BERTH_CLI" --config "$nc/restricted.yaml" exec -b bwrap -- "test -r /etc/hostname && touch /etc/$probe" 2>&1)
  [[ $out == *"Read-only file system"* ]] && [ ! -e "/etc/$probe" ] && ok "defaults: restricted gives a read-only view of /etc" || { not_ok "defaults: restricted gives a read-only view of /etc"; diag "$out"; }
  printf 'terminal:\n  bwrap_binds: ["/etc:/srv/etc:rw"]\n' >"$nc/rwbind.yaml"
  out=$(cd "$ws" && env HOME="$dh" XDG_CONFIG_HOME="$nc/config" XDG_STATE_HOME="$nc/state" XDG_RUNTIME_DIR="$nc/run" \
    XDG_CACHE_HOME="$nc/cache" "$BERTH_CLI" --config "$nc/rwbind.yaml" exec -b bwrap -- true 2>&1)
  [ $? -eq 125 ] && [[ $out == *"system directory /etc"* ]] && ok "defaults: a writable bwrap_binds entry in /etc is refused" || { not_ok "defaults: a writable bwrap_binds entry in /etc is refused"; diag "$out"; }
  out=$(env HOME="$dh" XDG_CONFIG_HOME="$nc/config" XDG_STATE_HOME="$nc/state" XDG_RUNTIME_DIR="$nc/run" "$BERTH_CLI" doctor -b bwrap 2>&1)
  [[ $out == *"terminal.bwrap_profile: workspace: writable workspace, no network"* ]] && ok "defaults: doctor shows the profile in force and what it means" || { not_ok "defaults: doctor shows the profile in force"; diag "$out"; }

  # Runtime directory: with XDG_RUNTIME_DIR unset berth falls back to
  # /tmp/berth-UID, which must be ours and 0700 (tmux, OpenSSH).
  rt=/tmp/berth-$(id -u)
  NR () { (cd "$ws" && env -u XDG_RUNTIME_DIR HOME="$dh" XDG_CONFIG_HOME="$nc/config" XDG_STATE_HOME="$nc/state" "$BERTH_CLI" exec -- "$@" 2>&1); }
  if [ -n "${BERTH_FOREIGN_RUNTIME_DIR:-}" ]; then
    # bwrap-jail.sh (root) pre-created it 0777 and root-owned for this user.
    out=$(NR true)
    [ $? -eq 125 ] && [[ $out == *"$rt belongs to uid 0"* ]] && ok "runtime dir: a root-owned 0777 $rt is refused" || { not_ok "runtime dir: a root-owned 0777 $rt is refused"; diag "$out"; }
  elif [ ! -e "$rt" ] || [ -O "$rt" ]; then
    saved=""
    [ -e "$rt" ] && { saved=$rt.saved-$$; mv "$rt" "$saved"; }
    mkdir -m 0777 "$rt" && chmod 0777 "$rt"
    out=$(NR true)
    [ $? -eq 125 ] && [[ $out == *"has mode 0777"* ]] && ok "runtime dir: a 0777 $rt is refused" || { not_ok "runtime dir: a 0777 $rt is refused"; diag "$out"; }
    rmdir "$rt"
    ln -s "$base" "$rt"
    out=$(NR true)
    [ $? -eq 125 ] && [[ $out == *"symbolic link"* ]] && ok "runtime dir: a symlink at $rt is not followed" || { not_ok "runtime dir: a symlink at $rt is not followed"; diag "$out"; }
    rm -f "$rt"
    out=$(NR 'echo fine')
    [ "$out" = fine ] && [ "$(stat -c %a "$rt")" = 700 ] && ok "runtime dir: an absent $rt is created 0700" || { not_ok "runtime dir: an absent $rt is created 0700"; diag "$out"; }
    rm -rf "$rt"
    [ -n "$saved" ] && mv "$saved" "$rt"
  fi
fi

# No ghost files in HOME, whatever the jails did.
home_after=$(cd "$home" && find . | sort)
[ "$home_before" = "$home_after" ] && ok "no ghost files created in HOME" || { not_ok "no ghost files created in HOME"; diag "$(diff <(echo "$home_before") <(echo "$home_after"))"; }

[ "$t_failed" -eq 0 ]
