/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* commands.c: the table of berth's commands and options, and what is made
   from it: the option parser (cli_next_option), the help and the usage.
   The completion scripts (completion.c) are generated from it too.

   Adding a command `berth frob [-x N] NAME...`:
     1. write int cmd_frob (const cli_opts *o, int argc, char **argv) and
        declare it in cli.h;
     2. here: static const cli_option frob_options[] = { { 'x', "extra",
        CLI_VALUE_WORD, "N", "what -x does" }, { 0 } };  (a long-only
        option's key is a new CLI_OPT_* of cli.h);
     3. add { "frob", cmd_frob, "[-x N] NAME...", "one line for --help",
        "paragraphs for berth help frob", frob_options, CLI_VALUE_ENV } to
        cli_commands below, where it should appear in `berth --help`;
     4. in cmd_frob parse with
          cli_getopt g = { .cmd = cli_find (cli_commands, "frob") };
          while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
            switch (c) { case 'x': ... g.arg ...; }
          if (c == -2) return exit_code;
          operands: argv[g.ind .. argc-1]
   --help, `berth help frob` and the bash, zsh and fish completion then
   know it; tests/integration/completion.sh checks that they load.  */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* ---- options ---- */

#define OPT_BACKEND(what) { 'b', "backend", CLI_VALUE_BACKEND, "B", what }
#define OPT_ENV(what) { 'e', "env", CLI_VALUE_ENV, "NAME", what }
#define OPT_JSON(what) { CLI_OPT_JSON, "json", CLI_VALUE_NONE, NULL, what }

const cli_option cli_global_options[] = {
  { CLI_OPT_CONFIG, "config", CLI_VALUE_FILE, "FILE", "merge FILE after the other configuration layers" },
  { CLI_OPT_TENANT, "tenant", CLI_VALUE_WORD, "T", "act for tenant T (with --agent): a tenant other than local\n"
                                                   "is hosted -- the agent's own sandbox, on a backend that\n"
                                                   "serves hosted scopes (docker)" },
  { CLI_OPT_AGENT, "agent", CLI_VALUE_WORD, "A", "act for agent A of the tenant (with --tenant)" },
  { 'V', "version", CLI_VALUE_NONE, NULL, "print berth's version (as berth version)" },
  { 0 },
};

static const cli_option exec_options[] = {
  OPT_BACKEND ("backend (default: terminal.backend, else local)"),
  OPT_ENV ("named, persistent environment"),
  { 'C', "cwd", CLI_VALUE_DIR, "DIR", "working directory for this command" },
  { 't', "timeout", CLI_VALUE_WORD, "S",
    "kill the command's whole tree after S seconds (exit 124);\n"
    "0: no timeout; at most 2147483648 (default: terminal.timeout)" },
  { CLI_OPT_IMAGE, "image", CLI_VALUE_WORD, "IMG", "image for container backends" },
  { CLI_OPT_STDIN, "stdin", CLI_VALUE_FILE, "SRC", "feed FILE (or - for our stdin) to the command, streamed\nas it reads it" },
  OPT_JSON ("print one capped result object instead of streaming"),
  { CLI_OPT_MAX_BYTES, "max-bytes", CLI_VALUE_WORD, "N",
    "cap the output at N bytes, notices included (default:\n"
    "tool_output.max_bytes); without --json the capped output\n"
    "is printed when the command ends instead of streaming" },
  { 0 },
};

static const cli_option exec_prefix_options[] = {
  OPT_ENV ("the named environment (it must exist)"),
  OPT_BACKEND ("its backend (default: terminal.backend, else local)"),
  { 'C', "cwd", CLI_VALUE_DIR, "DIR", "working directory of a new environment" },
  { CLI_OPT_IMAGE, "image", CLI_VALUE_WORD, "IMG", "image for container backends" },
  { CLI_OPT_USER, "user", CLI_VALUE_WORD, "U", "run as user U where the backend can" },
  { CLI_OPT_NO_INTERACTIVE, "no-interactive", CLI_VALUE_NONE, NULL, "no interactive stdin (no -i, no pty)" },
  OPT_JSON ("print a JSON array of words"),
  { 0 },
};

static const cli_option start_options[] = {
  OPT_ENV ("the named environment (it must exist)"),
  { 'C', "cwd", CLI_VALUE_DIR, "DIR", "working directory (default: the environment's)" },
  { CLI_OPT_STDIN, "stdin", CLI_VALUE_NONE, NULL, "give it a stdin (berth attach feeds it), else /dev/null" },
  { CLI_OPT_PTY, "pty", CLI_VALUE_NONE, NULL, "run it on a terminal of its own (80x24; needs berth-agent there)" },
  OPT_JSON ("print {schema_version, id, env}"),
  { 0 },
};

static const cli_option ps_options[] = {
  OPT_ENV ("the named environment (it must exist); without it, every environment of the scope"),
  OPT_JSON ("print a JSON array of {env, id, state, exit_code, termination, started, command}"),
  { 0 },
};

static const cli_option logs_options[] = {
  OPT_ENV ("the named environment (it must exist)"),
  { 'f', "follow", CLI_VALUE_NONE, NULL, "then the rest as it comes, until it ends" },
  { 0 },
};

static const cli_option process_env_options[] = {
  OPT_ENV ("the named environment (it must exist)"),
  { 0 },
};

static const cli_option reap_options[] = {
  { CLI_OPT_IDLE, "idle", CLI_VALUE_WORD, "S", "suspend environments unused for more than S seconds" },
  OPT_JSON ("print [{name, action, why}]"),
  { 0 },
};

static const cli_option pull_options[] = {
  OPT_BACKEND ("the backend whose image store gets it (default: terminal.backend)"),
  { 'q', "quiet", CLI_VALUE_NONE, NULL, "print nothing" },
  { 0 },
};

static const cli_option serve_options[] = {
  { CLI_OPT_SOCKET, "socket", CLI_VALUE_FILE, "PATH", "listen on the UNIX socket PATH (0600, in a directory of\n"
                                                      "your own) instead of stdin/stdout" },
  { 0 },
};

static const cli_option exec_stream_options[] = {
  OPT_BACKEND ("backend (default: terminal.backend, else local)"),
  OPT_ENV ("named, persistent environment"),
  { 'C', "cwd", CLI_VALUE_DIR, "DIR", "working directory of a new environment" },
  { CLI_OPT_IMAGE, "image", CLI_VALUE_WORD, "IMG", "image for container backends" },
  { 0 },
};

static const cli_option backends_options[] = {
  OPT_JSON ("one JSON array of objects"),
  { CLI_OPT_NAMES, "names", CLI_VALUE_NONE, NULL, "only the names, one a line, loading no module (for completion)" },
  { 0 },
};

static const cli_option doctor_options[] = {
  OPT_BACKEND ("check this backend only (loads only its module)"),
  OPT_JSON ("one JSON array of objects"),
  { 0 },
};

static const cli_option ls_options[] = {
  OPT_JSON ("one JSON array of objects"),
  { CLI_OPT_NAMES, "names", CLI_VALUE_NONE, NULL, "only the names, one a line (for completion)" },
  { 0 },
};

static const cli_option gc_options[] = {
  { 'n', "dry-run", CLI_VALUE_NONE, NULL, "list the environments and spill files that would go,\nremove nothing (the backends' leftovers are not looked at)" },
  OPT_JSON ("one object: {schema_version, removed, environments,\nspill_files}"),
  { 0 },
};

static const cli_option config_list_options[] = {
  { CLI_OPT_SHOW_ORIGIN, "show-origin", CLI_VALUE_NONE, NULL, "add the file:line each value came from, or \"default\"" },
  OPT_JSON ("one object: {schema_version, keys: [{key, value, origin}]}"),
  { 0 },
};

static const cli_option plugins_list_options[] = {
  OPT_JSON ("one JSON array of objects"),
  { 0 },
};

static const cli_option bench_options[] = {
  OPT_BACKEND ("backend (default: terminal.backend, else local)"),
  OPT_ENV ("run in this named environment"),
  { 'n', "count", CLI_VALUE_WORD, "N", "number of executes (default 20, at most 100000)" },
  { CLI_OPT_PEER, "peer", CLI_VALUE_WORD, "'CMD ARGS'", "the command to compare with (default for local: bash -c true)" },
  OPT_JSON ("one result object"),
  { 0 },
};

static const cli_option version_options[] = {
  OPT_JSON ("{schema_version, version}"),
  { 0 },
};

/* ---- commands ---- */

static const cli_command config_subcommands[] = {
  { "get", NULL, "KEY", "print the merged value of KEY", NULL, NULL, CLI_VALUE_WORD },
  { "set", NULL, "KEY VALUE", "write KEY into the user file", NULL, NULL, CLI_VALUE_WORD },
  { "unset", NULL, "KEY", "remove KEY from the user file", NULL, NULL, CLI_VALUE_WORD },
  { "list", NULL, "[--show-origin] [--json]", "every merged key and its value", NULL, config_list_options },
  { "path", NULL, "", "print the user file's path", NULL, NULL },
  { NULL },
};

static const cli_command plugins_subcommands[] = {
  { "list", NULL, "[--json]", "modules and plugins, their status", NULL, plugins_list_options, CLI_VALUE_NONE, NULL, "ls" },
  { "enable", NULL, "NAME", "enable an installed plugin", NULL, NULL, CLI_VALUE_WORD },
  { "disable", NULL, "NAME", "disable a plugin", NULL, NULL, CLI_VALUE_WORD },
  { NULL },
};

const cli_command cli_commands[] = {
  { "exec", cmd_exec, "[-b BACKEND] [-e NAME] [-C DIR] [-t SECONDS|0] [--image IMG]\n"
    "                  [--stdin FILE|-] [--max-bytes N] [--json] [--] COMMAND...",
    "run a shell command in an environment",
    "Run COMMAND (one shell string; several words are joined with spaces) with\n"
    "bash inside an environment.  Without -e the environment is thrown away\n"
    "afterwards; with -e NAME it persists (cwd, exported variables, the\n"
    "container/jail/connection) until `berth rm NAME`.\n"
    "\n"
    "Exit status: the command's own; 124 timeout; 130 interrupted; 125 berth error.",
    exec_options, CLI_VALUE_COMMAND },
  { "exec-prefix", cmd_exec_prefix, "-e NAME [-b BACKEND] [--user U] [--no-interactive] [--json]",
    "print the argv that runs words inside an environment",
    "Print the argv that runs whatever words follow it inside environment NAME\n"
    "with stdin and stdout open (for long-lived processes).  NAME must exist.\n"
    "Plain output is one shell-quoted line, for eval:\n"
    "  eval \"$(berth exec-prefix -e NAME) bash -c 'server'\"\n"
    "--json prints a JSON array of words.",
    exec_prefix_options, CLI_VALUE_NONE },
  { "exec-stream", cmd_exec_stream, "[-b BACKEND] [-e NAME] [--] WORDS...",
    "run an argv with our stdin, stdout and stderr bridged",
    "Run WORDS (an argv, not a shell string) inside the environment with our\n"
    "stdin, stdout and stderr bridged to it until it exits.  Backends without a\n"
    "local client (docker over the Engine API) use this as their exec prefix.\n"
    "\n"
    "Exit status: the command's own; 127 when WORDS[0] is not found; 128+N after\n"
    "SIGINT, SIGTERM or SIGHUP (the command's tree is killed where it runs); 141\n"
    "when our stdout's reader went away; 125 berth error.",
    exec_stream_options, CLI_VALUE_COMMAND },
  { "backends", cmd_backends, "[--json|--names]", "list backends, whether each is ready, their flags",
    "List backends, whether each is ready here, and their flags.", backends_options },
  { "doctor", cmd_doctor, "[-b BACKEND] [--json]", "check what each backend needs",
    "Check what each backend needs, with a fix for each failed check.\n"
    "Exit 0 when every checked backend is ready, 1 otherwise.",
    doctor_options },
  { "ls", cmd_ls, "[--json|--names]", "list named environments", "List named environments.", ls_options },
  { "rm", cmd_rm, "NAME...", "remove named environments",
    "Clean up named environments for good (container, jail, connection, state).", NULL, CLI_VALUE_ENV },
  { "cp", cmd_cp, "SRC NAME:DEST | NAME:SRC DEST", "copy a file or directory into or out of an environment",
    "Copy a file or a directory into or out of the named environment NAME, as\n"
    "its commands see it (a jail's read-only root and hidden stores, a\n"
    "container's own filesystem).  A relative path in the environment is taken\n"
    "from its cwd (NAME: alone is that cwd); a DEST ending in / or an existing\n"
    "directory gets SRC's name.  Directories as cp -r: modes kept, symbolic\n"
    "links copied as links, fifos, sockets and devices refused.  The\n"
    "environment must exist (berth ls).  Files up to 1 GiB each.",
    NULL, CLI_VALUE_FILE },
  { "start", cmd_start, "-e NAME [-C DIR] [--stdin] [--pty] [--json] [--] COMMAND...", "start a background process (prints its id)",
    "Start COMMAND in the named environment NAME as a background process: it\n"
    "runs there with the environment's cwd and exported state, in a session of\n"
    "its own, until it ends or is stopped, whatever happens to this berth.\n"
    "Prints its id (berth ps, logs, attach, stop).  With --pty its stdin and\n"
    "stdout are a terminal of its own (a program that wants one: a REPL, a\n"
    "pager); that needs berth-agent in the environment (berth doctor).",
    start_options, CLI_VALUE_COMMAND },
  { "ps", cmd_ps, "[-e NAME] [--json]", "list background processes",
    "List the background processes of NAME: running, exited N, signaled N,\n"
    "stopped, or lost (gone without a status).  Without -e, those of every\n"
    "environment (of the bound scope; suspended ones are not woken), with\n"
    "the environment's name first.",
    ps_options },
  { "logs", cmd_logs, "-e NAME [--follow] ID", "print a background process's output",
    "Print the output of process ID so far (the last 1 MiB, with a marker line\n"
    "when more was dropped); with --follow, then the rest as it comes until it\n"
    "ends (Ctrl-C stops following, not the process).",
    logs_options, CLI_VALUE_WORD },
  { "attach", cmd_attach, "-e NAME ID", "follow a background process, feeding it our stdin",
    "Like logs --follow, and copy our stdin to process ID (started with\n"
    "--stdin; our end of input closes its stdin).  Ctrl-C detaches: the\n"
    "process keeps running.",
    process_env_options, CLI_VALUE_WORD },
  { "shell", cmd_shell, "-e NAME", "an interactive bash in an environment",
    "Run an interactive bash in the named environment NAME with its state:\n"
    "the exports, functions and aliases its commands left, in its cwd; its\n"
    "exit status is berth's.  On a terminal it gets a terminal there too\n"
    "(docker exec -it, ssh -tt, srun --pty; a local or jailed shell uses\n"
    "ours): job control, our window size and its changes, Ctrl-C is the\n"
    "shell's.  Otherwise our stdin, stdout and stderr are bridged to it.",
    process_env_options },
  { "stop", cmd_stop, "-e NAME ID", "stop a background process",
    "Kill the whole tree of process ID where it runs (children that left its\n"
    "session too).",
    process_env_options, CLI_VALUE_WORD },
  { "pull", cmd_pull, "[-b BACKEND] [-q] IMAGE", "fetch an image now, with progress",
    "Fetch IMAGE into the backend's image store now (docker: its engine), so\n"
    "that the first environment made from it does not wait for the download.\n"
    "On a terminal each layer has a line redrawn in place (status, bar, bytes,\n"
    "percentage); otherwise one plain line per change of a layer's status.\n"
    "A missing image, an unreachable registry or engine exits 125.",
    pull_options, CLI_VALUE_WORD },
  { "serve", cmd_serve, "[--socket PATH]", "serve berth's API as JSON lines (berth-serve(7))",
    "Serve berth's API as JSON lines (berth-serve(7)): requests on stdin,\n"
    "replies and events on stdout; the server ends when stdin closes, and\n"
    "cleans up its throw-away environments.  With --socket, listen on the\n"
    "UNIX socket PATH (0600, in a directory of your own) for clients of the\n"
    "same user until SIGTERM or SIGINT.",
    serve_options },
  { "reap", cmd_reap, "--idle SECONDS [--json]", "suspend idle environments (keeping their workspace)",
    "Suspend every named environment unused for more than SECONDS, each under\n"
    "the scope that created it: docker stops its container, ssh drops its\n"
    "connection (a backend with nothing to suspend is left as it is).  One with\n"
    "a background process still running is never suspended.  The next command\n"
    "resumes it, its workspace intact.  Nothing is destroyed (that is gc's).",
    reap_options },
  { "gc", cmd_gc, "[--dry-run] [--json]", "remove leftovers and old spill files",
    "Remove berth leftovers: throw-away environments whose berth was killed\n"
    "(through their backend: container, jail, connection), the commands a\n"
    "killed berth left running in named environments, state left by failed\n"
    "creations; the backends' (exited containers, orphaned\n"
    "instances) older than terminal.lifetime_seconds, and the spill files of\n"
    "truncated outputs ($XDG_CACHE_HOME/berth/output) older than that, then the\n"
    "oldest while they hold more than 256 MiB.",
    gc_options },
  { "config", cmd_config, NULL, "get, set, unset or list configuration keys",
    "KEY is dotted, e.g. terminal.backend.  `get` prints the merged value of\n"
    "every layer (system, user, $BERTH_CONFIG, --config); `set` edits the user\n"
    "file, keeping the rest of it; lists are written as [a, b].  A value is\n"
    "checked as the loader checks it (type, range; terminal.backend must name\n"
    "a backend that exists): a bad one is refused and the file left as it was.\n"
    "`unset` removes KEY from the user file.  `list` prints every merged key;\n"
    "--show-origin adds the file:line it came from, or \"default\".\n"
    "See berth-config(5).",
    NULL, CLI_VALUE_NONE, config_subcommands },
  { "plugins", cmd_plugins, NULL, "list, enable or disable plugins",
    "Plugins are backends installed in $XDG_DATA_HOME/berth/plugins/NAME/\n"
    "(plugin.yaml and its library); they load only when enabled, and then\n"
    "only for the commands that use them.  Modules shipped with berth are always\n"
    "enabled and listed too.  `list` loads them all; `enable` and `disable` load\n"
    "none.  See berth-provider(7).",
    NULL, CLI_VALUE_NONE, plugins_subcommands },
  { "bench", cmd_bench, "[-b BACKEND] [-e NAME] [-n N] [--peer 'CMD ARGS'] [--json] [COMMAND]",
    "per-command latency against the command a user would run",
    "Time N executes of COMMAND (default: true) in one environment, interleaved\n"
    "with N runs of the peer command a user would otherwise run (default for\n"
    "local: bash -c true).  Reports min/median/p90 of both and the median ratio.",
    bench_options, CLI_VALUE_WORD },
  { "completion", cmd_completion, "bash|zsh|fish", "print a shell completion script",
    "Print the completion script of SHELL, generated from berth's command table.\n"
    "Installed ones are loaded by the shell itself; to try one:\n"
    "  source <(berth completion bash)      (bash)\n"
    "  source <(berth completion zsh)       (zsh, after compinit)\n"
    "  berth completion fish | source       (fish)",
    NULL, CLI_VALUE_SHELL },
  { "help", cmd_help, "[COMMAND [SUBCOMMAND]]", "show the help of berth or of a command",
    "Without COMMAND, berth's usage; else COMMAND's (as berth COMMAND --help).", NULL, CLI_VALUE_TOPIC },
  { "version", cmd_version, "[--json]", "print berth's version", NULL, version_options },
  { NULL },
};

const cli_command *
cli_find (const cli_command *table, const char *name)
{
  for (const cli_command *c = table; c && c->name; c++)
    {
      if (strcmp (c->name, name) == 0)
        return c;
      if (c->aliases)
        {
          size_t n = strlen (name);
          for (const char *a = c->aliases; *a;)
            {
              size_t len = strcspn (a, " ");
              if (len == n && strncmp (a, name, n) == 0)
                return c;
              a += len;
              a += strspn (a, " ");
            }
        }
    }
  return NULL;
}

/* "  -b, --backend B" / "      --image IMG" */
static int
option_label (char *buf, size_t size, const cli_option *opt)
{
  char shortpart[8] = "    ";
  if (opt->key > 0 && opt->key < 256)
    snprintf (shortpart, sizeof shortpart, "-%c, ", opt->key);
  return snprintf (buf, size, "  %s--%s%s%s", shortpart, opt->name, opt->metavar ? " " : "", opt->metavar ? opt->metavar : "");
}

static void
print_options (FILE *f, const char *title, const cli_option *options)
{
  char label[96];
  int width = 0;
  for (const cli_option *opt = options; opt && opt->key; opt++)
    {
      int n = option_label (label, sizeof label, opt);
      width = n > width ? n : width;
    }
  if (width == 0)
    return;
  fprintf (f, "\n%s:\n", title);
  for (const cli_option *opt = options; opt->key; opt++)
    {
      option_label (label, sizeof label, opt);
      fprintf (f, "%-*s  ", width, label);
      for (const char *h = opt->help; *h;)
        {
          size_t len = strcspn (h, "\n");
          fprintf (f, "%.*s\n", (int) len, h);
          h += len;
          if (*h == '\n' && *++h)
            fprintf (f, "%*s", width + 2, "");
        }
    }
}

void
cli_print_help (FILE *f, const cli_command *parent, const cli_command *cmd)
{
  if (cmd->subcommands)
    {
      const char *lead = "Usage:";
      for (const cli_command *s = cmd->subcommands; s->name; s++, lead = "      ")
        fprintf (f, "%s berth %s %s%s%s\n", lead, cmd->name, s->name, *s->synopsis ? " " : "", s->synopsis);
    }
  else if (parent)
    fprintf (f, "Usage: berth %s %s%s%s\n", parent->name, cmd->name, *cmd->synopsis ? " " : "", cmd->synopsis);
  else
    fprintf (f, "Usage: berth %s%s%s\n", cmd->name, *cmd->synopsis ? " " : "", cmd->synopsis);
  const char *desc = cmd->description ? cmd->description : parent ? parent->description : NULL;
  if (desc)
    fprintf (f, "\n%s\n", desc);
  print_options (f, "Options", cmd->options);
  for (const cli_command *s = cmd->subcommands; s && s->name; s++)
    if (s->options)
      {
        char title[64];
        snprintf (title, sizeof title, "Options of %s %s", cmd->name, s->name);
        print_options (f, title, s->options);
      }
}

int
cli_next_option (cli_getopt *g, int argc, char **argv, int *ret_exit)
{
  struct option longopts[32];
  char shortopts[80] = "+:h";
  size_t nl = 0, ns = strlen (shortopts);
  for (const cli_option *opt = g->cmd->options; opt && opt->key; opt++)
    {
      if (nl + 2 >= sizeof longopts / sizeof longopts[0] || ns + 3 >= sizeof shortopts)
        abort (); /* a table too big for these buffers: a programming error */
      longopts[nl++] = (struct option){ opt->name, opt->value ? required_argument : no_argument, NULL, opt->key };
      if (opt->key < 256)
        {
          shortopts[ns++] = (char) opt->key;
          if (opt->value)
            shortopts[ns++] = ':';
        }
    }
  shortopts[ns] = '\0';
  longopts[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
  longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
  if (!g->started)
    {
      optind = 1;
      g->started = true;
    }
  opterr = 0;
  int c = getopt_long (argc, argv, shortopts, longopts, NULL);
  g->arg = optarg;
  g->ind = optind;
  const char *name = g->parent ? g->parent->name : g->cmd->name;
  const char *sub = g->parent ? g->cmd->name : NULL;
  if (c == -1)
    return -1;
  if (c == 'h' && !g->own_help)
    {
      cli_print_help (stdout, g->parent, g->cmd);
      *ret_exit = 0;
      return -2;
    }
  if ((c == '?' || c == ':') && g->cmd->run == NULL && g->parent == NULL)
    {
      /* the global options (main) */
      *ret_exit = c == ':' ? cli_fail ("option '%s' needs a value (see berth --help)", argv[optind - 1])
                           : cli_fail ("unknown option '%s' (see berth --help)", argv[optind - 1]);
      return -2;
    }
  if (c == '?' || c == ':')
    {
      const char *what = argv[optind - 1];
      if (c == ':')
        *ret_exit = cli_fail ("%s%s%s: option '%s' needs a value (see berth help %s%s%s)", name, sub ? " " : "", sub ? sub : "", what, name,
                              sub ? " " : "", sub ? sub : "");
      else
        *ret_exit = cli_fail ("%s%s%s: bad option '%s' (see berth help %s%s%s)", name, sub ? " " : "", sub ? sub : "", what, name,
                              sub ? " " : "", sub ? sub : "");
      return -2;
    }
  return c;
}

int
cmd_help (const cli_opts *o, int argc, char **argv)
{
  (void) o;
  if (argc < 2)
    {
      cli_print_usage (stdout);
      return 0;
    }
  const cli_command *cmd = cli_find (cli_commands, argv[1]);
  if (cmd == NULL)
    return cli_fail ("help: no command '%s' (see berth --help)", argv[1]);
  if (argc >= 3 && cmd->subcommands)
    {
      const cli_command *sub = cli_find (cmd->subcommands, argv[2]);
      if (sub == NULL)
        return cli_fail ("help: %s has no subcommand '%s' (see berth help %s)", cmd->name, argv[2], cmd->name);
      cli_print_help (stdout, cmd, sub);
      return 0;
    }
  if (argc > 2)
    return cli_fail ("help: unexpected argument '%s'", argv[2]);
  cli_print_help (stdout, NULL, cmd);
  return 0;
}
