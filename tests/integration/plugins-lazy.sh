# SPDX-License-Identifier: LGPL-2.1-or-later
# plugins-lazy.sh: a command loads only the module or plugin of the backend
# it uses (DESIGN 5).  An enabled plugin whose constructor calls abort()
# (the crashy fixture) breaks neither `exec -b local` nor
# `plugins enable/disable`; `exec -b local` maps neither docker.so nor
# libcurl; `-b bwrap` / `doctor -b docker` load their module (and only it);
# `backends` and `plugins list` load all.
#
# The documented limit: a library that crashes while it is loaded cannot
# be caught in-process, so the commands that load it (`exec -b crashy`,
# and the listings `backends`, `doctor`, `plugins list`) die with it;
# `berth plugins disable NAME` loads nothing and is the way out.
. "$(dirname "${BASH_SOURCE[0]}")/plugins-lib.sh"

CRASHY_SO=${BERTH_CRASHY_SO:-$BERTH_BUILDDIR/tests/fixtures/plugins/.libs/crashy.so}
[ -f "$CRASHY_SO" ] || skip_all "the crashy fixture is not built ($CRASHY_SO; needs modules)"
ulimit -c 0 # the crashes below are expected: no core files

# The libraries ld.so loads for "berth ARGS...", from LD_DEBUG=files (the
# berth process and its children; only berth dlopens modules).
loaded () { LD_DEBUG=files "$BERTH" "$@" 2>&1 >/dev/null | grep -o 'file=[^ ]*' | sed 's/^file=//' | sort -u; }

# A module build of docker (the heavy one: libcurl, yajl) and bwrap.
module_dir_of () {
  local d IFS=:
  for d in ${BERTH_MODULEDIR:-}; do [ -f "$d/$1.so" ] && { echo "$d/$1.so"; return 0; }; done
  return 1
}
docker_so=$(module_dir_of docker) || docker_so=
bwrap_so=$(module_dir_of bwrap) || bwrap_so=

# ---- (a) an enabled plugin whose constructor aborts ----
mkdir -p "$XDG_DATA_HOME/berth/plugins/crashy"
cp "$BERTH_SRCDIR/tests/fixtures/plugins/crashy/plugin.yaml" "$XDG_DATA_HOME/berth/plugins/crashy/"
cp "$CRASHY_SO" "$XDG_DATA_HOME/berth/plugins/crashy/crashy.so"
chmod 0755 "$XDG_DATA_HOME/berth/plugins/crashy/crashy.so"

out=$("$BERTH" plugins enable crashy 2>&1); rc=$?
is "$rc" 0 "plugins enable crashy loads nothing (exit 0): $out"
check "crashy is in plugins.enabled" grep -q crashy "$XDG_CONFIG_HOME/berth/config.yaml"

out=$("$BERTH" exec -b local -- echo alive 2>&1); rc=$?
is "$rc:$out" "0:alive" "exec -b local works with crashy enabled"
out=$("$BERTH" exec -b local -- true 2>&1); rc=$?
is "$rc" 0 "exec -b local -- true: exit 0"
out=$("$BERTH" exec -b nosuch -- true 2>&1); rc=$?
is "$rc" 125 "an unknown backend is 125, not a crash of crashy"
like "$out" "*unknown backend 'nosuch'*crashy*" "the error names the backends, crashy too, without loading it"
out=$("$BERTH" config get plugins.enabled 2>&1); rc=$?
is "$rc" 0 "config get works with crashy enabled"

# Using it, or listing, loads it: the process dies (the documented limit).
"$BERTH" exec -b crashy -- true >/dev/null 2>&1; rc=$?
is "$rc" 134 "exec -b crashy dies of SIGABRT (134): it uses the plugin"
"$BERTH" backends >/dev/null 2>&1; rc=$?
is "$rc" 134 "backends (load all) dies of SIGABRT too: the way out is plugins disable"

out=$("$BERTH" plugins disable crashy 2>&1); rc=$?
is "$rc:$out" "0:Plugin crashy disabled." "plugins disable crashy works with crashy enabled"
out=$("$BERTH" backends 2>&1); rc=$?
is "$rc" 0 "backends works again once crashy is disabled"
out=$("$BERTH" plugins list 2>&1); rc=$?
is "$rc" 0 "plugins list: exit 0"
check "plugins list shows crashy disabled" grep -Eq '^crashy +plugin +1\.0\.0 +no +disabled$' <<<"$out"

# ---- (b) exec -b local maps neither docker.so nor libcurl ----
libs=$(loaded exec -b local -- true)
if [ -n "$libs" ]; then
  check "exec -b local: no docker.so loaded" eval '! grep -q "/docker\.so$" <<<"$libs"'
  check "exec -b local: no libcurl loaded" eval '! grep -q "libcurl" <<<"$libs"'
  check "exec -b local: no bwrap.so loaded" eval '! grep -q "/bwrap\.so$" <<<"$libs"'
else
  not_ok "LD_DEBUG=files printed nothing for exec -b local"
fi
# The same from inside: the maps of the berth process that runs the command.
maps=$("$BERTH" exec -b local -- 'case $(tr "\0" " " </proc/$PPID/cmdline) in *berth*exec*) cat /proc/$PPID/maps;; *) echo NOT-BERTH;; esac' 2>&1)
if [ "$maps" = NOT-BERTH ]; then
  diag "the command's parent is not the berth process here: maps check skipped"
else
  check "berth's own maps show libberth (the check sees berth)" grep -q 'libberth' <<<"$maps"
  check "berth's own maps: no docker.so, no libcurl" eval '! grep -Eq "/docker\.so$|libcurl" <<<"$maps"'
fi
libs=$(loaded exec -b nosuch -- true)
check "an unknown backend's error loads no module" eval '! grep -Eq "/(docker|bwrap)\.so$" <<<"$libs"'
libs=$(loaded plugins disable crashy)
check "plugins disable loads no module" eval '! grep -Eq "/(docker|bwrap)\.so$" <<<"$libs"'

# ---- (c) the backend in use loads its module; listings load all ----
if [ -n "$bwrap_so" ]; then
  libs=$(loaded exec -b bwrap -- true)
  check "exec -b bwrap loads bwrap.so" grep -q "/bwrap\.so$" <<<"$libs"
  check "exec -b bwrap does not load docker.so" eval '! grep -q "/docker\.so$" <<<"$libs"'
else
  diag "bwrap is not a module in this build: skipped"
fi
if [ -n "$docker_so" ]; then
  # doctor -b docker loads that backend only (and talks to no container).
  libs=$(loaded doctor -b docker)
  check "doctor -b docker loads docker.so" grep -q "/docker\.so$" <<<"$libs"
  check "doctor -b docker does not load bwrap.so" eval '! grep -q "/bwrap\.so$" <<<"$libs"'
  # An engine that is not there: the module loads, the command fails
  # fast, and no daemon anyone uses is touched.
  libs=$(DOCKER_HOST=unix://$TDIR/no-docker.sock loaded exec -b docker -- true)
  check "exec -b docker loads docker.so" grep -q "/docker\.so$" <<<"$libs"
  check "exec -b docker does not load bwrap.so" eval '! grep -q "/bwrap\.so$" <<<"$libs"'
else
  diag "docker is not a module in this build: skipped"
fi
libs=$(loaded backends)
for so in "$docker_so" "$bwrap_so"; do
  [ -n "$so" ] && check "backends loads $(basename "$so")" grep -q "/$(basename "$so" | sed 's/\./\\./')$" <<<"$libs"
done
out=$("$BERTH" backends 2>&1)
for b in local ${docker_so:+docker} ${bwrap_so:+bwrap}; do
  check "backends lists $b" grep -q "^$b " <<<"$out"
done
out=$("$BERTH" plugins list 2>&1)
for b in ${docker_so:+docker} ${bwrap_so:+bwrap}; do
  check "plugins list: module $b loaded" grep -Eq "^$b +module .* yes +loaded$" <<<"$out"
done

done_testing
