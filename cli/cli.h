/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.h: shared pieces of the berth command.  */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <berth/berth.h>

/* berth's own errors (bad config, unknown backend, daemon down).  */
#define EXIT_BERTH 125

typedef struct cli_opts
{
  const char *config; /* --config FILE */
} cli_opts;

/* Log messages above this level are not shown (BERTH_LOG_*).  */
extern int cli_log_max;

/* The version of the shape of every --json output (berth(1), JSON OUTPUT). */
#define CLI_SCHEMA_VERSION 1

/* Set by a command that was given --json: berth's error is then also a
   JSON object on stdout (cli_json_error).  A command clears it once its
   own JSON output is printed, so that stdout holds one object.  */
extern bool cli_json;

/* One-line error on stderr: "berth: MESSAGE", and with cli_json the same
   as {"schema_version":1,"error":{"code","message"}} on stdout.  Returns
   EXIT_BERTH.  cli_fail's code is BERTH_E_FAILED; cli_fail_err's is the
   error's, with the output a failed command printed ("output").  */
int cli_fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
int cli_fail_err (berth_error *err);
/* The JSON error object alone (OUTPUT may be NULL); clears cli_json.  */
void cli_json_error (int code, const char *message, const char *output, size_t output_len);
/* Load the layered configuration (+ --config); on failure print and NULL. */
berth_ctx *cli_ctx (const cli_opts *o);
/* The same, but a configuration that does not load is no error (for
   `config set`/`unset`, which must be able to repair it).  */
berth_ctx *cli_ctx_lenient (const cli_opts *o);
/* True when ARGV[*I] is "-h"/"--help".  */
bool cli_is_help (const char *arg);

/* S with control characters shown as \xHH (\t, \n): safe to print on a
   terminal.  Caller frees.  */
char *cli_term_escape (const char *s);

/* What a listing's callbacks print goes to memory until the listing has
   worked, so a failure half-way leaves stdout with the error alone.
   cli_capture_begin: false when out of memory.  cli_capture_end restores
   stdout and returns the text (never NULL; caller frees).  */
typedef struct cli_capture
{
  FILE *saved, *mem;
  char *buf;
  size_t len;
} cli_capture;
bool cli_capture_begin (cli_capture *c);
char *cli_capture_end (cli_capture *c);

/* JSON output.  */
void json_string (FILE *f, const char *s);
void json_string_len (FILE *f, const char *s, size_t len);

int cmd_exec (const cli_opts *o, int argc, char **argv);
int cmd_exec_prefix (const cli_opts *o, int argc, char **argv);
int cmd_exec_stream (const cli_opts *o, int argc, char **argv);
int cmd_backends (const cli_opts *o, int argc, char **argv);
int cmd_doctor (const cli_opts *o, int argc, char **argv);
int cmd_ls (const cli_opts *o, int argc, char **argv);
int cmd_rm (const cli_opts *o, int argc, char **argv);
int cmd_gc (const cli_opts *o, int argc, char **argv);
int cmd_config (const cli_opts *o, int argc, char **argv);
int cmd_bench (const cli_opts *o, int argc, char **argv);
int cmd_serve (const cli_opts *o, int argc, char **argv); /* serve/serve.c */
int berth_cmd_plugins (berth_ctx *ctx, int argc, char **argv);

#endif
