#!/bin/bash
# yaml-include.sh: DESIGN's module boundary "<yaml.h> only in
# runtime/conf-parse.c" -- no other source file of the tree includes it,
# and the configuration tree (conf-private.h) keeps no libyaml type.
set -u
top=${BERTH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
echo "1..2"
found=$(cd "$top" && grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]yaml\.h[>"]' \
  --include='*.c' --include='*.h' --exclude-dir='_build*' --exclude-dir=.git . | sed 's|^\./||' | sort)
if [ "$found" = "runtime/conf-parse.c" ]; then
  echo "ok 1 - only runtime/conf-parse.c includes <yaml.h>"
else
  echo "not ok 1 - only runtime/conf-parse.c includes <yaml.h>"
  printf '# includes it: %s\n' $found
fi
if grep -qE '\byaml_|YAML_' "$top/runtime/conf-private.h" "$top/runtime/conf.h"; then
  echo "not ok 2 - the tree's headers name no libyaml type"
else
  echo "ok 2 - the tree's headers name no libyaml type"
fi
