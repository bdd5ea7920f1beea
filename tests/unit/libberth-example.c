/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libberth-example.c: the EXAMPLE of libberth(3), built against the
   installed API only and run by `make check` on the local backend.
   man/libberth.3 carries the same text between its .EX and .EE lines;
   tests/unit/libberth-example.sh checks that the two are the same.  */
#include <stdio.h>
#include <stdlib.h>
#include <berth/berth.h>

int
main (void)
{
  berth_ctx *ctx = NULL;
  berth_env *env = NULL;
  berth_result *res = NULL;
  berth_error *err = NULL;
  int status = 1;

  if (berth_ctx_new (&ctx, &err) < 0 || berth_ctx_load_config (ctx, NULL, &err) < 0)
    goto fail;

  /* A named environment keeps its cwd and exports between commands.  */
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  spec.backend = "local";
  spec.name = "libberth-example";
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    goto fail;

  const char *commands[] = { "cd /tmp && export GREETING=hello", "echo \"$GREETING from $(pwd)\"; exit 3" };
  for (size_t i = 0; i < 2; i++)
    {
      berth_exec_spec x = BERTH_EXEC_SPEC_INIT;
      x.command = commands[i];
      x.timeout = 10;
      if (berth_env_execute (env, &x, &res, &err) < 0)
        goto fail;
      size_t len;
      const char *out = berth_result_output (res, &len);
      /* A non-zero exit status is data, not an error.  */
      printf ("[exit %d in %s]\n%.*s", berth_result_exit_code (res), berth_result_cwd (res), (int) len, out);
      status = berth_result_exit_code (res) == 3 ? 0 : 1;
      res = berth_result_free (res);
    }

  /* Release the handle, then remove the named environment for good.  */
  env = berth_env_unref (env);
  if (berth_env_remove (ctx, "libberth-example", &err) < 0)
    goto fail;
  berth_ctx_unref (ctx);
  return status;

fail:
  fprintf (stderr, "example: %s (code %d)\n", berth_error_message (err), berth_error_code (err));
  berth_error_free (err);
  berth_env_unref (env);
  berth_ctx_unref (ctx);
  return 1;
}
