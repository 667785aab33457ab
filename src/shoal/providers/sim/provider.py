"""The `sim` provider: a simulated cloud, a real provider and not a mock.

It keeps real books: capacity per host, address slots, attachments, failed hosts, idempotency
by key. Time and luck are the only things simulated: a create or delete takes
`create_latency_s`/`delete_latency_s` on an injectable sleep (tests pass one that does not
wait), and a create, reboot or rebuild fails with `TemporaryError` at `failure_rate`, drawn from
a seeded RNG so a run can be repeated (a failed reboot or rebuild leaves the server in ERROR).
Reboot and rebuild take `create_latency_s` and read BUILDING meanwhile.

A failed host (`fail_host`) leaves the inventory and its resources read MISSING; its servers
are marked ERROR underneath, which is what they read once the host is recovered, until they are
rebooted, rebuilt or created again with their key. `kill_node_process` makes a server ERROR.

With `real_cloud`, the simulated cloud behaves like Nova and Cinder rather than like a key-value
store: a create always makes a new resource (the key is only the client's metadata on it), a
server whose build fails stays behind in ERROR, and a build interrupted by its client carries on.
Finding an earlier attempt is the client's job: this provider searches the cluster's resources
by key before creating (as the OpenStack provider does) unless the request is `fresh`. So a
Shoal bug that retries a create without looking, or marks a retry fresh, makes a second server
here, which the default mode (one resource per key, by construction) would hide.

Servers get addresses `10.Z.H.N` (or `fd00::Z:H:N` when an inventory is too big for IPv4
octets). With `state_path`, the cloud lives in a SQLite file several Shoal processes share
(its containers and balancers too: `shared.py`); without it, in memory. With `hang_path`, its
calls hang while that file exists (`stall.py`: a runtime stopped mid-call).
"""

from __future__ import annotations

import asyncio
import os
import random
import uuid
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from pathlib import Path

from shoal.frozen_twin import become, check_twin
from shoal.model.enums import NodeKind
from shoal.model.inventory import Host, Inventory
from shoal.model.nodes import Demand, demand_of
from shoal.model.profile import ServerProfile
from shoal.providers.addressing import FIRST_SLOT, LAST_SLOT, fits_ipv4, host_coordinates, ipv4
from shoal.providers.base import (
    HostState,
    Resource,
    ResourceState,
    ServerRequest,
    VolumeRequest,
)
from shoal.providers.errors import PermanentError, ResourceGone, TemporaryError
from shoal.providers.sim.batch import Builds, Reservations
from shoal.providers.sim.memory import MemoryState
from shoal.providers.sim.metered import MeteredState
from shoal.providers.sim.networking import SimNetworking
from shoal.providers.sim.replicas import SimReplicas
from shoal.providers.sim.shared import SharedBooks
from shoal.providers.sim.software import SimDeployments
from shoal.providers.sim.sqlite import SqliteState
from shoal.providers.sim.stall import Stall
from shoal.providers.sim.state import ACTIVE, BUILDING, ERROR, NoCapacityError, SimRecord, SimState

Sleep = Callable[[float], Awaitable[None]]

_COPY = "#"
"""Separates the client's key from what makes each real-cloud resource's stored key unique."""
_SERVER = NodeKind.SERVER.value
_VOLUME = NodeKind.VOLUME.value
_STATES = {s.value: s for s in ResourceState}
_KINDS = {k.value: k for k in NodeKind}


class SimProvider:
    """A simulated cloud over `inventory`, with latency, failures and capacity."""

    name = "sim"

    def __init__(
        self,
        inventory: Inventory,
        *,
        create_latency_s: float = 0.0,
        delete_latency_s: float = 0.0,
        failure_rate: float = 0.0,
        seed: int = 0,
        clock_sleep: Sleep = asyncio.sleep,
        state_path: Path | None = None,
        real_cloud: bool = False,
        deploy_s: float = 0.0,
        deploy_failure_rate: float = 0.0,
        hang_path: Path | None = None,
    ) -> None:
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError("failure_rate must be between 0 and 1")
        self._inventory = inventory
        self._hosts = {h.name: h for h in inventory.hosts}
        self._coords = host_coordinates(inventory)
        self._prefixes = {
            name: f"10.{z}.{h}." if fits_ipv4(z, h, FIRST_SLOT) else None
            for name, (z, h) in self._coords.items()
        }
        """Each host's IPv4 address less its slot (None: the host's coordinates do not fit
        IPv4). Issue 23: an address per create made from the coordinates was 4 % of a node
        action's CPU."""
        self._live: tuple[frozenset[str], Inventory] | None = None
        """The inventory last answered, and the failed hosts it left out."""
        self._checked: ServerProfile | None = None
        """The last profile `_check_catalog` passed: the catalog does not change, and a
        create's nodes share their profile object (engine/profiles.py)."""
        self._demand: tuple[ServerProfile, Demand] | None = None
        """The last server profile's demand, for the same reason."""
        self.create_latency_s = create_latency_s
        self.delete_latency_s = delete_latency_s
        self.failure_rate = failure_rate
        self._rng = random.Random(seed)
        self._sleep = clock_sleep
        # Metered: the simulated cloud's CPU is not Shoal's (shoal_sim_cpu_seconds_total).
        books = SqliteState(state_path) if state_path else None
        self._state: SimState = MeteredState(books or MemoryState())
        self._reservations = Reservations(books) if books else None
        """A shared file's reservations, made together per turn of the loop (`batch.py`)."""
        self._finishes = Builds(books) if books and clock_sleep is asyncio.sleep else None
        """A shared file's builds that end together (`batch.py`); only in real time, since
        they end on the loop's clock, not on an injected sleep."""
        self._orphan_after_s = max(2 * create_latency_s, create_latency_s + 2.0)
        """How long another process's build may take before it counts as abandoned."""
        self.real_cloud = real_cloud
        # Software deployments (issue 11): simulated, since a simulated server has no agents.
        self.deployments: SimDeployments | None = SimDeployments(
            clock_sleep, seconds=deploy_s, failure_rate=deploy_failure_rate, seed=seed
        )
        self._builds: dict[str, asyncio.Event | None] = {}
        """Ids being built (or claimed) by this process; a create with the same key waits on
        the event, made by the first such waiter (issue 23: most builds have none, and an
        `asyncio.Event` per create was 2 % of a node action's CPU)."""
        # Workloads' replicas (issue 22): simulated containers on the simulated servers.
        shared = SharedBooks(state_path) if state_path else None
        self.stall = Stall(hang_path)
        """While `hang_path` exists, server, container and network calls hang (`stall.py`)."""
        self.replicas = SimReplicas(self._server_view, shared, self.stall)
        self.replicas_via_agents = False
        """True: the keeper carries replicas through the agents' path instead (as local's
        `replicas = "agents"`), for tests of that path (`ChoosesReplicaPath`)."""
        # Networking (issue 26): logical, with the addresses a document leaves to the cloud.
        self.networking = SimNetworking(shared.networks() if shared else None, self.stall)

    # -- the Provider protocol -------------------------------------------------------------

    async def inventory(self) -> Inventory:
        failed = frozenset(self._state.failed_hosts())
        known = self._live
        if known is not None and known[0] == failed:
            # The same hosts as last time: the same object (issue 37: the manager reads the
            # inventory every tick, and a new one of 25,000 hosts a second, with its set of
            # names, was a fair part of an idle engine's CPU).
            return known[1]
        hosts = tuple(h for h in self._inventory.hosts if h.name not in failed)
        live = Inventory(
            hosts=hosts, flavors=self._inventory.flavors, images=self._inventory.images
        )
        self._live = (failed, live)
        return live

    async def create_server(self, request: ServerRequest) -> Resource:
        await self.stall.wait()
        key = request.key
        if self.real_cloud:  # only there does the client search (`_searched`)
            existing = self._searched(_SERVER, key, request.cluster, request.fresh)
            if existing is not None:
                return await self._settle(existing)
        profile = request.profile
        try:
            if profile is not self._checked:
                self._check_catalog(profile)
                self._checked = profile
            host = self._hosts.get(request.host) or self._host(request.host)
        except PermanentError:
            if (existing := self._by_key(_SERVER, request.key)) is None:
                raise
            return await self._settle(existing)
        known = self._demand
        if known is not None and known[0] is profile:
            demand = known[1]
        else:
            demand = demand_of(profile)
            self._demand = (profile, demand)
        # By position (issue 23: once per create): id, kind, key, name, cluster, host, zone,
        # state, demand, slot, attached_to, flavor, image.
        record = SimRecord(
            _new_id(),
            _SERVER,
            self._stored_key(key) if self.real_cloud else key,
            profile.name or request.name,
            request.cluster,
            host.name,
            host.zone,
            BUILDING,
            demand,
            None,
            None,
            profile.flavor.name,
            profile.image.name,
        )
        return await self._create(record, host)

    async def create_volume(self, request: VolumeRequest) -> Resource:
        await self.stall.wait()
        existing = self._searched(_VOLUME, request.key, request.cluster, False)
        if existing is not None:
            return await self._settle(existing)
        try:
            host = self._host(request.host)
        except PermanentError:
            if (existing := self._by_key(_VOLUME, request.key)) is None:
                raise
            return await self._settle(existing)
        record = SimRecord(
            id=_new_id(),
            kind=_VOLUME,
            key=self._stored_key(request.key),
            name=request.profile.name or request.name,
            cluster=request.cluster,
            host=host.name,
            zone=host.zone,
            state=BUILDING,
            demand=Demand(volume_gb=request.profile.size_gb),
        )
        return await self._create(record, host)

    async def attach_volume(self, volume_id: str, server_id: str) -> None:
        await self.stall.wait()
        volume = self._state.by_id(volume_id)
        server = self._state.by_id(server_id)
        if volume is None or volume.kind != _VOLUME:
            raise ResourceGone(f"volume {volume_id} does not exist")
        if server is None or server.kind != _SERVER:
            raise ResourceGone(f"server {server_id} does not exist")
        failed = self._state.failed_hosts()
        for r in (volume, server):
            if r.host in failed:
                raise PermanentError(f"{r.kind} {r.name} is on host {r.host}, which is down")
        if volume.attached_to == server_id:
            return
        if volume.attached_to is not None:
            raise PermanentError(f"volume {volume.name} is in use by server {volume.attached_to}")
        self._state.set_attached(volume_id, server_id)

    async def reboot(self, server_id: str) -> Resource:
        """BUILDING for `create_latency_s`, then ACTIVE (or ERROR and `TemporaryError`, at
        `failure_rate`). Waits out a build or another reboot of the same server first."""
        await self.stall.wait()
        record = await self._claim(server_id)
        try:
            self._state.set_state(record.id, BUILDING)
            record.state = BUILDING
            return await self._boot(record, "reboot")
        finally:
            self._release(server_id)

    async def rebuild(self, server_id: str, profile: ServerProfile) -> Resource:
        """As `reboot`, with the server's flavor and image replaced by `profile`'s; its address
        and attachments stay. `PermanentError` if the host has no room for the new flavor."""
        await self.stall.wait()
        self._check_catalog(profile)
        record = await self._claim(server_id)
        try:
            try:
                rebuilt = self._state.rebuild(
                    record.id,
                    self._host(record.host),
                    demand_of(profile),
                    profile.flavor.name,
                    profile.image.name,
                )
            except NoCapacityError as e:
                raise PermanentError(f"no valid host: {e}") from e
            if rebuilt is None:
                raise ResourceGone(f"server {server_id} does not exist")
            return await self._boot(rebuilt, "rebuild")
        finally:
            self._release(server_id)

    async def delete(self, kind: NodeKind, resource_id: str) -> None:
        await self.stall.wait()
        record = self._state.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return
        if self.delete_latency_s > 0:
            await self._sleep(self.delete_latency_s)
        self._state.remove(resource_id)
        if self.deployments is not None:
            self.deployments.forget_server(resource_id)
        self.replicas.forget_server(resource_id)

    async def get(self, kind: NodeKind, resource_id: str) -> Resource:
        record = self._state.by_id(resource_id)
        if record is None or record.kind != kind.value:
            return Resource(resource_id, "", kind, "", ResourceState.MISSING)
        return self._resource(record, self._state.failed_hosts())

    async def list_resources(self, cluster: str | None = None) -> list[Resource]:
        failed = self._state.failed_hosts()
        return [self._resource(r, failed) for r in self._state.records(cluster)]

    async def changes_since(self, cursor: int | None) -> tuple[int, frozenset[str] | None]:
        """`ChangeFeed`: the clusters whose resources changed after `cursor` (issue 37)."""
        return self._state.changes_since(cursor)

    async def close(self) -> None:
        self._state.close()

    # -- HostAdmin: host loss, and test hooks ------------------------------------------------

    async def fail_host(self, host: str) -> list[str]:
        """Lose a host: its servers die (ERROR once it is back), it leaves the inventory.
        Returns the ids of every resource on it; O(resources on that host)."""
        self._known_host(host)
        return self._state.mark_host(host, True)

    async def recover_host(self, host: str) -> None:
        self._known_host(host)
        self._state.mark_host(host, False)

    async def hosts(self) -> list[HostState]:
        failed = self._state.failed_hosts()
        counts = self._state.host_counts()
        return [
            HostState(h.name, h.zone, h.name in failed, counts.get(h.name, 0))
            for h in self._inventory.hosts
        ]

    async def kill_node_process(self, resource_id: str) -> None:
        """A server crashes: it reads ERROR until created again with its key."""
        record = self._state.by_id(resource_id)
        if record is not None and record.kind == _SERVER:
            self._state.set_state(resource_id, ERROR)

    # -- internals --------------------------------------------------------------------------

    def _server_view(self) -> Callable[[str], bool]:
        """Is this server running now (ACTIVE on a host that has not failed)?"""
        failed = self._state.failed_hosts()

        def active(server_id: str) -> bool:
            r = self._state.by_id(server_id)
            return r is not None and r.state == ACTIVE and r.host not in failed

        return active

    def _searched(self, kind: str, key: str, cluster: str, fresh: bool) -> SimRecord | None:
        """An earlier attempt of this create found by the client's search of the cluster's
        resources, best state first (real cloud). Without `real_cloud` there is no search:
        the reservation finds the key in the cloud's books (one read less per create), and
        `_by_key` answers a request that would be refused before it reaches the books."""
        if not self.real_cloud:
            return None
        if fresh:
            return None
        found = [r for r in self._state.copies(kind, key) if r.cluster == cluster]
        rank = {ACTIVE: 0, BUILDING: 1}
        return min(found, key=lambda r: rank.get(r.state, 2), default=None)

    def _by_key(self, kind: str, key: str) -> SimRecord | None:
        """An earlier create by key in the cloud's books (not with `real_cloud`: there a refused
        request was not searched for, so it stays refused)."""
        return None if self.real_cloud else self._state.by_key(kind, key)

    def _stored_key(self, key: str) -> str:
        # A real cloud keeps every create apart, whatever metadata the client gave it.
        return f"{key}{_COPY}{uuid.uuid4().hex[:12]}" if self.real_cloud else key

    async def _create(self, record: SimRecord, host: Host) -> Resource:
        # The draw is for a key the books did not hold (refused or not), as when the key was
        # looked up before `_create`: the seed gives the same failures as it did then.
        try:
            # Issue 23: the reservation awaited here, not in a coroutine of its own (one per
            # create, and a frame more to resume).
            if self._reservations is None:
                stored, new = self._state.reserve(record, host)
            else:
                outcome = self._reservations.reserve(record, host)
                try:
                    stored, new = await outcome
                except asyncio.CancelledError:
                    self._unreserve(outcome)
                    raise
        except NoCapacityError as e:
            self._draw()
            raise PermanentError(f"no valid host: {e}") from e
        if not new:
            return await self._settle(stored)
        fails = self._draw()
        if self.create_latency_s <= 0 and not fails:
            self._state.set_state(record.id, ACTIVE)
            record.state = ACTIVE
            return self._resource(record, ())
        self._builds[record.id] = None
        failed: AbstractSet[str] | None = None
        try:
            if self._finishes is not None and not fails:
                # Real time on a shared file: this build ends with the others of its tick.
                changed, failed = await self._finishes.finish(record.id, self.create_latency_s)
            else:
                if self.create_latency_s > 0:
                    await self._sleep(self.create_latency_s)
                # The state's answer says whether the record is still there: no read before it.
                changed = not fails and self._state.set_state(record.id, ACTIVE)
            if not changed:
                if self._state.by_id(record.id) is None:
                    raise TemporaryError(f"{record.kind} {record.name} was deleted while building")
                raise TemporaryError(
                    f"simulated failure creating {record.kind} {record.name}",
                    fault="simulated failure",
                )
            record.state = ACTIVE
        except BaseException as e:
            if not self.real_cloud:
                self._state.remove(record.id)
            elif fails and isinstance(e, TemporaryError) and record.kind == _SERVER:
                self._state.set_state(record.id, ERROR)  # Nova keeps a failed server
            elif not isinstance(e, asyncio.CancelledError):
                self._state.remove(record.id)
            # (cancelled: the client stopped waiting; the cloud carries on building)
            raise
        finally:
            self._release(record.id)
        return self._resource(record, self._state.failed_hosts() if failed is None else failed)

    def _unreserve(self, outcome: asyncio.Future[tuple[SimRecord, bool]]) -> None:
        """A create cancelled while waiting for its reservation: if it was made all the same,
        as a create cancelled while building."""
        if outcome.done() and not outcome.cancelled() and outcome.exception() is None:
            stored, new = outcome.result()
            if new and not self.real_cloud:
                self._state.remove(stored.id)

    async def _settle(self, record: SimRecord) -> Resource:
        """The answer to a create whose key is known: wait out a build, restart a dead server."""
        waited = 0.0
        while record.state == BUILDING:
            if record.id in self._builds:
                await self._built(record.id)
            elif waited >= self._orphan_after_s:
                # Built by a process sharing the state file that has died mid-build: like a
                # real cloud, the simulated one finishes the build without its client.
                self._state.set_state(record.id, ACTIVE)
            else:  # built by another process sharing the state file
                step = max(self.create_latency_s / 10, 0.01)
                await self._sleep(step)
                waited += step
            latest = self._state.by_id(record.id)
            if latest is None:  # that build failed: this create tries afresh
                return await self._retry(record)
            record = latest
        if record.host in self._state.failed_hosts():
            raise PermanentError(f"no valid host: host {record.host} is down")
        if record.state == ERROR and record.kind == _SERVER:
            if self.create_latency_s > 0:
                await self._sleep(self.create_latency_s)
            self._state.set_state(record.id, ACTIVE)
            record.state = ACTIVE
        return self._resource(record, ())

    async def _retry(self, record: SimRecord) -> Resource:
        record.id = _new_id()
        record.state = BUILDING
        record.slot = None
        record.attached_to = None
        return await self._create(record, self._host(record.host))

    async def _claim(self, server_id: str) -> SimRecord:
        """Wait until no build, reboot or rebuild of this server runs in this process, then
        mark it as ours (in `_builds`, so creates with its key wait for us). ResourceGone if
        it does not exist or its host is down."""
        while server_id in self._builds:
            await self._built(server_id)
        record = self._state.by_id(server_id)
        if record is None or record.kind != _SERVER:
            raise ResourceGone(f"server {server_id} does not exist")
        if record.host in self._state.failed_hosts():
            raise ResourceGone(f"server {record.name} is on host {record.host}, which is down")
        self._builds[server_id] = None
        return record

    async def _built(self, resource_id: str) -> None:
        """Wait until this process's build, reboot or rebuild of `resource_id` ends."""
        event = self._builds[resource_id]
        if event is None:
            event = self._builds[resource_id] = asyncio.Event()
        await event.wait()

    def _release(self, server_id: str) -> None:
        event = self._builds.pop(server_id, None)
        if event is not None:
            event.set()

    def _draw(self) -> bool:
        """Whether this create, reboot or rebuild fails (at `failure_rate`, by the seed)."""
        return self.failure_rate > 0 and self._rng.random() < self.failure_rate

    async def _boot(self, record: SimRecord, what: str) -> Resource:
        """Take `create_latency_s`, then make a claimed BUILDING server ACTIVE (or ERROR)."""
        fails = self._draw()
        try:
            if self.create_latency_s > 0:
                await self._sleep(self.create_latency_s)
        except BaseException:
            self._state.set_state(record.id, ERROR)
            raise
        if self._state.by_id(record.id) is None:
            raise ResourceGone(f"server {record.name} was deleted during its {what}")
        if record.host in self._state.failed_hosts():
            raise ResourceGone(f"server {record.name} was lost with host {record.host}")
        state = ERROR if fails else ACTIVE
        self._state.set_state(record.id, state)
        record.state = state
        if fails:
            raise TemporaryError(
                f"simulated failure in the {what} of server {record.name}",
                fault="simulated failure",
            )
        return self._resource(record, ())

    def _check_catalog(self, profile: ServerProfile) -> None:
        if self._inventory.image(profile.image.id) is None and (
            self._inventory.image(profile.image.name) is None
        ):
            raise PermanentError(f"no image {profile.image.name} in the simulated catalog")
        if self._inventory.flavor(profile.flavor.id) is None and (
            self._inventory.flavor(profile.flavor.name) is None
        ):
            raise PermanentError(f"no flavor {profile.flavor.name} in the simulated catalog")

    def _known_host(self, host: str) -> None:
        if host not in self._hosts:
            raise PermanentError(f"no host named {host}")

    def _host(self, name: str) -> Host:
        host = self._hosts.get(name)
        if host is None:
            raise PermanentError(f"no valid host: {name} is not a host of this cloud")
        return host

    def _address(self, host: str, slot: int | None) -> str | None:
        if slot is None:
            return None
        prefix = self._prefixes[host]
        if prefix is not None and FIRST_SLOT <= slot <= LAST_SLOT:
            return f"{prefix}{slot}"  # as `ipv4(10, z, h, slot)`
        z, h = self._coords[host]
        if fits_ipv4(z, h, slot):
            return ipv4(10, z, h, slot)
        return f"fd00::{z:x}:{h:x}:{slot:x}"

    def _resource(self, r: SimRecord, failed: AbstractSet[str] | tuple[()]) -> Resource:
        # Issue 23: dict lookups, not the enums' calls (a few per cent of a create's Python).
        state = ResourceState.MISSING if r.host in failed else _STATES[r.state]
        details = {"flavor": r.flavor, "image": r.image} if r.kind == _SERVER else {}
        if r.kind == _VOLUME:
            details["size_gb"] = str(r.demand.volume_gb)
        key = r.key
        resource = _ResourceSlots(
            r.id,
            client_key(key) if _COPY in key else key,
            _KINDS[r.kind],
            r.name,
            state,
            r.host,
            r.zone,
            self._address(r.host, r.slot),
            r.attached_to,
            details,
        )
        # Issue 23: the frozen init sets each field through `object.__setattr__`, 2 µs a
        # create against 0.5 so; the object is then a `Resource`, frozen as any other.
        return become(resource, Resource)


class _ResourceSlots:
    """`Resource`'s very slots, set by a plain `__init__` (its layout is the same, so CPython
    allows the class change `_resource` makes), as `store/records.action_record` does.
    Justified by `benchmarks/scale.py`'s `create-pg` (`shoal.frozen_twin`)."""

    __slots__ = Resource.__slots__

    def __init__(
        self,
        id: str,
        key: str,
        kind: NodeKind,
        name: str,
        state: ResourceState,
        host: str | None,
        zone: str | None,
        address: str | None,
        attached_to: str | None,
        details: dict[str, str],
    ) -> None:
        self.id = id
        self.key = key
        self.kind = kind
        self.name = name
        self.state = state
        self.host = host
        self.zone = zone
        self.address = address
        self.attached_to = attached_to
        self.details = details


check_twin(_ResourceSlots, Resource)


def _new_id(random_bytes: Callable[[int], bytes] = os.urandom) -> str:
    """A random (version 4) UUID's text, as `str(uuid.uuid4())` gives it. Issue 23: built from
    the random bytes' hex directly, 1.3 µs rather than 4.7 (the `UUID` object and its
    `__str__`): the version digit written as 4, the variant's top bits as RFC 4122's 10.
    `random_bytes` is where the 16 bytes come from (a test gives its own)."""
    h = random_bytes(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}
"""A hex digit with its top two bits made 10 (the RFC 4122 variant)."""


def client_key(stored: str) -> str:
    """The key the client gave, without the real-cloud mode's per-resource suffix."""
    return stored.split(_COPY, 1)[0]
