/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* agent-place.c: placing berth-agent in an environment without touching
   its image.  The binary goes to a cache directory inside the
   environment, named after the agent's version and the hash of its file:
   $TMPDIR/.berth-agent-<tag> (default /tmp), else
   ~/.cache/berth/agent-<tag>.  It is checked there with sha256sum
   (busybox has it) before every start, and uploaded through the
   environment's own transport when missing or different (an old agent
   in place is replaced).  */
#include "config.h"

#include <string.h>

#include "agent-client.h"

/* ---- the scripts (POSIX sh: busybox's is enough) ---- */

/* The candidate directories, in order (index 0, 1).  A directory is used
   only when it is ours alone (private): a real directory, not a symlink,
   owned by our uid, that neither group nor others may write -- on a
   shared /tmp another user could have made it first, with a socket in
   it that would receive our commands.  `ls -ldn` is in every POSIX sh
   environment (busybox too), unlike stat -c.  */
#define PRIVATE_FN "private () { [ -d \"$1\" ] && [ ! -L \"$1\" ] || return 1; set -- $(ls -ldn \"$1\" 2>/dev/null); [ \"$3\" = \"$(id -u)\" ] || return 1; case $1 in d????" "-?" "?-*) return 0;; esac; return 1; }\n"
#define DIRS "\"${TMPDIR:-/tmp}/.berth-agent-$tag\" \"${HOME:-/nonexistent}/.cache/berth/agent-$tag\""

char *
berth_agent_start_script (const char *arch, const char *hash, const char *dir_tag, const char *sock_name, bool serve)
{
  /* Prints one line when it does not become the agent:
     "BERTH-AGENT-NO:<why>" (it cannot run here), "BERTH-AGENT-NEED"
     (upload it).  Else the agent's first frame follows.  */
  return berth_strdup_printf ("arch='%s' hash='%s' tag='%s' sock='%s' serve='%s'\n"
                              "m=$(uname -m 2>/dev/null) || m=unknown\n"
                              "if [ \"$m\" != \"$arch\" ]; then echo \"BERTH-AGENT-NO:the environment's architecture is $m, the agent's $arch\"; exit 0; fi\n"
                              PRIVATE_FN
                              "for d in " DIRS "; do\n"
                              "  private \"$d\" || continue\n"
                              /* a serving agent binds its socket there: not in a copy
                                 it can run but not write beside (a home read-only in a jail) */
                              "  [ -z \"$serve\" ] || [ -w \"$d\" ] || continue\n"
                              "  f=$d/berth-agent\n"
                              "  if [ -x \"$f\" ] && h=$(sha256sum \"$f\" 2>/dev/null) && [ \"${h%%%% *}\" = \"$hash\" ]; then\n"
                              "    [ -z \"$serve\" ] || echo \"BERTH-AGENT-AT:$d/$sock\"\n"
                              "    exec \"$f\" --stdio --socket \"$d/$sock\" $serve\n"
                              "  fi\n"
                              "done\n"
                              "command -v sha256sum >/dev/null 2>&1 || { echo 'BERTH-AGENT-NO:the environment has no sha256sum to check the agent with'; exit 0; }\n"
                              "echo BERTH-AGENT-NEED\n",
                              arch, hash, dir_tag, sock_name, serve ? "--serve" : "");
}

char *
berth_agent_upload_script (const char *hash, const char *dir_tag)
{
  /* stdin: the binary, written into the first directory where a program
     may run (a noexec /tmp is skipped by a probe script before any byte
     is sent).  Prints "BERTH-AGENT-OK", else "BERTH-AGENT-NO:<why>".  */
  return berth_strdup_printf ("hash='%s' tag='%s' why='no writable directory allows running programs'\n"
                              PRIVATE_FN
                              "for d in " DIRS "; do\n"
                              "  [ -e \"$d\" ] || [ -L \"$d\" ] || { mkdir -p \"${d%%/*}\" 2>/dev/null; mkdir -m 700 \"$d\" 2>/dev/null; }\n"
                              "  [ -L \"$d\" ] || chmod 700 \"$d\" 2>/dev/null\n"
                              "  private \"$d\" || continue\n"
                              "  p=$d/.probe.$$\n"
                              "  if printf '#!/bin/sh\\nexit 0\\n' >\"$p\" 2>/dev/null && chmod 700 \"$p\" && \"$p\" 2>/dev/null; then rm -f \"$p\"; else\n"
                              "    rm -f \"$p\"; rmdir \"$d\" 2>/dev/null; continue\n"
                              "  fi\n"
                              "  t=$d/.tmp.$$\n"
                              "  if ! cat >\"$t\"; then rm -f \"$t\"; echo \"BERTH-AGENT-NO:cannot write $d\"; exit 0; fi\n"
                              "  chmod 700 \"$t\"\n"
                              "  h=$(sha256sum \"$t\" 2>/dev/null)\n"
                              "  if [ \"${h%%%% *}\" != \"$hash\" ]; then rm -f \"$t\"; echo \"BERTH-AGENT-NO:the copy in $d is damaged\"; exit 0; fi\n"
                              "  if ! \"$t\" --version >/dev/null 2>&1; then rm -f \"$t\"; echo \"BERTH-AGENT-NO:the agent does not run in $d\"; exit 0; fi\n"
                              "  mv -f \"$t\" \"$d/berth-agent\" && { echo BERTH-AGENT-OK; exit 0; }\n"
                              "  rm -f \"$t\"; echo \"BERTH-AGENT-NO:cannot install into $d\"; exit 0\n"
                              "done\n"
                              "cat >/dev/null; echo \"BERTH-AGENT-NO:$why\"\n",
                              hash, dir_tag);
}
