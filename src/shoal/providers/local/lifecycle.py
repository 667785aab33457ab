"""A local server's life as a machine's: started (its network, its program, its agents and
container runtime), stopped as a guest shuts down, killed as a lost machine dies, deleted with
everything it made (its workdir and container storage, its network, its address slot).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from shoal.files import private_dir
from shoal.providers.errors import PermanentError, ProviderError, ResourceGone, TemporaryError
from shoal.providers.local import containers, processes, volumes
from shoal.providers.local.agentchain import AgentChain
from shoal.providers.local.catalog import HostCatalog
from shoal.providers.local.isolation import NodeNetworks
from shoal.providers.local.launcher import NodeLauncher
from shoal.providers.local.netns import NetnsError
from shoal.providers.local.nodefilter import NodeFilterError
from shoal.providers.local.noderuntime import NodeRuntime
from shoal.providers.local.records import RecordStore, ServerRecord
from shoal.providers.local.slots import SlotTable
from shoal.providers.local.volumestore import VolumeStore

log = logging.getLogger("shoal.local")


@dataclass(frozen=True, slots=True)
class ServerParts:
    """The parts a server's life goes through, made once by the provider."""

    records: RecordStore
    catalog: HostCatalog
    slots: SlotTable
    launcher: NodeLauncher
    chain: AgentChain
    runtime: NodeRuntime
    volumes: VolumeStore
    networks: NodeNetworks | None
    stop_grace_s: float


class ServerLifecycle:
    def __init__(self, parts: ServerParts) -> None:
        self.parts = parts

    async def start(self, record: ServerRecord) -> None:
        """Start the record's process (in its own network) and wait until it answers, then
        its agents; on failure, stop it. A host that went down meanwhile makes it a
        `PermanentError` (and the process is killed)."""
        p = self.parts
        private_dir(Path(record.workdir) / volumes.LINKS_DIR)
        await self.network(record)
        await p.launcher.spawn_and_wait(record, p.volumes.attached(record))
        if record.host in p.catalog.failed:
            await self.kill(record)
            raise PermanentError(f"no valid host: {record.host} went down")
        if record.metadata_url is not None:
            try:
                await self.start_agents(record)
            except BaseException:
                await asyncio.shield(self.stop(record, grace_s=0.5))
                raise

    async def restart(self, record: ServerRecord) -> None:
        """`start` for a server that exists: a host lost meanwhile makes it `ResourceGone`."""
        try:
            await self.start(record)
        except ProviderError as e:
            if record.host in self.parts.catalog.failed:
                raise ResourceGone(f"server {record.name} was lost with host {record.host}") from e
            raise

    async def network(self, record: ServerRecord) -> None:
        """The server's own network, made if it is not there, and the home's filter saying
        what it may reach (nothing to do when nodes share the host's network)."""
        networks = self.parts.networks
        if networks is None:
            return
        try:
            networks.assign(record)
            self.parts.records.save(record)  # named before it is made: no sweep takes it
            await networks.ensure(record)
            await networks.sync()
        except (NetnsError, NodeFilterError) as e:
            raise TemporaryError(f"server {record.name} got no network of its own: {e}") from e

    async def start_agents(self, record: ServerRecord) -> None:
        p = self.parts
        await p.chain.start(record, p.volumes.attached(record), p.stop_grace_s)
        if p.networks is not None:
            await p.networks.sync()  # its agents' endpoint may have moved

    async def stop(self, record: ServerRecord, grace_s: float | None = None) -> None:
        """Stop the server's process group, its agents' and its containers (a guest shutting
        down); its network stays, as a machine's cabling does."""
        grace = self.parts.stop_grace_s if grace_s is None else grace_s
        await asyncio.gather(
            processes.terminate(record.pid, record.key, grace_s=grace),
            processes.terminate(record.agent_pid, record.key, grace_s=grace),
            self.parts.runtime.stop(record, grace),
        )

    async def kill(self, record: ServerRecord) -> None:
        """SIGKILL the server and its agents, as the loss of its machine would (its containers
        stop with it)."""
        await self.parts.launcher.kill(record)
        await self.parts.runtime.stop(record, 0.0)

    async def delete(self, record: ServerRecord) -> None:
        p = self.parts
        await self.stop(record)
        await p.runtime.stop(record, 0.0, remove=True)
        p.volumes.detach_from(record)
        await asyncio.to_thread(_remove_tree, Path(record.workdir))
        if p.networks is not None:
            await p.networks.release(record)
        p.slots.release(record.host, record.slot, record.address)
        p.records.remove(record)
        if p.networks is not None:
            await p.networks.sync()

    def live(self, record: ServerRecord, busy: bool) -> bool:
        """Running, not being rebuilt or rebooted, its host up, its workdir there."""
        return (
            record.host not in self.parts.catalog.failed
            and not busy
            and processes.is_running(record.pid, record.key)
            and Path(record.workdir).is_dir()
        )


def _remove_tree(path: Path) -> None:
    """Delete a server's workdir, its container storage included (issue 36): what podman left
    mounted beneath it (a container it could not remove) is unmounted, and the rest tried
    again; what still resists is logged, never silently kept."""
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        containers.unmount_under(path)
        shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        log.warning("could not remove all of %s", path)
