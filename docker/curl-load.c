/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* curl-load.c: libcurl loaded on first use (curl-load.h).  */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "curl-load.h"

docker_curl_api docker_curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *load_error; /* why it could not be loaded, or NULL */

static void
load (void)
{
  /* libcurl stays loaded: its global state lives until the process ends */
  void *dl = dlopen (DOCKER_CURL_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (dl == NULL)
    {
      const char *e = dlerror ();
      if (asprintf (&load_error, "docker: cannot load %s (%s): install libcurl4", DOCKER_CURL_SONAME, e ? e : "not found") < 0)
        load_error = NULL;
      return;
    }
  static const struct
  {
    const char *name;
    size_t offset;
  } syms[] = {
#define SYM(field, name) { name, offsetof (docker_curl_api, field) }
    SYM (global_init, "curl_global_init"),       SYM (easy_init, "curl_easy_init"),
    SYM (easy_setopt, "curl_easy_setopt"),       SYM (easy_perform, "curl_easy_perform"),
    SYM (easy_getinfo, "curl_easy_getinfo"),     SYM (easy_reset, "curl_easy_reset"),
    SYM (easy_cleanup, "curl_easy_cleanup"),     SYM (easy_strerror, "curl_easy_strerror"),
    SYM (easy_recv, "curl_easy_recv"),           SYM (easy_send, "curl_easy_send"),
    SYM (easy_escape, "curl_easy_escape"),       SYM (free, "curl_free"),
    SYM (slist_append, "curl_slist_append"),     SYM (slist_free_all, "curl_slist_free_all"),
#undef SYM
  };
  docker_curl_api api;
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
    {
      void *p = dlsym (dl, syms[i].name);
      if (p == NULL)
        {
          if (asprintf (&load_error, "docker: %s has no %s: install a libcurl4 of 7.40 or later", DOCKER_CURL_SONAME, syms[i].name) < 0)
            load_error = NULL;
          return;
        }
      memcpy ((char *) &api + syms[i].offset, &p, sizeof p);
    }
  CURLcode rc = api.global_init (CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK)
    {
      if (asprintf (&load_error, "docker: libcurl failed to initialise: %s", api.easy_strerror (rc)) < 0)
        load_error = NULL;
      return;
    }
  docker_curl = api;
}

int
docker_curl_load (berth_error **reterr)
{
  pthread_once (&once, load);
  if (docker_curl.easy_init != NULL)
    return 0;
  return berth_error_set (reterr, -BERTH_E_UNAVAILABLE, "%s", load_error ? load_error : "docker: cannot load libcurl (out of memory)");
}
