"""The servers part of the local provider: create (or find by key), start agents, reboot,
rebuild, and restart to see a volume attached, each under its server's lock.

A server is a process on its own loopback address 127.Z.H.N (Z, H: its host's zone and host
numbers, N: a slot on that host, slots.py), in its own network when Shoal can make one
(isolation.py), with a workdir `home/nodes/<id>/` holding its log, its volumes' links and its
agents' tree.
"""

from __future__ import annotations

import asyncio
import shutil
import time
import uuid
from pathlib import Path

from shoal.files import private_dir
from shoal.model.enums import NodeKind
from shoal.model.profile import ServerProfile
from shoal.providers.addressing import fits_ipv4, ipv4
from shoal.providers.base import ServerRequest
from shoal.providers.errors import PermanentError, ResourceGone
from shoal.providers.local import launch, processes, volumes
from shoal.providers.local.lifecycle import ServerLifecycle
from shoal.providers.local.locks import ServerLocks
from shoal.providers.local.records import ServerRecord
from shoal.providers.local.slots import NoFreeSlotError


class Servers:
    def __init__(self, life: ServerLifecycle, locks: ServerLocks, nodes: Path, port: int) -> None:
        self._life = life
        self._p = life.parts
        self._locks = locks
        self.nodes = nodes
        """`home/nodes`: one workdir per server."""
        self.port = port

    def record(self, server_id: str) -> ServerRecord:
        found = self._p.records.by_id(server_id)
        if not isinstance(found, ServerRecord):
            raise ResourceGone(f"server {server_id} does not exist")
        return found

    def live(self, record: ServerRecord) -> bool:
        return self._life.live(record, self._locks.task(record.id) is not None)

    async def create(self, request: ServerRequest) -> ServerRecord:
        async with self._locks.server(request.key):
            found = self._p.records.by_key(NodeKind.SERVER, request.key)
            if not isinstance(found, ServerRecord):
                return await self._create(request)
            self._p.catalog.check_host(found.host)
            lost_workdir = not Path(found.workdir).is_dir()
            new_url = found.metadata_url != request.metadata_url
            if new_url:
                found.metadata_url = request.metadata_url
                self._p.records.save(found)
            if lost_workdir or not processes.is_running(found.pid, found.key):
                # Known key, dead process or lost workdir: make it again in place.
                with self._locks.busy_as(found.id, "building"):
                    await self._life.stop(found)
                    self._p.volumes.relink(found)
                    await self._life.start(found)
            elif new_url or not self._p.chain.as_wanted(found):
                await self._life.start_agents(found)
            return found

    async def _create(self, request: ServerRequest) -> ServerRecord:
        record = await self._new_record(request)
        private_dir(Path(record.workdir) / volumes.LINKS_DIR)
        self._p.records.save(record)
        try:
            with self._locks.busy_as(record.id, "building"):
                await self._life.start(record)
        except BaseException:
            await asyncio.shield(self._undo(record))
            raise
        return record

    async def _undo(self, record: ServerRecord) -> None:
        """A create that failed leaves nothing behind (its network included)."""
        self._p.records.remove(record)
        shutil.rmtree(record.workdir, ignore_errors=True)
        if self._p.networks is not None:
            await self._p.networks.release(record)
            await self._p.networks.sync()
        self._p.slots.release(record.host, record.slot, record.address)

    async def _new_record(self, request: ServerRequest) -> ServerRecord:
        zone = self._p.catalog.check_host(request.host)
        image = self._p.catalog.image(request.profile.image)
        if request.metadata_url is not None:
            self._p.chain.install()  # before anything is made: a missing install is permanent
        slot = await self._slot(request)
        server_id = f"srv-{uuid.uuid4().hex[:12]}"
        workdir = self.nodes / server_id
        z, h = self._p.catalog.coords[request.host]
        address = ipv4(127, z, h, slot)
        name = request.profile.name or request.name
        try:
            argv = launch.node_argv(
                image,
                launch.NodePlace(name, address, self.port, request.host, zone),
                workdir=workdir,
                key=request.key,
            )
        except ValueError as e:
            self._p.slots.release(request.host, slot, address)
            raise PermanentError(str(e)) from e
        return ServerRecord(
            id=server_id,
            key=request.key,
            name=name,
            cluster=request.cluster,
            host=request.host,
            zone=zone,
            image=image.name,
            flavor=request.profile.flavor.name,
            address=address,
            port=self.port,
            slot=slot,
            workdir=str(workdir),
            argv=argv,
            health_path=launch.health_path(image),
            created_at=time.time(),
            metadata_url=request.metadata_url,
        )

    async def _slot(self, request: ServerRequest) -> int:
        z, h = self._p.catalog.coords[request.host]
        if not fits_ipv4(z, h, 2):
            raise PermanentError(
                f"host {request.host} has no loopback address (zone {z}, host {h})"
            )
        async with self._locks.slots:
            try:
                return await asyncio.to_thread(
                    self._p.slots.take,
                    request.host,
                    request.key,
                    lambda n: ipv4(127, z, h, n),
                    self.port,
                )
            except NoFreeSlotError as e:
                raise PermanentError(f"no valid host: {e}") from e

    async def start_agents(self, server_id: str, metadata_url: str) -> bool:
        """A running server gets (or keeps) its agent chain on this URL."""
        found = self._p.records.by_id(server_id)
        if not isinstance(found, ServerRecord):
            return False
        async with self._locks.server(found.key):
            record = self._p.records.by_id(server_id)
            if not isinstance(record, ServerRecord) or self._locks.task(server_id) is not None:
                return False
            if record.metadata_url == metadata_url and self._p.chain.as_wanted(record):
                return False
            if record.host in self._p.catalog.failed or not processes.is_running(
                record.pid, record.key
            ):
                return False
            record.metadata_url = metadata_url
            self._p.records.save(record)
            await self._life.start_agents(record)
            return True

    async def remount(self, server_id: str) -> None:
        """A sandbox's mounts are fixed when it starts, so a server running sandboxed is
        started again to see a volume attached now (as a guest rescanning its disks)."""
        record = self.record(server_id)
        async with self._locks.server(record.key):
            record = self.record(server_id)
            if self._locks.task(record.id) is not None or not processes.is_running(
                record.pid, record.key
            ):
                return  # not running (or being started): it binds its volumes when it starts
            with self._locks.busy_as(record.id, "rebooting"):
                await self._life.stop(record)
                await self._life.restart(record)

    async def reboot(self, server_id: str) -> ServerRecord:
        """Stop the server's process group and start it again: same id, key, address, workdir.

        A server whose process is already dead is simply started (a recovery from ERROR).
        `ResourceGone` if there is no such server, its host is down or its workdir is gone."""
        record = self.record(server_id)
        async with self._locks.server(record.key):
            record = self.record(server_id)
            self._p.catalog.check_present(record)
            if not Path(record.workdir).is_dir():
                raise ResourceGone(f"server {record.name} has lost its workdir {record.workdir}")
            with self._locks.busy_as(record.id, "rebooting"):
                await self._life.stop(record)
                self._p.volumes.relink(record)
                await self._life.restart(record)
            return record

    async def rebuild(self, server_id: str, profile: ServerProfile) -> ServerRecord:
        """Stop the server, wipe its workdir but for the `volumes/` links, and start it from
        `profile`'s image: same id, key, name, address. The flavor is recorded (local servers
        have no size to change). `ResourceGone` if there is no such server or its host is down;
        `PermanentError` for an unknown image or a command that cannot be parsed. A server
        whose new image fails to start is left in ERROR, its record on the new image."""
        image = self._p.catalog.image(profile.image)
        record = self.record(server_id)
        async with self._locks.server(record.key):
            record = self.record(server_id)
            self._p.catalog.check_present(record)
            try:
                argv = launch.node_argv(
                    image,
                    launch.NodePlace(
                        record.name, record.address, record.port, record.host, record.zone
                    ),
                    workdir=Path(record.workdir),
                    key=record.key,
                )
            except ValueError as e:
                raise PermanentError(str(e)) from e
            with self._locks.busy_as(record.id, "rebuilding"):
                await self._life.stop(record)
                await asyncio.to_thread(volumes.wipe_except_links, Path(record.workdir))
                record.image = image.name
                record.flavor = profile.flavor.name
                record.argv = argv
                record.health_path = launch.health_path(image)
                record.pid = None
                record.started_at = None
                self._p.records.save(record)
                self._p.volumes.relink(record)
                await self._life.restart(record)
            return record
