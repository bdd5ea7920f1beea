/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers.h: small pure functions of the docker backend (unit tested).  */
#ifndef BERTH_DOCKER_HELPERS_H
#define BERTH_DOCKER_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A label value: [^A-Za-z0-9_.-] -> '_', at most 63 bytes, "" -> "unknown".
   Caller frees.  */
char *docker_label_sanitize (const char *s);
/* Split an image reference into the fromImage and tag parameters of a pull:
   "debian" -> ("debian", "latest"), "host:5000/a/b:1" -> ("host:5000/a/b",
   "1"), "a@sha256:..." -> ("a@sha256:...", NULL).  Caller frees both.  */
int docker_image_split (const char *ref, char **ret_repo, char **ret_tag);
/* "1g", "512m", "64k", "1024", "1.5g" -> bytes.  "" / "0" -> 0.
   -EINVAL when malformed.  */
int docker_parse_size (const char *s, int64_t *ret);
/* RFC 3339 UTC ("2026-05-28T13:45:00.123456789Z") -> unix seconds.
   -ENOENT for Docker's zero time (year 1), -EINVAL when malformed.  */
int docker_parse_time (const char *s, int64_t *ret);
/* A 16-hex-digit FNV-1a digest of DATA (not cryptographic).  */
void docker_digest (const void *data, size_t len, char out[17]);
/* A valid environment variable name.  */
bool docker_env_name_valid (const char *s, size_t len);
/* "1.41" < "1.9"?  Compares dotted API versions numerically.  */
int docker_version_cmp (const char *a, const char *b);
/* Two settings records ("KEY=VALUE" lines): NULL when they agree, else
   "KEY: OLD -> NEW, ..." for every key whose value differs (a key missing
   on one side shows as "(unset)").  Caller frees.  */
char *docker_settings_changes (const char *recorded, const char *current);

/* The RLIMIT_* of a Docker ulimit name ("nofile", "nproc", ...), -1 when
   it names none.  */
int docker_ulimit_resource (const char *name);
/* "SOFT[:HARD]" (integers or "unlimited"; HARD defaults to SOFT) of
   terminal.docker_ulimits.  -EINVAL when malformed or SOFT > HARD.  */
int docker_ulimit_parse (const char *value, int64_t *ret_soft, int64_t *ret_hard);
/* Lower *SOFT and *HARD (-1 is unlimited) to MAX, a hard limit (-1: none,
   nothing changes).  1 when either was lowered, else 0.  */
int docker_ulimit_cap (int64_t *soft, int64_t *hard, int64_t max);

#endif
