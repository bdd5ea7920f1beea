/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* completion.c: `berth completion bash|zsh|fish`, the shells' completion
   scripts generated from the command table (commands.c).  Each script
   knows, for every command path ("", "exec", "config list"): its
   subcommands, its options, what each option's value is and what its
   operands are; it walks the words typed so far with the parser's rules
   (global options, then the command, options until the first operand or
   "--") and completes the word under the cursor.  Backend and
   environment names come from `berth backends --names` and
   `berth ls --names` (cheap: no module is loaded).  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const kind_names[] = {
  [CLI_VALUE_NONE] = "none",       [CLI_VALUE_WORD] = "word",   [CLI_VALUE_FILE] = "file",
  [CLI_VALUE_DIR] = "dir",         [CLI_VALUE_BACKEND] = "backend", [CLI_VALUE_ENV] = "env",
  [CLI_VALUE_COMMAND] = "command", [CLI_VALUE_TOPIC] = "topic", [CLI_VALUE_SHELL] = "shell",
};

static const cli_command top = { "", NULL, "", NULL, NULL, cli_global_options, CLI_VALUE_NONE, cli_commands };

/* One command path and its table entry.  */
typedef struct path
{
  char name[64];
  const cli_command *cmd;
} path;

/* Every path: "", each command, each subcommand.  Returns the count.  */
static size_t
all_paths (path *out, size_t max)
{
  size_t n = 0;
  out[n++] = (path){ "", &top };
  for (const cli_command *c = cli_commands; c->name && n < max; c++)
    {
      out[n] = (path){ .cmd = c };
      snprintf (out[n].name, sizeof out[n].name, "%s", c->name);
      n++;
      for (const cli_command *s = c->subcommands; s && s->name && n < max; s++)
        {
          out[n] = (path){ .cmd = s };
          snprintf (out[n].name, sizeof out[n].name, "%s %s", c->name, s->name);
          n++;
        }
    }
  return n;
}

/* The words of S quoted for a POSIX shell's single quotes.  */
static void
sq (FILE *f, const char *s, size_t len)
{
  fputc ('\'', f);
  for (size_t i = 0; i < len && s[i]; i++)
    if (s[i] == '\'')
      fputs ("'\\''", f);
    else
      fputc (s[i], f);
  fputc ('\'', f);
}

/* S (LEN bytes at most) in fish's single quotes.  */
static void
sq_fish (FILE *f, const char *s, size_t len)
{
  fputc ('\'', f);
  for (size_t i = 0; i < len && s[i]; i++)
    {
      if (s[i] == '\'' || s[i] == '\\')
        fputc ('\\', f);
      fputc (s[i], f);
    }
  fputc ('\'', f);
}

/* The first line of a help text.  */
static size_t
first_line (const char *s)
{
  return s ? strcspn (s, "\n") : 0;
}

/* "-b --backend -e --env ... -h --help" */
static void
option_words (FILE *f, const cli_command *cmd, const char *sep)
{
  for (const cli_option *o = cmd->options; o && o->key; o++)
    {
      if (o->key < 256)
        fprintf (f, "-%c%s", o->key, sep);
      fprintf (f, "--%s%s", o->name, sep);
    }
  fprintf (f, "-h%s--help", sep);
}

/* " -b=backend --backend=backend ... " (the options that take a value) */
static void
value_words (FILE *f, const cli_command *cmd)
{
  fputc (' ', f);
  for (const cli_option *o = cmd->options; o && o->key; o++)
    if (o->value != CLI_VALUE_NONE)
      {
        if (o->key < 256)
          fprintf (f, "-%c=%s ", o->key, kind_names[o->value]);
        fprintf (f, "--%s=%s ", o->name, kind_names[o->value]);
      }
}

static void
sub_words (FILE *f, const cli_command *cmd, const char *sep)
{
  for (const cli_command *s = cmd->subcommands; s && s->name; s++)
    fprintf (f, "%s%s", s == cmd->subcommands ? "" : sep, s->name);
}

static void
topic_words (FILE *f)
{
  sub_words (f, &top, " ");
}

/* The shared walk over the typed words, for bash and zsh (the same
   syntax in both).  W(i) is word i, the command is word FIRST, the
   cursor is word CUR.  */
static void
sh_walk (FILE *f, const char *words, const char *first, const char *cur)
{
  fprintf (f,
           "  local cmdpath= i w kind subs opts vals operand odesc sdesc dashdash= operands=0\n"
           "  _berth_spec ''\n"
           "  for ((i = %s; i < %s; i++)); do\n"
           "    w=${%s[i]}\n"
           "    [[ -n $dashdash ]] && continue\n"
           "    if [[ $w == -- ]]; then dashdash=1; operands=1; continue; fi\n"
           "    if [[ $w == -* ]]; then\n"
           "      # an option that takes a value eats the next word\n"
           "      if [[ $w != *=* && $vals == *\" $w=\"* ]]; then\n"
           "        [[ -z $cmdpath && $w == --config ]] && _berth_cmd+=(--config \"${%s[i+1]}\")\n"
           "        ((i++))\n"
           "      fi\n"
           "      [[ -z $cmdpath && $w == --config=* ]] && _berth_cmd+=(\"$w\")\n"
           "      continue\n"
           "    fi\n"
           "    if [[ $operands == 0 && -n $subs && \" $subs \" == *\" $w \"* ]]; then\n"
           "      cmdpath=${cmdpath:+$cmdpath }$w\n"
           "      _berth_spec \"$cmdpath\"\n"
           "      continue\n"
           "    fi\n"
           "    # the first operand: options end there\n"
           "    operands=1 dashdash=1\n"
           "  done\n",
           first, cur, words, words);
}

static void
sh_spec (FILE *f, bool zsh)
{
  path paths[128];
  size_t n = all_paths (paths, 128);
  fputs ("# _berth_spec PATH: the subcommands, options, option values and operands of PATH\n"
         "_berth_spec ()\n{\n  subs= opts= vals= operand=none\n",
         f);
  if (zsh)
    fputs ("  odesc=() sdesc=()\n", f);
  fputs ("  case $1 in\n", f);
  for (size_t i = 0; i < n; i++)
    {
      const cli_command *c = paths[i].cmd;
      fputs ("    ", f);
      sq (f, paths[i].name, strlen (paths[i].name));
      fputs (")\n      subs=", f);
      fputc ('\'', f);
      sub_words (f, c, " ");
      fputs ("'\n      opts='", f);
      option_words (f, c, " ");
      fputs ("'\n      vals='", f);
      value_words (f, c);
      fprintf (f, "'\n      operand=%s\n", kind_names[c->operands]);
      if (zsh)
        {
          fputs ("      odesc=(", f);
          for (const cli_option *o = c->options; o && o->key; o++)
            {
              char buf[512];
              int len = snprintf (buf, sizeof buf, "--%s:%.*s", o->name, (int) first_line (o->help), o->help);
              sq (f, buf, (size_t) len);
              if (o->key < 256)
                {
                  fputc (' ', f);
                  len = snprintf (buf, sizeof buf, "-%c:%.*s", o->key, (int) first_line (o->help), o->help);
                  sq (f, buf, (size_t) len);
                }
              fputc (' ', f);
            }
          fputs ("'--help:show the help' '-h:show the help')\n      sdesc=(", f);
          for (const cli_command *s = c->subcommands; s && s->name; s++)
            {
              char buf[512];
              int len = snprintf (buf, sizeof buf, "%s:%s", s->name, s->summary ? s->summary : "");
              sq (f, buf, (size_t) len);
              fputc (' ', f);
            }
          fputs (")\n", f);
        }
      fputs ("      ;;\n", f);
    }
  fputs ("  esac\n}\n\n", f);
}

static void
gen_bash (FILE *f)
{
  fputs ("# bash completion for berth -*- shell-script -*-\n"
         "# Generated from berth's command table by `berth completion bash`: do not\n"
         "# edit, regenerate.\n\n",
         f);
  sh_spec (f, false);
  fputs ("# _berth_words KIND: the candidates of KIND that start with $cur\n"
         "_berth_words ()\n{\n"
         "  case $1 in\n"
         "    backend) mapfile -t COMPREPLY < <(compgen -W \"$(\"${_berth_cmd[@]}\" backends --names 2>/dev/null)\" -- \"$cur\") ;;\n"
         "    env) mapfile -t COMPREPLY < <(compgen -W \"$(\"${_berth_cmd[@]}\" ls --names 2>/dev/null)\" -- \"$cur\") ;;\n"
         "    file) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
         "    dir) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n"
         "    command) compopt -o filenames 2>/dev/null; mapfile -t COMPREPLY < <(compgen -c -- \"$cur\"; compgen -f -- \"$cur\") ;;\n"
         "    topic) mapfile -t COMPREPLY < <(compgen -W '",
         f);
  topic_words (f);
  fputs ("' -- \"$cur\") ;;\n"
         "    shell) mapfile -t COMPREPLY < <(compgen -W 'bash zsh fish' -- \"$cur\") ;;\n"
         "    *) COMPREPLY=() ;;\n"
         "  esac\n"
         "}\n\n"
         "_berth ()\n{\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local -a _berth_cmd=(\"${COMP_WORDS[0]}\")\n"
         "  COMPREPLY=()\n",
         f);
  sh_walk (f, "COMP_WORDS", "1", "COMP_CWORD");
  fputs ("  # --opt=VALUE: bash splits the word at '='\n"
         "  if [[ $prev == = && $COMP_CWORD -ge 2 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
         "  if [[ $cur == = ]]; then prev=${COMP_WORDS[COMP_CWORD-1]}; cur=; fi\n"
         "  if [[ -z $dashdash && $prev == -* && $vals == *\" $prev=\"* ]]; then\n"
         "    kind=${vals#* $prev=}\n"
         "    _berth_words \"${kind%% *}\"\n"
         "    return 0\n"
         "  fi\n"
         "  if [[ -z $dashdash && $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
         "    return 0\n"
         "  fi\n"
         "  if [[ $operands == 0 && -n $subs ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"$subs\" -- \"$cur\")\n"
         "    return 0\n"
         "  fi\n"
         "  if [[ $operand == none ]]; then\n"
         "    [[ -z $dashdash ]] && mapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
         "    return 0\n"
         "  fi\n"
         "  _berth_words \"$operand\"\n"
         "  return 0\n"
         "}\n"
         "complete -F _berth berth\n",
         f);
}

static void
gen_zsh (FILE *f)
{
  fputs ("#compdef berth\n"
         "# zsh completion for berth.\n"
         "# Generated from berth's command table by `berth completion zsh`: do not\n"
         "# edit, regenerate.\n\n",
         f);
  sh_spec (f, true);
  fputs ("_berth_words ()\n{\n"
         "  case $1 in\n"
         "    backend) compadd -- ${(f)\"$(${_berth_cmd[@]} backends --names 2>/dev/null)\"} ;;\n"
         "    env) compadd -- ${(f)\"$(${_berth_cmd[@]} ls --names 2>/dev/null)\"} ;;\n"
         "    file) _files ;;\n"
         "    dir) _files -/ ;;\n"
         "    command) _command_names -e; _files ;;\n"
         "    topic) compadd -- ",
         f);
  topic_words (f);
  fputs (" ;;\n"
         "    shell) compadd -- bash zsh fish ;;\n"
         "    *) _message 'a value' ;;\n"
         "  esac\n"
         "}\n\n"
         "_berth ()\n{\n"
         "  local cur=$words[CURRENT] prev=$words[CURRENT-1]\n"
         "  local -a _berth_cmd=($words[1])\n",
         f);
  sh_walk (f, "words", "2", "CURRENT");
  fputs ("  if [[ -z $dashdash && $prev == -* && $vals == *\" $prev=\"* ]]; then\n"
         "    kind=${vals#* $prev=}\n"
         "    _berth_words \"${kind%% *}\"\n"
         "    return\n"
         "  fi\n"
         "  if [[ -z $dashdash && $cur == -* ]]; then\n"
         "    _describe -t options 'berth option' odesc\n"
         "    return\n"
         "  fi\n"
         "  if [[ $operands == 0 && -n $subs ]]; then\n"
         "    _describe -t commands 'berth command' sdesc\n"
         "    return\n"
         "  fi\n"
         "  if [[ $operand == none ]]; then\n"
         "    [[ -z $dashdash ]] && _describe -t options 'berth option' odesc\n"
         "    return\n"
         "  fi\n"
         "  _berth_words $operand\n"
         "}\n\n"
         "# Autoloaded from fpath (as _berth), or sourced: `source <(berth completion zsh)`.\n"
         "if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then\n"
         "  _berth \"$@\"\n"
         "else\n"
         "  compdef _berth berth\n"
         "fi\n",
         f);
}

static void
fish_value (FILE *f, cli_value v, bool option)
{
  switch (v)
    {
    case CLI_VALUE_NONE: break;
    case CLI_VALUE_WORD: fputs (option ? " -x" : "", f); break;
    case CLI_VALUE_FILE: fputs (option ? " -r -F" : " -F", f); break;
    case CLI_VALUE_DIR: fputs (" -x -a '(__fish_complete_directories (commandline -ct))'", f); break;
    case CLI_VALUE_BACKEND: fputs (" -x -a '(__berth_names backends)'", f); break;
    case CLI_VALUE_ENV: fputs (" -x -a '(__berth_names ls)'", f); break;
    case CLI_VALUE_COMMAND: fputs (" -x -a '(__fish_complete_command)'", f); break;
    case CLI_VALUE_TOPIC:
      fputs (" -x -a '", f);
      topic_words (f);
      fputs ("'", f);
      break;
    case CLI_VALUE_SHELL: fputs (" -x -a 'bash zsh fish'", f); break;
    }
}

static void
gen_fish (FILE *f)
{
  path paths[128];
  size_t n = all_paths (paths, 128);
  fputs ("# fish completion for berth.\n"
         "# Generated from berth's command table by `berth completion fish`: do not\n"
         "# edit, regenerate.\n\n"
         "function __berth_subs --description 'berth: the subcommands of a command path'\n"
         "    switch \"$argv[1]\"\n",
         f);
  for (size_t i = 0; i < n; i++)
    if (paths[i].cmd->subcommands)
      {
        fputs ("        case ", f);
        sq_fish (f, paths[i].name, strlen (paths[i].name));
        fputs ("\n            printf '%s\\n' ", f);
        sub_words (f, paths[i].cmd, " ");
        fputs ("\n", f);
      }
  fputs ("    end\nend\n\n"
         "function __berth_vals --description 'berth: the options of a command path that take a value'\n"
         "    switch \"$argv[1]\"\n",
         f);
  for (size_t i = 0; i < n; i++)
    {
      bool any = false;
      for (const cli_option *o = paths[i].cmd->options; o && o->key; o++)
        any |= o->value != CLI_VALUE_NONE;
      if (!any)
        continue;
      fputs ("        case ", f);
      sq_fish (f, paths[i].name, strlen (paths[i].name));
      fputs ("\n            printf '%s\\n'", f);
      for (const cli_option *o = paths[i].cmd->options; o && o->key; o++)
        if (o->value != CLI_VALUE_NONE)
          {
            if (o->key < 256)
              fprintf (f, " -%c", o->key);
            fprintf (f, " --%s", o->name);
          }
      fputs ("\n", f);
    }
  fputs ("    end\nend\n\n"
         "# Prints the command path of the line before the cursor, then 1 when an\n"
         "# operand (or --) came already (options end there), else 0.\n"
         "function __berth_state\n"
         "    set -l tokens (commandline -opc)\n"
         "    set -e tokens[1]\n"
         "    set -l path ''\n"
         "    set -l subs (__berth_subs '')\n"
         "    set -l vals (__berth_vals '')\n"
         "    set -l operand 0\n"
         "    set -l skip 0\n"
         "    for t in $tokens\n"
         "        if test $skip = 1\n"
         "            set skip 0\n"
         "            continue\n"
         "        end\n"
         "        test $operand = 1; and continue\n"
         "        if test \"$t\" = --\n"
         "            set operand 1\n"
         "            continue\n"
         "        end\n"
         "        if string match -q -- '-*' $t\n"
         "            if not string match -q -- '*=*' $t; and contains -- $t $vals\n"
         "                set skip 1\n"
         "            end\n"
         "            continue\n"
         "        end\n"
         "        if contains -- $t $subs\n"
         "            set path (string trim -- \"$path $t\")\n"
         "            set subs (__berth_subs $path)\n"
         "            set vals (__berth_vals $path)\n"
         "            continue\n"
         "        end\n"
         "        set operand 1\n"
         "    end\n"
         "    printf '%s\\n' \"$path\" $operand\n"
         "end\n\n"
         "# __berth_at PATH: the line is at PATH, options still allowed\n"
         "function __berth_at\n"
         "    set -l s (__berth_state)\n"
         "    test \"$s[1]\" = \"$argv[1]\"; and test \"$s[2]\" = 0\n"
         "end\n\n"
         "# __berth_in PATH: the line is at PATH (operands)\n"
         "function __berth_in\n"
         "    set -l s (__berth_state)\n"
         "    test \"$s[1]\" = \"$argv[1]\"\n"
         "end\n\n"
         "function __berth_names --description 'berth: backend or environment names'\n"
         "    set -l tokens (commandline -opc)\n"
         "    set -l cfg\n"
         "    for i in (seq 2 (count $tokens))\n"
         "        switch $tokens[$i]\n"
         "            case '--config=*'\n"
         "                set cfg $tokens[$i]\n"
         "            case --config\n"
         "                set -l j (math $i + 1)\n"
         "                set -q tokens[$j]; and set cfg --config $tokens[$j]\n"
         "        end\n"
         "    end\n"
         "    command $tokens[1] $cfg $argv[1] --names 2>/dev/null\n"
         "end\n\n"
         "complete -c berth -f\n",
         f);
  for (size_t i = 0; i < n; i++)
    {
      const cli_command *c = paths[i].cmd;
      const char *cond = paths[i].name;
      for (const cli_command *s = c->subcommands; s && s->name; s++)
        {
          fprintf (f, "complete -c berth -n \"__berth_at '%s'\" -a %s -d ", cond, s->name);
          sq_fish (f, s->summary ? s->summary : "", strlen (s->summary ? s->summary : ""));
          fputc ('\n', f);
        }
      for (const cli_option *o = c->options; o && o->key; o++)
        {
          fprintf (f, "complete -c berth -n \"__berth_at '%s'\"", cond);
          if (o->key < 256)
            fprintf (f, " -s %c", o->key);
          fprintf (f, " -l %s", o->name);
          fish_value (f, o->value, true);
          fputs (" -d ", f);
          sq_fish (f, o->help, first_line (o->help));
          fputc ('\n', f);
        }
      fprintf (f, "complete -c berth -n \"__berth_at '%s'\" -s h -l help -d 'show the help'\n", cond);
      if (c->operands != CLI_VALUE_NONE && c->operands != CLI_VALUE_WORD)
        {
          fprintf (f, "complete -c berth -n \"__berth_in '%s'\"", cond);
          fish_value (f, c->operands, false);
          fputc ('\n', f);
        }
    }
}

int
cmd_completion (const cli_opts *o, int argc, char **argv)
{
  int c, exit_code = 0;
  (void) o;
  cli_getopt g = { .cmd = cli_find (cli_commands, "completion") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    abort (); /* no options but --help */
  if (c == -2)
    return exit_code;
  if (g.ind != argc - 1)
    return cli_fail ("completion: name one shell: bash, zsh or fish (see berth help completion)");
  const char *shell = argv[g.ind];
  if (strcmp (shell, "bash") == 0)
    gen_bash (stdout);
  else if (strcmp (shell, "zsh") == 0)
    gen_zsh (stdout);
  else if (strcmp (shell, "fish") == 0)
    gen_fish (stdout);
  else
    return cli_fail ("completion: no completion for '%s' (bash, zsh or fish)", shell);
  return 0;
}
