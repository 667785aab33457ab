"""Address slots on each local host, so every server gets its own loopback address.

Slot N on host (Z, H) is the address 127.Z.H.N. A slot is taken by creating the file
`home/slots/<host>/<N>` exclusively, which is atomic even between two Shoal processes sharing a
home, and survives restarts. A slot whose address:port is already bound by something else on
this machine is skipped, so a stray process never makes a create fail.

Two homes on one machine (two Shoals, or tests running side by side) number their hosts alike,
so both would give 127.1.1.2 to their first server: the nodes' own ports differ, but what
listens beside a node on its address (a container, a workload's replica, a balancer's member)
and a security group's nftables rules (`ip daddr 127.1.1.2`) would meet the other home's node.
So an address is also claimed machine-wide, under one lock: `<claims>/<address>` names the
home's slot file that holds it, and is taken over only once that file is gone (the slot was
released, or its home removed).
"""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from shoal.files import FILE_MODE, private_dir
from shoal.providers.addressing import FIRST_SLOT, LAST_SLOT


class NoFreeSlotError(Exception):
    """Every slot of a host is taken."""


def machine_claims() -> Path:
    """Where this user's homes claim their addresses (one directory per machine and user)."""
    return Path(tempfile.gettempdir()) / f"shoal-addresses-{os.getuid()}"


class SlotTable:
    def __init__(self, root: Path, claims: Path | None = None) -> None:
        self.root = root
        self.claims = claims if claims is not None else machine_claims()
        private_dir(root)

    def take(self, host: str, owner: str, address_of: Callable[[int], str], port: int) -> int:
        """Reserve the lowest free slot of `host` for `owner` whose address no other home
        holds and can be bound."""
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
            address = address_of(slot)
            if self._claim(address, path):
                if can_bind(address, port):
                    return slot
                self._unclaim(address, path)
            path.unlink(missing_ok=True)
        raise NoFreeSlotError(f"no free address left on host {host}")

    def release(self, host: str, slot: int, address: str | None = None) -> None:
        path = self.root / host / str(slot)
        if address is not None:
            self._unclaim(address, path)
        path.unlink(missing_ok=True)

    @contextmanager
    def _machine_lock(self) -> Iterator[None]:
        private_dir(self.claims)
        fd = os.open(self.claims / ".lock", os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def _claim(self, address: str, slot_file: Path) -> bool:
        mine = str(slot_file.resolve())
        claim = self.claims / address
        with self._machine_lock():
            holder = _read(claim)
            if holder is not None and holder != mine and Path(holder).exists():
                return False
            tmp = claim.with_name(f".{address}.{os.getpid()}")
            tmp.write_text(mine)
            tmp.replace(claim)
        return True

    def _unclaim(self, address: str, slot_file: Path) -> None:
        claim = self.claims / address
        with self._machine_lock():
            if _read(claim) == str(slot_file.resolve()):
                claim.unlink(missing_ok=True)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def can_bind(address: str, port: int) -> bool:
    """Whether a listener could bind address:port now (with SO_REUSEADDR, as nodes do)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True
