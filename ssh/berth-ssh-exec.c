/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* berth-ssh-exec: the first word of the ssh backend's exec_prefix.
 *
 *   berth-ssh-exec SSH [SSH-ARGS...] -- [WORDS...]
 *
 * ssh joins the words of a remote command with spaces and the remote login
 * shell parses the result again, so `ssh host bash -c 'echo "a b"'` does
 * not run what it says.  This helper quotes each of WORDS for a POSIX shell,
 * joins them, and execs `SSH SSH-ARGS... -- <joined>`, so the words arrive
 * on the remote host unchanged.  stdin, stdout and stderr are inherited
 * untouched.  Its own failures exit 255 with a message on stderr, like ssh.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ssh-quote.h"

#define HELPER_FAILED 255

int
main (int argc, char **argv)
{
  int sep = -1;
  char *joined = NULL;
  char **av;
  int n = 0;

  for (int i = 2; i < argc; i++)
    if (strcmp (argv[i], "--") == 0)
      {
        sep = i;
        break;
      }
  if (argc < 2 || sep < 0)
    {
      fprintf (stderr, "usage: berth-ssh-exec SSH [SSH-ARGS...] -- [WORDS...]\n");
      return HELPER_FAILED;
    }

  if (sep + 1 < argc)
    {
      int r = ssh_join_words ((const char *const *) argv + sep + 1, (size_t) (argc - sep - 1), &joined);
      if (r < 0)
        {
          fprintf (stderr, "berth-ssh-exec: cannot quote the command: %s\n", strerror (-r));
          return HELPER_FAILED;
        }
    }

  av = calloc ((size_t) sep + 3, sizeof (char *));
  if (av == NULL)
    {
      fprintf (stderr, "berth-ssh-exec: out of memory\n");
      return HELPER_FAILED;
    }
  for (int i = 1; i < sep; i++)
    av[n++] = argv[i];
  if (joined)
    {
      av[n++] = (char *) "--";
      av[n++] = joined;
    }
  av[n] = NULL;

  execvp (av[0], av);
  if (errno == E2BIG)
    fprintf (stderr, "berth-ssh-exec: the remote command is too long for one ssh argument (%zu bytes); pass long scripts on stdin\n",
             joined ? strlen (joined) : 0);
  else
    fprintf (stderr, "berth-ssh-exec: cannot run %s: %s (install openssh-client)\n", av[0], strerror (errno));
  return HELPER_FAILED;
}
