"""Keeping a cluster's networking in step with its servers (level-triggered, from the manager).

Each tick the manager hands over every settled cluster with its nodes; when the cluster's
networking or the set of its servers (names, addresses, health) changed since the last call,
or every `full_s` anyway (a table or a balancer removed behind Shoal's back comes back), the
provider's `NetworkDriver` is asked to make it so. Pools and rules name node groups, so a
scale-out, a scale-in, a replaced server or a failed host changes the members here, not in the
document. Clusters no longer in the store have their networking removed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import NodeKind, NodeStatus
from shoal.providers.base import Provider
from shoal.providers.networking import (
    BalancerState,
    ClusterNetworks,
    NetworkDriver,
    NetworkToolsMissingError,
    ServerAddress,
)
from shoal.store.records import ClusterRecord, NodeRecord

log = logging.getLogger("shoal.engine.networks")

_SERVING = (NodeStatus.ACTIVE, NodeStatus.WARNING, NodeStatus.UPDATING)
"""Nodes whose servers take traffic; health checks of the balancer decide the rest."""


def driver_of(provider: Provider) -> NetworkDriver | None:
    found = getattr(provider, "networking", None)
    return found if isinstance(found, NetworkDriver) else None


def servers_of(nodes: list[NodeRecord]) -> tuple[ServerAddress, ...]:
    out: list[ServerAddress] = []
    for n in nodes:
        if n.kind is not NodeKind.SERVER or not n.address or n.status not in _SERVING:
            continue
        host = n.address.rsplit(":", 1)[0] if n.address.count(":") == 1 else n.address
        out.append(ServerAddress(n.name, n.group_name, n.part, host))
    return tuple(sorted(out, key=lambda s: s.name))


def cluster_networks(
    cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord]
) -> ClusterNetworks:
    return ClusterNetworks(cluster.id, cluster.name, spec.networking, servers_of(nodes))


class NetworkSync:
    """What was last applied per cluster, so an unchanged cluster costs nothing."""

    def __init__(self, provider: Provider, full_s: float = 30.0) -> None:
        self.driver = driver_of(provider)
        self.full_s = full_s
        self._applied: dict[str, tuple[ClusterNetworks, float]] = {}
        self._reported: dict[str, str] = {}
        self._listed_at = -1e18

    async def sync(
        self, cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord], now: float
    ) -> str | None:
        """Apply when needed; the reason it could not (once per new reason), else None."""
        if self.driver is None:
            return None
        wanted = cluster_networks(cluster, spec, nodes)
        last = self._applied.get(cluster.id)
        if wanted.spec.empty and last is None:
            return None
        if last is not None and last[0] == wanted and now - last[1] < self.full_s:
            return None
        try:
            await self.driver.apply(wanted)
        except NetworkToolsMissingError as missing:
            return self._once(cluster.id, str(missing))
        except Exception as e:  # a failed nft or haproxy: reported, tried again next tick
            log.exception("networking of cluster %s failed", cluster.name)
            return self._once(cluster.id, f"networking failed: {e}")
        self._reported.pop(cluster.id, None)
        self._applied[cluster.id] = (wanted, now)
        return None

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
        for cid in [c for c in self._applied if c not in stored]:
            del self._applied[cid]
        if now - self._listed_at < self.full_s:
            return
        self._listed_at = now
        try:
            held = await self.driver.clusters()
        except Exception:
            log.exception("listing the clusters' networking failed")
            return
        for cid in held - stored:
            if not mine(cid):
                continue
            try:
                await self.driver.remove(cid)
            except Exception:
                log.exception("removing the networking of cluster %s failed", cid)

    async def balancers(
        self, cluster: ClusterRecord, spec: ClusterSpec, nodes: list[NodeRecord]
    ) -> tuple[BalancerState, ...]:
        if self.driver is None or not spec.networking.load_balancers:
            return ()
        return await self.driver.balancers(cluster_networks(cluster, spec, nodes))
