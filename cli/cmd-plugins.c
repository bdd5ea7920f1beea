/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-plugins.c: berth plugins list [--json] | enable NAME | disable NAME */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <berth/berth.h>
#include <berth/plugins.h>

#include "cli.h"

static void
usage (FILE *f)
{
  cli_print_help (f, NULL, cli_find (cli_commands, "plugins"));
}

static int
cmd_list (berth_ctx *ctx, bool json)
{
  size_t cursor = 0;
  const berth_plugin_info *p;

  /* The one plugins command that loads them (for their status); enable
     and disable load none, so a plugin that crashes can be disabled.  */
  berth_ctx_load_providers (ctx);
  if (json)
    {
      fputs ("[", stdout);
      bool first = true;
      while ((p = berth_ctx_next_plugin (ctx, &cursor)))
        {
          fputs (first ? "\n  {" : ",\n  {", stdout);
          first = false;
          printf ("\"schema_version\": %d, \"name\": ", CLI_SCHEMA_VERSION);
          json_string (stdout, berth_plugin_name (p));
          fputs (", \"kind\": ", stdout);
          json_string (stdout, berth_plugin_is_module (p) ? "module" : "plugin");
          fputs (", \"version\": ", stdout);
          json_string (stdout, berth_plugin_version (p));
          fputs (", \"description\": ", stdout);
          json_string (stdout, berth_plugin_description (p));
          fputs (", \"path\": ", stdout);
          json_string (stdout, berth_plugin_path (p));
          printf (", \"enabled\": %s, \"loaded\": %s, \"status\": ",
                  berth_plugin_enabled (p) ? "true" : "false",
                  berth_plugin_loaded (p) ? "true" : "false");
          json_string (stdout, berth_plugin_status (p));
          fputs ("}", stdout);
        }
      fputs (first ? "]\n" : "\n]\n", stdout);
      cli_json = false;
      return fflush (stdout) == 0 ? 0 : EXIT_BERTH;
    }

  size_t wname = 4, wver = 7;
  while ((p = berth_ctx_next_plugin (ctx, &cursor)))
    {
      size_t n = strlen (berth_plugin_name (p));
      const char *v = berth_plugin_version (p);
      wname = n > wname ? n : wname;
      wver = v && strlen (v) > wver ? strlen (v) : wver;
    }
  if (cursor == 0)
    {
      char *dir = berth_plugins_dir ();
      printf ("No plugins installed in %s and no modules found.\n", dir ? dir : "$XDG_DATA_HOME/berth/plugins");
      free (dir);
      return 0;
    }
  printf ("%-*s  %-6s  %-*s  %-7s  %s\n", (int) wname, "NAME", "KIND", (int) wver, "VERSION", "ENABLED", "STATUS");
  cursor = 0;
  while ((p = berth_ctx_next_plugin (ctx, &cursor)))
    {
      const char *v = berth_plugin_version (p);
      printf ("%-*s  %-6s  %-*s  %-7s  %s\n", (int) wname, berth_plugin_name (p),
              berth_plugin_is_module (p) ? "module" : "plugin", (int) wver, v ? v : "-",
              berth_plugin_enabled (p) ? "yes" : "no", berth_plugin_status (p));
    }
  return fflush (stdout) == 0 ? 0 : EXIT_BERTH;
}

static int
cmd_enable (berth_ctx *ctx, const char *name, bool enable)
{
  berth_error *err = NULL;
  int r = berth_plugins_set_enabled (ctx, name, enable, &err);
  if (r < 0)
    {
      fprintf (stderr, "berth: plugins %s: %s\n", enable ? "enable" : "disable",
               err ? berth_error_message (err) : strerror (-r));
      berth_error_free (err);
      return EXIT_BERTH;
    }
  if (r == 0)
    printf ("Plugin %s is already %s.\n", name, enable ? "enabled" : "disabled");
  else
    printf ("Plugin %s %s.\n", name, enable ? "enabled" : "disabled");
  return 0;
}

int
berth_cmd_plugins (berth_ctx *ctx, int argc, char **argv)
{
  /* Accept argv with or without the "plugins" word in front.  */
  if (argc > 0 && strcmp (argv[0], "plugins") == 0)
    {
      argc--;
      argv++;
    }
  if (argc == 0)
    {
      usage (stderr);
      return EXIT_BERTH;
    }
  const char *sub = argv[0];
  if (strcmp (sub, "--help") == 0 || strcmp (sub, "-h") == 0 || strcmp (sub, "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  if (strcmp (sub, "list") == 0 || strcmp (sub, "ls") == 0)
    {
      bool json = false;
      const cli_command *plugins = cli_find (cli_commands, "plugins");
      int c, exit_code = 0;
      cli_getopt g = { .cmd = cli_find (plugins->subcommands, "list"), .parent = plugins };
      while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
        if (c == CLI_OPT_JSON)
          json = cli_json = true;
      if (c == -2)
        return exit_code;
      if (g.ind < argc)
        return cli_fail ("plugins list: unknown argument '%s' (try: berth plugins --help)", argv[g.ind]);
      return cmd_list (ctx, json);
    }
  if (strcmp (sub, "enable") == 0 || strcmp (sub, "disable") == 0)
    {
      if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
        {
          usage (stdout);
          return 0;
        }
      if (argc != 2)
        {
          fprintf (stderr, "berth: plugins %s: expected one plugin NAME (try: berth plugins list)\n", sub);
          return EXIT_BERTH;
        }
      return cmd_enable (ctx, argv[1], strcmp (sub, "enable") == 0);
    }
  fprintf (stderr, "berth: plugins: unknown command '%s' (use list, enable or disable)\n", sub);
  return EXIT_BERTH;
}
