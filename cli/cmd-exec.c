/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-exec.c: berth exec, exec-prefix and exec-stream.  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <berth/provider.h> /* the configuration's readers, berth_shell_join */
#include "cli.h"

static int interrupt_pipe[2] = { -1, -1 };
/* The last of SIGINT, SIGTERM, SIGHUP received (exec-stream exits 128+N).  */
static volatile sig_atomic_t interrupt_signal;
/* Our stdout is a pipe whose reader went away (`berth exec -- yes | head`).  */
static bool stdout_closed;

static void
on_interrupt (int sig)
{
  int saved = errno;
  interrupt_signal = sig;
  if (write (interrupt_pipe[1], "x", 1) < 0)
    {
    }
  errno = saved;
}

static int
stream_to_stdout (void *userdata, const char *data, size_t len)
{
  while (len > 0)
    {
      ssize_t n = write (STDOUT_FILENO, data, len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EPIPE)
        {
          /* Stop the command (its tree is killed where it runs).  */
          stdout_closed = true;
          return -1;
        }
      if (n < 0)
        return 0;
      data += n;
      len -= (size_t) n;
    }
  return 0;
}

/* The fd --stdin SRC names ("-": ours), streamed to the command as it
   reads it: never read into memory.  *RET_CLOSE: ours to close.  */
static int
open_stdin_source (const char *src, int *ret_fd, bool *ret_close)
{
  struct stat st;
  bool ours = strcmp (src, "-") != 0;
  int fd = ours ? open (src, O_RDONLY | O_CLOEXEC | O_NOCTTY) : STDIN_FILENO;
  if (fd < 0)
    return -errno;
  if (fstat (fd, &st) == 0 && S_ISDIR (st.st_mode))
    {
      if (ours)
        close (fd);
      return -EISDIR;
    }
  *ret_fd = fd;
  *ret_close = ours;
  return 0;
}

/* Catch SIGINT, SIGTERM and SIGHUP into interrupt_pipe: the runtime kills
   the command's tree where it runs when it becomes readable.  */
static void
catch_interrupts (void)
{
  if (pipe2 (interrupt_pipe, O_CLOEXEC | O_NONBLOCK) == 0)
    {
      struct sigaction sa = { .sa_handler = on_interrupt };
      sigaction (SIGINT, &sa, NULL);
      sigaction (SIGTERM, &sa, NULL);
      sigaction (SIGHUP, &sa, NULL);
    }
}

static void
print_result_json (const berth_result *r)
{
  size_t len;
  _cleanup_free_ char *json = berth_result_json (r, &len);
  fwrite (json, 1, len, stdout);
  fputc ('\n', stdout);
  cli_json = false; /* a later error (cleanup) is one line on stderr only */
}

static char *
join_words (int argc, char **argv)
{
  size_t n = 1;
  for (int i = 0; i < argc; i++)
    n += strlen (argv[i]) + 1;
  char *s = calloc (1, n);
  for (int i = 0; s && i < argc; i++)
    {
      if (i)
        strcat (s, " ");
      strcat (s, argv[i]);
    }
  return s;
}

/* Options shared by the three commands that open an environment.  */
typedef struct env_opts
{
  const char *backend, *name, *cwd, *image, *user;
  bool json, no_interactive;
  double setup_timeout; /* an explicit -t S: opening may take that long */
} env_opts;

/* Open the environment of EO.  -C becomes the initial cwd of a new
   environment; *RET_CWD (when given) gets it resolved for the command.
   Whether it exists is the runtime's rule, the same on every backend: a
   cwd asked for that cannot be entered is an execute error.  */
static berth_env *
open_env (berth_ctx *ctx, const env_opts *eo, int *ret_exit, const char **ret_cwd)
{
  berth_env_spec spec = BERTH_ENV_SPEC_INIT;
  berth_env *env = NULL;
  berth_error *err = NULL;
  static char abs[PATH_MAX];
  const char *cwd = eo->cwd;
  spec.backend = eo->backend;
  spec.name = eo->name;
  spec.image = eo->image;
  spec.cwd = eo->cwd;
  /* -t bounds every phase: creating or starting the environment too */
  spec.setup_timeout = eo->setup_timeout;
  if (eo->cwd && eo->cwd[0] != '/' && eo->cwd[0] != '~')
    {
      /* Others resolve it against the environment's cwd, which starts as
         the backend's default.  */
      spec.cwd = NULL;
      /* Host-side backends resolve -C against our own cwd.  */
      berth_provider *p = berth_ctx_find_provider (ctx, eo->backend ? eo->backend : berth_config_string (berth_ctx_config (ctx), "terminal.backend", "local"));
      if (p && (berth_provider_flag (p, BERTH_FLAG_USES_HOST_FILESYSTEM) || !berth_provider_flag (p, BERTH_FLAG_IS_REMOTE)))
        {
          char here[PATH_MAX];
          if (realpath (eo->cwd, abs) == NULL)
            {
              if (getcwd (here, sizeof here) == NULL || snprintf (abs, sizeof abs, "%s/%s", here, eo->cwd) >= (int) sizeof abs)
                {
                  *ret_exit = cli_fail ("cannot use -C %s: %s", eo->cwd, strerror (errno ? errno : ENAMETOOLONG));
                  return NULL;
                }
            }
          spec.cwd = cwd = abs;
        }
    }
  if (berth_env_open (ctx, &spec, &env, &err) < 0)
    {
      *ret_exit = cli_fail_err (err);
      return NULL;
    }
  if (ret_cwd)
    *ret_cwd = cwd;
  return env;
}

/* The largest --max-bytes: memory is O(N) while output comes in.  */
#define MAX_BYTES_MAX (1ull << 30)

/* Parse the options of CMD (exec, exec-prefix, exec-stream: its table
   says which it takes); returns the index of the first operand, or -1
   after printing (with *ret_exit set).  */
static int
parse_env_opts (int argc, char **argv, const char *cmd, env_opts *eo, double *timeout, const char **stdin_src, size_t *max_bytes, int *ret_exit)
{
  int c;
  cli_getopt g = { .cmd = cli_find (cli_commands, cmd) };
  while ((c = cli_next_option (&g, argc, argv, ret_exit)) >= 0)
    switch (c)
      {
      case 'b': eo->backend = g.arg; break;
      case 'e': eo->name = g.arg; break;
      case 'C': eo->cwd = g.arg; break;
      case 't':
        {
          char *end;
          double v;
          errno = 0;
          v = strtod (g.arg, &end);
          /* NaN fails both comparisons; inf and ERANGE are out of range.  */
          if (timeout == NULL || errno || end == g.arg || *end || !(v >= 0 && v <= BERTH_TIMEOUT_MAX))
            {
              *ret_exit = cli_fail ("timeout must be a number of seconds from 0 (no timeout) to %.0f (got '%s')", BERTH_TIMEOUT_MAX, g.arg);
              return -1;
            }
          *timeout = v == 0 ? BERTH_TIMEOUT_NONE : v;
          eo->setup_timeout = v;
          break;
        }
      case CLI_OPT_IMAGE: eo->image = g.arg; break;
      case CLI_OPT_STDIN: *stdin_src = g.arg; break;
      case CLI_OPT_JSON: eo->json = cli_json = true; break;
      case CLI_OPT_USER: eo->user = g.arg; break;
      case CLI_OPT_NO_INTERACTIVE: eo->no_interactive = true; break;
      case CLI_OPT_MAX_BYTES:
        {
          char *end;
          unsigned long long v;
          errno = 0;
          v = strtoull (g.arg, &end, 10);
          if (errno || end == g.arg || *end || g.arg[0] == '-' || g.arg[0] == '+' || v < 1 || v > MAX_BYTES_MAX)
            {
              *ret_exit = cli_fail ("--max-bytes must be an integer from 1 to %llu (got '%s')", (unsigned long long) MAX_BYTES_MAX, g.arg);
              return -1;
            }
          *max_bytes = (size_t) v;
          break;
        }
      default: abort (); /* in CMD's table, not handled here */
      }
  return c == -2 ? -1 : g.ind;
}

int
cmd_exec (const cli_opts *o, int argc, char **argv)
{
  env_opts eo = { 0 };
  double timeout = 0;
  const char *stdin_src = NULL;
  int exit_code = EXIT_BERTH;
  size_t max_bytes = 0;
  int first = parse_env_opts (argc, argv, "exec", &eo, &timeout, &stdin_src, &max_bytes, &exit_code);
  if (first < 0)
    return exit_code;
  if (first >= argc)
    return cli_fail ("exec: no command given (see berth exec --help)");

  _cleanup_free_ char *command = join_words (argc - first, argv + first);
  _cleanup_close_ int stdin_owned = -1;
  int stdin_fd = -1;
  if (stdin_src)
    {
      bool close_it = false;
      int r = open_stdin_source (stdin_src, &stdin_fd, &close_it);
      if (r < 0)
        return cli_fail ("cannot read --stdin %s: %s", stdin_src, strerror (-r));
      if (close_it)
        stdin_owned = stdin_fd;
    }
  /* Before the environment is created (which can take a while): an
     interrupt during creation stays in the pipe and stops the command as
     soon as it starts.  */
  catch_interrupts ();
  signal (SIGPIPE, SIG_IGN);
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  const char *cwd = NULL;
  berth_env *env = open_env (ctx, &eo, &exit_code, &cwd);
  if (env == NULL)
    {
      berth_ctx_unref (ctx);
      return exit_code;
    }

  berth_exec_spec spec = BERTH_EXEC_SPEC_INIT;
  berth_result *res = NULL;
  berth_error *err = NULL;
  spec.command = command;
  spec.cwd = cwd;
  spec.timeout = timeout;
  spec.has_stdin = stdin_src != NULL;
  spec.stdin_stream = stdin_src != NULL;
  spec.stdin_fd = stdin_fd;
  spec.cancel_fd = interrupt_pipe[0];
  if (max_bytes)
    spec.max_bytes = max_bytes; /* without --json: printed capped at the end */
  else if (!eo.json)
    {
      /* Live and uncapped, like ssh or docker exec.  */
      spec.on_output = stream_to_stdout;
      spec.max_bytes = 1;
    }
  bool failed = false;
  if (berth_env_execute (env, &spec, &res, &err) < 0)
    {
      /* with --json also an object on stdout, with what the command
         printed before it failed (a transport that died mid-command,
         state that could not be recorded) */
      exit_code = cli_fail_err (err);
      failed = true;
    }
  else
    {
      exit_code = berth_result_exit_code (res);
      if (!eo.json && max_bytes)
        {
          size_t n;
          const char *text = berth_result_output (res, &n);
          fwrite (text, 1, n, stdout);
          if (n && text[n - 1] != '\n')
            fputc ('\n', stdout);
          if (berth_result_full_output_path (res))
            fprintf (stderr, "berth: output truncated to %zu bytes; all of it is in %s\n", max_bytes, berth_result_full_output_path (res));
        }
      if (eo.json)
        print_result_json (res);
      else if (stdout_closed)
        exit_code = 128 + SIGPIPE; /* quiet, like a pipeline member killed by SIGPIPE */
      else if (berth_result_timed_out (res))
        fprintf (stderr, "berth: command timed out after %gs\n", timeout > 0 ? timeout : berth_config_double (berth_ctx_config (ctx), "terminal.timeout", 180));
      else if (berth_result_interrupted (res))
        fprintf (stderr, "berth: command interrupted\n");
      if (!eo.json && !max_bytes && berth_result_full_output_path (res))
        unlink (berth_result_full_output_path (res)); /* streamed already */
      berth_result_free (res);
    }
  /* A throw-away environment that could not be removed after the
     command failed: one failure, one line (the first says what went
     wrong with the environment; berth gc removes what is left).  */
  if (berth_env_cleanup (env, &err) < 0)
    {
      if (failed)
        berth_error_free (err);
      else
        cli_fail_err (err);
      err = NULL;
    }
  berth_env_unref (env);
  berth_ctx_unref (ctx);
  return exit_code;
}

typedef struct
{
  const char *name;
  bool found;
} find_env;

static void
find_env_one (void *userdata, const char *name, const char *backend, const char *cwd, int64_t last_used)
{
  find_env *f = userdata;
  (void) backend, (void) cwd, (void) last_used;
  if (strcmp (name, f->name) == 0)
    f->found = true;
}

bool
cli_env_exists (berth_ctx *ctx, const char *name)
{
  find_env f = { name, false };
  berth_error *err = NULL;
  if (berth_env_list (ctx, find_env_one, &f, &err) < 0)
    berth_error_free (err);
  return f.found;
}

int
cmd_exec_prefix (const cli_opts *o, int argc, char **argv)
{
  env_opts eo = { 0 };
  int exit_code = EXIT_BERTH;
  char **prefix = NULL;
  berth_error *err = NULL;
  if (parse_env_opts (argc, argv, "exec-prefix", &eo, NULL, NULL, NULL, &exit_code) < 0)
    return exit_code;
  if (eo.name == NULL)
    return cli_fail ("exec-prefix needs a named environment: -e NAME (a throw-away one would be gone before use)");
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  /* A prefix names an environment that exists: a typo must not make a
     new (local) one.  */
  if (!cli_env_exists (ctx, eo.name))
    {
      berth_ctx_unref (ctx);
      return cli_fail ("no environment named '%s' (see berth ls; create it with berth exec -e %s -- true)", eo.name, eo.name);
    }
  berth_env *env = open_env (ctx, &eo, &exit_code, NULL);
  if (env)
    {
      if (berth_env_exec_prefix (env, eo.user, !eo.no_interactive, &prefix, &err) < 0)
        exit_code = cli_fail_err (err);
      else
        {
          if (eo.json)
            {
              fputc ('[', stdout);
              for (size_t i = 0; prefix[i]; i++)
                {
                  if (i)
                    fputc (',', stdout);
                  json_string (stdout, prefix[i]);
                }
              fputs ("]\n", stdout);
            }
          else
            {
              _cleanup_free_ char *line = berth_shell_join ((const char *const *) prefix);
              puts (line ? line : "");
            }
          exit_code = 0;
          berth_strv_free (prefix);
        }
      berth_env_cleanup (env, NULL);
      berth_env_unref (env);
    }
  berth_ctx_unref (ctx);
  return exit_code;
}

int
cmd_exec_stream (const cli_opts *o, int argc, char **argv)
{
  env_opts eo = { 0 };
  int exit_code = EXIT_BERTH;
  berth_error *err = NULL;
  int first = parse_env_opts (argc, argv, "exec-stream", &eo, NULL, NULL, NULL, &exit_code);
  if (first < 0)
    return exit_code;
  if (first >= argc)
    return cli_fail ("exec-stream: no words given (see berth exec-stream --help)");
  /* Our stderr is the stream's: only errors of berth's own go there.  */
  cli_log_max = BERTH_LOG_ERROR;
  /* ^C, SIGTERM, SIGHUP: the command's tree is killed where it runs, and
     we exit 128+N as if killed by it.  */
  catch_interrupts ();
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  signal (SIGPIPE, SIG_IGN);
  berth_env *env = open_env (ctx, &eo, &exit_code, NULL);
  if (env)
    {
      berth_stream_spec spec = BERTH_STREAM_SPEC_INIT;
      spec.argv = (const char *const *) argv + first;
      spec.in_fd = STDIN_FILENO;
      spec.out_fd = STDOUT_FILENO;
      spec.err_fd = STDERR_FILENO;
      spec.cancel_fd = interrupt_pipe[0];
      int r = berth_env_stream_ex (env, &spec, &err);
      exit_code = r < 0 ? cli_fail_err (err) : interrupt_signal ? 128 + interrupt_signal : r;
      berth_env_cleanup (env, NULL);
      berth_env_unref (env);
    }
  berth_ctx_unref (ctx);
  return exit_code;
}
