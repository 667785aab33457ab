"""Address slots on each local host, so every server gets its own loopback address.

Slot N on host (Z, H) is the address 127.Z.H.N. A slot is taken by creating the file
`home/slots/<host>/<N>` exclusively, which is atomic even between two Shoal processes sharing a
home, and survives restarts. A slot whose address:port is already bound by something else on
this machine is skipped, so a stray process never makes a create fail.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

from shoal.files import FILE_MODE, private_dir
from shoal.providers.addressing import FIRST_SLOT, LAST_SLOT


class NoFreeSlotError(Exception):
    """Every slot of a host is taken."""


class SlotTable:
    def __init__(self, root: Path) -> None:
        self.root = root
        private_dir(root)

    def take(self, host: str, owner: str, address_of: Callable[[int], str], port: int) -> int:
        """Reserve the lowest free slot of `host` for `owner` whose address can be bound."""
        folder = self.root / host
        private_dir(folder)
        for slot in range(FIRST_SLOT, LAST_SLOT + 1):
            path = folder / str(slot)
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
            except FileExistsError:
                continue
            with os.fdopen(fd, "w") as f:
                f.write(owner)
            if can_bind(address_of(slot), port):
                return slot
            path.unlink(missing_ok=True)
        raise NoFreeSlotError(f"no free address left on host {host}")

    def release(self, host: str, slot: int) -> None:
        (self.root / host / str(slot)).unlink(missing_ok=True)


def can_bind(address: str, port: int) -> bool:
    """Whether a listener could bind address:port now (with SO_REUSEADDR, as nodes do)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True
