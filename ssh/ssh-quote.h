/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ssh-quote.h: quoting words for the remote shell.  ssh joins its command
   words with spaces into one string that the remote login shell parses
   again, so every word is single-quoted before it is handed to ssh.
   Self-contained (no libberth): linked into the backend, the
   berth-ssh-exec helper and the unit tests.  */
#ifndef SSH_QUOTE_H
#define SSH_QUOTE_H

#include <stddef.h>

/* Append S (LEN bytes) to OUT (*OUT_LEN bytes, NUL-terminated, grown with
   realloc) as one shell word: 'abc', with ' written as '\'' and \ as '\\'
   (POSIX shells and fish read both the same way).
   -EINVAL when S holds a NUL byte (a shell word cannot carry it),
   -ENOMEM.  */
int ssh_quote_append (char **out, size_t *out_len, const char *s, size_t len);

/* Quote each of the N words and join them with single spaces into a
   malloc'd string in *RET.  An empty word becomes ''.  */
int ssh_join_words (const char *const *words, size_t n, char **ret);

#endif
