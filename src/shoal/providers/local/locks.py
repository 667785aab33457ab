"""What keeps two calls on one local resource apart, and what is being done to a server now.

Every call that changes a resource holds the lock of its kind and key (a create and a delete of
one server never interleave); taking an address slot holds the slot lock. A server being
created, rebooted or rebuilt is marked busy with what is done to it, and reads BUILDING
meanwhile. In one process only: two Shoal processes on one home share records and slots (files
taken exclusively), not these locks.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from shoal.model.enums import NodeKind


class ServerLocks:
    def __init__(self) -> None:
        self._locks: defaultdict[tuple[NodeKind, str], asyncio.Lock] = defaultdict(asyncio.Lock)
        self._busy: dict[str, str] = {}
        """Server id -> what is being done to it right now ("building", "rebooting",
        "rebuilding")."""
        self.slots = asyncio.Lock()

    def of(self, kind: NodeKind, key: str) -> asyncio.Lock:
        return self._locks[(kind, key)]

    def server(self, key: str) -> asyncio.Lock:
        return self._locks[(NodeKind.SERVER, key)]

    def task(self, server_id: str) -> str | None:
        """What is being done to the server now, or None."""
        return self._busy.get(server_id)

    @contextmanager
    def busy_as(self, server_id: str, task: str) -> Iterator[None]:
        self._busy[server_id] = task
        try:
            yield
        finally:
            self._busy.pop(server_id, None)
