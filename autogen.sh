#!/bin/sh
# Generate the build system; runs configure unless NOCONFIGURE is set.
set -e
cd "$(dirname "$0")"
autoreconf --force --install
test -n "$NOCONFIGURE" || exec ./configure "$@"
