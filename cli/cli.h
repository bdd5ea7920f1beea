/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cli.h: shared pieces of the berth command.  */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <berth/berth.h>

/* The CLI includes public headers only, never the runtime's util.h:
   the few scope-bound cleanups it uses, as libberth's.  */
#ifndef _cleanup_
#define _cleanup_(f) __attribute__ ((cleanup (f)))
#endif
#ifndef _cleanup_free_
#define _cleanup_free_ _cleanup_ (cli_freep)
#endif
#ifndef _cleanup_close_
#define _cleanup_close_ _cleanup_ (cli_closep)
#endif
static inline void
cli_freep (void *p)
{
  free (*(void **) p);
}
static inline void
cli_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
}

/* berth's own errors (bad config, unknown backend, daemon down).  */
#define EXIT_BERTH 125

typedef struct cli_opts
{
  const char *config; /* --config FILE */
  const char *tenant, *agent; /* --tenant T --agent A: the scope */
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

/* Every BERTH_FLAG_*, in the order the JSON listings show them, and the
   names of BERTH_PROBE_* (cmd-info.c; berth serve shares them).  */
#define CLI_N_FLAGS 8
extern const uint32_t cli_all_flags[CLI_N_FLAGS];
extern const char *const cli_probe_names[3];

/* True when the named environment NAME exists (berth ls lists it).  */
bool cli_env_exists (berth_ctx *ctx, const char *name);
/* Open the existing named environment NAME; else print why, set *RET_EXIT
   and return NULL.  */
berth_env *cli_open_named (berth_ctx *ctx, const char *name, int *ret_exit);

/* JSON output.  */
void json_string (FILE *f, const char *s);
void json_string_len (FILE *f, const char *s, size_t len);

/* ---- the command table (commands.c): one source of truth ----
   Each command's options, their values and help, its synopsis and
   description, its subcommands and what its operands are: the parsers
   (cli_getopt), the help (--help, `berth help`, `berth --help`) and the
   completion scripts (`berth completion bash|zsh|fish`) are all made
   from it.  Adding a command: write its cmd_X, declare it below, add its
   options array and one cli_command entry in commands.c (see there).  */

/* What an option's value or a command's operands are, for completion.  */
typedef enum cli_value
{
  CLI_VALUE_NONE,    /* a flag (an option), no operands (a command) */
  CLI_VALUE_WORD,    /* any word: nothing to complete */
  CLI_VALUE_FILE,    /* a path */
  CLI_VALUE_DIR,     /* a directory */
  CLI_VALUE_BACKEND, /* a backend name: `berth backends --names` */
  CLI_VALUE_ENV,     /* a named environment: `berth ls --names` */
  CLI_VALUE_COMMAND, /* a command line: program names, then files */
  CLI_VALUE_TOPIC,   /* a berth command name (`berth help`) */
  CLI_VALUE_SHELL,   /* bash, zsh or fish */
} cli_value;

/* Option keys: a short option's key is its letter; long-only ones are
   CLI_OPT_* from 256.  */
enum
{
  CLI_OPT_IMAGE = 256,
  CLI_OPT_STDIN,
  CLI_OPT_JSON,
  CLI_OPT_USER,
  CLI_OPT_NO_INTERACTIVE,
  CLI_OPT_MAX_BYTES,
  CLI_OPT_PEER,
  CLI_OPT_SHOW_ORIGIN,
  CLI_OPT_NAMES,
  CLI_OPT_CONFIG,
  CLI_OPT_VERSION,
  CLI_OPT_FOLLOW,
  CLI_OPT_TENANT,
  CLI_OPT_AGENT,
  CLI_OPT_IDLE,
  CLI_OPT_SOCKET,
  CLI_OPT_PTY,
};

typedef struct cli_option
{
  int key;             /* the letter, or a CLI_OPT_*; 0 ends an array */
  const char *name;    /* the long name, without "--" */
  cli_value value;     /* CLI_VALUE_NONE: takes no value */
  const char *metavar; /* the value's name in the help (NULL for a flag) */
  const char *help;    /* may have several lines ("\n"), no trailing one */
} cli_option;

typedef struct cli_command cli_command;
struct cli_command
{
  const char *name; /* NULL ends a table */
  /* ARGV[0] is the command's name (for a subcommand: the parent's run
     gets the whole line and dispatches itself).  */
  int (*run) (const cli_opts *o, int argc, char **argv);
  const char *synopsis;    /* what follows "berth NAME " in the usage */
  const char *summary;     /* one line for `berth --help` */
  const char *description; /* paragraphs after the usage (may be NULL) */
  const cli_option *options; /* NULL: none (-h/--help always exist) */
  cli_value operands;        /* what its operands complete to */
  const cli_command *subcommands; /* NULL: none */
  const char *aliases;       /* other names, space-separated (NULL) */
};

extern const cli_command cli_commands[];
extern const cli_option cli_global_options[];
/* The entry of NAME in TABLE (by name or alias), or NULL.  */
const cli_command *cli_find (const cli_command *table, const char *name);
/* Print CMD's help (usage, description, options).  PARENT (NULL at the
   top) prefixes a subcommand's usage.  */
void cli_print_help (FILE *f, const cli_command *parent, const cli_command *cmd);
/* getopt_long over CMD's options ("+": options stop at the first operand
   or "--").  Returns the option's key, -1 after the last option (*IND is
   then the first operand), or -2 after it printed the usage (-h: *RET_EXIT
   0) or a one-line error (*RET_EXIT 125).  *ARG is the option's value.  */
typedef struct cli_getopt
{
  const cli_command *cmd, *parent;
  const char *arg;
  int ind;
  bool started;
  bool own_help; /* -h/--help is returned as 'h' instead of printed */
} cli_getopt;
int cli_next_option (cli_getopt *g, int argc, char **argv, int *ret_exit);

/* berth --help: the global options and every command's summary.  */
void cli_print_usage (FILE *f);

int cmd_help (const cli_opts *o, int argc, char **argv);
int cmd_completion (const cli_opts *o, int argc, char **argv);
int cmd_version (const cli_opts *o, int argc, char **argv);
int cmd_plugins (const cli_opts *o, int argc, char **argv);
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
int cmd_cp (const cli_opts *o, int argc, char **argv);
int cmd_reap (const cli_opts *o, int argc, char **argv);
int cmd_start (const cli_opts *o, int argc, char **argv);
int cmd_ps (const cli_opts *o, int argc, char **argv);
int cmd_logs (const cli_opts *o, int argc, char **argv);
int cmd_attach (const cli_opts *o, int argc, char **argv);
int cmd_stop (const cli_opts *o, int argc, char **argv);
int cmd_shell (const cli_opts *o, int argc, char **argv);
int cmd_pull (const cli_opts *o, int argc, char **argv);
int cmd_serve (const cli_opts *o, int argc, char **argv); /* serve/serve.c */
int berth_cmd_plugins (berth_ctx *ctx, int argc, char **argv);

#endif
