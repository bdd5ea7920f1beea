/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* text.c: text from an environment made safe for a terminal.  A cwd, an
 * environment's or a remote's message may carry escape sequences (a
 * directory named "\e]2;PWNED\a" retitles the window; worse ones exist):
 * every human-readable line that quotes such text goes through here.
 * JSON output is escaped by json_string already.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* C0 controls, DEL, and the C1 controls as UTF-8 (C2 80..C2 9F).  */
static size_t
control_len (const unsigned char *p)
{
  if (*p < 0x20 || *p == 0x7f)
    return 1;
  if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
    return 2;
  return 0;
}

char *
cli_term_escape (const char *s)
{
  const unsigned char *p = (const unsigned char *) (s ? s : "");
  size_t n = strlen ((const char *) p);
  /* at worst every byte becomes \xHH */
  char *out = malloc (n * 4 + 1), *o = out;
  if (out == NULL)
    abort ();
  while (*p)
    {
      size_t c = control_len (p);
      if (c == 0)
        *o++ = (char) *p++;
      else if (*p == '\t')
        o += sprintf (o, "\\t"), p++;
      else if (*p == '\n')
        o += sprintf (o, "\\n"), p++;
      else
        for (; c > 0; c--)
          o += sprintf (o, "\\x%02x", *p++);
    }
  *o = '\0';
  return out;
}

bool
cli_capture_begin (cli_capture *c)
{
  c->buf = NULL;
  c->len = 0;
  c->saved = stdout;
  c->mem = open_memstream (&c->buf, &c->len);
  if (c->mem == NULL)
    return false;
  stdout = c->mem;
  return true;
}

char *
cli_capture_end (cli_capture *c)
{
  stdout = c->saved;
  fclose (c->mem);
  return c->buf ? c->buf : strdup ("");
}
