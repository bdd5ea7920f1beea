/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: every Docker JSON response parser and the pull stream
   parser (fed in two pieces) on arbitrary bytes.  Parsers must reject,
   never crash or leak.  */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "docker/json.h"

static void
on_record (void *userdata, const char *status, const char *id, int64_t current, int64_t total, const char *error)
{
  (*(int *)userdata)++;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *s = (const char *)data;
  char *a = NULL, *b = NULL, *c = NULL;
  if (docker_json_error_message (s, size, &a) == 0)
    free (a);
  if (docker_json_id (s, size, &a) == 0)
    free (a);
  if (docker_json_version (s, size, &a, &b, &c) == 0)
    free (a), free (b), free (c);
  bool running;
  int code;
  int64_t pid, ncpu;
  docker_json_exec_inspect (s, size, &running, &code, &pid);
  docker_json_info_ncpu (s, size, &ncpu);
  if (docker_json_image_entrypoint (s, size, &a) == 0)
    free (a);
  docker_container *v = NULL;
  size_t n = 0;
  if (docker_json_container_list (s, size, &v, &n) == 0)
    docker_containers_free (v, n);
  docker_container one;
  if (docker_json_container_inspect (s, size, &one) == 0)
    docker_container_clear (&one);

  int records = 0;
  docker_stream_parser *p = docker_pull_parser_new (on_record, &records);
  if (p)
    {
      size_t half = size / 2;
      if (docker_pull_parser_feed (p, data, half) == 0 && docker_pull_parser_feed (p, data + half, size - half) == 0)
        docker_pull_parser_finish (p);
      docker_pull_parser_free (p);
    }
  return 0;
}
