"""Free loopback ports for tests that run side by side: pytest-xdist's workers, and other runs of
the suite on the same machine.

A port that `bind(("127.0.0.1", 0))` gave is free only until someone else takes it: the kernel
hands the same ephemeral range to every outgoing connection, and a worker asking at the same
instant as another may be given the port the other has just let go of (each then starts a
server on it, and one fails). A port here comes from below the ephemeral range, so no outgoing
connection takes it, and is claimed machine-wide before it is handed out: a lock on the byte at
offset `port` of one shared file (`fcntl.lockf`), held until the process ends (the kernel
releases it then, however the process ended), so no other process of any run is handed it, and
this process never hands it out twice. It is also checked to be bindable now, which skips ports
that something outside the tests holds.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
import threading
from pathlib import Path

CLAIMS = Path(tempfile.gettempdir()) / "shoal-test-ports.lock"
"""The shared file whose bytes are the ports' claims (its content is never written)."""
LOWEST = 10_000


class _Claims:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._given: set[int] = set()
        self._rng = random.Random()

    def _file(self) -> int:
        if self._fd is None:
            self._fd = os.open(CLAIMS, os.O_RDWR | os.O_CREAT, 0o666)
        return self._fd

    def claim(self, address: str) -> int:
        low, high = _range()
        with self._lock:
            fd = self._file()
            for _ in range(4 * (high - low)):
                port = self._rng.randrange(low, high)
                if port in self._given:
                    continue
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, port, os.SEEK_SET)
                except OSError:
                    continue  # another process of this or another run has it
                self._given.add(port)  # never handed out again by this process, nor unlocked
                if _bindable(address, port):
                    return port
        raise RuntimeError(f"no free port left in {low}..{high} on {address}")


def _range() -> tuple[int, int]:
    """[LOWEST, the first ephemeral port): ports no outgoing connection is given."""
    try:
        first = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768
    return LOWEST, max(first, LOWEST + 1000)


def _bindable(address: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


_claims = _Claims()


def free_port(address: str = "127.0.0.1") -> int:
    """A TCP port free on `address` that no other test process is given."""
    return _claims.claim(address)
