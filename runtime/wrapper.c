/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <berth/provider.h>
#include "wrapper.h"

char *
berth_quote_cwd (const char *cwd)
{
  if (strcmp (cwd, "~") == 0)
    return strdup ("\"$HOME\"");
  if (strncmp (cwd, "~/", 2) == 0)
    {
      _cleanup_free_ char *q = berth_shell_quote (cwd + 2);
      return q ? berth_strdup_printf ("\"$HOME\"/%s", q) : NULL;
    }
  return berth_shell_quote (cwd);
}

/* Emits the state records; runs as the EXIT trap so `exit N` in the
   command still reports (when fd 9 is open).  Builtins only: no fork.
   The runtime filters the exported names before keeping anything.  */
static const char exit_fn[] =
  "__berth_exit () {\n"
  "  __berth_ec=$?\n"
  "  trap - EXIT\n"
  "  {\n"
  "    printf '\\0BERTH:cwd:'; builtin pwd -P\n"
  "    printf '\\0BERTH:env:'; export -p\n"
  "    printf '\\0BERTH:fn:'; declare -f; alias -p\n"
  "    if [ -n \"${__berth_sig-}\" ]; then printf '\\0BERTH:sig:%s' \"$__berth_sig\"; fi\n"
  "    printf '\\0BERTH:ec:%d\\0' \"$__berth_ec\"\n"
  "  } 2>/dev/null >&9\n"
  "  exit \"$__berth_ec\"\n"
  "}\n";

/* Signals that kill bash by default, trapped so that the wrapper dies of
   them as `exit 128+N`: the EXIT trap still reports the state (fd 9 is
   back by then), and every transport sees the status -- ssh would say
   255 for a remote shell killed by a signal.  The cost: bash runs a trap
   only once a foreground child ends, so a TERM sent to the wrapper from
   outside waits for it (berth itself kills with SIGKILL).  The trap
   names the signal in __berth_sig, which the exit record carries
   ("BERTH:sig:SEGV"): the command's own shell died of it, not an
   `exit 139`.  A child process killed by a signal is only 128+N to
   bash ($?), and stays an exit status.  Not HUP, INT,
   QUIT, PIPE: they mean a lost terminal, ^C or a closed reader, where
   bash's own handling is wanted.  N is the environment's own number.
   One redirection for the loop, not one per trap: each is an open of
   /dev/null and a save and restore of fd 2 in every command's wrapper.  */
static const char signal_traps[] =
  "{ for __berth_s in ILL TRAP ABRT BUS FPE SEGV SYS TERM USR1 USR2 ALRM VTALRM PROF XCPU XFSZ; do\n"
  "  trap \"__berth_sig=$__berth_s; exit \\$((128 + \\$(kill -l $__berth_s)))\" \"$__berth_s\"\n"
  "done; } 2>/dev/null\n";

/* Why $__berth_cwd cannot be entered, from the deepest part of it that
   exists (locale-independent, no fork).  */
static const char cwd_why[] =
  "  __berth_d=$__berth_cwd\n"
  "  while [ -n \"$__berth_d\" ] && ! [ -e \"$__berth_d\" ]; do\n"
  "    case $__berth_d in */*) __berth_d=${__berth_d%/*} ;; *) __berth_d= ;; esac\n"
  "  done\n"
  "  if [ -n \"$__berth_d\" ] && ! [ -d \"$__berth_d\" ]; then __berth_why='not a directory'\n"
  "  elif [ -n \"$__berth_d\" ] && ! [ -x \"$__berth_d\" ]; then __berth_why='permission denied'\n"
  "  elif [ \"$__berth_d\" = \"$__berth_cwd\" ]; then __berth_why='cannot be entered'\n"
  "  else __berth_why='no such directory'; fi\n";

/* A cwd asked for with this command must be usable: the failure goes to
   the state channel, the command does not run.  */
static const char cd_strict[] =
  "  printf '\\0BERTH:cwderr:%s\\0' \"$__berth_why\" >&9\n"
  "  trap - EXIT\n"
  "  exit 125\n"
  "fi\n";

/* The environment's own cwd falls back to the nearest ancestor that can
   be entered, with a note.  */
static const char cd_fallback[] =
  "  __berth_d=$__berth_cwd\n"
  "  while :; do\n"
  "    case $__berth_d in */*) __berth_d=${__berth_d%/*} ;; *) __berth_d= ;; esac\n"
  "    [ -n \"$__berth_d\" ] || __berth_d=/\n"
  "    builtin cd -- \"$__berth_d\" 2>/dev/null && break\n"
  "    if [ \"$__berth_d\" = / ]; then builtin cd -- \"${HOME:-/}\" 2>/dev/null || builtin cd /; break; fi\n"
  "  done\n"
  "  if [ \"$__berth_why\" = 'no such directory' ]; then\n"
  "    printf 'berth: working directory %s no longer exists; running in %s\\n' \"$__berth_cwd\" \"$PWD\"\n"
  "  else\n"
  "    printf 'berth: working directory %s: %s; running in %s\\n' \"$__berth_cwd\" \"$__berth_why\" \"$PWD\"\n"
  "  fi\n"
  "fi\n";

char *
berth_script_build (const berth_script_spec *spec)
{
  berth_buf b = { 0 };
  _cleanup_free_ char *qcmd = berth_shell_quote (spec->command);
  _cleanup_free_ char *qcwd = spec->cwd ? berth_quote_cwd (spec->cwd) : NULL;
  if (qcmd == NULL)
    return NULL;

  /* State channel on 9, the command's stderr joins stdout.  */
  berth_buf_puts (&b, "exec 9>&2 2>&1 3<&-\n");
  berth_buf_puts (&b, "printf '\\0BERTH:pid:%d\\0' \"$$\" >&9\n");
  berth_buf_puts (&b, "shopt -s expand_aliases\n");
  if (spec->snapshot && *spec->snapshot)
    {
      berth_buf_puts (&b, "{\n");
      berth_buf_puts (&b, spec->snapshot);
      berth_buf_puts (&b, "\n} >/dev/null 2>&1\nset +e +u\n");
    }
  for (size_t i = 0; spec->exports && spec->exports[i]; i++)
    {
      const char *eq = strchr (spec->exports[i], '=');
      if (eq == NULL)
        continue;
      _cleanup_free_ char *name = strndup (spec->exports[i], (size_t) (eq - spec->exports[i]));
      _cleanup_free_ char *qv = berth_shell_quote (eq + 1);
      if (name && qv)
        berth_buf_printf (&b, "export %s=%s\n", name, qv);
    }
  berth_buf_puts (&b, "export PAGER=\"${PAGER:-cat}\" GIT_PAGER=\"${GIT_PAGER:-cat}\"\n");
  berth_buf_printf (&b, "export BERTH_JOB=%s\n", spec->job);
  berth_buf_puts (&b, exit_fn);
  berth_buf_puts (&b, "trap __berth_exit EXIT\n");
  berth_buf_puts (&b, signal_traps);
  if (qcwd)
    {
      berth_buf_printf (&b, "__berth_cwd=%s\n", qcwd);
      berth_buf_puts (&b, "if ! builtin cd -- \"$__berth_cwd\" 2>/dev/null; then\n");
      berth_buf_puts (&b, cwd_why);
      berth_buf_puts (&b, spec->cwd_strict ? cd_strict : cd_fallback);
    }
  berth_buf_printf (&b, "unset __berth_s __berth_sig __berth_cwd __berth_d __berth_why\neval %s 9>&-\n", qcmd);
  return berth_buf_steal (&b);
}

char *
berth_kill_script (const char *job, long wrapper_pid)
{
  /* mapfile reads a whole environ at once: ~3x faster than read -d ''.
     Passes repeat while something was found, to catch forks in flight. */
  return xasprintf (
    "__w=%ld __t='BERTH_JOB=%s'\n"
    "for __i in 1 2 3 4 5 6; do\n"
    "  __found=\n"
    "  for __p in /proc/[0-9]*; do\n"
    "    __pid=${__p#/proc/}\n"
    "    [ \"$__pid\" = \"$$\" ] && continue\n"
    "    __hit=\n"
    "    if [ \"$__w\" -gt 1 ] && IFS= read -r __st 2>/dev/null < \"$__p/stat\"; then\n"
    "      __st=${__st##*) }; set -f; set -- $__st; set +f\n"
    "      { [ \"$3\" = \"$__w\" ] || [ \"$4\" = \"$__w\" ]; } && __hit=1\n"
    "    fi\n"
    "    if [ -z \"$__hit\" ] && mapfile -d '' -t __e 2>/dev/null < \"$__p/environ\"; then\n"
    "      case \" ${__e[*]} \" in *\" $__t \"*) __hit=1 ;; esac\n"
    "    fi\n"
    "    [ -n \"$__hit\" ] && kill -9 \"$__pid\" 2>/dev/null && __found=1\n"
    "  done\n"
    "  [ -n \"$__found\" ] || break\n"
    "done\n"
    "exit 0\n",
    wrapper_pid, job);
}

/* One complete field (between NULs).  */
static void
state_field (berth_state *st, const char *f, size_t len, bool framed)
{
  if (len == 0)
    return;
  /* A record is framed by NULs on both sides: the first field of the
     stream and an unterminated last one are plain text.  */
  if (!framed || len < 6 || memcmp (f, "BERTH:", 6) != 0)
    {
      if (st->diag.len < 65536)
        berth_buf_append (&st->diag, f, len);
      return;
    }
  f += 6, len -= 6;
  if (len >= 4 && memcmp (f, "pid:", 4) == 0)
    {
      _cleanup_free_ char *v = strndup (f + 4, len - 4);
      st->pid = v ? strtol (v, NULL, 10) : 0;
      st->have_pid = true;
    }
  else if (len >= 3 && memcmp (f, "ec:", 3) == 0)
    {
      _cleanup_free_ char *v = strndup (f + 3, len - 3);
      st->ec = v ? (int) strtol (v, NULL, 10) : 255;
      st->have_ec = true;
    }
  else if (len >= 4 && memcmp (f, "sig:", 4) == 0)
    {
      /* a signal name as `kill -l` gives it: letters, digits, + and - */
      size_t n = len - 4;
      bool ok = n > 0 && n < sizeof st->sig;
      for (size_t i = 0; ok && i < n; i++)
        ok = (f[4 + i] >= 'A' && f[4 + i] <= 'Z') || (f[4 + i] >= '0' && f[4 + i] <= '9') || f[4 + i] == '+' || f[4 + i] == '-';
      if (ok)
        {
          memcpy (st->sig, f + 4, n);
          st->sig[n] = '\0';
          st->have_sig = true;
        }
    }
  else if (len >= 7 && memcmp (f, "cwderr:", 7) == 0)
    {
      free (st->cwd_error);
      st->cwd_error = len > 7 ? strndup (f + 7, len - 7) : strdup ("cannot be entered");
    }
  else if (len >= 4 && memcmp (f, "cwd:", 4) == 0)
    {
      size_t n = len - 4;
      if (n > 0 && f[4 + n - 1] == '\n')
        n--;
      free (st->cwd);
      st->cwd = n ? strndup (f + 4, n) : NULL;
      st->have_cwd = st->cwd != NULL;
    }
  else if (len >= 4 && memcmp (f, "env:", 4) == 0)
    {
      free (st->env);
      st->env = strndup (f + 4, len - 4);
      st->env_len = st->env ? len - 4 : 0;
    }
  else if (len >= 3 && memcmp (f, "fn:", 3) == 0)
    {
      free (st->fn);
      st->fn = strndup (f + 3, len - 3);
    }
}

int
berth_state_feed (berth_state *st, const char *data, size_t len)
{
  const char *end = data + len;
  while (data < end)
    {
      const char *nul = memchr (data, '\0', (size_t) (end - data));
      if (nul == NULL)
        {
          if (st->raw.len + (size_t) (end - data) > BERTH_STATE_MAX)
            {
              st->overflow = true;
              st->raw.len = 0;
              return -EFBIG;
            }
          return berth_buf_append (&st->raw, data, (size_t) (end - data));
        }
      if (st->raw.len)
        {
          berth_buf_append (&st->raw, data, (size_t) (nul - data));
          state_field (st, st->raw.data, st->raw.len, st->seen_nul);
          st->raw.len = 0;
        }
      else
        state_field (st, data, (size_t) (nul - data), st->seen_nul);
      st->seen_nul = true;
      data = nul + 1;
    }
  return 0;
}

void
berth_state_end (berth_state *st)
{
  if (st->raw.len)
    state_field (st, st->raw.data, st->raw.len, false);
  st->raw.len = 0;
}

void
berth_state_free (berth_state *st)
{
  berth_buf_free (&st->raw);
  berth_buf_free (&st->diag);
  free (st->cwd);
  free (st->cwd_error);
  free (st->env);
  free (st->fn);
  *st = (berth_state){ 0 };
}
