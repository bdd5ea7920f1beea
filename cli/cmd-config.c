/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-config.c: berth config get|set|path.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char config_usage[] =
  "Usage: berth config get KEY\n"
  "       berth config set KEY VALUE\n"
  "       berth config path\n"
  "\n"
  "KEY is dotted, e.g. terminal.backend.  `get` prints the merged value of\n"
  "every layer (system, user, $BERTH_CONFIG, --config); `set` edits the user\n"
  "file, keeping the rest of it; lists are written as [a, b].  See berth-config(5).\n";

int
cmd_config (const cli_opts *o, int argc, char **argv)
{
  berth_error *err = NULL;
  if (argc < 2 || cli_is_help (argv[1]))
    {
      fputs (config_usage, argc < 2 ? stderr : stdout);
      return argc < 2 ? EXIT_BERTH : 0;
    }
  if (strcmp (argv[1], "path") == 0 && argc == 2)
    {
      char *p = berth_config_user_path ();
      puts (p ? p : "");
      free (p);
      return 0;
    }
  if (strcmp (argv[1], "get") == 0 && argc == 3)
    {
      berth_ctx *ctx = cli_ctx (o);
      char *value = NULL;
      int r;
      if (ctx == NULL)
        return EXIT_BERTH;
      r = berth_ctx_config_get (ctx, argv[2], &value, &err);
      berth_ctx_unref (ctx);
      if (r == -ENOENT)
        {
          berth_error_free (err);
          return cli_fail ("config: %s is not set", argv[2]);
        }
      if (r < 0)
        return cli_fail_err (err);
      puts (value);
      free (value);
      return 0;
    }
  if (strcmp (argv[1], "set") == 0 && argc == 4)
    {
      if (berth_config_user_set (argv[2], argv[3], &err) < 0)
        return cli_fail_err (err);
      return 0;
    }
  return cli_fail ("config: expected get KEY, set KEY VALUE or path (see berth config --help)");
}
