"""Ties a local server's agent chain to its server process: when the server dies, so do they.

On a real machine a crash takes the agents with it. A local server and its agents are separate
process trees (the server runs whatever its image says), so a server killed on its own (a
crash, `kill -9`, a test standing in for a failure) would leave its agents polling and running
deployments for a server that is gone, and signalling them as done. This watcher starts the
chain in its own process group and SIGKILLs the whole group as soon as the server's process is
gone, as a crash would. A pid is known by its start time, so a recycled pid is not the server.

Run by path with any Python 3 (`python agentwatch.py --pid P -- argv...`): standard library
only, and nothing of Shoal's is imported, since the agents' environment does not carry Shoal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

POLL_S = 0.25


def start_time(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/pid/stat), or None if it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] in ("Z", "X"):
        return None
    return fields[19]


def main(argv: Sequence[str]) -> int:
    """`--pid P -- command...`: run the command while process P lives."""
    if len(argv) < 4 or argv[0] != "--pid" or argv[2] != "--" or not argv[1].isdigit():
        print("usage: agentwatch.py --pid PID -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    pid, command = int(argv[1]), list(argv[3:])
    born = start_time(pid)
    if born is None:
        return 1
    child = subprocess.Popen(command)
    while True:
        code = child.poll()
        if code is not None:
            return code
        if start_time(pid) != born:
            # The server is gone: take the agents (and this watcher) down at once.
            os.killpg(os.getpgrp(), signal.SIGKILL)
        time.sleep(POLL_S)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
