"""What workloads' replicas need of the local provider's servers (replicas.py `Servers`): the
records, whether one is live, its container store and network, its lock, and podman. A narrow
view over the provider's parts, so the replicas never hold the provider itself."""

from __future__ import annotations

import asyncio

from shoal.providers.local import podman
from shoal.providers.local.confinement import Confinement
from shoal.providers.local.locks import ServerLocks
from shoal.providers.local.noderuntime import NodeRuntime
from shoal.providers.local.records import RecordStore, ServerRecord
from shoal.providers.local.servers import Servers


class ServerDirectory:
    def __init__(
        self,
        records: RecordStore,
        servers: Servers,
        locks: ServerLocks,
        runtime: NodeRuntime,
        confinement: Confinement,
    ) -> None:
        self._records = records
        self._servers = servers
        self._locks = locks
        self._runtime = runtime
        self._confinement = confinement

    def podman_runtime(self) -> podman.Podman | None:
        return self._runtime.find()

    def server_records(self) -> list[ServerRecord]:
        return [r for r in self._records.all() if isinstance(r, ServerRecord)]

    def server_record(self, server_id: str) -> ServerRecord | None:
        found = self._records.by_id(server_id)
        return found if isinstance(found, ServerRecord) else None

    def server_live(self, record: ServerRecord) -> bool:
        return self._servers.live(record)

    def node_store(self, record: ServerRecord) -> podman.Store:
        return self._runtime.store(record)

    def server_lock(self, record: ServerRecord) -> asyncio.Lock:
        return self._locks.server(record.key)

    def image_store(self) -> podman.Store:
        return self._runtime.image_store()

    def network_mode(self, record: ServerRecord) -> str:
        return self._confinement.network_mode(record)
