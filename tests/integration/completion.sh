#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# completion.sh: the completion scripts generated from the command table
# load in bash, zsh and fish and complete subcommands, options, backend
# and environment names; `berth help [COMMAND]` and -V.
. "$(dirname "${BASH_SOURCE[0]}")/libtest.sh"
berth_test_home
for sh in zsh fish; do
  command -v $sh >/dev/null || skip_all "$sh is not installed (tools/bootstrap.sh installs it)"
done
gen=$BERTH_BUILDDIR/cli/completion
# A `berth` on PATH, as a user has it (fish completes by command name).
mkdir -p "$TEST_TMP/bin"
printf '#!/bin/sh\nexec %q "$@"\n' "$BERTH" >"$TEST_TMP/bin/berth"
chmod +x "$TEST_TMP/bin/berth"
export PATH=$TEST_TMP/bin:$PATH

for sh in bash zsh fish; do
  f=$(find "$gen/$sh" -type f | head -1)
  check "the build generated the $sh script ($f) as berth completion $sh prints it" cmp -s "$f" <("$BERTH" completion $sh)
done
check "bash -n accepts it" bash -n "$gen/bash/berth"
check "zsh -n accepts it" zsh -n "$gen/zsh/_berth"
check "fish -n accepts it" fish -n "$gen/fish/berth.fish"

# bash: the function `complete -p berth` names, called as readline would.
bash_complete ()
{
  bash -c '
    source "$1"; shift
    spec=$(complete -p berth) || exit 1
    fn=${spec#*-F }; fn=${fn%% *}
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    "$fn" berth "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    [ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ "$gen/bash/berth" "$@" | sort | tr '\n' ' '
}
is "$(bash_complete berth e)" "exec exec-prefix exec-stream " "bash: berth e<TAB> offers exec (and exec-prefix, exec-stream)"
commands=$("$BERTH" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z-]*\) .*/\1/p' | sort | tr '\n' ' ')
is "$(bash_complete berth '')" "$commands" "bash: berth <TAB> offers every command of berth --help"
is "$(bash_complete berth exec --max)" "--max-bytes " "bash: options of the command (exec --max<TAB>)"
like "$(bash_complete berth exec -b '')" "*local *" "bash: -b <TAB> offers the backend names (berth backends --names)"
is "$(bash_complete berth exec -b '')" "$("$BERTH" backends --names | sort | tr '\n' ' ')" "… all of them"
is "$(bash_complete berth --config /dev/null ex)" "exec exec-prefix exec-stream " "bash: after a global option"
is "$(bash_complete berth config l)" "list " "bash: subcommands (config l<TAB>)"
is "$(bash_complete berth config list --s)" "--show-origin " "bash: a subcommand's options"
is "$(bash_complete berth completion '')" "bash fish zsh " "bash: berth completion <TAB> offers the shells"
is "$(bash_complete berth exec -- --m)" "" "bash: after -- no berth option is offered"
"$BERTH" exec -e compl-one -- true >/dev/null
"$BERTH" exec -e compl-two -- true >/dev/null
is "$(bash_complete berth rm compl-)" "compl-one compl-two " "bash: berth rm <TAB> offers the environment names (berth ls --names)"
is "$(bash_complete berth exec -e compl-t)" "compl-two " "bash: so does -e"
is "$("$BERTH" ls --names | sort | tr '\n' ' ')" "compl-one compl-two " "berth ls --names: one name a line"

# zsh: the completion system's builtins stubbed to print what they are given.
zsh_complete ()
{
  zsh -f -c '
    compdef () { : }
    _describe () { local a=${@[-1]}; print -rl -- ${${(P)a}%%:*} }
    compadd () { [[ $1 == -- ]] && shift; print -rl -- "$@" }
    _files () { print -r -- "<files>" }
    _command_names () { print -r -- "<commands>" }
    _message () { : }
    source $1; shift
    words=("$@"); CURRENT=$#
    _berth' _ "$gen/zsh/_berth" "$@" | sort | tr '\n' ' '
}
like "$(zsh_complete berth e)" "* exec exec-prefix exec-stream *" "zsh: berth e<TAB> offers the commands (zsh filters by prefix)"
like "$(zsh_complete berth rm '')" "*compl-one compl-two *" "zsh: berth rm <TAB> offers the environment names"
like "$(zsh_complete berth exec -b '')" "*local *" "zsh: -b <TAB> offers the backend names"
like "$(zsh_complete berth exec --m)" "*--max-bytes *" "zsh: options"

fish_complete () { fish -c "source '$gen/fish/berth.fish'; complete -C '$*'" | cut -f1 | sort | tr '\n' ' '; }
is "$(fish_complete berth e)" "exec exec-prefix exec-stream " "fish: berth e<TAB> offers exec"
is "$(fish_complete berth rm compl-)" "compl-one compl-two " "fish: berth rm <TAB> offers the environment names"
like "$(fish_complete berth exec -b '')" "*local *" "fish: -b <TAB> offers the backend names"
is "$(fish_complete berth config list --s)" "--show-origin " "fish: a subcommand's options"
"$BERTH" rm compl-one compl-two >/dev/null

# help, -V
help_exec=$("$BERTH" help exec)
like "$help_exec" "Usage: berth exec *--max-bytes N*" "berth help exec prints exec's usage and options"
is "$help_exec" "$("$BERTH" exec --help)" "… the same as berth exec --help"
is "$("$BERTH" help config list | head -1)" "Usage: berth config list [--show-origin] [--json]" "berth help config list: a subcommand's usage"
like "$("$BERTH" help)" "Usage: berth *Commands:*" "berth help: berth's usage"
"$BERTH" help frobnicate >/dev/null 2>"$TEST_TMP/err"; rc=$?
check "berth help of an unknown command: 125, one line" bash -c "[ $rc = 125 ] && [ \$(wc -l <'$TEST_TMP/err') = 1 ]"
is "$("$BERTH" -V)" "$("$BERTH" --version)" "-V is --version"
is "$("$BERTH" -V)" "$("$BERTH" version)" "… is berth version"
"$BERTH" completion tcsh >/dev/null 2>"$TEST_TMP/err"; rc=$?
check "berth completion tcsh: 125, one line naming the shells" bash -c "[ $rc = 125 ] && [ \$(wc -l <'$TEST_TMP/err') = 1 ] && grep -q 'bash, zsh or fish' '$TEST_TMP/err'"
done_testing
