/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* curl-load.h: libcurl, loaded when the docker backend first talks to an
   engine (dlopen), not with the module.  libcurl and the thirty libraries
   it pulls in cost ~7 ms of every berth process that loads the backend:
   more than a whole command through a named environment's serving agent,
   which needs no engine call at all.  Include this instead of
   <curl/curl.h>: the curl_* functions below are the loaded library's,
   valid once docker_curl_load succeeded.  */
#ifndef DOCKER_CURL_LOAD_H
#define DOCKER_CURL_LOAD_H

/* the type-checking macros would wrap the calls below */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include <berth/provider.h>

#define DOCKER_CURL_SONAME "libcurl.so.4"

typedef struct docker_curl_api
{
  CURLcode (*global_init) (long flags);
  CURL *(*easy_init) (void);
  CURLcode (*easy_setopt) (CURL *h, CURLoption option, ...);
  CURLcode (*easy_perform) (CURL *h);
  CURLcode (*easy_getinfo) (CURL *h, CURLINFO info, ...);
  void (*easy_reset) (CURL *h);
  void (*easy_cleanup) (CURL *h);
  const char *(*easy_strerror) (CURLcode code);
  CURLcode (*easy_recv) (CURL *h, void *buf, size_t len, size_t *n);
  CURLcode (*easy_send) (CURL *h, const void *buf, size_t len, size_t *n);
  char *(*easy_escape) (CURL *h, const char *s, int len);
  void (*free) (void *p);
  struct curl_slist *(*slist_append) (struct curl_slist *l, const char *s);
  void (*slist_free_all) (struct curl_slist *l);
} docker_curl_api;

extern docker_curl_api docker_curl;

/* Load and initialise libcurl once (thread-safe): 0, or < 0 with one line
   that says what to install in *RETERR (may be NULL).  */
int docker_curl_load (berth_error **reterr);

/* curl.h's own wrappers of these two (the call itself again) */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init docker_curl.global_init
#define curl_easy_init docker_curl.easy_init
#define curl_easy_setopt docker_curl.easy_setopt
#define curl_easy_perform docker_curl.easy_perform
#define curl_easy_getinfo docker_curl.easy_getinfo
#define curl_easy_reset docker_curl.easy_reset
#define curl_easy_cleanup docker_curl.easy_cleanup
#define curl_easy_strerror docker_curl.easy_strerror
#define curl_easy_recv docker_curl.easy_recv
#define curl_easy_send docker_curl.easy_send
#define curl_easy_escape docker_curl.easy_escape
#define curl_free docker_curl.free
#define curl_slist_append docker_curl.slist_append
#define curl_slist_free_all docker_curl.slist_free_all

#endif
