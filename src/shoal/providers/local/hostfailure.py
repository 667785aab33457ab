"""The host-failure part of the local provider (`HostAdmin`): a host lost on purpose, with every
server on it killed as a lost machine's would be; recovered, its servers stay dead (ERROR)
until started again. Also the crash of one server, for tests and demos."""

from __future__ import annotations

import asyncio
from collections import Counter

from shoal.providers.base import HostState
from shoal.providers.local.catalog import HostCatalog
from shoal.providers.local.lifecycle import ServerLifecycle
from shoal.providers.local.records import RecordStore, ServerRecord


class HostFailure:
    def __init__(self, records: RecordStore, catalog: HostCatalog, life: ServerLifecycle) -> None:
        self._records = records
        self._catalog = catalog
        self._life = life

    async def fail_host(self, host: str) -> list[str]:
        """Lose a host: SIGKILL every server process on it, hide it from the inventory, refuse
        creates. Returns the ids of every resource on it (servers and volumes)."""
        self._catalog.known_host(host)
        self._catalog.failed.mark(host, True)
        on_host = [r for r in self._records.all() if r.host == host]
        servers = [r for r in on_host if isinstance(r, ServerRecord)]
        await asyncio.gather(*(self._life.kill(r) for r in servers))
        return [r.id for r in on_host]

    async def recover_host(self, host: str) -> None:
        """Bring a host back; its servers stay dead (ERROR) until started again."""
        self._catalog.known_host(host)
        self._catalog.failed.mark(host, False)

    async def hosts(self) -> list[HostState]:
        failed = self._catalog.failed.current()
        counts = Counter(r.host for r in self._records.all())
        return [
            HostState(h.name, h.zone, h.name in failed, counts[h.name])
            for h in self._catalog.full.hosts
        ]

    async def kill_node_process(self, resource_id: str) -> None:
        """SIGKILL a server's processes, as a crash would (for tests and demos)."""
        record = self._records.by_id(resource_id)
        if isinstance(record, ServerRecord):
            await self._life.kill(record)
