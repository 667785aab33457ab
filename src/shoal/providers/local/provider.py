"""The local provider: servers are real processes on loopback addresses, volumes real directories.

This is Shoal's embedded default, so a newcomer sees a real cluster with no cloud at hand. The
provider owns one directory (`home`):

    home/resources/   one JSON record per resource (see records.py)
    home/nodes/<id>/  a server's workdir: its log and `volumes/` links, and for a server
                      created with a metadata URL, `agents/`: Heat's agent chain (agents.py)
    home/volumes/<id>/  a volume
    home/slots/       address slots taken per host (see slots.py)
    home/networking/  clusters' filters and balancers (networking.py), the nodes' filter lock

Everything it knows is on disk, so a new provider on the same home re-adopts what is running:
nodes outlive the Shoal that started them (issue 39).

It is assembled from parts, each one idea, none holding the provider (issue 40): the hosts
(catalog.py), locks (locks.py), each node's confinement (confinement.py: sandbox.py and its own
network, isolation.py), its process (launcher.py), agents (agentchain.py) and container runtime
(noderuntime.py), a server's life (lifecycle.py) and the calls on servers (servers.py), volumes
(volumestore.py), the views (views.py), host failure (hostfailure.py), workloads' replicas
(replicas.py over directory.py), images (images.py), logs (logs.py) and the clusters'
networking (networking.py).

States (`get`, `list_resources`), checked in this order:

- a resource on a failed host reads MISSING;
- a server being created, rebooted or rebuilt by this provider reads BUILDING (`details["task"]`
  says which);
- a server whose workdir was deleted behind Shoal's back reads MISSING (`details["reason"]`):
  its root disk and volume links are gone, so there is nothing to reboot; a process still
  running from it is a leftover that `delete` stops. A create with its key or a `rebuild`
  makes it again in place (fresh workdir, attached volumes linked again from their records);
- a server whose process is not running reads ERROR; ACTIVE otherwise;
- a volume whose directory is gone reads MISSING; ACTIVE otherwise.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from shoal.files import private_dir
from shoal.model.catalogs import default_inventory
from shoal.model.enums import NodeKind
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import HostState, Resource, ResourceState, ServerRequest, VolumeRequest
from shoal.providers.capabilities import ConfinementReport
from shoal.providers.local import containers
from shoal.providers.local.agentchain import AgentChain
from shoal.providers.local.catalog import HostCatalog
from shoal.providers.local.containers import EVENTS_NAME, bind_path
from shoal.providers.local.crashloops import CrashLoops, Watched
from shoal.providers.local.directory import ServerDirectory
from shoal.providers.local.hostfailure import HostFailure
from shoal.providers.local.hosts import FailedHosts
from shoal.providers.local.images import LocalImages
from shoal.providers.local.launcher import NodeLauncher
from shoal.providers.local.lifecycle import ServerLifecycle, ServerParts
from shoal.providers.local.locks import ServerLocks
from shoal.providers.local.logs import LocalNodeLogs
from shoal.providers.local.networking import LocalNetworking
from shoal.providers.local.noderuntime import NodeRuntime
from shoal.providers.local.options import LocalOptions, confinement_for
from shoal.providers.local.records import RecordStore, ServerRecord, VolumeRecord
from shoal.providers.local.replicas import LocalReplicas
from shoal.providers.local.servers import Servers
from shoal.providers.local.slots import SlotTable
from shoal.providers.local.views import ResourceViews
from shoal.providers.local.volumestore import VolumeStore
from shoal.providers.software import RetiredDeployment


class LocalProvider:
    """Servers as detached processes on 127.Z.H.N, volumes as directories under `home`."""

    name = "local"

    def __init__(
        self,
        home: Path,
        inventory: Inventory | None = None,
        options: LocalOptions | None = None,
    ) -> None:
        o = options if options is not None else LocalOptions()
        self.home = Path(home)
        private_dir(self.home)
        self.options = o
        self._records = RecordStore(self.home / "resources")
        self.networking = LocalNetworking(self.home)
        """Security groups (nftables) and load balancers (HAProxy) of clusters that declare
        them (networking.py); the engine drives it (engine/networks.py)."""
        self._confinement = confinement_for(o, self.home, self._records, self.networking)
        self.networking.nodes = self._confinement.networks
        self._failed = FailedHosts(self.home / "failed-hosts.json")
        self._locks = ServerLocks()
        self._assemble(o, inventory if inventory is not None else default_inventory())
        self.replicas_via_agents = o.replicas == "agents"
        """`replicas = "agents"`: the engine delivers replicas to each server's agents as
        compose configs, as on `openstack` (engine/agent_replicas.py), instead of driving
        podman itself; tests run that path with real agents here."""
        self.images = LocalImages(self.home)
        self.node_logs = LocalNodeLogs(self.home / "nodes")

    def _assemble(self, o: LocalOptions, inventory: Inventory) -> None:
        self._catalog = HostCatalog(inventory, self._failed)
        self._runtime = NodeRuntime(self.home, o.containers, self._confinement, o.boot_timeout_s)
        volumes = VolumeStore(self.home / "volumes", self._records, self._catalog, self._locks)
        self._volumes = volumes
        parts = ServerParts(
            records=self._records,
            catalog=self._catalog,
            slots=SlotTable(self.home / "slots"),
            launcher=NodeLauncher(self._records, self._confinement, o.boot_timeout_s),
            chain=AgentChain(
                self._records, self._confinement, self._runtime, o.agent_install, o.agent_poll_s
            ),
            runtime=self._runtime,
            volumes=volumes,
            networks=self._confinement.networks,
            stop_grace_s=o.stop_grace_s,
        )
        self._life = ServerLifecycle(parts)
        self._servers = Servers(self._life, self._locks, self.home / "nodes", o.port)
        self._hosts = HostFailure(self._records, self._catalog, self._life)
        self._loops = CrashLoops(self._runtime.find, self._guarded)
        """Deployments' containers that keep exiting, backed off (crashloops.py)."""
        self._views = ResourceViews(self._failed, self._locks, self._runtime, self._loops.loops)
        self.replicas = LocalReplicas(
            ServerDirectory(
                self._records, self._servers, self._locks, self._runtime, self._confinement
            )
        )
        """Workloads' replicas as podman containers on these servers (replicas.py)."""

    # -- capabilities ------------------------------------------------------------------------

    @property
    def confinement(self) -> ConfinementReport:
        return self._confinement.report

    @property
    def port(self) -> int:
        return self.options.port

    # -- the Provider protocol ---------------------------------------------------------------

    async def inventory(self) -> Inventory:
        return self._catalog.inventory()

    async def create_server(self, request: ServerRequest) -> Resource:
        return self._views.server(await self._servers.create(request))

    async def retire(self, retired: RetiredDeployment) -> None:
        """`RetiresDeployments`: a deployment no longer declared on a server leaves nothing
        running there (its compose project's containers, its Pods), before its row goes and
        what the engine starts next on that server binds its address:port (issue 36). The
        agents' own cleanup (os-refresh-config's) finds nothing left when it runs."""
        if retired.hook not in ("docker-compose", "kubelet") or retired.provider_id is None:
            return
        record = self._records.by_id(retired.provider_id)
        found = self._runtime.find()
        if not isinstance(record, ServerRecord) or found is None:
            return
        pods = containers.pod_names(retired.config) if retired.hook == "kubelet" else []
        store = self._runtime.store(record)
        await asyncio.to_thread(
            containers.remove_deployment, found, store, retired.deployment, pods
        )

    async def start_agents(self, server_id: str, metadata_url: str) -> bool:
        """`StartsAgents`: a running server gets (or keeps) its agent chain on this URL."""
        return await self._servers.start_agents(server_id, metadata_url)

    async def create_volume(self, request: VolumeRequest) -> Resource:
        return self._views.volume(await self._volumes.create(request))

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        new_link = await self._volumes.attach(volume_id, server_id)
        if new_link and self._confinement.sandbox is not None:
            await self._servers.remount(server_id)

    async def reboot(self, server_id: str) -> Resource:
        return self._views.server(await self._servers.reboot(server_id))

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        return self._views.server(await self._servers.rebuild(server_id, profile))

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        record = self._records.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return
        async with self._locks.of(kind, record.key):
            record = self._records.by_id(resource_id)
            if isinstance(record, ServerRecord):
                await self._life.delete(record)
            elif isinstance(record, VolumeRecord):
                self._volumes.delete(record)

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        record = self._records.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return Resource(resource_id, "", kind, "", ResourceState.MISSING)
        return self._views.of(record)

    def _guarded(self) -> list[Watched]:
        """The stores whose containers' restarts the guard backs off: every server's that ran
        a container (its event log exists), with its podman service's socket."""
        found: list[Watched] = []
        for r in self._records.all():
            if not isinstance(r, ServerRecord):
                continue
            store = self._runtime.store(r)
            if (store.root / EVENTS_NAME).exists():
                found.append(Watched(store, bind_path(store, r.key)))
        return found

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        """Every record, whatever its state: dead processes, lost workdirs and volume
        directories included (ERROR or MISSING), so a reconciler sees them. (The first
        listing starts the guard over deployments' containers: a reconciler is running.)"""
        self._loops.ensure_running()
        return [
            self._views.of(r)
            for r in self._records.all()
            if cluster is None or r.cluster == cluster
        ]

    async def close(self) -> None:
        """Node processes are meant to outlive the provider; the guard stops."""
        await self._loops.stop()

    # -- HostAdmin: host loss, and test hooks ------------------------------------------------

    async def fail_host(self, host: str) -> list[str]:
        return await self._hosts.fail_host(host)

    async def recover_host(self, host: str) -> None:
        await self._hosts.recover_host(host)

    async def hosts(self) -> list[HostState]:
        return await self._hosts.hosts()

    async def kill_node_process(self, resource_id: str) -> None:
        await self._hosts.kill_node_process(resource_id)

    async def purge(self) -> None:
        """Delete every resource this provider holds (stops all its processes)."""
        records = self._records.all()
        servers = [r for r in records if isinstance(r, ServerRecord)]
        await asyncio.gather(*(self.delete(NodeKind.SERVER, r.id) for r in servers))
        for r in records:
            if isinstance(r, VolumeRecord):
                await self.delete(NodeKind.VOLUME, r.id)
