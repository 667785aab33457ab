"""The sim provider's `NetworkDriver`: logical networking that still assigns addresses.

The simulated cloud has no packets to filter and no traffic to balance, so applying a cluster's
networking only remembers it (per process, like the engine's own sync state). What it does do
is what a document relies on: addresses the document leaves to the cloud (a named port's fixed
IP, a floating IP's address, a balancer's VIP) are assigned, deterministically, from the
document's own ranges (`providers/netassign.py`), so the outputs and deployments that take them
resolve on `sim` as they do on `openstack`. A balancer's members are the pool's servers as the
engine handed them, healthy as their nodes are. What was applied (each balancer's members by
name) is kept in `book`: this process's memory, or the cloud's shared file (`shared.py`), where
it outlives the engine that applied it, as a real cloud's balancers do.
"""

from __future__ import annotations

from shoal.model.outputs import NetAttr, NetworkFact
from shoal.providers import netassign
from shoal.providers.networking import (
    BalancerState,
    ClusterNetworks,
    MemberHealth,
    PoolMemberState,
)
from shoal.providers.sim.shared import MemoryNetworks, NetworkBook
from shoal.providers.sim.stall import Stall


class SimNetworking:
    """`NetworkDriver` and `AddressSource` of the simulated cloud."""

    def __init__(self, book: NetworkBook | None = None, stall: Stall | None = None) -> None:
        self._held: NetworkBook = book or MemoryNetworks()
        self._stall = stall or Stall()
        self._applied: dict[str, ClusterNetworks] = {}
        """What this process last applied per cluster (the book keeps only member names)."""

    async def apply(self, cluster: ClusterNetworks) -> None:
        await self._stall.wait()
        if cluster.spec.empty:
            self._held.pop(cluster.cluster_id)
            self._applied.pop(cluster.cluster_id, None)
            return
        self._applied[cluster.cluster_id] = cluster
        self._held.put(
            cluster.cluster_id,
            {
                lb.name: [
                    s.name
                    for pool in lb.pools
                    for s in cluster.members(pool.members.target, pool.members.part)
                ]
                for lb in cluster.spec.load_balancers
            },
        )

    async def remove(self, cluster_id: str) -> None:
        await self._stall.wait()
        self._held.pop(cluster_id)
        self._applied.pop(cluster_id, None)

    def applied(self, cluster_id: str) -> ClusterNetworks | None:
        """The cluster's networking as this process last applied it (None: none, or removed)."""
        return self._applied.get(cluster_id)

    async def clusters(self) -> set[str]:
        return self._held.clusters()

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        vips = await self.addresses(cluster)
        out: list[BalancerState] = []
        for lb in cluster.spec.load_balancers:
            given = lb.vip_address
            vip = str(given) if given else vips.get(NetworkFact(NetAttr.VIP_ADDRESS, lb.name))
            members = tuple(
                PoolMemberState(
                    s.name,
                    s.address,
                    pool.member_port,
                    MemberHealth.UP if s.healthy else MemberHealth.DOWN,
                )
                for pool in lb.pools
                for s in cluster.members(pool.members.target, pool.members.part)
            )
            out.append(
                BalancerState(lb.name, vip or "", tuple(ln.port for ln in lb.listeners), members)
            )
        return tuple(out)

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        """A named port's address for its first server (by name, as on openstack), a floating
        IP's once its server exists, a VIP at once: each picked from its range by the cluster,
        the resource's name (and the server's, for a port), in the document's order."""
        spec, cid = cluster.spec, cluster.cluster_id
        taken = netassign.reserved(spec)
        out: dict[NetworkFact, str] = {}
        for lb in spec.load_balancers:
            cidr = netassign.network_range(spec, lb.network)
            if lb.vip_address is None and cidr is not None:
                found = netassign.pick(cidr, f"{cid}/lb/{lb.name}", taken)
                if found is not None:
                    out[NetworkFact(NetAttr.VIP_ADDRESS, lb.name)] = found
        for p in spec.ports:
            servers = cluster.members(p.member.target, p.member.part)
            cidr = netassign.network_range(spec, p.network)
            if p.name is None or p.fixed_ip is not None or not servers or cidr is None:
                continue
            found = netassign.pick(cidr, f"{cid}/port/{p.name}/{servers[0].name}", taken)
            if found is not None:
                out[NetworkFact(NetAttr.PORT_ADDRESS, p.name)] = found
        names = {s.name for s in cluster.servers}
        for f in spec.floating_ips:
            if f.address is not None or f.server not in names:
                continue
            cidr = netassign.floating_range(f.external_network)
            found = netassign.pick(cidr, f"{cid}/fip/{f.name}", taken)
            if found is not None:
                out[NetworkFact(NetAttr.FLOATING_IP_ADDRESS, f.name)] = found
        return out
