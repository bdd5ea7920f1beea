/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* main.c: the berth command: global options and dispatch.  */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void
cli_print_usage (FILE *f)
{
  fputs ("Usage: berth [--config FILE] COMMAND [ARGS]\n"
         "       berth help [COMMAND] | -h | --help | -V | --version\n"
         "\n"
         "Run commands in a terminal environment backend (see berth(1)).\n"
         "\n"
         "Commands:\n",
         f);
  for (const cli_command *c = cli_commands; c->name; c++)
    fprintf (f, "  %-12s %s\n", c->name, c->summary);
  fputs ("\n"
         "`berth help COMMAND` (or berth COMMAND --help) shows a command's options.\n"
         "\n"
         "Exit status: the command's own (124 timed out, 130 interrupted, 141 stdout\n"
         "closed by its reader), or 125 for berth's own errors, with a one-line\n"
         "reason on stderr (with --json also {\"schema_version\":1,\"error\":{\"code\",\n"
         "\"message\"}} on stdout).\n",
         f);
}

bool cli_json;

void
cli_json_error (int code, const char *message, const char *output, size_t output_len)
{
  printf ("{\"schema_version\":%d,\"error\":{\"code\":%d,\"message\":", CLI_SCHEMA_VERSION, code);
  json_string (stdout, message);
  fputc ('}', stdout);
  if (output)
    {
      /* what a failed command printed before it failed */
      fputs (",\"output\":", stdout);
      json_string_len (stdout, output, output_len);
    }
  fputs ("}\n", stdout);
  cli_json = false; /* one object per run */
}

static int
fail (int code, const char *msg, const char *output, size_t output_len)
{
  char *safe;
  if (cli_json)
    cli_json_error (code, msg ? msg : "out of memory", output, output_len);
  /* a message may quote a cwd or a remote's words */
  safe = cli_term_escape (msg ? msg : "out of memory");
  fprintf (stderr, "berth: %s\n", safe);
  free (safe);
  return EXIT_BERTH;
}

int
cli_fail (const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  int r;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  r = fail (BERTH_E_FAILED, msg, NULL, 0);
  free (msg);
  return r;
}

int
cli_fail_err (berth_error *err)
{
  size_t len;
  const char *out = berth_error_output (err, &len);
  int r = fail (berth_error_code (err), berth_error_message (err), out, len);
  berth_error_free (err);
  return r;
}

bool
cli_is_help (const char *arg)
{
  return strcmp (arg, "-h") == 0 || strcmp (arg, "--help") == 0;
}

int cli_log_max = BERTH_LOG_INFO;

static void
log_to_stderr (void *userdata, int level, const char *area, const char *msg)
{
  /* Debug lines reach us only for the areas BERTH_DEBUG asked for: the
     user wants them, also from exec-stream.  */
  if (level > cli_log_max && level < BERTH_LOG_DEBUG)
    return;
  const char *what = level <= BERTH_LOG_ERROR ? "error" : level <= BERTH_LOG_WARNING ? "warning" : level <= BERTH_LOG_INFO ? "info" : "debug";
  char *safe = cli_term_escape (msg);
  fprintf (stderr, "berth: %s: %s: %s\n", area, what, safe);
  free (safe);
}

static berth_ctx *
new_ctx (const cli_opts *o, bool lenient)
{
  berth_ctx *ctx = NULL;
  berth_error *err = NULL;
  if (berth_ctx_new (&ctx, &err) < 0)
    {
      cli_fail_err (err);
      return NULL;
    }
  berth_ctx_set_log (ctx, log_to_stderr, NULL);
  if ((o->tenant || o->agent) && berth_ctx_set_scope (ctx, o->tenant, o->agent, &err) < 0)
    {
      cli_fail_err (err);
      return berth_ctx_unref (ctx);
    }
  if (berth_ctx_load_config (ctx, o->config, &err) < 0)
    {
      if (lenient)
        {
          berth_error_free (err);
          return ctx;
        }
      cli_fail_err (err);
      return berth_ctx_unref (ctx);
    }
  return ctx;
}

berth_ctx *
cli_ctx (const cli_opts *o)
{
  return new_ctx (o, false);
}

berth_ctx *
cli_ctx_lenient (const cli_opts *o)
{
  return new_ctx (o, true);
}

void
json_string_len (FILE *f, const char *s, size_t len)
{
  if (s == NULL)
    {
      fputs ("null", f);
      return;
    }
  fputc ('"', f);
  for (size_t i = 0; i < len; i++)
    {
      unsigned char c = (unsigned char) s[i];
      switch (c)
        {
        case '"': fputs ("\\\"", f); break;
        case '\\': fputs ("\\\\", f); break;
        case '\n': fputs ("\\n", f); break;
        case '\r': fputs ("\\r", f); break;
        case '\t': fputs ("\\t", f); break;
        default:
          if (c < 0x20 || c == 0x7f)
            fprintf (f, "\\u%04x", c);
          else
            fputc (c, f);
        }
    }
  fputc ('"', f);
}

void
json_string (FILE *f, const char *s)
{
  json_string_len (f, s, s ? strlen (s) : 0);
}

int
cmd_version (const cli_opts *o, int argc, char **argv)
{
  bool json = false;
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "version") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    if (c == CLI_OPT_JSON)
      json = true;
  if (c == -2)
    return exit_code;
  if (g.ind < argc)
    return cli_fail ("version: unexpected argument '%s'", argv[g.ind]);
  if (json)
    {
      printf ("{\"schema_version\":%d,\"version\":", CLI_SCHEMA_VERSION);
      json_string (stdout, berth_version ());
      fputs ("}\n", stdout);
    }
  else
    printf ("berth %s\n", berth_version ());
  return 0;
}

int
cmd_plugins (const cli_opts *o, int argc, char **argv)
{
  /* plugins list --json: a configuration that does not load is a JSON
     error too (the context comes before the arguments are parsed).  */
  for (int i = 2; argc > 1 && (strcmp (argv[1], "list") == 0 || strcmp (argv[1], "ls") == 0) && i < argc; i++)
    if (strcmp (argv[i], "--json") == 0)
      cli_json = true;
  berth_ctx *ctx = cli_ctx (o);
  int r;
  if (ctx == NULL)
    return EXIT_BERTH;
  r = berth_cmd_plugins (ctx, argc, argv);
  berth_ctx_unref (ctx);
  return r;
}

/* What is still buffered for stdout must arrive.  A reader that went
   away (`berth ls | head -1`; exec ignores SIGPIPE) ends berth quietly
   with 141, like a pipeline member killed by SIGPIPE; any other write
   error is berth's (125).  */
static int
flush_stdout (int r)
{
  if (fflush (stdout) == 0 && !ferror (stdout))
    return r;
  if (errno == EPIPE)
    return 128 + SIGPIPE;
  return cli_fail ("cannot write to standard output: %s", strerror (errno));
}

int
main (int argc, char **argv)
{
  cli_opts o = { 0 };
  int c, exit_code = 0;
  static const cli_command global = { "berth", NULL, "", NULL, NULL, cli_global_options };
  cli_getopt g = { .cmd = &global, .own_help = true };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    switch (c)
      {
      case CLI_OPT_CONFIG: o.config = g.arg; break;
      case CLI_OPT_TENANT: o.tenant = g.arg; break;
      case CLI_OPT_AGENT: o.agent = g.arg; break;
      case 'V': return flush_stdout (cmd_version (&o, 1, (char *[]){ "version", NULL }));
      case 'h':
        cli_print_usage (stdout);
        return flush_stdout (0);
      default: abort ();
      }
  if (c == -2)
    return exit_code;
  int i = g.ind;
  if (i >= argc)
    {
      cli_print_usage (stderr);
      return EXIT_BERTH;
    }
  const cli_command *cmd = cli_find (cli_commands, argv[i]);
  if (cmd == NULL)
    return cli_fail ("unknown command '%s' (see berth --help)", argv[i]);
  return flush_stdout (cmd->run (&o, argc - i, argv + i));
}
