"""Keeping a cluster's networking in step with its servers (level-triggered, from the manager).

Each tick the manager hands over every settled cluster with its nodes; when the cluster's
networking or the set of its servers (names, addresses, health) changed since the last call,
or every `full_s` anyway (a table or a balancer removed behind Shoal's back comes back), the
provider's `NetworkDriver` is asked to make it so. Pools and rules name node groups, so a
scale-out, a scale-in, a replaced server or a failed host changes the members here, not in the
document. A pool may name a workload: its ready replicas (the stored rows, as `{members: W}`
reads them) are its members, so a replica that exits, moves or is added changes them too.
Clusters no longer in the store have their networking removed.

A server's own ports and floating IPs are made with the server, not here: `ServerPorts` tells a
server's create what of the document is its own (`ServerNetworking`, read from the cluster's
document as of the create), and a provider that makes ports (`openstack`) makes them before the
boot and deletes them after the server.

What those ports need of the cluster (its networks and security groups, a `NetworkPreparer`'s
`prepare`) is made first under the cluster's lease in the database (engine/netlease.py), once
per cluster action and engine: engines sharing the database split a cluster's creates, and
without it each made the networks it found missing. The sync's `apply` takes the same lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterable

from shoal.clock import Clock, SystemClock
from shoal.engine.context import EngineContext
from shoal.engine.netlease import NetworkLease
from shoal.engine.spec_cache import SpecCache
from shoal.model.cluster import ClusterSpec
from shoal.model.enums import ActionKind, NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.outputs import NetworkFact
from shoal.providers.base import Provider
from shoal.providers.capabilities import network_driver
from shoal.providers.networking import (
    AddressSource,
    BalancerState,
    ClusterNetworks,
    NetworkDriver,
    NetworkPreparer,
    NetworkToolsMissingError,
    ServerAddress,
    ServerNetworking,
    ServerPortMaker,
    server_networking,
)
from shoal.store import clusters as cluster_repo
from shoal.store import network_addresses as address_repo
from shoal.store import nodes as node_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord
from shoal.store.workloads import ReplicaRow

log = logging.getLogger("shoal.engine.networks")

_SERVING = (NodeStatus.ACTIVE, NodeStatus.WARNING, NodeStatus.UPDATING)
"""Nodes whose servers take traffic; health checks of the balancer decide the rest."""


def driver_of(provider: Provider) -> NetworkDriver | None:
    return network_driver(provider)


def servers_of(nodes: list[NodeRecord]) -> tuple[ServerAddress, ...]:
    out: list[ServerAddress] = []
    for n in nodes:
        if n.kind is not NodeKind.SERVER or not n.address or n.status not in _SERVING:
            continue
        host = n.address.rsplit(":", 1)[0] if n.address.count(":") == 1 else n.address
        out.append(ServerAddress(n.name, n.group_name, n.part, host))
    return tuple(sorted(out, key=lambda s: s.name))


def workload_pools(spec: ClusterSpec) -> set[str]:
    """The workloads some load balancer's pool names as its members."""
    names = {w.name for w in spec.workloads}
    return {
        p.members.target
        for lb in spec.networking.load_balancers
        for p in lb.pools
        if p.members.target in names
    }


def replicas_of(
    spec: ClusterSpec, nodes: list[NodeRecord], rows: Iterable[ReplicaRow]
) -> tuple[ServerAddress, ...]:
    """The ready replicas of the workloads pools name, each at its server's address (a pool's
    port is the workload's: documents/net_balancers.py), as `{members: W}` lists them."""
    pooled = workload_pools(spec)
    if not pooled:
        return ()
    where = {s.name: s.address for s in servers_of(nodes)}
    out = [
        ServerAddress(r.replica, r.workload, None, where[r.node])
        for r in rows
        if r.workload in pooled and r.ready and r.node in where
    ]
    return tuple(sorted(out, key=lambda s: s.name))


def cluster_networks(
    cluster: ClusterRecord,
    spec: ClusterSpec,
    nodes: list[NodeRecord],
    replicas: tuple[ServerAddress, ...] = (),
) -> ClusterNetworks:
    return ClusterNetworks(cluster.id, cluster.name, spec.networking, servers_of(nodes), replicas)


class NetworkSync:
    """What was last applied per cluster, so an unchanged cluster costs nothing.

    With a database, the addresses the cloud assigned (an `AddressSource` driver's) are
    recorded after each apply that changed them, for outputs (store/network_addresses.py),
    and a `NetworkPreparer` driver's apply runs under the cluster's networks lease
    (engine/netlease.py), so it and another engine's server create do not both make a missing
    network. It is held as `<owner>/sync`, not as the engine's own creates hold it: two holders
    under one name would both hold it, and the first to end would release it under the other.
    Without an owner (or a clock) one of its own (the system clock)."""

    def __init__(
        self,
        provider: Provider,
        full_s: float = 30.0,
        db: Database | None = None,
        *,
        owner: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.driver = driver_of(provider)
        self.full_s = full_s
        self.db = db
        self._lease: NetworkLease | None = None
        if db is not None and isinstance(self.driver, NetworkPreparer):
            holder = f"{owner or uuid.uuid4().hex}/sync"
            self._lease = NetworkLease(db, holder, clock or SystemClock())
        self._applied: dict[str, tuple[ClusterNetworks, float]] = {}
        self._addresses: dict[str, dict[NetworkFact, str]] = {}
        self._reported: dict[str, str] = {}
        self._listed_at = -1e18

    async def sync(
        self, cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord], now: float
    ) -> str | None:
        """Apply when needed; the reason it could not (once per new reason), else None."""
        if self.driver is None:
            return None
        if spec.networking.empty and cluster.id not in self._applied:
            return None  # issue 23: as below, without listing a 100,000-node cluster's servers
        wanted = cluster_networks(cluster, spec, nodes, await self._replicas(cluster, spec, nodes))
        last = self._applied.get(cluster.id)
        if wanted.spec.empty and last is None:
            return None
        if last is not None and last[0] == wanted and now - last[1] < self.full_s:
            return None
        try:
            if self._lease is None:
                await self.driver.apply(wanted)
            else:
                async with self._lease.held(cluster.id, wait=False) as mine:
                    if not mine:  # another engine makes them now; asked again next tick
                        return None
                    await self.driver.apply(wanted)
        except NetworkToolsMissingError as missing:
            return self._once(cluster.id, str(missing))
        except Exception as e:  # a failed nft or haproxy: reported, tried again next tick
            log.exception("networking of cluster %s failed", cluster.name)
            return self._once(cluster.id, f"networking failed: {e}")
        self._reported.pop(cluster.id, None)
        self._applied[cluster.id] = (wanted, now)
        await self._record(wanted, now)
        return None

    async def _record(self, cluster: ClusterNetworks, now: float) -> None:
        """The cloud-assigned addresses into the store when they changed (a failure to read
        them is logged; the next apply tries again)."""
        if self.db is None or not isinstance(self.driver, AddressSource):
            return
        try:
            found = await self.driver.addresses(cluster)
        except Exception:
            log.exception("reading the addresses of cluster %s failed", cluster.cluster_name)
            return
        if self._addresses.get(cluster.cluster_id) == found:
            return
        db, cid = self.db, cluster.cluster_id

        def write() -> None:
            with db.transaction() as conn:
                address_repo.replace_for(conn, cid, found, now)

        await asyncio.to_thread(write)
        self._addresses[cid] = found

    def _once(self, cluster_id: str, reason: str) -> str | None:
        if self._reported.get(cluster_id) == reason:
            return None
        self._reported[cluster_id] = reason
        return reason

    async def forget(self, stored: set[str], mine: Callable[[str], bool], now: float) -> None:
        """Remove the networking of clusters gone from the store, among this engine's share.

        `stored` is every cluster id in the store (not only this engine's partitions: another
        engine's cluster is not gone); `mine` says which partition's clusters this engine may
        clean up. The provider is listed at most every `full_s`, not every tick (idle cost)."""
        if self.driver is None:
            return
        gone = [c for c in self._applied if c not in stored]
        for cid in gone:
            del self._applied[cid]
            self._addresses.pop(cid, None)
        # A cluster this engine applied and that is now deleted goes at once, on the tick after
        # its delete action, not at the next listing (up to `full_s` later); a failure here is
        # retried by that listing.
        await self._remove([c for c in gone if mine(c)])
        if now - self._listed_at < self.full_s:
            return
        self._listed_at = now
        try:
            held = await self.driver.clusters()
        except Exception:
            log.exception("listing the clusters' networking failed")
            return
        await self._remove([c for c in held - stored if mine(c)])

    async def _remove(self, cluster_ids: list[str]) -> None:
        assert self.driver is not None
        for cid in cluster_ids:
            try:
                await self.driver.remove(cid)
            except Exception:
                log.exception("removing the networking of cluster %s failed", cid)

    async def balancers(
        self, cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord]
    ) -> tuple[BalancerState, ...]:
        if self.driver is None or not spec.networking.load_balancers:
            return ()
        replicas = await self._replicas(cluster, spec, nodes)
        return await self.driver.balancers(cluster_networks(cluster, spec, nodes, replicas))

    async def _replicas(
        self, cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord]
    ) -> tuple[ServerAddress, ...]:
        """The ready replicas of pools' workloads, from the stored rows (the keeper may run in
        another engine); nothing is read for a cluster whose pools name no workload."""
        if self.db is None or not workload_pools(spec):
            return ()
        db = self.db

        def read() -> list[ReplicaRow]:
            with db.reading() as conn:
                return list(replica_repo.load(conn, [cluster.id]).get(cluster.id, {}).values())

        return replicas_of(spec, nodes, await asyncio.to_thread(read))


def makes_ports(provider: Provider) -> bool:
    """Whether the provider boots servers on ports it makes itself (openstack), so a server's
    create needs its `ServerNetworking`; `local` and `sim` do not (logical networks)."""
    return isinstance(provider, ServerPortMaker)


class ServerPorts:
    """What of its cluster's networking a server's create makes first (its ports, its floating
    IPs): read from the cluster's document, parsed once per generation; and the cluster's
    networks those ports need, made under the cluster's lease before the first such create of
    each cluster action in this engine (a network is added or removed only by a document
    change, that is by another cluster action, so the action is also what says to look again)."""

    prepare_timeout_s = 300.0
    """A prepare hung on Neutron must not hold the lease (renewed while it runs) for ever."""

    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx
        self.enabled = makes_ports(ctx.provider)
        self._specs = SpecCache(limit=10_000)
        self._networking: dict[str, asyncio.Future[ClusterNetworks | None]] = {}
        """Per cluster action (its id, the parent of its node creates): the cluster's
        networking as read for its first node create."""
        driver = driver_of(ctx.provider) if self.enabled else None
        self._preparer = driver if isinstance(driver, NetworkPreparer) else None
        self._lease = NetworkLease(ctx.db, ctx.owner, ctx.clock, run_in_thread=ctx.run_in_thread)
        self._prepared: dict[str, asyncio.Future[None]] = {}
        """Per cluster action, as `_networking`: the one leased prepare its creates here wait
        for, kept once done (later creates go on at once), dropped if it failed."""

    async def release(self, action: ActionRecord, inventory: Inventory) -> None:
        """After a server's NODE_DELETE: its node's ports, in case its create died before the
        server existed (then the server's delete had no server to find them by). A failure is
        logged: the cluster's delete removes whatever is left."""
        # The kind first: every node action of a create passes here (issue 23: the protocol's
        # isinstance check, asked of each, cost more than the rest of this method).
        if action.kind is not ActionKind.NODE_DELETE or not self.enabled:
            return
        provider = self.ctx.provider
        if not isinstance(provider, ServerPortMaker) or action.node_id is None:
            return
        if action.cluster_id is None:
            return
        if str(action.inputs.get("kind", NodeKind.SERVER)) != NodeKind.SERVER:
            return
        cluster_id, node_id = action.cluster_id, action.node_id

        def read() -> ClusterRecord | None:
            with self.ctx.db.reading() as conn:
                return cluster_repo.get_cluster(conn, cluster_id, include_deleted=True)

        try:
            cluster = await self.ctx.run_in_thread(read)
            spec = self._spec(cluster, inventory) if cluster is not None else None
            if spec is not None and spec.networking.ports:
                await provider.release_ports(node_id)
        except Exception:  # the node is deleted all the same; its cluster's delete cleans up
            log.exception("deleting the ports of node %s failed", node_id)

    async def of(self, action: ActionRecord, inventory: Inventory) -> ServerNetworking | None:
        """The networking of the server `action` creates; None for anything else."""
        if (
            not self.enabled
            or action.kind is not ActionKind.NODE_CREATE
            or action.cluster_id is None
            or action.node_id is None
        ):
            return None
        profile = action.inputs.get("profile")
        if isinstance(profile, dict) and profile.get("type") == "volume":
            return None
        node_id = action.node_id
        whole = await self._networks(action, inventory)
        if whole is None:
            return None

        def read() -> NodeRecord | None:
            with self.ctx.db.reading() as conn:
                return node_repo.get_nodes(conn, [node_id]).get(node_id)

        node = await self.ctx.run_in_thread(read)
        if node is None:
            return None
        mine = server_networking(whole, node.name, node.group_name, node.part)
        if mine is not None and self._preparer is not None:
            key = action.parent_id or action.id
            prepared = self._prepared.get(key)
            if prepared is None or not prepared.done():  # issue 23: a lookup after the first
                await self._prepare(key, whole)
        return mine

    async def _prepare(self, key: str, whole: ClusterNetworks) -> None:
        """The cluster's networks made (or found) under its lease, once for cluster action
        `key`'s creates here: they all wait for one prepare. If it fails, the creates go on and
        the provider's create prepares by itself, within its retries and time limit (as
        before the lease, serialised in this process only); the next create tries the lease
        again."""
        known = self._prepared.get(key)
        if known is None:
            if len(self._prepared) >= 10_000:
                self._prepared.clear()
            known = asyncio.ensure_future(self._leased_prepare(key, whole))
            self._prepared[key] = known
        with contextlib.suppress(Exception):  # logged once, by `_leased_prepare`
            await asyncio.shield(known)

    async def _leased_prepare(self, key: str, whole: ClusterNetworks) -> None:
        preparer = self._preparer
        assert preparer is not None
        try:
            async with self._lease.held(whole.cluster_id):
                await asyncio.wait_for(preparer.prepare(whole), self.prepare_timeout_s)
        except BaseException as e:  # cancelled too: the next create tries the lease again
            self._prepared.pop(key, None)
            if isinstance(e, Exception):
                log.exception(
                    "making the networks of cluster %s under its lease failed; its creates make "
                    "them themselves",
                    whole.cluster_name,
                )
            raise

    async def _networks(self, action: ActionRecord, inventory: Inventory) -> ClusterNetworks | None:
        """The cluster's networking as its cluster action sees it, None when it has no ports:
        one read per cluster action, shared (issue 23: a 100,000-node create read the
        cluster's row, its whole document, for every node, though the document changes only
        through another cluster action, which is another key here)."""
        key = action.parent_id or action.id
        known = self._networking.get(key)
        if known is None:
            if len(self._networking) >= 10_000:
                self._networking.clear()
            known = asyncio.ensure_future(self._read_networks(action, inventory))
            self._networking[key] = known
        try:
            return await asyncio.shield(known)
        except Exception:
            if self._networking.get(key) is known:
                del self._networking[key]  # the next create of this action reads again
            raise

    async def _read_networks(
        self, action: ActionRecord, inventory: Inventory
    ) -> ClusterNetworks | None:
        cluster_id = action.cluster_id
        assert cluster_id is not None

        def read() -> ClusterRecord | None:
            with self.ctx.db.reading() as conn:
                return cluster_repo.get_cluster(conn, cluster_id)

        cluster = await self.ctx.run_in_thread(read)
        if cluster is None:
            return None
        spec = self._spec(cluster, inventory)
        if spec is None or not spec.networking.ports:
            return None
        return ClusterNetworks(cluster.id, cluster.name, spec.networking, ())

    def _spec(self, cluster: ClusterRecord, inventory: Inventory) -> ClusterSpec | None:
        return self._specs.get(cluster, inventory)
