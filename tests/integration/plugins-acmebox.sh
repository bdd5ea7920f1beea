# SPDX-License-Identifier: LGPL-2.1-or-later
# plugins-acmebox.sh: the example out-of-tree plugin, built with its plain
# Makefile, installed, enabled and driven through the berth command like
# a built-in backend; a broken plugin next to it changes nothing.
. "$(dirname "${BASH_SOURCE[0]}")/plugins-lib.sh"

if build_acmebox; then ok "acmebox builds with its plain Makefile (-Wall -Wextra -Werror) and installs"
else not_ok "acmebox builds with its plain Makefile"; diag "$(cat "$TDIR/acmebox-build.log")"; done_testing; fi

check "installed: plugin.yaml and the library" test -f "$ACMEBOX_DIR/plugin.yaml" -a -f "$ACMEBOX_DIR/acmebox.so"
exports=$(nm -D --defined-only "$ACMEBOX_DIR/acmebox.so" | awk '$2 == "T" || $2 == "D" || $2 == "B" {print $3}' | grep -v '^_' | tr '\n' ' ')
check "the library exports only the entry symbol ($exports)" test "$exports" = "berth_provider_entry_v2 "

out=$("$BERTH" plugins list 2>&1); rc=$?
check "plugins list before enabling: exit 0" test "$rc" = 0
check "acmebox listed as installed but disabled" grep -Eq '^acmebox +plugin +1\.0\.0 +no +disabled$' <<<"$out"
out=$("$BERTH" exec -b acmebox -- echo hi 2>&1); rc=$?
check "a disabled plugin is not a backend (exit 125)" test "$rc" = 125
check "and the error is one line" test "$(wc -l <<<"$out")" = 1

out=$("$BERTH" plugins enable acmebox 2>&1); rc=$?
check "plugins enable acmebox: exit 0" test "$rc" = 0
check "plugins.enabled written to the user config" grep -q 'acmebox' "$XDG_CONFIG_HOME/berth/config.yaml"
out=$("$BERTH" plugins enable acmebox 2>&1); rc=$?
check "enabling again is a no-op" test "$rc" = 0 -a "$(grep -c acmebox "$XDG_CONFIG_HOME/berth/config.yaml")" = 1

out=$("$BERTH" plugins list --json 2>&1)
check "plugins list --json: loaded" grep -q '"name": "acmebox", "kind": "plugin", "version": "1.0.0".*"enabled": true, "loaded": true, "status": "loaded"' <<<"$out"
out=$("$BERTH" backends 2>&1); rc=$?
check "berth backends lists acmebox" grep -q '^acmebox ' <<<"$out"
diag "$out"

out=$("$BERTH" exec -b acmebox -- echo hi 2>&1); rc=$?
check "berth exec -b acmebox -- echo hi" test "$out" = hi -a "$rc" = 0
out=$("$BERTH" exec -b acmebox -- 'echo "$HOME"; pwd' 2>&1)
home=$(head -1 <<<"$out")
check "HOME is the environment's own, under the state directory ($home)" \
  test "${home#"$XDG_STATE_HOME"/}" != "$home" -a "${home%/home}" != "$home"
check "commands start in that HOME" test "$(sed -n 2p <<<"$out")" = "$home"
out=$("$BERTH" exec -b acmebox -- 'exit 7' 2>&1); rc=$?
check "exit status passes through" test "$rc" = 7
out=$("$BERTH" exec -b acmebox -- "printf '%s|' 'a b' '\$x' \"it's\"" 2>&1)
check "quotes and \$ arrive unchanged ($out)" test "$out" = "a b|\$x|it's|"
out=$("$BERTH" exec -b acmebox --json -- 'echo hi' 2>&1)
check "--json names the plugin backend" grep -q '"backend":"acmebox"' <<<"$out"

"$BERTH" exec -b acmebox -e plug1 -- 'mkdir -p work && cd work && export ACME_X=42' >/dev/null 2>&1
out=$("$BERTH" exec -e plug1 -- 'echo "$ACME_X $(basename "$PWD")"' 2>&1)
check "named environment keeps cwd and exports across invocations ($out)" test "$out" = "42 work"
"$BERTH" rm plug1 >/dev/null 2>&1
check "berth rm removes it" test "$("$BERTH" ls 2>/dev/null | grep -c plug1)" = 0

# The plugin's strip_env_keys apply to every backend while it is loaded.
out=$(ACMEBOX_LICENSE_KEY=topsecret "$BERTH" exec -b local -- 'echo "${ACMEBOX_LICENSE_KEY-unset}"' 2>&1)
check "acmebox's strip_env_keys are stripped from local too" test "$out" = unset
out=$(ACMEBOX_LICENSE_KEY=topsecret "$BERTH" exec -b acmebox -- 'echo "${ACMEBOX_LICENSE_KEY-unset}"' 2>&1)
check "... and from acmebox" test "$out" = unset

# Selected like a built-in through the configuration.
if "$BERTH" config set terminal.backend acmebox >/dev/null 2>&1; then
  out=$("$BERTH" exec -- 'echo "$ACMEBOX_ENV"' 2>&1)
  check "terminal.backend: acmebox selects the plugin ($out)" test -n "$out"
  "$BERTH" config set terminal.backend local >/dev/null 2>&1
else
  not_ok "berth config set terminal.backend acmebox"
fi

# A broken enabled plugin next to it: one-line reason, nothing else breaks.
mkdir -p "$XDG_DATA_HOME/berth/plugins/broken"
printf 'name: broken\nkind: backend\nlibrary: [oops\n' > "$XDG_DATA_HOME/berth/plugins/broken/plugin.yaml"
mkdir -p "$XDG_DATA_HOME/berth/plugins/nolib"
printf 'name: nolib\nkind: backend\nlibrary: nolib.so\nversion: "2"\n' > "$XDG_DATA_HOME/berth/plugins/nolib/plugin.yaml"
"$BERTH" plugins enable broken >/dev/null 2>&1
"$BERTH" plugins enable nolib >/dev/null 2>&1
out=$("$BERTH" plugins list 2>&1); rc=$?
check "plugins list with broken plugins: exit 0" test "$rc" = 0
check "malformed plugin.yaml: one-line reason with file:line" grep -Eq '^broken +plugin .* yes +malformed plugin.yaml: .*plugin.yaml:[0-9]+:[0-9]+' <<<"$out"
check "missing library: one-line reason" grep -Eq '^nolib +plugin +2 +yes +library .*nolib.so not found' <<<"$out"
diag "$out"
out=$("$BERTH" exec -b acmebox -- echo still 2>&1); rc=$?
check "acmebox still works next to broken plugins" test "$out" = still -a "$rc" = 0
out=$("$BERTH" exec -b local -- echo still 2>&1); rc=$?
check "local still works next to broken plugins" test "$out" = still -a "$rc" = 0
out=$("$BERTH" doctor 2>&1); rc=$?
check "berth doctor fails (exit 1)" test "$rc" = 1
check "doctor names the broken plugin with its reason" grep -q 'broken.*malformed plugin.yaml' <<<"$out"
check "doctor gives nolib's reason" grep -q 'nolib.*not found' <<<"$out"
diag "$out"

out=$("$BERTH" plugins disable acmebox 2>&1); rc=$?
check "plugins disable acmebox" test "$rc" = 0
check "plugins.enabled keeps the others" grep -q 'broken' "$XDG_CONFIG_HOME/berth/config.yaml"
out=$("$BERTH" exec -b acmebox -- echo hi 2>&1); rc=$?
check "disabled again: not a backend (125)" test "$rc" = 125
out=$("$BERTH" plugins enable nosuch 2>&1); rc=$?
check "enable an uninstalled plugin: 125 and one line" test "$rc" = 125 -a "$(wc -l <<<"$out")" = 1
out=$("$BERTH" plugins enable ssh 2>&1); rc=$?
check "enable a reserved name: 125" test "$rc" = 125

done_testing
