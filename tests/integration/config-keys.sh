#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# config-keys.sh: each backend declares its configuration keys (provider
# ABI 2); libberth checks a file's values against them when the backend is
# used, with file:line:col, before anything is created -- built-ins and
# modules alike, with no daemon needed (the check comes first).  Also: a
# misspelt backend key gets a "did you mean", and `config set` refuses a
# bad value of a backend's key before it writes the file.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home

# case BACKEND YAML MESSAGE: `berth exec -b BACKEND` with YAML as t.yaml
# fails with 125 and exactly "berth: MESSAGE".
case_ ()
{
  local backend=$1 yaml=$2 message=$3
  printf '%s' "$yaml" >"$TEST_TMP/t.yaml"
  (cd "$TEST_TMP" && "$BERTH" --config t.yaml exec -b "$backend" -- true) >"$TEST_TMP/out" 2>"$TEST_TMP/err" </dev/null
  local rc=$? err
  err=$(cat "$TEST_TMP/err")
  is "$rc:$err" "125:berth: $message" "$backend: ${message#t.yaml:*: }"
}

case_ docker $'terminal:\n  docker_image: {a: b}\n' 't.yaml:2:17: terminal.docker_image: expected a string, got a mapping'
case_ docker $'terminal:\n  docker_volumes: /a:/a\n' 't.yaml:2:19: terminal.docker_volumes: expected a list of strings, got '"'"'/a:/a'"'"''
case_ docker $'terminal:\n  docker_network: maybe\n' 't.yaml:2:19: terminal.docker_network: expected a boolean (true/false, yes/no, on/off), got '"'"'maybe'"'"''
case_ docker $'terminal:\n  docker_env: [A=1]\n' 't.yaml:2:15: terminal.docker_env: expected a mapping of variable names to values, got a list'
case_ docker $'terminal:\n  docker_env:\n    A: [1]\n' 't.yaml:3:8: terminal.docker_env.A: expected a scalar value, got a list'
case_ docker $'terminal:\n  docker_forward_env: 3\n' 't.yaml:2:23: terminal.docker_forward_env: expected a list of strings, got '"'"'3'"'"''
case_ singularity $'terminal:\n  singularity_image: []\n' 't.yaml:2:22: terminal.singularity_image: expected a string, got a list'
case_ ssh $'terminal:\n  ssh_host: {}\n' 't.yaml:2:13: terminal.ssh_host: expected a string, got a mapping'
case_ ssh $'terminal:\n  ssh_user: [root]\n' 't.yaml:2:13: terminal.ssh_user: expected a string, got a list'
case_ ssh $'terminal:\n  ssh_key: [k]\n' 't.yaml:2:12: terminal.ssh_key: expected a string, got a list'
case_ ssh $'terminal:\n  ssh_port: 70000\n' 't.yaml:2:13: terminal.ssh_port: expected an integer from 1 to 65535, got '"'"'70000'"'"''
case_ ssh $'terminal:\n  ssh_port: 0\n' 't.yaml:2:13: terminal.ssh_port: expected an integer from 1 to 65535, got '"'"'0'"'"''
case_ bwrap $'terminal:\n  bwrap_profile: [x]\n' 't.yaml:2:18: terminal.bwrap_profile: expected one of restricted, workspace or network, got a list'
case_ bwrap $'terminal:\n  bwrap_binds: /a\n' 't.yaml:2:16: terminal.bwrap_binds: expected a list of binds ('"'"'src[:dest][:ro|rw]'"'"' or {src, dest, readonly}), got '"'"'/a'"'"''
case_ bwrap $'terminal:\n  bwrap_binds: [\':/b\']\n' 't.yaml:2:17: terminal.bwrap_binds[0]: expected '"'"'src[:dest][:ro|rw]'"'"', got '"'"':/b'"'"''
case_ bwrap $'terminal:\n  bwrap_binds: [\'/a:/b:rx\']\n' 't.yaml:2:17: terminal.bwrap_binds[0]: expected '"'"'src[:dest][:ro|rw]'"'"', got '"'"'/a:/b:rx'"'"''
case_ bwrap $'terminal:\n  bwrap_binds:\n    - dest: /x\n' 't.yaml:3:7: terminal.bwrap_binds[0]: a bind needs '"'"'src'"'"''
case_ bwrap $'terminal:\n  bwrap_binds:\n    - src: /a\n      readonly: maybe\n' 't.yaml:4:17: terminal.bwrap_binds[0].readonly: expected a boolean (true/false, yes/no, on/off), got '"'"'maybe'"'"''
case_ bwrap $'terminal:\n  bwrap_binds:\n    - [a]\n' 't.yaml:3:7: terminal.bwrap_binds[0]: expected a bind ('"'"'src[:dest][:ro|rw]'"'"' or {src, dest, readonly}), got a list'
case_ bwrap $'terminal:\n  bwrap_hide: x\n' 't.yaml:2:15: terminal.bwrap_hide: expected a list of strings, got '"'"'x'"'"''
case_ bwrap $'terminal:\n  bwrap_memory_mb: -1\n' 't.yaml:2:20: terminal.bwrap_memory_mb: expected an integer >= 0, got '"'"'-1'"'"''
case_ bwrap $'terminal:\n  bwrap_cpu_seconds: x\n' 't.yaml:2:22: terminal.bwrap_cpu_seconds: expected an integer >= 0, got '"'"'x'"'"''
case_ bwrap $'terminal:\n  bwrap_max_procs: 1e3\n' 't.yaml:2:20: terminal.bwrap_max_procs: expected an integer >= 0, got '"'"'1e3'"'"''

# A misspelt key of a backend: warned about (with a did-you-mean from the
# keys that backend declares) when the backend is used; not a failure.
printf 'terminal:\n  ssh_prot: 22\n  ssh_nothing_like_it_at_all: 1\n' >"$TEST_TMP/typo.yaml"
"$BERTH" --config "$TEST_TMP/typo.yaml" doctor -b ssh >/dev/null 2>"$TEST_TMP/err"
like "$(cat "$TEST_TMP/err")" "*typo.yaml:2:3: unknown key terminal.ssh_prot; did you mean terminal.ssh_port?*" "a misspelt backend key gets a did-you-mean from its declared keys"
like "$(cat "$TEST_TMP/err")" "*typo.yaml:3:3: unknown key terminal.ssh_nothing_like_it_at_all (ignored)*" "… and one close to nothing is ignored"
printf 'terminal:\n  ssh_port: 0\n' >"$TEST_TMP/bad.yaml"
"$BERTH" --config "$TEST_TMP/bad.yaml" doctor -b ssh --json >"$TEST_TMP/out" 2>/dev/null
like "$(cat "$TEST_TMP/out")" '*"configuration"*terminal.ssh_port: expected an integer from 1 to 65535*' "doctor reports a bad value of the backend's key as a failed check"
"$BERTH" --config "$TEST_TMP/typo.yaml" exec -b local -- true 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "another backend's keys are not checked by a local command (its module is not even loaded)"

# config set checks a backend's key with that backend's declaration.
cfgfile="$XDG_CONFIG_HOME/berth/config.yaml"
"$BERTH" config set terminal.ssh_port 2222 >/dev/null 2>&1
before=$(cat "$cfgfile")
"$BERTH" config set terminal.ssh_port 70000 >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "125:berth: $cfgfile:2:13: terminal.ssh_port: expected an integer from 1 to 65535, got '70000'" "config set refuses a value out of the declared range"
is "$(cat "$cfgfile")" "$before" "… and leaves the file untouched"
"$BERTH" config set terminal.bwrap_memory_mb 512 >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "a module backend's key is checked by loading that module (bwrap_memory_mb 512 accepted)"
"$BERTH" config set terminal.bwrap_memory_mb lots >/dev/null 2>"$TEST_TMP/err"
like "$?:$(cat "$TEST_TMP/err")" "125:berth: *terminal.bwrap_memory_mb: expected an integer >= 0, got 'lots'" "… and a bad value refused"

# berth rm works whatever the configuration says of the backend.
"$BERTH" config unset terminal.bwrap_memory_mb >/dev/null 2>&1
"$BERTH" exec -e keys-rm -- true >/dev/null 2>&1
printf 'terminal:\n  ssh_port: 0\n' >"$TEST_TMP/bad.yaml"
"$BERTH" --config "$TEST_TMP/bad.yaml" rm keys-rm >/dev/null 2>"$TEST_TMP/err"
is "$?:$(cat "$TEST_TMP/err")" "0:" "rm of an environment works with a bad value of another backend's key"

done_testing
