/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-config: libFuzzer target for the configuration parser.
 *
 * Input starting with a byte other than 0x01: merged as a configuration
 * (twice, to exercise the layered merge), then every node is walked and
 * rendered.  Input starting with 0x01: "KEY\nVALUE\nFILE TEXT" for
 * berth_config_set_in_file on a scratch file (the text edits).
 *
 * Build and run: tests/fuzz/run-fuzz-config.sh [SECONDS].  */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <berth/provider.h>
#include "conf.h"
#include "util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
walk (const berth_config *n, int depth)
{
  if (depth > 200)
    __builtin_trap (); /* the parser must have stopped it */
  (void) berth_config_where (n);
  (void) berth_config_key (n);
  (void) berth_config_scalar (n);
  for (size_t i = 0; i < berth_config_count (n); i++)
    walk (berth_config_item (n, i), depth + 1);
}

static void
fuzz_merge (const char *text, size_t size)
{
  static const char *const paths[] = { "terminal.backend", "terminal.timeout", "terminal.docker_env",
                                       "terminal.bwrap_binds", "plugins.enabled", "a.b.0", "" };
  berth_config *cfg = berth_config_new ();
  berth_error *err = NULL;
  if (cfg == NULL)
    return;
  if (berth_config_merge_string (cfg, "fuzz", text, size, &err) < 0)
    {
      /* Every configuration error carries a position.  */
      if (berth_error_code (err) == BERTH_E_CONFIG && strncmp (berth_error_message (err), "fuzz", 4) != 0)
        __builtin_trap ();
      berth_error_free (err);
      berth_config_free (cfg);
      return;
    }
  if (berth_config_merge_string (cfg, "fuzz2", text, size, NULL) < 0)
    __builtin_trap (); /* the same text must merge again */
  walk (cfg, 0);
  for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
    {
      char *out = NULL;
      char **v = berth_config_strv (cfg, paths[i]);
      berth_strv_free (v);
      (void) berth_config_string (cfg, paths[i], NULL);
      (void) berth_config_int (cfg, paths[i], 0);
      (void) berth_config_double (cfg, paths[i], 0);
      (void) berth_config_bool (cfg, paths[i], false);
      if (berth_config_render (cfg, paths[i], &out, NULL) == 0)
        free (out);
    }
  berth_config_free (cfg);
}

static void
fuzz_set (const char *text, size_t size)
{
  static char file[64];
  const char *key = text, *nl1, *nl2;
  if (file[0] == '\0')
    snprintf (file, sizeof file, "/tmp/fuzz-config-%d.yaml", (int) getpid ());
  nl1 = memchr (text, '\n', size);
  if (nl1 == NULL)
    return;
  nl2 = memchr (nl1 + 1, '\n', size - (size_t) (nl1 + 1 - text));
  if (nl2 == NULL)
    return;
  char *k = strndup (key, (size_t) (nl1 - key));
  char *v = strndup (nl1 + 1, (size_t) (nl2 - nl1 - 1));
  const char *body = nl2 + 1;
  size_t blen = size - (size_t) (body - text);
  if (k && v && strlen (k) == (size_t) (nl1 - key) && berth_write_file_atomic (file, body, blen, 0600) == 0)
    {
      berth_error *err = NULL;
      if (berth_config_set_in_file (file, k, v, &err) == 0)
        {
          /* What set wrote must read back.  */
          berth_config *cfg = berth_config_new ();
          if (cfg && berth_config_merge_file (cfg, file, true, NULL) < 0)
            __builtin_trap ();
          berth_config_free (cfg);
        }
      berth_error_free (err);
      unlink (file);
    }
  free (k);
  free (v);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > 0 && data[0] == 0x01)
    {
      char *copy = malloc (size);
      if (copy == NULL)
        return 0;
      memcpy (copy, data + 1, size - 1);
      fuzz_set (copy, size - 1);
      free (copy);
      return 0;
    }
  /* A copy with no slack, so reads past the end are caught.  */
  char *text = malloc (size ? size : 1);
  if (text == NULL)
    return 0;
  memcpy (text, data, size);
  fuzz_merge (text, size);
  free (text);
  return 0;
}
