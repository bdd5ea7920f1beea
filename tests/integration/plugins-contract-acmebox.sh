# SPDX-License-Identifier: LGPL-2.1-or-later
# plugins-contract-acmebox.sh: berth's contract suite against acmebox
# loaded as a plugin (built with its plain Makefile, installed, enabled).
. "$(dirname "${BASH_SOURCE[0]}")/plugins-lib.sh"
command -v jq >/dev/null || skip_all "jq is not installed"

if ! build_acmebox; then
  echo "1..1"; echo "not ok 1 - acmebox builds with its plain Makefile"
  sed 's/^/# /' "$TDIR/acmebox-build.log"; exit 1
fi
# The suite makes a private home of its own: pass the plugin directory and
# its enabling explicitly.
export BERTH_PLUGINDIR=$XDG_DATA_HOME/berth/plugins
export BERTH_CONFIG=$TDIR/enable-acmebox.yaml
printf 'plugins:\n  enabled: [acmebox]\n' > "$BERTH_CONFIG"
origin=$("$BERTH" backends --json 2>/dev/null | jq -r '.[] | select(.name == "acmebox") | .origin' 2>/dev/null)
if [ "$origin" != "$BERTH_PLUGINDIR/acmebox/acmebox.so" ]; then
  echo "1..1"; echo "not ok 1 - acmebox is loaded as a plugin (origin: '$origin')"
  "$BERTH" plugins list 2>&1 | sed 's/^/# /'; exit 1
fi
echo "# acmebox loaded as a plugin from $origin"
bash "$BERTH_SRCDIR/tests/contract/contract.sh" acmebox
