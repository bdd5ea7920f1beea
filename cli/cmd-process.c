/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-process.c: background processes of a named environment -- berth
   start, ps, logs, attach, stop (libberth's berth_process_*).  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <berth/provider-util.h> /* _cleanup_free_ */

#include "cli.h"

typedef struct proc_opts
{
  const char *name, *cwd, *id;
  bool json, follow, has_stdin, pty;
  int first; /* index of the first operand */
} proc_opts;

/* The options of command ARGV[0] (the table in commands.c), then the
   operands: the command (WANT_COMMAND), one process id (WANT_ID), or
   none.  */
static int
parse (int argc, char **argv, bool want_command, bool want_id, proc_opts *po, int *ret_exit)
{
  cli_getopt g = { .cmd = cli_find (cli_commands, argv[0]) };
  int c;
  while ((c = cli_next_option (&g, argc, argv, ret_exit)) >= 0)
    switch (c)
      {
      case 'e':
        po->name = g.arg;
        break;
      case 'C':
        po->cwd = g.arg;
        break;
      case 'f':
        po->follow = true;
        break;
      case CLI_OPT_STDIN:
        po->has_stdin = true;
        break;
      case CLI_OPT_PTY:
        po->pty = true;
        break;
      case CLI_OPT_JSON:
        po->json = cli_json = true;
        break;
      }
  if (c == -2)
    return -1;
  po->first = g.ind;
  if (po->name == NULL && !(strcmp (argv[0], "ps") == 0))
    {
      *ret_exit = cli_fail ("%s needs a named environment: -e NAME (its processes outlive this berth)", argv[0]);
      return -1;
    }
  if (want_command && po->first >= argc)
    {
      *ret_exit = cli_fail ("start: no command given (berth start -e NAME -- COMMAND)");
      return -1;
    }
  if (want_id && po->first + 1 != argc)
    {
      *ret_exit = cli_fail ("%s: name one process id (see berth ps -e %s)", argv[0], po->name);
      return -1;
    }
  if (!want_command && !want_id && po->first < argc)
    {
      *ret_exit = cli_fail ("%s: unexpected argument %s", argv[0], argv[po->first]);
      return -1;
    }
  if (want_id)
    po->id = argv[po->first];
  return 0;
}

/* The context, the environment, and (with an id) the process.  */
typedef struct proc_call
{
  berth_ctx *ctx;
  berth_env *env;
  berth_process *proc;
} proc_call;

static int
open_call (const cli_opts *o, const proc_opts *po, proc_call *c)
{
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  *c = (proc_call){ 0 };
  if ((c->ctx = cli_ctx (o)) == NULL)
    return EXIT_BERTH;
  if ((c->env = cli_open_named (c->ctx, po->name, &exit_code)) == NULL)
    return exit_code;
  if (po->id && berth_env_attach_process (c->env, po->id, &c->proc, &err) < 0)
    return cli_fail_err (err);
  return 0;
}

static int
close_call (proc_call *c, int exit_code)
{
  berth_process_unref (c->proc);
  if (c->env)
    {
      berth_env_cleanup (c->env, NULL);
      berth_env_unref (c->env);
    }
  berth_ctx_unref (c->ctx);
  return exit_code;
}

int
cmd_start (const cli_opts *o, int argc, char **argv)
{
  proc_opts po = { 0 };
  proc_call c;
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  if (parse (argc, argv, true, false, &po, &exit_code) < 0)
    return exit_code;
  _cleanup_free_ char *command = argc - po.first == 1 ? strdup (argv[po.first]) : berth_shell_join ((const char *const *) argv + po.first);
  if ((exit_code = open_call (o, &po, &c)) != 0)
    return close_call (&c, exit_code);
  berth_process_spec spec = BERTH_PROCESS_SPEC_INIT;
  spec.command = command;
  spec.cwd = po.cwd;
  spec.has_stdin = po.has_stdin;
  spec.pty = po.pty;
  if (berth_env_start_process (c.env, &spec, &c.proc, &err) < 0)
    return close_call (&c, cli_fail_err (err));
  if (po.json)
    {
      printf ("{\"schema_version\":%d,\"id\":\"%s\",\"env\":", CLI_SCHEMA_VERSION, berth_process_id (c.proc));
      json_string (stdout, po.name);
      fputs ("}\n", stdout);
      cli_json = false;
    }
  else
    puts (berth_process_id (c.proc));
  return close_call (&c, 0);
}

static const char *
state_name (int state, int ec, const char *how, char *buf, size_t size)
{
  if (state == BERTH_PROCESS_RUNNING)
    return "running";
  if (state == BERTH_PROCESS_LOST || strcmp (how, "stopped") == 0)
    return how;
  snprintf (buf, size, "%s %d", strcmp (how, "signaled") == 0 ? "signaled" : "exited", strcmp (how, "signaled") == 0 ? ec - 128 : ec);
  return buf;
}

typedef struct ps_state
{
  bool json, first, all;
  const char *env; /* its environment's name (a column when listing all) */
} ps_state;

static void
ps_one (void *userdata, const char *id, const char *command, int64_t started, int state, int ec, const char *how)
{
  ps_state *s = userdata;
  char buf[32];
  if (s->json)
    {
      printf ("%s{\"schema_version\":%d,\"env\":", s->first ? "" : ",", CLI_SCHEMA_VERSION);
      json_string (stdout, s->env);
      printf (",\"id\":\"%s\",\"state\":\"%s\",\"exit_code\":", id,
              state == BERTH_PROCESS_RUNNING ? "running" : state == BERTH_PROCESS_LOST ? "lost" : "exited");
      if (state == BERTH_PROCESS_EXITED)
        printf ("%d,\"termination\":\"%s\"", ec, how);
      else
        printf ("null,\"termination\":%s", how ? "\"lost\"" : "null");
      printf (",\"started\":%lld,\"command\":", (long long) started);
      json_string (stdout, command);
      fputc ('}', stdout);
    }
  else
    {
      _cleanup_free_ char *safe = cli_term_escape (command);
      if (s->all)
        {
          _cleanup_free_ char *safe_env = cli_term_escape (s->env);
          printf ("%-16s  ", safe_env ? safe_env : "");
        }
      printf ("%s  %-10s  %s\n", id, state_name (state, ec, how, buf, sizeof buf), safe ? safe : "");
    }
  s->first = false;
}

/* berth ps without -e: the names of the environments of the bound scope
   (suspended ones are not woken: none of them runs a process).  */
typedef struct ps_names
{
  const cli_opts *o;
  char **names;
  size_t n;
} ps_names;

static bool
same_word (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a && b && strcmp (a, b) == 0);
}

static void
ps_collect (void *userdata, const berth_env_info *info)
{
  ps_names *pn = userdata;
  if (info->suspended || !same_word (info->tenant, pn->o->tenant) || !same_word (info->agent, pn->o->agent))
    return;
  char **v = realloc (pn->names, (pn->n + 2) * sizeof *v);
  if (v == NULL)
    return;
  pn->names = v;
  v[pn->n] = strdup (info->name);
  if (v[pn->n])
    v[++pn->n] = NULL;
}

static int
ps_all (const cli_opts *o, bool json)
{
  berth_error *err = NULL;
  berth_ctx *ctx = cli_ctx (o);
  ps_names pn = { .o = o };
  int exit_code = 0;
  if (ctx == NULL)
    return EXIT_BERTH;
  if (berth_env_list_info (ctx, ps_collect, &pn, &err) < 0)
    exit_code = cli_fail_err (err);
  ps_state s = { .json = json, .first = true, .all = true };
  cli_capture cap;
  if (exit_code == 0 && !cli_capture_begin (&cap))
    exit_code = cli_fail ("out of memory");
  for (size_t i = 0; exit_code == 0 && i < pn.n; i++)
    {
      berth_env_spec spec = BERTH_ENV_SPEC_INIT;
      berth_env *env = NULL;
      spec.name = pn.names[i];
      s.env = pn.names[i];
      /* one that cannot be reached now is left out, with a log line */
      if (berth_env_open (ctx, &spec, &env, &err) < 0 || berth_env_list_processes (env, ps_one, &s, &err) < 0)
        {
          fprintf (stderr, "berth: ps: environment %s: %s\n", pn.names[i], berth_error_message (err));
          err = berth_error_free (err);
        }
      if (env)
        {
          berth_env_cleanup (env, NULL);
          berth_env_unref (env);
        }
    }
  if (exit_code == 0)
    {
      _cleanup_free_ char *text = cli_capture_end (&cap);
      if (json)
        {
          printf ("[%s]\n", text ? text : "");
          cli_json = false;
        }
      else if (text && *text)
        printf ("%-16s  %-13s  %-10s  %s\n%s", "ENV", "ID", "STATE", "COMMAND", text);
    }
  for (size_t i = 0; i < pn.n; i++)
    free (pn.names[i]);
  free (pn.names);
  berth_ctx_unref (ctx);
  return exit_code;
}

int
cmd_ps (const cli_opts *o, int argc, char **argv)
{
  proc_opts po = { 0 };
  proc_call c;
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  if (parse (argc, argv, false, false, &po, &exit_code) < 0)
    return exit_code;
  if (po.name == NULL)
    return ps_all (o, po.json);
  if ((exit_code = open_call (o, &po, &c)) != 0)
    return close_call (&c, exit_code);
  ps_state s = { .json = po.json, .first = true, .env = po.name };
  cli_capture cap;
  if (!cli_capture_begin (&cap))
    return close_call (&c, cli_fail ("out of memory"));
  int r = berth_env_list_processes (c.env, ps_one, &s, &err);
  _cleanup_free_ char *text = cli_capture_end (&cap);
  if (r < 0)
    return close_call (&c, cli_fail_err (err));
  if (po.json)
    {
      printf ("[%s]\n", text);
      cli_json = false;
    }
  else
    fputs (text, stdout);
  return close_call (&c, 0);
}

static volatile sig_atomic_t detach_requested;

static void
on_interrupt (int sig)
{
  (void) sig;
  detach_requested = 1;
}

/* Copy P's output to stdout until its end (or Ctrl-C); with STDIN, our
   input goes to the process.  */
static int
pump (berth_process *p, bool follow, bool with_stdin)
{
  berth_error *err = NULL;
  char buf[65536];
  bool in_open = with_stdin;
  int fd = berth_process_fd (p, &err);
  if (fd < 0)
    return cli_fail_err (err);
  for (;;)
    {
      ssize_t n = berth_process_read (p, buf, sizeof buf, NULL, &err);
      if (n > 0)
        {
          if (fwrite (buf, 1, (size_t) n, stdout) != (size_t) n)
            return EXIT_BERTH;
          fflush (stdout);
          continue;
        }
      if (n == 0)
        return 0;
      if (n != -EAGAIN)
        return cli_fail_err (err);
      if (detach_requested)
        return 0;
      struct pollfd pf[2] = { { fd, POLLIN, 0 }, { in_open ? STDIN_FILENO : -1, POLLIN, 0 } };
      int pr = poll (pf, 2, follow ? 1000 : 300);
      if (pr == 0 && !follow)
        return 0; /* nothing more now */
      if (pf[1].revents)
        {
          ssize_t m = read (STDIN_FILENO, buf, sizeof buf);
          if (m > 0 && berth_process_write (p, buf, (size_t) m, &err) < 0)
            return cli_fail_err (err);
          if (m <= 0)
            {
              in_open = false;
              if (berth_process_close_stdin (p, &err) < 0)
                return cli_fail_err (err);
            }
        }
    }
}

static int
follow_command (const cli_opts *o, int argc, char **argv, bool attach)
{
  proc_opts po = { 0 };
  proc_call c;
  int exit_code = EXIT_BERTH;
  if (parse (argc, argv, false, true, &po, &exit_code) < 0)
    return exit_code;
  if ((exit_code = open_call (o, &po, &c)) != 0)
    return close_call (&c, exit_code);
  if (attach && berth_process_poll (c.proc, NULL, NULL, NULL) == BERTH_PROCESS_LOST)
    {
      /* nothing to attach to: why, from its output */
      berth_error *err = NULL;
      void *data = NULL;
      size_t len = 0;
      if (berth_process_output (c.proc, &data, &len, &err) < 0)
        return close_call (&c, cli_fail_err (err));
      free (data);
    }
  if (!attach && !po.follow)
    {
      berth_error *err = NULL;
      void *data = NULL;
      size_t len = 0;
      if (berth_process_output (c.proc, &data, &len, &err) < 0)
        return close_call (&c, cli_fail_err (err));
      fwrite (data, 1, len, stdout);
      free (data);
      return close_call (&c, 0);
    }
  struct sigaction sa = { .sa_handler = on_interrupt }, old;
  sigaction (SIGINT, &sa, &old);
  exit_code = pump (c.proc, true, attach);
  sigaction (SIGINT, &old, NULL);
  return close_call (&c, exit_code);
}

int
cmd_logs (const cli_opts *o, int argc, char **argv)
{
  return follow_command (o, argc, argv, false);
}

int
cmd_attach (const cli_opts *o, int argc, char **argv)
{
  return follow_command (o, argc, argv, true);
}

int
cmd_stop (const cli_opts *o, int argc, char **argv)
{
  proc_opts po = { 0 };
  proc_call c;
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  if (parse (argc, argv, false, true, &po, &exit_code) < 0)
    return exit_code;
  if ((exit_code = open_call (o, &po, &c)) != 0)
    return close_call (&c, exit_code);
  if (berth_process_stop (c.proc, &err) < 0)
    return close_call (&c, cli_fail_err (err));
  return close_call (&c, 0);
}

/* WORDS on our terminal, through the environment's terminal prefix
   (docker exec -it, ssh -tt, srun --pty, the jail keeping our session):
   a terminal there of our window size, following its changes.  Like
   system(), berth ignores ^C and ^\ while it waits: they are the
   shell's.  The exit status, or 128+N for a signal.  */
static int
shell_on_terminal (berth_env *env, const char *const *words)
{
  berth_error *err = NULL;
  _cleanup_strv_free_ char **argv = NULL;
  if (berth_env_terminal_prefix (env, NULL, &argv, &err) < 0)
    return cli_fail_err (err);
  for (size_t i = 0; words[i]; i++)
    if (berth_strv_push (&argv, words[i]) < 0)
      return cli_fail ("out of memory");
  fflush (NULL);
  pid_t pid = fork ();
  if (pid < 0)
    return cli_fail ("shell: cannot fork: %s", strerror (errno));
  if (pid == 0)
    {
      execvp (argv[0], argv);
      fprintf (stderr, "berth: shell: cannot run %s: %s\n", argv[0], strerror (errno));
      _exit (127);
    }
  struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
  sigaction (SIGINT, &ign, &old_int);
  sigaction (SIGQUIT, &ign, &old_quit);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  sigaction (SIGINT, &old_int, NULL);
  sigaction (SIGQUIT, &old_quit, NULL);
  return WIFEXITED (status) ? WEXITSTATUS (status) : WIFSIGNALED (status) ? 128 + WTERMSIG (status) : EXIT_BERTH;
}

/* berth shell -e NAME: an interactive bash in the environment with its
   state (the rc file libberth writes: exports, functions, aliases, cwd),
   our stdin, stdout and stderr bridged; its exit status is ours.  */
int
cmd_shell (const cli_opts *o, int argc, char **argv)
{
  proc_opts po = { 0 };
  proc_call c;
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  if (parse (argc, argv, false, false, &po, &exit_code) < 0)
    return exit_code;
  if ((exit_code = open_call (o, &po, &c)) != 0)
    return close_call (&c, exit_code);
  _cleanup_free_ char *rc = NULL, *tmp = NULL, *path = NULL;
  char tag[9];
  snprintf (tag, sizeof tag, "%08x", (unsigned) getpid () ^ (unsigned) time (NULL));
  if (berth_env_shell_rc (c.env, &rc, &err) < 0 || berth_env_temp_dir (c.env, &tmp, &err) < 0)
    return close_call (&c, cli_fail_err (err));
  if (asprintf (&path, "%s/.berth-shell-%s.rc", tmp, tag) < 0)
    return close_call (&c, cli_fail ("out of memory"));
  /* the rc file removes itself once read */
  _cleanup_free_ char *text = NULL;
  if (asprintf (&text, "rm -f -- \"${BASH_SOURCE[0]}\"\n%s", rc) < 0 || berth_env_write_file (c.env, path, text, strlen (text), 0600, &err) < 0)
    return close_call (&c, err ? cli_fail_err (err) : cli_fail ("out of memory"));
  const char *words[] = { "bash", "--rcfile", path, "-i", NULL };
  if (isatty (STDIN_FILENO) && isatty (STDOUT_FILENO))
    return close_call (&c, shell_on_terminal (c.env, words));
  /* not on a terminal: our stdin and stdout through the transport */
  berth_stream_spec spec = BERTH_STREAM_SPEC_INIT;
  spec.argv = words;
  spec.in_fd = STDIN_FILENO;
  int st = berth_env_stream_ex (c.env, &spec, &err);
  if (st < 0)
    return close_call (&c, cli_fail_err (err));
  return close_call (&c, st);
}
