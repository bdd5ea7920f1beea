/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-config.c: berth config get|set|unset|list|path.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct list_state
{
  bool json, origin, first;
} list_state;

static void
list_one (void *userdata, const char *key, const char *value, const char *origin)
{
  list_state *s = userdata;
  if (s->json)
    {
      printf ("%s{\"key\":", s->first ? "" : ",");
      json_string (stdout, key);
      printf (",\"value\":");
      json_string (stdout, value);
      printf (",\"origin\":");
      json_string (stdout, origin ? origin : "default");
      printf ("}");
    }
  else
    {
      char *safe_value = cli_term_escape (value), *safe_origin = cli_term_escape (origin ? origin : "default");
      if (s->origin)
        printf ("%s\t%s=%s\n", safe_origin, key, safe_value);
      else
        printf ("%s=%s\n", key, safe_value);
      free (safe_value);
      free (safe_origin);
    }
  s->first = false;
}

static int
config_list (const cli_opts *o, int argc, char **argv)
{
  list_state s = { .first = true };
  berth_error *err = NULL;
  const cli_command *config = cli_find (cli_commands, "config");
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (config->subcommands, "list"), .parent = config };
  /* argv[0] is "list" */
  while ((c = cli_next_option (&g, argc - 1, argv + 1, &exit_code)) >= 0)
    switch (c)
      {
      case CLI_OPT_JSON: s.json = cli_json = true; break;
      case CLI_OPT_SHOW_ORIGIN: s.origin = true; break;
      default: abort ();
      }
  if (c == -2)
    return exit_code;
  if (g.ind < argc - 1)
    return cli_fail ("config list: unexpected argument '%s' (see berth help config list)", argv[g.ind + 1]);
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  cli_capture cap;
  char *buf;
  int r;
  if (!cli_capture_begin (&cap))
    {
      berth_ctx_unref (ctx);
      return cli_fail ("config list: out of memory");
    }
  r = berth_ctx_config_list (ctx, list_one, &s, &err);
  buf = cli_capture_end (&cap);
  berth_ctx_unref (ctx);
  if (r < 0)
    {
      free (buf);
      return cli_fail_err (err);
    }
  if (s.json)
    printf ("{\"schema_version\":%d,\"keys\":[%s]}\n", CLI_SCHEMA_VERSION, buf ? buf : "");
  else
    fputs (buf ? buf : "", stdout);
  cli_json = false;
  free (buf);
  return 0;
}

int
cmd_config (const cli_opts *o, int argc, char **argv)
{
  berth_error *err = NULL;
  if (argc < 2 || cli_is_help (argv[1]))
    {
      cli_print_help (argc < 2 ? stderr : stdout, NULL, cli_find (cli_commands, "config"));
      return argc < 2 ? EXIT_BERTH : 0;
    }
  if (strcmp (argv[1], "path") == 0 && argc == 2)
    {
      char *p = berth_config_user_path ();
      puts (p ? p : "");
      free (p);
      return 0;
    }
  if (strcmp (argv[1], "list") == 0)
    return config_list (o, argc, argv);
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
  if ((strcmp (argv[1], "set") == 0 && argc == 4) || (strcmp (argv[1], "unset") == 0 && argc == 3))
    {
      berth_ctx *ctx = cli_ctx_lenient (o);
      int r;
      if (ctx == NULL)
        return EXIT_BERTH;
      if (argc == 4)
        r = berth_ctx_config_set (ctx, argv[2], argv[3], &err);
      else
        r = berth_ctx_config_unset (ctx, argv[2], &err);
      berth_ctx_unref (ctx);
      if (r < 0)
        return cli_fail_err (err);
      return 0;
    }
  return cli_fail ("config: expected get KEY, set KEY VALUE, unset KEY, list or path (see berth config --help)");
}
