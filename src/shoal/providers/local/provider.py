"""The local provider: servers are real processes on loopback addresses, volumes real directories.

This is Shoal's embedded default, so a newcomer sees a real cluster with no cloud at hand. The
provider owns one directory (`home`):

    home/resources/   one JSON record per resource (see records.py)
    home/nodes/<id>/  a server's workdir: its log and `volumes/` links, and for a server
                      created with a metadata URL, `agents/`: Heat's agent chain (agents.py)
    home/volumes/<id>/  a volume
    home/slots/       address slots taken per host (see slots.py)

Everything it knows is on disk, so a new provider on the same home re-adopts what is running.

States (`get`, `list_resources`), checked in this order:

- a resource on a failed host reads MISSING;
- a server being created, rebooted or rebuilt by this provider reads BUILDING (`details["task"]`
  says which);
- a server whose workdir was deleted behind Shoal's back reads MISSING (`details["reason"]`):
  its root disk and volume links are gone, so there is nothing to reboot; a process still
  running from it is a leftover that `delete` stops. A create with its key or a `rebuild` makes
  it again in place (fresh workdir, attached volumes linked again from their records);
- a server whose process is not running reads ERROR; ACTIVE otherwise;
- a volume whose directory is gone reads MISSING; ACTIVE otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from shoal.files import private_dir, read_tail_beneath, write_private
from shoal.model.catalogs import default_inventory
from shoal.model.enums import NodeKind
from shoal.model.inventory import Image, Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.addressing import fits_ipv4, host_coordinates, ipv4
from shoal.providers.base import (
    HostState,
    Resource,
    ResourceState,
    ServerRequest,
    VolumeRequest,
)
from shoal.providers.errors import PermanentError, ProviderError, ResourceGone, TemporaryError
from shoal.providers.local import (
    agents,
    agentwatch,
    containers,
    images,
    launch,
    podman,
    processes,
    volumes,
)
from shoal.providers.local.hosts import FailedHosts
from shoal.providers.local.networking import LocalNetworking
from shoal.providers.local.nodeserver import PID_FILE as _PID_FILE
from shoal.providers.local.records import Record, RecordStore, ServerRecord, VolumeRecord
from shoal.providers.local.replicas import LocalReplicas
from shoal.providers.local.sandbox import NO_BINDS, Binds, Sandbox, SandboxMode
from shoal.providers.local.sandbox import env_for_node as sandbox_env
from shoal.providers.local.slots import NoFreeSlotError, SlotTable

log = logging.getLogger("shoal.local")

DEFAULT_PORT = 8080
LOG_NAME = "node.log"


class LocalProvider:
    """Servers as detached processes on 127.Z.H.N, volumes as directories under `home`."""

    name = "local"

    def __init__(
        self,
        home: Path,
        inventory: Inventory | None = None,
        *,
        boot_timeout_s: float = 15.0,
        port: int = DEFAULT_PORT,
        stop_grace_s: float = 3.0,
        agent_install: agents.AgentInstall | None = None,
        agent_poll_s: float = 5.0,
        sandbox: SandboxMode | str = SandboxMode.BWRAP,
        binds: Binds = NO_BINDS,
        containers: str = "auto",
        replicas: str = "podman",
    ) -> None:
        self.home = Path(home)
        self.sandbox = Sandbox.find(sandbox)
        """bwrap, which every node process and agent chain runs under; None: sandbox off
        (sandbox.py; raises `SandboxUnavailableError` when wanted and missing)."""
        self.binds = binds
        """Paths every node sees besides its own workdir (and its attached volumes)."""
        self.containers = containers
        """A container runtime beside every server's agents (containers.py): "auto" when
        podman is installed, "on" (a missing podman is logged as an error), or "off"."""
        self._podman: podman.Podman | None = None
        self._runtime_failed: set[str] = set()
        """Servers whose runtime would not start: their agents run without one."""
        self._agent_install = agent_install
        self.agent_poll_s = agent_poll_s
        """How long the agents of a server wait between polls of its metadata at most."""
        self.port = port
        self.boot_timeout_s = boot_timeout_s
        self.stop_grace_s = stop_grace_s
        self._inventory = inventory if inventory is not None else default_inventory()
        self._coords = host_coordinates(self._inventory)
        private_dir(self.home)
        self._records = RecordStore(self.home / "resources")
        self._slots = SlotTable(self.home / "slots")
        self._failed = FailedHosts(self.home / "failed-hosts.json")
        self._key_locks: defaultdict[tuple[NodeKind, str], asyncio.Lock] = defaultdict(asyncio.Lock)
        self._slot_lock = asyncio.Lock()
        self.networking = LocalNetworking(self.home)
        """Security groups (nftables) and load balancers (HAProxy) of clusters that declare
        them (networking.py); the engine drives it (engine/networks.py)."""
        self.replicas = LocalReplicas(self)
        """Workloads' replicas as podman containers on these servers (replicas.py)."""
        if replicas not in ("podman", "agents"):
            raise ValueError(f"local option replicas must be podman or agents, not {replicas!r}")
        self.replicas_via_agents = replicas == "agents"
        """`replicas = "agents"`: the engine delivers replicas to each server's agents as
        compose configs, as on `openstack` (engine/agent_replicas.py), instead of driving
        podman itself; tests run that path with real agents here."""
        self._busy: dict[str, str] = {}
        """Server id -> what is being done to it right now ("building", "rebooting",
        "rebuilding"); such a server reads BUILDING."""

    # -- the Provider protocol -------------------------------------------------------------

    async def inventory(self) -> Inventory:
        failed = self._failed.current()
        hosts = tuple(h for h in self._inventory.hosts if h.name not in failed)
        return Inventory(
            hosts=hosts, flavors=self._inventory.flavors, images=self._inventory.images
        )

    async def create_server(self, request: ServerRequest) -> Resource:
        async with self._key_locks[(NodeKind.SERVER, request.key)]:
            found = self._records.by_key(NodeKind.SERVER, request.key)
            if isinstance(found, ServerRecord):
                self._check_host(found.host)
                lost_workdir = not Path(found.workdir).is_dir()
                new_url = found.metadata_url != request.metadata_url
                if new_url:
                    found.metadata_url = request.metadata_url
                    self._records.save(found)
                if lost_workdir or not processes.is_running(found.pid, found.key):
                    # Known key, dead process or lost workdir: make it again in place.
                    with self._busy_as(found.id, "building"):
                        await self._stop(found)
                        self._relink(found)
                        await self._start(found)
                elif new_url or not self._agents_as_wanted(found):
                    await self._start_agents(found)
                return self._server_resource(found)
            return await self._create_server(request)

    async def start_agents(self, server_id: str, metadata_url: str) -> bool:
        """`StartsAgents`: a running server gets (or keeps) its agent chain on this URL."""
        found = self._records.by_id(server_id)
        if not isinstance(found, ServerRecord):
            return False
        async with self._key_locks[(NodeKind.SERVER, found.key)]:
            record = self._records.by_id(server_id)
            if not isinstance(record, ServerRecord) or server_id in self._busy:
                return False
            if record.metadata_url == metadata_url and self._agents_as_wanted(record):
                return False
            if record.host in self._failed or not processes.is_running(record.pid, record.key):
                return False
            record.metadata_url = metadata_url
            self._records.save(record)
            await self._start_agents(record)
            return True

    async def create_volume(self, request: VolumeRequest) -> Resource:
        async with self._key_locks[(NodeKind.VOLUME, request.key)]:
            found = self._records.by_key(NodeKind.VOLUME, request.key)
            if isinstance(found, VolumeRecord):
                self._check_host(found.host)
                volumes.make_volume_dir(
                    Path(found.path), volume_id=found.id, name=found.name, size_gb=found.size_gb
                )
                return self._volume_resource(found)
            zone = self._check_host(request.host)
            volume_id = f"vol-{uuid.uuid4().hex[:12]}"
            path = self.home / "volumes" / volume_id
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
            return self._volume_resource(record)

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        volume = self._records.by_id(volume_id)
        server = self._records.by_id(server_id)
        if not isinstance(volume, VolumeRecord):
            raise ResourceGone(f"volume {volume_id} does not exist")
        if not isinstance(server, ServerRecord):
            raise ResourceGone(f"server {server_id} does not exist")
        async with self._key_locks[(NodeKind.VOLUME, volume.key)]:
            volume = self._records.by_id(volume_id)
            if not isinstance(volume, VolumeRecord):
                raise ResourceGone(f"volume {volume_id} does not exist")
            for host in (volume.host, server.host):
                self._check_host(host)
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
        if new_link and self.sandbox is not None:
            await self._remount(server_id)

    async def _remount(self, server_id: str) -> None:
        """A sandbox's mounts are fixed when it starts, so a server running sandboxed is
        started again to see a volume attached now (as a guest rescanning its disks)."""
        record = self._server_record(server_id)
        async with self._key_locks[(NodeKind.SERVER, record.key)]:
            record = self._server_record(server_id)
            if record.id in self._busy or not processes.is_running(record.pid, record.key):
                return  # not running (or being started): it binds its volumes when it starts
            with self._busy_as(record.id, "rebooting"):
                await self._stop(record)
                await self._restart(record)

    async def reboot(self, server_id: str) -> Resource:
        """Stop the server's process group and start it again: same id, key, address, workdir.

        A server whose process is already dead is simply started (a recovery from ERROR).
        `ResourceGone` if there is no such server, its host is down or its workdir is gone."""
        record = self._server_record(server_id)
        async with self._key_locks[(NodeKind.SERVER, record.key)]:
            record = self._server_record(server_id)
            self._check_present(record)
            if not Path(record.workdir).is_dir():
                raise ResourceGone(f"server {record.name} has lost its workdir {record.workdir}")
            with self._busy_as(record.id, "rebooting"):
                await self._stop(record)
                self._relink(record)
                await self._restart(record)
            return self._server_resource(record)

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        """Stop the server, wipe its workdir but for the `volumes/` links, and start it from
        `profile`'s image: same id, key, name, address. The flavor is recorded (local servers
        have no size to change). `ResourceGone` if there is no such server or its host is down;
        `PermanentError` for an unknown image or a command that cannot be parsed. A server
        whose new image fails to start is left in ERROR, its record on the new image."""
        image = self._image(profile.image)
        record = self._server_record(server_id)
        async with self._key_locks[(NodeKind.SERVER, record.key)]:
            record = self._server_record(server_id)
            self._check_present(record)
            workdir = Path(record.workdir)
            try:
                argv = launch.node_argv(
                    image,
                    name=record.name,
                    address=record.address,
                    port=record.port,
                    workdir=workdir,
                    key=record.key,
                    host=record.host,
                    zone=record.zone,
                )
            except ValueError as e:
                raise PermanentError(str(e)) from e
            with self._busy_as(record.id, "rebuilding"):
                await self._stop(record)
                await asyncio.to_thread(volumes.wipe_except_links, workdir)
                record.image = image.name
                record.flavor = profile.flavor.name
                record.argv = argv
                record.health_path = launch.health_path(image)
                record.pid = None
                record.started_at = None
                self._records.save(record)
                self._relink(record)
                await self._restart(record)
            return self._server_resource(record)

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        record = self._records.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return
        async with self._key_locks[(kind, record.key)]:
            record = self._records.by_id(resource_id)
            if isinstance(record, ServerRecord):
                await self._delete_server(record)
            elif isinstance(record, VolumeRecord):
                self._delete_volume(record)

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        record = self._records.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return Resource(resource_id, "", kind, "", ResourceState.MISSING)
        return self._resource(record)

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        """Every record, whatever its state: dead processes, lost workdirs and volume
        directories included (ERROR or MISSING), so a reconciler sees them."""
        return [
            self._resource(r)
            for r in self._records.all()
            if cluster is None or r.cluster == cluster
        ]

    async def close(self) -> None:
        """Nothing to release: node processes are meant to outlive the provider."""

    # -- HostAdmin: host loss, and test hooks ------------------------------------------------

    async def fail_host(self, host: str) -> list[str]:
        """Lose a host: SIGKILL every server process on it, hide it from the inventory, refuse
        creates. Returns the ids of every resource on it (servers and volumes)."""
        self._known_host(host)
        self._failed.mark(host, True)
        on_host = [r for r in self._records.all() if r.host == host]
        servers = [r for r in on_host if isinstance(r, ServerRecord)]
        await asyncio.gather(*(self._kill(r) for r in servers))
        return [r.id for r in on_host]

    async def recover_host(self, host: str) -> None:
        """Bring a host back; its servers stay dead (ERROR) until started again."""
        self._known_host(host)
        self._failed.mark(host, False)

    async def hosts(self) -> list[HostState]:
        failed = self._failed.current()
        counts = Counter(r.host for r in self._records.all())
        return [
            HostState(h.name, h.zone, h.name in failed, counts[h.name])
            for h in self._inventory.hosts
        ]

    async def import_image(self, source: Path, name: str | None) -> images.Imported:
        """Import a container image into this home's image store, which every node reads
        (`shoal image import`). Raises `images.ImageError`, `podman.PodmanMissingError`."""
        return await asyncio.to_thread(images.import_image, self.home, source, name)

    async def kill_node_process(self, resource_id: str) -> None:
        """SIGKILL a server's processes, as a crash would (for tests and demos)."""
        record = self._records.by_id(resource_id)
        if isinstance(record, ServerRecord):
            await self._kill(record)

    async def purge(self) -> None:
        """Delete every resource this provider holds (stops all its processes)."""
        records = self._records.all()
        servers = [r for r in records if isinstance(r, ServerRecord)]
        await asyncio.gather(*(self.delete(NodeKind.SERVER, r.id) for r in servers))
        for r in records:
            if isinstance(r, VolumeRecord):
                await self.delete(NodeKind.VOLUME, r.id)

    # -- servers ----------------------------------------------------------------------------

    async def _create_server(self, request: ServerRequest) -> Resource:
        zone = self._check_host(request.host)
        image = self._image(request.profile.image)
        if request.metadata_url is not None:
            self._agents()  # before anything is made: a missing install is a PermanentError
        z, h = self._coords[request.host]
        if not fits_ipv4(z, h, 2):
            raise PermanentError(
                f"host {request.host} has no loopback address (zone {z}, host {h})"
            )
        async with self._slot_lock:
            try:
                slot = await asyncio.to_thread(
                    self._slots.take,
                    request.host,
                    request.key,
                    lambda n: ipv4(127, z, h, n),
                    self.port,
                )
            except NoFreeSlotError as e:
                raise PermanentError(f"no valid host: {e}") from e
        server_id = f"srv-{uuid.uuid4().hex[:12]}"
        workdir = self.home / "nodes" / server_id
        address = ipv4(127, z, h, slot)
        name = request.profile.name or request.name
        try:
            argv = launch.node_argv(
                image,
                name=name,
                address=address,
                port=self.port,
                workdir=workdir,
                key=request.key,
                host=request.host,
                zone=zone,
            )
        except ValueError as e:
            self._slots.release(request.host, slot, address)
            raise PermanentError(str(e)) from e
        record = ServerRecord(
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
        private_dir(workdir / volumes.LINKS_DIR)
        self._records.save(record)
        try:
            with self._busy_as(record.id, "building"):
                await self._start(record)
        except BaseException:
            self._records.remove(record)
            shutil.rmtree(workdir, ignore_errors=True)
            self._slots.release(record.host, record.slot, record.address)
            raise
        return self._server_resource(record)

    async def _start(self, record: ServerRecord) -> None:
        """Start the record's process and wait until it answers; on failure, kill it. A host
        that went down meanwhile makes it a `PermanentError` (and the process is killed)."""
        workdir = Path(record.workdir)
        private_dir(workdir / volumes.LINKS_DIR)
        await self._spawn_and_wait(record, workdir)
        if record.host in self._failed:
            await self._kill(record)
            raise PermanentError(f"no valid host: {record.host} went down")
        if record.metadata_url is not None:
            try:
                await self._start_agents(record)
            except BaseException:
                await asyncio.shield(self._stop(record, grace_s=0.5))
                raise

    # -- the agent chain (agents.py) ---------------------------------------------------------

    def _agents(self) -> agents.AgentInstall:
        try:
            if self._agent_install is None:
                self._agent_install = agents.AgentInstall.find()
            self._agent_install.check()
        except agents.AgentsNotInstalledError as e:
            raise PermanentError(str(e)) from e
        return self._agent_install

    def _agents_as_wanted(self, record: ServerRecord) -> bool:
        """Running when the server has a metadata URL (with its container runtime, once
        there are images to run), not running when it has none."""
        if record.metadata_url is None:
            return record.agent_pid is None or not processes.is_running(
                record.agent_pid, record.key
            )
        if (
            record.id not in self._runtime_failed
            and self._wants_runtime()
            and not processes.is_running(self._runtime_pid(self._node_store(record)), record.key)
        ):
            return False
        return processes.is_running(record.agent_pid, record.key)

    async def _start_agents(self, record: ServerRecord) -> None:
        """(Re)start the server's agent chain in `<workdir>/agents`; with no metadata URL, only
        stop one left running. What was deployed stays deployed across restarts (it is kept
        under the workdir, as on a guest's disk)."""
        await processes.terminate(record.agent_pid, record.key, grace_s=self.stop_grace_s)
        record.agent_pid = None
        if record.metadata_url is None:
            self._records.save(record)
            return
        install = self._agents()
        layout = agents.AgentLayout.of(Path(record.workdir))
        chain = await asyncio.to_thread(
            agents.prepare,
            layout,
            install,
            metadata_url=record.metadata_url,
            polling_interval_s=self.agent_poll_s,
        )
        if record.pid is None:
            raise PermanentError(f"server {record.name} has no process for its agents to follow")
        runtime_env = await self._start_runtime(record)
        if self.sandbox is not None:
            binds = self._binds_of(record, install)
            socket_dir = containers.bind_path(self._node_store(record), record.key).parent
            if runtime_env and not socket_dir.is_relative_to(record.workdir):
                # A workdir too deep for a socket's path: its runtime listens under the
                # temporary directory, which the sandbox's own /tmp would hide.
                binds = Binds(binds.read_only, (*binds.read_write, socket_dir))
            chain = self.sandbox.wrap(
                chain, workdir=Path(record.workdir), binds=binds, chdir=layout.root
            )
        # Under a watcher (outside the sandbox: it follows the server's pid) that takes the
        # chain down when the server's process dies.
        argv = [sys.executable, agentwatch.__file__, "--pid", str(record.pid), "--", *chain]
        base = launch.node_env(key=record.key, resource_id=record.id)
        # What a deployment's script needs to reach its own server, as on a guest it would
        # know its own address and disk.
        base[agents.WORKDIR_ENV] = record.workdir
        base[agents.ADDRESS_ENV] = record.address
        base[agents.PORT_ENV] = str(record.port)
        base[agents.NAME_ENV] = record.name
        base.update(runtime_env)
        env = agents.environment(layout, install, base)
        if self.sandbox is not None:
            env = sandbox_env(env, Path(record.workdir))
        try:
            proc = await asyncio.to_thread(
                processes.spawn, argv, cwd=layout.root, log=layout.log, env=env
            )
        except OSError as e:
            raise PermanentError(
                f"server {record.name} could not start its agents", fault=str(e)
            ) from e
        record.agent_pid = proc.pid
        self._records.save(record)

    async def _stop(self, record: ServerRecord, grace_s: float | None = None) -> None:
        """Stop the server's process group and its agents' (a guest shutting down)."""
        grace = self.stop_grace_s if grace_s is None else grace_s
        await asyncio.gather(
            processes.terminate(record.pid, record.key, grace_s=grace),
            processes.terminate(record.agent_pid, record.key, grace_s=grace),
            self._stop_runtime(record, grace),
        )

    # -- the container runtime (containers.py, podman.py) -------------------------------------

    def _runtime(self) -> podman.Podman | None:
        """podman, when containers are wanted and installed (found once)."""
        if self.containers == "off":
            return None
        if self._podman is None:
            try:
                self._podman = podman.Podman.find()
            except podman.PodmanMissingError as e:
                if self.containers == "on":
                    log.error("%s", e)
                return None
        return self._podman

    def _wants_runtime(self) -> bool:
        """Nodes get a runtime when podman is here and the home has images to run (imported
        with `shoal image import`): until then a node costs no podman process."""
        return self._runtime() is not None and podman.has_images(self.home)

    def _node_store(self, record: ServerRecord) -> podman.Store:
        return podman.node_store(self.home, Path(record.workdir))

    # -- what workloads' replicas need (replicas.py `Servers`) --------------------------------

    def podman_runtime(self) -> podman.Podman | None:
        return self._runtime()

    def server_records(self) -> list[ServerRecord]:
        return [r for r in self._records.all() if isinstance(r, ServerRecord)]

    def server_record(self, server_id: str) -> ServerRecord | None:
        found = self._records.by_id(server_id)
        return found if isinstance(found, ServerRecord) else None

    def server_live(self, record: ServerRecord) -> bool:
        return (
            record.host not in self._failed
            and record.id not in self._busy
            and processes.is_running(record.pid, record.key)
            and Path(record.workdir).is_dir()
        )

    def node_store(self, record: ServerRecord) -> podman.Store:
        return self._node_store(record)

    def server_lock(self, record: ServerRecord) -> asyncio.Lock:
        return self._key_locks[(NodeKind.SERVER, record.key)]

    def image_store(self) -> podman.Store:
        return podman.home_store(self.home)

    async def _start_runtime(self, record: ServerRecord) -> dict[str, str]:
        """Start the server's `podman system service` (again) and the containers that restart
        `always`; the agents' environment naming its socket. Never fails the server: without
        a runtime, only container deployments fail (with the reason in the log)."""
        found = self._runtime()
        if found is None or record.pid is None:
            return {}
        store = self._node_store(record)
        bound = containers.bind_path(store, record.key)
        wanted = {containers.DOCKER_HOST_ENV: f"unix://{bound}"}
        if not podman.has_images(self.home):
            return wanted  # started with the agents again once there are images
        try:
            await asyncio.to_thread(podman.home_store(self.home).write, found)
            await asyncio.to_thread(store.write, found)
            await processes.terminate(self._runtime_pid(store), record.key, grace_s=1.0)
            await asyncio.to_thread(containers.prepare, store, bound)
            argv = [
                sys.executable,
                agentwatch.__file__,
                "--pid",
                str(record.pid),
                "--",
                *containers.service_argv(found, store, bound),
            ]
            env = store.environment(launch.node_env(key=record.key, resource_id=record.id))
            proc = await asyncio.to_thread(
                processes.spawn, argv, cwd=store.root, log=store.root / containers.LOG_NAME, env=env
            )
            (store.root / containers.PID_NAME).write_text(str(proc.pid))
            await containers.wait_ready(
                bound,
                lambda: processes.is_running(proc.pid, record.key),
                timeout_s=max(self.boot_timeout_s, 30.0),
            )
            await asyncio.to_thread(containers.start_always, found, store)
        except (OSError, RuntimeError, TimeoutError) as e:
            # Not asked for again by this provider (the agents would be restarted over it).
            self._runtime_failed.add(record.id)
            log.error("server %s: its container runtime did not start: %s", record.name, e)
        return wanted

    def _runtime_pid(self, store: podman.Store) -> int | None:
        try:
            return int((store.root / containers.PID_NAME).read_text())
        except (OSError, ValueError):
            return None

    async def _stop_runtime(
        self, record: ServerRecord, grace_s: float, remove: bool = False
    ) -> None:
        """Stop (or remove) the server's containers and its runtime's API."""
        found = self._runtime()
        store = self._node_store(record)
        if found is None or not store.storage_conf.exists():
            return
        await processes.terminate(self._runtime_pid(store), record.key, grace_s=grace_s)
        stop = containers.remove_all if remove else containers.stop_all
        await asyncio.to_thread(stop, found, store)

    async def _restart(self, record: ServerRecord) -> None:
        """`_start` for a server that exists: a host lost meanwhile makes it `ResourceGone`."""
        try:
            await self._start(record)
        except ProviderError as e:
            if record.host in self._failed:
                raise ResourceGone(f"server {record.name} was lost with host {record.host}") from e
            raise

    @contextmanager
    def _busy_as(self, server_id: str, task: str) -> Iterator[None]:
        self._busy[server_id] = task
        try:
            yield
        finally:
            self._busy.pop(server_id, None)

    def _binds_of(self, record: ServerRecord, install: agents.AgentInstall | None = None) -> Binds:
        """What the server's sandbox shows besides its workdir: the provider's binds, the
        volumes attached to it (its `volumes/` links point at them), the agents' install."""
        attached = tuple(
            Path(v.path)
            for v in self._records.all()
            if isinstance(v, VolumeRecord) and v.attached_to == record.id and Path(v.path).is_dir()
        )
        code = () if install is None else (install.bin, install.share)
        return Binds(
            read_only=(*self.binds.read_only, *code),
            read_write=(*self.binds.read_write, *attached),
        )

    def _relink(self, record: ServerRecord) -> None:
        """Link every volume whose record says it is attached to this server (after its
        workdir was lost or wiped); a name already linked elsewhere is left alone."""
        for other in self._records.all():
            if isinstance(other, VolumeRecord) and other.attached_to == record.id:
                volumes.attach(Path(record.workdir), other.name, Path(other.path))

    async def _spawn_and_wait(self, record: ServerRecord, workdir: Path) -> None:
        log = workdir / LOG_NAME
        env = launch.node_env(key=record.key, resource_id=record.id)
        argv = record.argv
        if self.sandbox is not None:
            # bwrap would start and then fail to exec it: say so as an unsandboxed start would.
            if shutil.which(argv[0], path=env.get("PATH")) is None:
                raise PermanentError(
                    f"server {record.name} could not start {argv[0]}", fault="no such program"
                )
            argv = self.sandbox.wrap(argv, workdir=workdir, binds=self._binds_of(record))
            env = sandbox_env(env, workdir)
        try:
            proc = await asyncio.to_thread(processes.spawn, argv, cwd=workdir, log=log, env=env)
        except OSError as e:
            raise PermanentError(
                f"server {record.name} could not start {record.argv[0]}", fault=str(e)
            ) from e
        record.pid = proc.pid
        record.started_at = time.time()
        self._records.save(record)
        if self.sandbox is not None:
            # Its own pid is its sandbox's; the node shows the one the host knows it by.
            write_private(workdir / _PID_FILE, str(proc.pid))
        try:
            await processes.wait_ready(
                proc.pid,
                record.key,
                record.address,
                record.port,
                record.health_path,
                timeout_s=self.boot_timeout_s,
            )
        except processes.ExitedEarlyError as e:
            tail = processes.log_tail(log)
            error = TemporaryError if "Address already in use" in tail else PermanentError
            raise error(f"server {record.name} exited while booting", fault=tail) from e
        except TimeoutError as e:
            await processes.terminate(proc.pid, record.key, grace_s=0.5)
            raise TemporaryError(
                f"server {record.name} did not answer within {self.boot_timeout_s}s",
                fault=processes.log_tail(log),
            ) from e
        except BaseException:
            await asyncio.shield(processes.terminate(proc.pid, record.key, grace_s=0.5))
            raise

    async def _delete_server(self, record: ServerRecord) -> None:
        await self._stop(record)
        await self._stop_runtime(record, 0.0, remove=True)
        for other in self._records.all():
            if isinstance(other, VolumeRecord) and other.attached_to == record.id:
                other.attached_to = None
                self._records.save(other)
        shutil.rmtree(record.workdir, ignore_errors=True)
        self._slots.release(record.host, record.slot, record.address)
        self._records.remove(record)

    async def _kill(self, record: ServerRecord) -> None:
        """SIGKILL the server and its agents, as the loss of its machine would (its
        containers stop with it)."""
        for pid in (record.pid, record.agent_pid):
            if pid is not None and processes.is_running(pid, record.key):
                processes.signal_group(pid, signal.SIGKILL)
                await processes.terminate(pid, record.key, grace_s=0.0)
        await self._stop_runtime(record, 0.0)

    # -- volumes ----------------------------------------------------------------------------

    def _delete_volume(self, record: VolumeRecord) -> None:
        if record.attached_to is not None:
            server = self._records.by_id(record.attached_to)
            if isinstance(server, ServerRecord):
                volumes.detach_all(Path(server.workdir), Path(record.path))
        volumes.remove_volume_dir(Path(record.path))
        self._records.remove(record)

    # -- views ------------------------------------------------------------------------------

    def _resource(self, record: Record) -> Resource:
        if isinstance(record, ServerRecord):
            return self._server_resource(record)
        return self._volume_resource(record)

    def _server_resource(self, r: ServerRecord) -> Resource:
        running = processes.is_running(r.pid, r.key)
        task = self._busy.get(r.id)
        reason = None
        if r.host in self._failed:
            state, reason = ResourceState.MISSING, f"host {r.host} is down"
        elif task is not None:
            state = ResourceState.BUILDING
        elif not Path(r.workdir).is_dir():
            state, reason = ResourceState.MISSING, "workdir is gone"
        elif running:
            state = ResourceState.ACTIVE
        else:
            state, reason = ResourceState.ERROR, "process is not running"
        details = {
            "port": str(r.port),
            "image": r.image,
            "workdir": r.workdir,
            "log": str(Path(r.workdir) / LOG_NAME),
            "slot": str(r.slot),
        }
        if r.flavor:
            details["flavor"] = r.flavor
        if r.pid is not None and running:
            details["pid"] = str(r.pid)
        if r.metadata_url is not None:
            details["agents_log"] = str(agents.AgentLayout.of(Path(r.workdir)).log)
            if processes.is_running(r.agent_pid, r.key):
                details["agent_pid"] = str(r.agent_pid)
        if task is not None:
            details["task"] = task
        if reason is not None:
            details["reason"] = reason
        store = self._node_store(r)
        if (store.root / containers.EVENTS_NAME).exists():
            # Containers restarted by their policy behind Shoal's back: the manager reports them.
            count, last = containers.restarts(store)
            details["container_restarts"] = str(count)
            if last:
                details["container_restarted"] = last
        return Resource(
            id=r.id,
            key=r.key,
            kind=NodeKind.SERVER,
            name=r.name,
            state=state,
            host=r.host,
            zone=r.zone,
            address=f"{r.address}:{r.port}",
            details=details,
        )

    def _volume_resource(self, r: VolumeRecord) -> Resource:
        path = Path(r.path)
        exists = path.is_dir()
        state = ResourceState.ACTIVE if exists else ResourceState.MISSING
        reason = None if exists else "directory is gone"
        if r.host in self._failed:
            state, reason = ResourceState.MISSING, f"host {r.host} is down"
        details = {
            "path": r.path,
            "size_gb": str(r.size_gb),
            "size_bytes": str(r.size_gb * 1024**3),
            "used_bytes": str(volumes.used_bytes(path) if exists else 0),
        }
        if r.volume_type:
            details["volume_type"] = r.volume_type
        if reason is not None:
            details["reason"] = reason
        return Resource(
            id=r.id,
            key=r.key,
            kind=NodeKind.VOLUME,
            name=r.name,
            state=state,
            host=r.host,
            zone=r.zone,
            attached_to=r.attached_to,
            details=details,
        )

    # -- checks -----------------------------------------------------------------------------

    def _server_record(self, server_id: str) -> ServerRecord:
        record = self._records.by_id(server_id)
        if not isinstance(record, ServerRecord):
            raise ResourceGone(f"server {server_id} does not exist")
        return record

    def _check_present(self, record: ServerRecord) -> None:
        """ResourceGone if the server's host is down or no longer one of this provider's."""
        if self._inventory.host(record.host) is None:
            raise ResourceGone(f"server {record.name} is on {record.host}, not a host here")
        if record.host in self._failed:
            raise ResourceGone(f"server {record.name} is on host {record.host}, which is down")

    def _known_host(self, host: str) -> None:
        if self._inventory.host(host) is None:
            raise PermanentError(f"no host named {host}")

    def _check_host(self, name: str) -> str:
        """The host's zone; PermanentError if the host is unknown or down."""
        host = self._inventory.host(name)
        if host is None:
            raise PermanentError(f"no valid host: {name} is not a host of this provider")
        if name in self._failed:
            raise PermanentError(f"no valid host: {name} is down")
        return host.zone

    def _image(self, wanted: Image) -> Image:
        image = self._inventory.image(wanted.id) or self._inventory.image(wanted.name)
        if image is None:
            raise PermanentError(f"no image {wanted.name} ({wanted.id}) in the local catalog")
        return image


def node_log(provider: LocalProvider, server_id: str, max_bytes: int) -> str | None:
    """The end of a local server's log (`shoal logs`); None if Shoal made no such server here.

    The id is a provider id Shoal recorded, never a path a caller chose: only `srv-<hex>` ids
    are looked up, so no request can read outside the nodes directory; and the log is opened
    without following a link (the node may have replaced it with one: None then).
    """
    if not server_id.startswith("srv-") or not server_id[4:].isalnum():
        return None
    data = read_tail_beneath(provider.home / "nodes" / server_id, LOG_NAME, max_bytes)
    return None if data is None else data.decode(errors="replace")
