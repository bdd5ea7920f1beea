/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cmd-pull.c: berth pull [-b BACKEND] [-q] IMAGE -- fetch an image ahead of
   its first use.  The library reports progress (berth_pull); this file
   renders it: on a terminal one line per layer, redrawn in place (status,
   a bar, bytes, percent), otherwise plain lines, one per change of a
   layer's status; nothing with --quiet.  */
#include "config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"


typedef struct row
{
  char id[80];      /* the layer, "" for one of the image's own lines */
  char status[64];
  int64_t current, total;
} row;

typedef struct render
{
  bool tty, quiet;
  row *rows;
  size_t n;
  int width;
  uint64_t last_draw_ms;
} render;

static uint64_t
now_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static void
human (char *buf, size_t cap, int64_t n)
{
  if (n >= 1000 * 1000 * 1000)
    snprintf (buf, cap, "%.2fGB", (double) n / 1e9);
  else if (n >= 1000 * 1000)
    snprintf (buf, cap, "%.1fMB", (double) n / 1e6);
  else if (n >= 1000)
    snprintf (buf, cap, "%.1fkB", (double) n / 1e3);
  else
    snprintf (buf, cap, "%lldB", (long long) n);
}

/* The text of a row on a terminal: "ID: STATUS [====>    ] 1.2MB/4.5MB 27%". */
static void
row_text (const render *r, const row *w, char *buf, size_t cap)
{
  int n;
  if (!w->id[0])
    n = snprintf (buf, cap, "%s", w->status);
  else
    n = snprintf (buf, cap, "%.12s: %s", w->id, w->status);
  if (n > 0 && (size_t) n < cap && w->total > 0 && w->current >= 0)
    {
      char cur[32], tot[32], bar[32];
      int64_t c = w->current > w->total ? w->total : w->current;
      int pct = (int) (c * 100 / w->total), fill = (int) (c * 25 / w->total);
      for (int i = 0; i < 25; i++)
        bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
      bar[25] = '\0';
      human (cur, sizeof cur, c);
      human (tot, sizeof tot, w->total);
      snprintf (buf + n, cap - (size_t) n, " [%s] %s/%s %d%%", bar, cur, tot, pct);
    }
  /* one terminal line, or the cursor arithmetic breaks */
  if (r->width > 1 && strlen (buf) >= (size_t) r->width)
    buf[r->width - 1] = '\0';
}

static void
draw_row (render *r, size_t i, bool is_new)
{
  char text[512];
  row_text (r, &r->rows[i], text, sizeof text);
  if (is_new)
    printf ("%s\n", text);
  else
    {
      size_t up = r->n - i;
      printf ("\033[%zuA\r\033[2K%s\033[%zuB\r", up, text, up);
    }
  fflush (stdout);
}

static void
on_progress (void *userdata, const berth_pull_event *ev)
{
  render *r = userdata;
  if (r->quiet || !ev->status)
    return;
  const char *id = ev->layer ? ev->layer : "";
  size_t i = r->n;
  if (*id)
    for (i = 0; i < r->n; i++)
      if (strcmp (r->rows[i].id, id) == 0)
        break;
  bool is_new = i == r->n;
  if (is_new)
    {
      row *v = realloc (r->rows, (r->n + 1) * sizeof *v);
      if (!v)
        return;
      r->rows = v;
      memset (&v[i], 0, sizeof v[i]);
      snprintf (v[i].id, sizeof v[i].id, "%s", id);
      r->n++;
    }
  row *w = &r->rows[i];
  bool changed = is_new || strncmp (w->status, ev->status, sizeof w->status - 1) != 0;
  snprintf (w->status, sizeof w->status, "%s", ev->status);
  w->current = ev->current;
  w->total = ev->total;
  if (!r->tty)
    {
      /* a line per change of status, never one per chunk */
      if (!changed)
        return;
      char tot[32] = "";
      if (ev->total > 0)
        human (tot, sizeof tot, ev->total);
      if (*id)
        printf ("%s: %s%s%s%s\n", id, ev->status, *tot ? " (" : "", tot, *tot ? ")" : "");
      else
        printf ("%s\n", ev->status);
      fflush (stdout);
      return;
    }
  /* a progress tick redraws at most every 100 ms */
  uint64_t t = now_ms ();
  if (!changed && t - r->last_draw_ms < 100)
    return;
  r->last_draw_ms = t;
  draw_row (r, i, is_new);
}

int
cmd_pull (const cli_opts *o, int argc, char **argv)
{
  const char *backend = NULL;
  render r = { .tty = isatty (STDOUT_FILENO) == 1 };
  int c, exit_code = 0;
  cli_getopt g = { .cmd = cli_find (cli_commands, "pull") };
  while ((c = cli_next_option (&g, argc, argv, &exit_code)) >= 0)
    switch (c)
      {
      case 'b': backend = g.arg; break;
      case 'q': r.quiet = true; break;
      }
  if (c == -2)
    return exit_code;
  if (g.ind != argc - 1)
    return cli_fail ("pull: expected one IMAGE (see berth pull --help)");
  const char *image = argv[g.ind];
  struct winsize ws;
  if (r.tty && ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    r.width = ws.ws_col;
  berth_ctx *ctx = cli_ctx (o);
  if (ctx == NULL)
    return EXIT_BERTH;
  berth_error *err = NULL;
  int ret = berth_pull (ctx, backend, image, on_progress, &r, &err);
  free (r.rows);
  berth_ctx_unref (ctx);
  if (ret < 0)
    return cli_fail_err (err);
  return 0;
}
