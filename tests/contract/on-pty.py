#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""on-pty.py ROWS COLS ARGV...: run ARGV on a new pseudo-terminal of
ROWS x COLS (its controlling terminal, as a user's shell has), type this
script's stdin into it once the shell has prompted (or after 5 s) -- a line "@resize ROWS COLS" is not typed: the terminal is
resized then, and the rest typed a second later -- and print what the
terminal showed, carriage returns and
escape sequences removed; exit with ARGV's status (128+N for a signal,
124 when it is still running after 60 s: then it is killed)."""
import fcntl
import os
import re
import select
import signal
import struct
import sys
import termios
import time


def main():
    rows, cols, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    # chunks to type, and the window sizes between them
    chunks, resizes, cur = [], [], b""
    for line in sys.stdin.buffer.read().splitlines(keepends=True):
        if line.startswith(b"@resize "):
            chunks.append(cur)
            resizes.append(tuple(int(x) for x in line.split()[1:3]))
            cur = b""
        else:
            cur += line
    chunks.append(cur)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        os.close(master)
        os.close(slave)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(slave)
    out = b""
    start = time.monotonic()
    status = None
    timed_out = False
    next_at = 0
    prompt_at = None
    while True:
        # type once the shell prompts (the last line ends in "$ " or "# "),
        # or after 5 s
        # and a second more: the docker CLI (20.10) sizes the container's
        # terminal just after the shell there started, as a user types
        if prompt_at is None and re.search(rb"[$#] (\x1b\[[0-9;?]*[A-Za-z])*$", out):
            prompt_at = time.monotonic()
        prompted = prompt_at is not None and time.monotonic() - prompt_at > 1
        if chunks and (prompted or time.monotonic() - start > 5) and time.monotonic() >= next_at:
            os.write(master, chunks.pop(0))
            if resizes:
                time.sleep(1)
                r, c = resizes.pop(0)
                fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))
                next_at = time.monotonic() + 1
        if time.monotonic() - start > 60:
            os.kill(pid, signal.SIGKILL)
            timed_out = True
            break
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last user is gone
                chunk = b""
            if not chunk:
                break
            out += chunk
        else:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
    if status is None:
        _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r", "", text)
    sys.stdout.write(text)
    if timed_out:
        sys.exit(124)
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)


main()
