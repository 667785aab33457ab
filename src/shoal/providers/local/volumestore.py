"""The volumes part of the local provider: volumes made, attached to servers, deleted.

A volume is a directory with a budget (volumes.py); attaching links it into the server's
workdir. A server running sandboxed sees a volume attached now only after a restart (a
sandbox's mounts are fixed when it starts): `attach` says when the link is new, and the caller
restarts the server.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from shoal.model.enums import NodeKind
from shoal.providers.base import VolumeRequest
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.local import volumes
from shoal.providers.local.catalog import HostCatalog
from shoal.providers.local.locks import ServerLocks
from shoal.providers.local.records import RecordStore, ServerRecord, VolumeRecord
from shoal.providers.local.sandbox import Binds


class VolumeStore:
    def __init__(
        self, root: Path, records: RecordStore, catalog: HostCatalog, locks: ServerLocks
    ) -> None:
        self.root = root
        """`home/volumes`."""
        self._records = records
        self._catalog = catalog
        self._locks = locks

    async def create(self, request: VolumeRequest) -> VolumeRecord:
        async with self._locks.of(NodeKind.VOLUME, request.key):
            found = self._records.by_key(NodeKind.VOLUME, request.key)
            if isinstance(found, VolumeRecord):
                self._catalog.check_host(found.host)
                volumes.make_volume_dir(
                    Path(found.path), volume_id=found.id, name=found.name, size_gb=found.size_gb
                )
                return found
            zone = self._catalog.check_host(request.host)
            volume_id = f"vol-{uuid.uuid4().hex[:12]}"
            path = self.root / volume_id
            record = VolumeRecord(
                id=volume_id,
                key=request.key,
                name=request.profile.name or request.name,
                cluster=request.cluster,
                host=request.host,
                zone=zone,
                size_gb=request.profile.size_gb,
                volume_type=request.profile.volume_type,
                path=str(path),
                created_at=time.time(),
            )
            volumes.make_volume_dir(
                path, volume_id=volume_id, name=record.name, size_gb=record.size_gb
            )
            self._records.save(record)
            return record

    async def attach(self, volume_id: str, server_id: str) -> bool:
        """Link the volume into the server; True when the link is new."""
        volume = self._records.by_id(volume_id)
        server = self._records.by_id(server_id)
        if not isinstance(volume, VolumeRecord):
            raise ResourceGone(f"volume {volume_id} does not exist")
        if not isinstance(server, ServerRecord):
            raise ResourceGone(f"server {server_id} does not exist")
        async with self._locks.of(NodeKind.VOLUME, volume.key):
            volume = self._records.by_id(volume_id)
            if not isinstance(volume, VolumeRecord):
                raise ResourceGone(f"volume {volume_id} does not exist")
            for host in (volume.host, server.host):
                self._catalog.check_host(host)
            if volume.attached_to not in (None, server_id):
                raise PermanentError(
                    f"volume {volume.name} is in use by server {volume.attached_to}"
                )
            link = Path(server.workdir) / volumes.LINKS_DIR / volume.name
            new_link = not link.is_symlink()
            if not volumes.attach(Path(server.workdir), volume.name, Path(volume.path)):
                raise PermanentError(
                    f"server {server.name} already has another volume named {volume.name}"
                )
            if volume.attached_to != server_id:
                volume.attached_to = server_id
                self._records.save(volume)
        return new_link

    def delete(self, record: VolumeRecord) -> None:
        if record.attached_to is not None:
            server = self._records.by_id(record.attached_to)
            if isinstance(server, ServerRecord):
                volumes.detach_all(Path(server.workdir), Path(record.path))
        volumes.remove_volume_dir(Path(record.path))
        self._records.remove(record)

    def attached(self, server: ServerRecord) -> Binds:
        """What the server's sandbox shows of its volumes (its `volumes/` links point there)."""
        return Binds(
            read_write=tuple(Path(v.path) for v in self._of(server.id) if Path(v.path).is_dir())
        )

    def relink(self, server: ServerRecord) -> None:
        """Link every volume whose record says it is attached to this server (after its workdir
        was lost or wiped); a name already linked elsewhere is left alone."""
        for v in self._of(server.id):
            volumes.attach(Path(server.workdir), v.name, Path(v.path))

    def detach_from(self, server: ServerRecord) -> None:
        """The server is going: its volumes are free again."""
        for v in self._of(server.id):
            v.attached_to = None
            self._records.save(v)

    def _of(self, server_id: str) -> list[VolumeRecord]:
        return [
            v
            for v in self._records.all()
            if isinstance(v, VolumeRecord) and v.attached_to == server_id
        ]
