/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-info.c: berth backends, doctor, ls, rm, gc.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <berth/plugins.h>
#include "cli.h"

/* Every flag, in the order `backends --json` and berth serve show them.  */
const uint32_t cli_all_flags[CLI_N_FLAGS] = {
  BERTH_FLAG_IS_REMOTE, BERTH_FLAG_IS_CONTAINER, BERTH_FLAG_SKIP_CONTAINER_GUARDS,
  BERTH_FLAG_USES_HOST_FILESYSTEM, BERTH_FLAG_SUPPORTS_STREAMS,
  BERTH_FLAG_SESSION_ISOLATED_WHEN_NONPERSISTENT, BERTH_FLAG_CLEANUP_STOPS_PROCESSES,
  BERTH_FLAG_SERVES_HOSTED_SCOPES,
};
const char *const cli_probe_names[3] = { "ready", "needs_setup", "unavailable" };

/* Parse CMD's options (--json, --names); false after printing (the
   help, or an error: *RET_EXIT).  */
static bool
parse_listing (const char *cmd, int argc, char **argv, bool *json, bool *names, int *ret_exit)
{
  int c;
  cli_getopt g = { .cmd = cli_find (cli_commands, cmd) };
  while ((c = cli_next_option (&g, argc, argv, ret_exit)) >= 0)
    switch (c)
      {
      case CLI_OPT_JSON: *json = cli_json = true; break;
      case CLI_OPT_NAMES: *names = true; break;
      default: abort ();
      }
  if (c == -2)
    return false;
  if (g.ind < argc)
    {
      *ret_exit = cli_fail ("%s: unexpected argument '%s' (see berth %s --help)", argv[0], argv[g.ind], argv[0]);
      return false;
    }
  if (*json && *names)
    {
      *ret_exit = cli_fail ("%s: --json and --names do not go together", argv[0]);
      return false;
    }
  return true;
}

int
cmd_backends (const cli_opts *o, int argc, char **argv)
{
  int exit_code = 0;
  bool json = false, names = false;
  if (!parse_listing ("backends", argc, argv, &json, &names, &exit_code))
    return exit_code;
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  if (names)
    {
      /* Cheap, for completion: the names of every backend, loading none.  */
      const char *list = berth_ctx_provider_names (ctx);
      for (const char *p = list; p && *p;)
        {
          size_t len = strcspn (p, ",");
          printf ("%.*s\n", (int) len, p);
          p += len;
          p += strspn (p, ", ");
        }
      berth_ctx_unref (ctx);
      return 0;
    }
  berth_ctx_load_providers (ctx); /* a listing: every module and plugin */
  size_t cur = 0;
  berth_provider *p;
  if (json)
    fputc ('[', stdout);
  for (bool first = true; (p = berth_ctx_next_provider (ctx, &cur)); first = false)
    {
      char *reason = NULL;
      int state = berth_provider_probe (p, &reason);
      if (json)
        {
          printf ("%s{\"schema_version\":%d,\"name\":", first ? "" : ",", CLI_SCHEMA_VERSION);
          json_string (stdout, berth_provider_name (p));
          printf (",\"description\":");
          json_string (stdout, berth_provider_description (p));
          printf (",\"origin\":");
          json_string (stdout, berth_provider_origin (p));
          printf (",\"status\":\"%s\",\"reason\":", cli_probe_names[state]);
          json_string (stdout, reason);
          printf (",\"default_cwd\":");
          json_string (stdout, berth_provider_default_cwd (p));
          printf (",\"cache_path_base\":");
          json_string (stdout, berth_provider_cache_path_base (p));
          printf (",\"flags\":{");
          for (size_t i = 0; i < sizeof cli_all_flags / sizeof cli_all_flags[0]; i++)
            printf ("%s\"%s\":%s", i ? "," : "", berth_flag_name (cli_all_flags[i]), berth_provider_flag (p, cli_all_flags[i]) ? "true" : "false");
          printf ("},\"strip_env_keys\":[");
          const char *const *keys = berth_provider_strip_env_keys (p);
          for (size_t i = 0; keys[i]; i++)
            {
              if (i)
                fputc (',', stdout);
              json_string (stdout, keys[i]);
            }
          printf ("]}");
        }
      else
        {
          printf ("%-12s %-12s %s\n", berth_provider_name (p), cli_probe_names[state], berth_provider_description (p));
          if (reason && state != BERTH_PROBE_READY)
            {
              char *safe = cli_term_escape (reason);
              printf ("%-12s   %s\n", "", safe);
              free (safe);
            }
        }
      free (reason);
    }
  if (json)
    fputs ("]\n", stdout);
  cli_json = false;
  berth_ctx_unref (ctx);
  return 0;
}

typedef struct doctor_state
{
  bool json, first, all_ok;
} doctor_state;

static void
doctor_check (void *userdata, const char *name, bool ok, const char *detail, const char *fix)
{
  doctor_state *d = userdata;
  d->all_ok &= ok;
  if (d->json)
    {
      printf ("%s{\"check\":", d->first ? "" : ",");
      json_string (stdout, name);
      printf (",\"ok\":%s,\"detail\":", ok ? "true" : "false");
      json_string (stdout, detail);
      printf (",\"fix\":");
      json_string (stdout, ok ? NULL : fix);
      printf ("}");
    }
  else
    {
      char *safe = cli_term_escape (detail);
      printf ("  [%s] %s: %s\n", ok ? " ok " : "FAIL", name, safe);
      free (safe);
      if (!ok && fix)
        printf ("         fix: %s\n", fix);
    }
  d->first = false;
}

int
cmd_doctor (const cli_opts *o, int argc, char **argv)
{
  const char *only = NULL;
  bool json = false;
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "doctor") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    switch (c)
      {
      case 'b': only = g.arg; break;
      case CLI_OPT_JSON: json = cli_json = true; break;
      default: abort ();
      }
  if (c == -2)
    return exit_code;
  if (g.ind < argc)
    return cli_fail ("doctor: unexpected argument '%s' (see berth doctor --help)", argv[g.ind]);
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  /* doctor -b NAME loads that backend only; doctor loads them all.  */
  if (!only)
    berth_ctx_load_providers (ctx);
  else if (berth_ctx_find_provider (ctx, only) == NULL)
    {
      int r = cli_fail ("unknown backend '%s' (available: %s)", only, berth_ctx_provider_names (ctx));
      berth_ctx_unref (ctx);
      return r;
    }
  doctor_state d = { .json = json, .all_ok = true };
  size_t cur = 0;
  berth_provider *p;
  if (json)
    fputc ('[', stdout);
  for (bool first = true; (p = berth_ctx_next_provider (ctx, &cur));)
    {
      if (only && strcmp (only, berth_provider_name (p)) != 0)
        continue;
      if (json)
        {
          printf ("%s{\"schema_version\":%d,\"backend\":", first ? "" : ",", CLI_SCHEMA_VERSION);
          json_string (stdout, berth_provider_name (p));
          printf (",\"checks\":[");
        }
      else
        printf ("%s (%s)\n", berth_provider_name (p), berth_provider_origin (p));
      d.first = true;
      berth_provider_doctor (p, doctor_check, &d);
      if (json)
        printf ("]}");
      first = false;
    }
  /* Modules and plugins that failed to load are doctor findings too.  */
  size_t pc = 0;
  const berth_plugin_info *pi;
  bool header = false;
  while (!only && (pi = berth_ctx_next_plugin (ctx, &pc)))
    {
      if (berth_plugin_loaded (pi) || !berth_plugin_enabled (pi))
        continue;
      if (json)
        {
          printf (",{\"schema_version\":%d,\"plugin\":", CLI_SCHEMA_VERSION);
          json_string (stdout, berth_plugin_name (pi));
          printf (",\"checks\":[");
        }
      else if (!header)
        {
          printf ("plugins\n");
          header = true;
        }
      d.first = true;
      doctor_check (&d, berth_plugin_name (pi), false, berth_plugin_status (pi), "reinstall or disable it: berth plugins disable NAME");
      if (json)
        printf ("]}");
    }
  if (json)
    fputs ("]\n", stdout);
  cli_json = false;
  berth_ctx_unref (ctx);
  return d.all_ok ? 0 : 1;
}

typedef struct ls_state
{
  bool json, first, names;
} ls_state;

static void
ls_one (void *userdata, const berth_env_info *info)
{
  ls_state *s = userdata;
  const char *name = info->name, *backend = info->backend, *cwd = info->cwd;
  int64_t last_used = info->last_used;
  if (s->names)
    {
      /* names are [A-Za-z0-9._-]: safe as they are */
      printf ("%s\n", name);
      return;
    }
  if (s->json)
    {
      printf ("%s{\"schema_version\":%d,\"name\":", s->first ? "" : ",", CLI_SCHEMA_VERSION);
      json_string (stdout, name);
      printf (",\"backend\":");
      json_string (stdout, backend);
      printf (",\"cwd\":");
      json_string (stdout, cwd);
      printf (",\"last_used\":%lld,\"tenant\":", (long long) last_used);
      json_string (stdout, info->tenant);
      printf (",\"agent\":");
      json_string (stdout, info->agent);
      printf (",\"suspended\":%s}", info->suspended ? "true" : "false");
    }
  else
    {
      char when[32] = "-";
      time_t t = (time_t) last_used;
      struct tm tm;
      if (last_used > 0 && localtime_r (&t, &tm))
        strftime (when, sizeof when, "%Y-%m-%d %H:%M", &tm);
      char *safe_name = cli_term_escape (name), *safe_backend = cli_term_escape (backend), *safe_cwd = cli_term_escape (cwd);
      printf ("%-20s %-12s %-17s %s\n", safe_name, safe_backend, when, safe_cwd);
      free (safe_name);
      free (safe_backend);
      free (safe_cwd);
    }
  s->first = false;
}

int
cmd_ls (const cli_opts *o, int argc, char **argv)
{
  int exit_code = 0;
  bool json = false, names = false;
  if (!parse_listing ("ls", argc, argv, &json, &names, &exit_code))
    return exit_code;
  berth_ctx *ctx = cli_ctx (o);
  berth_error *err = NULL;
  ls_state s = { json, true, names };
  if (ctx == NULL)
    return EXIT_BERTH;
  cli_capture cap;
  if (!cli_capture_begin (&cap))
    {
      berth_ctx_unref (ctx);
      return cli_fail ("ls: out of memory");
    }
  if (!json && !names)
    printf ("%-20s %-12s %-17s %s\n", "NAME", "BACKEND", "LAST USED", "CWD");
  int r = berth_env_list_info (ctx, ls_one, &s, &err);
  char *buf = cli_capture_end (&cap);
  if (r < 0)
    exit_code = cli_fail_err (err);
  else
    {
      exit_code = 0;
      if (json)
        printf ("[%s]\n", buf ? buf : "");
      else
        fputs (buf ? buf : "", stdout);
      cli_json = false;
    }
  free (buf);
  berth_ctx_unref (ctx);
  return exit_code;
}

int
cmd_rm (const cli_opts *o, int argc, char **argv)
{
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "rm") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    abort (); /* rm has no options but --help */
  if (c == -2)
    return exit_code;
  if (g.ind >= argc)
    return cli_fail ("rm: name the environments to remove (see berth ls)");
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  for (int i = g.ind; i < argc; i++)
    {
      berth_error *err = NULL;
      if (berth_env_remove (ctx, argv[i], &err) < 0)
        exit_code = cli_fail_err (err);
    }
  berth_ctx_unref (ctx);
  return exit_code;
}

typedef struct gc_state
{
  bool json, dry_run, first;
} gc_state;

static void
gc_one (void *userdata, const char *path, uint64_t bytes, const char *reason)
{
  gc_state *g = userdata;
  if (g->json)
    {
      printf ("%s{\"path\":", g->first ? "" : ",");
      json_string (stdout, path);
      printf (",\"bytes\":%llu,\"reason\":\"%s\"}", (unsigned long long) bytes, reason);
    }
  else
    {
      char *safe = cli_term_escape (path);
      printf ("%s %s (%llu bytes, %s)\n", g->dry_run ? "would remove" : "removed", safe, (unsigned long long) bytes,
              strcmp (reason, "expired") == 0 ? "older than terminal.lifetime_seconds" : "over the 256 MiB bound");
      free (safe);
    }
  g->first = false;
}

/* Environments a killed berth left and failed creations' leftovers
   (berth_gc_envs): one line each, or JSON objects for "environments".  */
typedef struct gc_env_state
{
  bool json, dry_run, first;
  FILE *out;
} gc_env_state;

static void
gc_env_one (void *userdata, const char *env, const char *backend, const char *reason, const char *detail)
{
  gc_env_state *g = userdata;
  if (g->json)
    {
      fprintf (g->out, "%s{\"env\":", g->first ? "" : ",");
      json_string (g->out, env);
      fprintf (g->out, ",\"backend\":");
      json_string (g->out, backend);
      fprintf (g->out, ",\"reason\":");
      json_string (g->out, reason);
      fprintf (g->out, ",\"detail\":");
      json_string (g->out, detail);
      fputc ('}', g->out);
    }
  else
    {
      char *safe = cli_term_escape (env), *safe_detail = cli_term_escape (detail);
      bool orphan = strcmp (reason, "orphaned_command") == 0;
      const char *what = g->dry_run ? (orphan ? "would kill the orphaned command of" : "would remove") : (orphan ? "killed the orphaned command of" : "removed");
      fprintf (g->out, "%s %s (%s): %s\n", what, safe, backend, safe_detail);
      free (safe);
      free (safe_detail);
    }
  g->first = false;
}

/* Run berth_gc_envs; its lines (or JSON objects) in *RET_TEXT.  */
static int
gc_envs (berth_ctx *ctx, bool dry_run, bool json, char **ret_text, berth_error **reterr)
{
  size_t len = 0;
  gc_env_state g = { .json = json, .dry_run = dry_run, .first = true };
  *ret_text = NULL;
  g.out = open_memstream (ret_text, &len);
  if (g.out == NULL)
    return -1;
  int n = berth_gc_envs (ctx, dry_run, gc_env_one, &g, reterr);
  fclose (g.out);
  return n;
}

int
cmd_gc (const cli_opts *o, int argc, char **argv)
{
  berth_error *err = NULL;
  gc_state g = { .first = true };
  int c, exit_code = 0;
  cli_getopt opt = { .cmd = cli_find (cli_commands, "gc") };
  while ((c = cli_next_option (&opt, argc, argv, &exit_code)) >= 0)
    switch (c)
      {
      case CLI_OPT_JSON: g.json = cli_json = true; break;
      case 'n': g.dry_run = true; break;
      default: abort ();
      }
  if (c == -2)
    return exit_code;
  if (opt.ind < argc)
    return cli_fail ("gc: unexpected argument '%s' (see berth gc --help)", argv[opt.ind]);
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  char *envs_text = NULL;
  int envs = gc_envs (ctx, g.dry_run, g.json, &envs_text, &err);
  if (envs < 0)
    {
      free (envs_text);
      berth_ctx_unref (ctx);
      return err ? cli_fail_err (err) : cli_fail ("gc: out of memory");
    }
  int backends = 0;
  if (!g.dry_run && (backends = berth_gc (ctx, &err)) < 0)
    {
      berth_ctx_unref (ctx);
      return cli_fail_err (err);
    }
  cli_capture cap;
  if (!cli_capture_begin (&cap))
    {
      berth_ctx_unref (ctx);
      return cli_fail ("gc: out of memory");
    }
  int spills = berth_gc_output (ctx, g.dry_run, gc_one, &g, &err);
  char *buf = cli_capture_end (&cap);
  berth_ctx_unref (ctx);
  if (spills < 0)
    {
      free (buf);
      return cli_fail_err (err);
    }
  if (g.json)
    printf ("{\"schema_version\":%d,\"dry_run\":%s,\"removed\":%d,\"environments_removed\":%d,\"environments\":[%s],\"backends_removed\":%d,"
            "\"spill_files_removed\":%d,\"spill_files\":[%s]}\n",
            CLI_SCHEMA_VERSION, g.dry_run ? "true" : "false", envs + backends + spills, envs, envs_text ? envs_text : "", backends, spills, buf ? buf : "");
  else
    {
      fputs (envs_text ? envs_text : "", stdout);
      fputs (buf ? buf : "", stdout);
      if (g.dry_run)
        printf ("would handle %d environment%s, remove %d spill file%s\n", envs, envs == 1 ? "" : "s", spills, spills == 1 ? "" : "s");
      else
        printf ("removed %d (%d environment%s, %d of the backends', %d spill file%s)\n", envs + backends + spills, envs, envs == 1 ? "" : "s", backends, spills,
                spills == 1 ? "" : "s");
    }
  free (envs_text);
  cli_json = false;
  free (buf);
  return 0;
}

typedef struct reap_state
{
  bool json, first;
} reap_state;

static void
reap_one (void *userdata, const char *name, const char *action, const char *why)
{
  reap_state *s = userdata;
  if (s->json)
    {
      printf ("%s{\"name\":", s->first ? "" : ",");
      json_string (stdout, name);
      printf (",\"action\":\"%s\",\"why\":", action);
      json_string (stdout, why);
      fputc ('}', stdout);
    }
  else
    {
      char *safe = cli_term_escape (why ? why : "");
      printf ("%s: %s%s%s\n", name, strcmp (action, "busy") == 0 ? "kept (a background process runs)" : action, why ? ": " : "", safe ? safe : "");
      free (safe);
    }
  s->first = false;
}

int
cmd_reap (const cli_opts *o, int argc, char **argv)
{
  int c, exit_code = 0;
  double idle = -1;
  reap_state s = { .first = true };
  cli_getopt g = { .cmd = cli_find (cli_commands, "reap") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    switch (c)
      {
      case CLI_OPT_IDLE:
        {
          char *end = NULL;
          idle = strtod (g.arg, &end);
          if (end == g.arg || *end || !(idle >= 0 && idle <= 1e9))
            return cli_fail ("reap: --idle takes a number of seconds from 0 to 1000000000 (got %s)", g.arg);
          break;
        }
      case CLI_OPT_JSON:
        s.json = cli_json = true;
        break;
      }
  if (c == -2)
    return exit_code;
  if (idle < 0)
    return cli_fail ("reap: say how long an environment must be unused: --idle SECONDS");
  if (g.ind < argc)
    return cli_fail ("reap: unexpected argument %s", argv[g.ind]);
  berth_ctx *ctx = cli_ctx (o);
  berth_error *err = NULL;
  if (ctx == NULL)
    return EXIT_BERTH;
  cli_capture cap;
  if (!cli_capture_begin (&cap))
    {
      berth_ctx_unref (ctx);
      return cli_fail ("reap: out of memory");
    }
  int r = berth_reap_idle (ctx, idle, reap_one, &s, &err);
  _cleanup_free_ char *text = cli_capture_end (&cap);
  berth_ctx_unref (ctx);
  if (r < 0)
    return cli_fail_err (err);
  if (s.json)
    {
      printf ("[%s]\n", text);
      cli_json = false;
    }
  else
    fputs (text, stdout);
  return 0;
}
