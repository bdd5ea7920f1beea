/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* main.c: the berth command: global options and dispatch.  */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
  "Usage: berth [--config FILE] COMMAND [ARGS]\n"
  "\n"
  "Run commands in a terminal environment backend (see berth(1)).\n"
  "\n"
  "Commands:\n"
  "  exec [-b BACKEND] [-e NAME] [-C DIR] [-t SECONDS|0] [--image IMG] [--stdin FILE|-] [--max-bytes N] [--json] [--] COMMAND...\n"
  "  exec-prefix -e NAME [-b BACKEND] [--user U] [--no-interactive] [--json]\n"
  "  exec-stream [-b BACKEND] [-e NAME] -- WORDS...\n"
  "  backends [--json]            list backends and their flags\n"
  "  doctor [-b BACKEND] [--json] check what each backend needs\n"
  "  ls [--json] | rm NAME...      named environments\n"
  "  gc [--dry-run] [--json]       remove leftovers and old spill files\n"
  "  config get KEY | set KEY VALUE | unset KEY | list [--show-origin] [--json] | path\n"
  "  plugins list [--json] | enable NAME | disable NAME\n"
  "  bench [-b BACKEND] [-n N] [--json] [COMMAND]\n"
  "  serve [--socket PATH]         JSON lines for programs (berth-serve(7))\n"
  "  version [--json]\n"
  "\n"
  "Exit status: the command's own (124 timed out, 130 interrupted, 141 stdout\n"
  "closed by its reader), or 125 for berth's own errors, with a one-line\n"
  "reason on stderr (with --json also {\"schema_version\":1,\"error\":{\"code\",\n"
  "\"message\"}} on stdout).\n";

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

static int
cmd_version (const cli_opts *o, int argc, char **argv)
{
  bool json = false;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--json") == 0)
      json = true;
    else if (cli_is_help (argv[i]))
      {
        fputs ("Usage: berth version [--json]\n", stdout);
        return 0;
      }
    else
      return cli_fail ("version: unexpected argument '%s'", argv[i]);
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

static int
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

static const struct
{
  const char *name;
  int (*fn) (const cli_opts *o, int argc, char **argv);
} commands[] = {
  { "exec", cmd_exec },
  { "exec-prefix", cmd_exec_prefix },
  { "exec-stream", cmd_exec_stream },
  { "backends", cmd_backends },
  { "doctor", cmd_doctor },
  { "ls", cmd_ls },
  { "rm", cmd_rm },
  { "gc", cmd_gc },
  { "config", cmd_config },
  { "plugins", cmd_plugins },
  { "bench", cmd_bench },
  { "serve", cmd_serve },
  { "version", cmd_version },
};

int
main (int argc, char **argv)
{
  cli_opts o = { 0 };
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++)
    {
      if (cli_is_help (argv[i]))
        {
          fputs (usage, stdout);
          return 0;
        }
      else if (strcmp (argv[i], "--version") == 0)
        return cmd_version (&o, 0, NULL);
      else if (strcmp (argv[i], "--config") == 0 && i + 1 < argc)
        o.config = argv[++i];
      else if (strncmp (argv[i], "--config=", 9) == 0)
        o.config = argv[i] + 9;
      else
        return cli_fail ("unknown option '%s' (see berth --help)", argv[i]);
    }
  if (i >= argc)
    {
      fputs (usage, stderr);
      return EXIT_BERTH;
    }
  for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
    if (strcmp (argv[i], commands[c].name) == 0)
      return flush_stdout (commands[c].fn (&o, argc - i, argv + i));
  return cli_fail ("unknown command '%s' (see berth --help)", argv[i]);
}
