# SPDX-License-Identifier: LGPL-2.1-or-later
# bench-env.sh: what the shell benches share (source it with the bench's
# name): B, the build directory (BERTH_BUILDDIR, default .) and BERTH in
# it; an uninstalled build's modules and agent, as libtest.sh and
# bench-exec.sh find them (else berth looks where it would be installed);
# T, a private berth home removed at exit, and CLEAN, commands run at exit
# before that (the named environments a bench made).
B=${BERTH_BUILDDIR:-.}
BERTH=${BERTH:-$B/berth}
if [ -x "$B/agent/berth-agent" ]; then
  d=$(cd "$B" && pwd)
  : "${BERTH_MODULEDIR:=$d/docker/.libs:$d/bwrap/.libs:$d/local/.libs:$d/ssh/.libs:$d/singularity/.libs:$d/slurm/.libs}"
  : "${BERTH_LIBEXECDIR:=$d:$d/agent:$d/bwrap:$d/ssh:$d/slurm}"
  : "${BERTH_BINDIR:=$d}"
  export BERTH_MODULEDIR BERTH_LIBEXECDIR BERTH_BINDIR
fi
T=$(mktemp -d "/tmp/berth-$1.XXXXXX")
export XDG_STATE_HOME=$T/state XDG_RUNTIME_DIR=$T/run XDG_CONFIG_HOME=$T/config
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
CLEAN=()
trap 'for c in "${CLEAN[@]}"; do eval "$c"; done; rm -rf "$T"' EXIT
