/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shell-rc.c: the rc file that gives an interactive shell (berth shell)
   the environment's state.  */
#include "config.h"

#include "scope.h"
#include "wrapper.h"

BERTH_EXPORT int
berth_env_shell_rc (berth_env *env, char **ret, berth_error **reterr)
{
  *ret = NULL;
  int r = berth_scope_check (env, reterr);
  if (r < 0)
    return r;
  berth_env_refresh (env);
  _cleanup_free_ char *qcwd = env->cwd ? berth_quote_cwd (env->cwd) : NULL;
  berth_buf b = { 0 };
  /* what the last command left: exports, functions, aliases */
  berth_buf_puts (&b, "shopt -s expand_aliases\n");
  if (env->snapshot && *env->snapshot)
    {
      berth_buf_puts (&b, "{\n");
      berth_buf_puts (&b, env->snapshot);
      berth_buf_puts (&b, "\n} >/dev/null 2>&1\n");
    }
  if (qcwd)
    berth_buf_printf (&b, "cd %s 2>/dev/null || echo \"berth: the environment's cwd is gone; staying in $PWD\" >&2\n", qcwd);
  *ret = b.data ? berth_buf_steal (&b) : xstrdup ("");
  return 0;
}
