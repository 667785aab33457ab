"""The openstack provider's `NetworkDriver`: a cluster's networking made in Neutron and Octavia.

The engine (engine/networks.py) calls `apply` with the cluster's `NetworkSpec` and the servers
it has now, again whenever either changes; this module turns that into the provider-level
requests of `netspec.py`: each network (every subnet, its router to the named external network
with an interface on each), each security group with its ingress and egress rules, each load
balancer with its listeners and pools, and the members of each pool, which are the servers of
the pool's node group or instance as they are now, so a scale-out, a scale-in, a replacement or
a host failure changes the pool on the next call. A rule whose source is a node group becomes
one rule per current member address (/32), re-rendered the same way. Balancers no longer
declared are deleted, and one whose pools changed is made again.

`prepare` is the part a server's boot needs first (provider.py, before it makes the server's
ports): the networks and the groups, with the rules that do not name servers. Its lock is this
process's only; the engine calls it first under a lease in the database (`NetworkPreparer`,
engine/netlease.py), so engines sharing the database make a cluster's networks once.

`remove` deletes everything of the cluster (balancers first, then Neutron's resources in
dependency order), and `clusters` lists which clusters hold anything, so the engine removes
what a cluster deleted mid-way (a `kill -9` during its delete) left behind.
"""

from __future__ import annotations

import asyncio

from shoal.model.networks import (
    CidrSource,
    Direction,
    GroupSource,
    MemberSource,
    Protocol,
    SecurityRule,
)
from shoal.model.networks import LoadBalancer as LbSpec
from shoal.model.networks import NetworkSpec as ModelNetworks
from shoal.model.networks import Pool as ModelPool
from shoal.model.outputs import NetAttr, NetworkFact
from shoal.providers.networking import (
    BalancerState,
    ClusterNetworks,
    MemberHealth,
    PoolMemberState,
)
from shoal.providers.openstack.netspec import (
    HealthMonitorSpec,
    LbProtocol,
    ListenerSpec,
    LoadBalancerRequest,
    Member,
    NetKind,
    NetworkSpec,
    NetworksRequest,
    PoolSpec,
    RuleDirection,
    RuleProtocol,
    RuleSpec,
    SecurityGroupSpec,
    SubnetSpec,
)
from shoal.providers.openstack.neutron import Neutron
from shoal.providers.openstack.octavia import Octavia

_HEALTH = {
    "ONLINE": MemberHealth.UP,
    "ERROR": MemberHealth.DOWN,
    "OFFLINE": MemberHealth.DOWN,
}
"""Octavia's member operating status; NO_MONITOR and the rest read UNKNOWN."""


def lb_key(name: str) -> str:
    return f"lb:{name}"


def port_name(node: str, label: str) -> str:
    """A server's port in Neutron: `<node>-<port name or network>` (`web-2-app`), unique in
    its cluster, so the cloud-assigned address of a named port is found again by name."""
    return f"{node}-{label}"


def _rules(rule: SecurityRule, cluster: ClusterNetworks) -> list[RuleSpec]:
    protocol = RuleProtocol(rule.protocol.value)
    ports = (rule.port_min, rule.port_max) if rule.protocol is not Protocol.ICMP else (None, None)
    way = RuleDirection.INGRESS if rule.direction is Direction.INGRESS else RuleDirection.EGRESS
    source = rule.source
    if source is None:
        return [RuleSpec(protocol, *ports, remote_cidr="0.0.0.0/0", direction=way)]
    if isinstance(source, CidrSource):
        return [RuleSpec(protocol, *ports, remote_cidr=str(source.cidr), direction=way)]
    if isinstance(source, GroupSource):
        return [RuleSpec(protocol, *ports, remote_group=source.group, direction=way)]
    assert isinstance(source, MemberSource)
    members = cluster.members(source.member.target, source.member.part)
    return [
        RuleSpec(protocol, *ports, remote_cidr=f"{m.address}/32", direction=way) for m in members
    ]


def networks_request(cluster: ClusterNetworks) -> NetworksRequest:
    spec = cluster.spec
    nets = tuple(
        NetworkSpec(
            n.name,
            tuple(
                SubnetSpec(
                    s.name,
                    str(s.cidr),
                    tuple(str(d) for d in s.dns),
                    str(s.gateway) if s.gateway is not None else None,
                    s.dhcp,
                )
                for s in n.subnets
            ),
            n.router.external_network if n.router is not None else None,
        )
        for n in spec.networks
        if n.subnets
    )
    groups = tuple(
        SecurityGroupSpec(g.name, tuple(r for rule in g.rules for r in _rules(rule, cluster)))
        for g in spec.security_groups
    )
    return NetworksRequest(cluster.cluster_id, nets, groups)


def _monitor(pool: ModelPool) -> HealthMonitorSpec | None:
    m = pool.monitor
    if m is None:
        return None
    return HealthMonitorSpec(
        m.type.value,
        m.delay_s,
        m.timeout_s,
        m.max_retries,
        m.url_path if m.type.value.startswith("HTTP") else None,
    )


def lb_request(cluster: ClusterNetworks, lb: LbSpec) -> LoadBalancerRequest:
    return LoadBalancerRequest(
        key=lb_key(lb.name),
        cluster=cluster.cluster_id,
        name=lb.name,
        network=lb.network,
        listeners=tuple(
            ListenerSpec(LbProtocol(ln.protocol.value), ln.port, ln.pool) for ln in lb.listeners
        ),
        pools=tuple(
            PoolSpec(
                p.member_port,
                p.name,
                LbProtocol(p.protocol.value),
                p.algorithm.value,
                _monitor(p),
            )
            for p in lb.pools
        ),
        vip_address=str(lb.vip_address) if lb.vip_address is not None else None,
    )


def members_of(cluster: ClusterNetworks, pool: ModelPool) -> list[Member]:
    servers = cluster.members(pool.members.target, pool.members.part)
    return [Member(s.name, s.address, pool.member_port) for s in servers]


class OpenStackNetworks:
    """`NetworkDriver` over one provider's Neutron and Octavia clients."""

    def __init__(self, neutron: Neutron, octavia: Octavia | None) -> None:
        self.neutron = neutron
        self.octavia = octavia
        self._prepared: dict[str, ModelNetworks] = {}
        """Per cluster, the networking `prepare` last made (so a create of 100 servers makes
        sure of the networks once, not 100 times)."""
        self._locks: dict[str, asyncio.Lock] = {}
        """Per cluster: one make of its networks at a time. A cluster's servers boot
        concurrently, and each create that found no network would make one of its own (seen
        with a real Nova: three servers, three of every network, subnet, router and group)."""

    def _lock(self, cluster_id: str) -> asyncio.Lock:
        return self._locks.setdefault(cluster_id, asyncio.Lock())

    async def prepare(self, cluster: ClusterNetworks) -> None:
        """The networks and security groups a server's ports need, made if missing. Rules are
        added, never removed here: those naming servers are `apply`'s to keep."""
        if self._prepared.get(cluster.cluster_id) == cluster.spec:
            return
        async with self._lock(cluster.cluster_id):
            if self._prepared.get(cluster.cluster_id) == cluster.spec:
                return  # made by the create this one waited for
            await self.neutron.ensure_networks(networks_request(cluster), prune_rules=False)
            self._prepared[cluster.cluster_id] = cluster.spec

    async def apply(self, cluster: ClusterNetworks) -> None:
        spec = cluster.spec
        if spec.empty:
            await self.remove(cluster.cluster_id)
            return
        async with self._lock(cluster.cluster_id):
            await self.neutron.ensure_networks(networks_request(cluster))
        wanted = {lb_key(lb.name) for lb in spec.load_balancers}
        if self.octavia is None:
            return
        for held in await self.octavia.list_resources(cluster.cluster_id):
            if held.key not in wanted:
                await self.octavia.delete(held.id, f"load balancer {held.name}")
        for lb in spec.load_balancers:
            request = lb_request(cluster, lb)
            pools = await self.octavia.pool_names(cluster.cluster_id, request.key)
            if pools is not None and pools != {p.name for p in request.pools}:
                # Pools are made with the balancer (one create, crash-safe): a changed set is a
                # new balancer.
                for held in await self.octavia.list_resources(cluster.cluster_id):
                    if held.key == request.key:
                        await self.octavia.delete(held.id, f"load balancer {lb.name}")
            subnet = await self.neutron.subnet_of(cluster.cluster_id, lb.network)
            await self.octavia.ensure(request, subnet)
            for pool in lb.pools:
                await self.octavia.set_members(
                    cluster.cluster_id, request.key, members_of(cluster, pool), pool.name
                )

    async def remove(self, cluster_id: str) -> None:
        async with self._lock(cluster_id):
            self._prepared.pop(cluster_id, None)
            if self.octavia is not None:
                await self.octavia.delete_all(cluster_id)
            await self.neutron.delete_all(cluster_id)

    async def clusters(self) -> set[str]:
        found = await self.neutron.list_resources(None)
        if self.octavia is not None:
            found.extend(await self.octavia.list_resources(None))
        return {r.cluster for r in found if r.cluster}

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        if self.octavia is None:
            return ()
        out: list[BalancerState] = []
        for lb in cluster.spec.load_balancers:
            state = await self.octavia.state(cluster.cluster_id, lb_key(lb.name))
            if state is None:
                continue
            out.append(
                BalancerState(
                    name=lb.name,
                    address=state.vip_address or "",
                    listeners=tuple(ln.port for ln in lb.listeners),
                    members=tuple(
                        PoolMemberState(
                            m.key, m.address, m.port, _HEALTH.get(m.health, MemberHealth.UNKNOWN)
                        )
                        for m in state.members
                    ),
                )
            )
        return tuple(out)

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        spec = cluster.spec
        out: dict[NetworkFact, str] = {}
        named = [p for p in spec.ports if p.name and p.fixed_ip is None]
        fips = [f for f in spec.floating_ips if f.address is None]
        if named or fips:
            cid = cluster.cluster_id
            ports = {str(p.get("name")): p for p in await self.neutron.owned(NetKind.PORT, cid)}
            for p in named:
                assert p.name is not None
                for s in cluster.members(p.member.target, p.member.part):
                    ips = (ports.get(port_name(s.name, p.name)) or {}).get("fixed_ips") or []
                    if ips:
                        out[NetworkFact(NetAttr.PORT_ADDRESS, p.name)] = str(ips[0]["ip_address"])
                        break
            if fips:
                held = await self.neutron.owned(NetKind.FLOATING_IP, cid)
                by_port = {str(f.get("port_id")): str(f["floating_ip_address"]) for f in held}
                servers = {s.name: s for s in cluster.servers}
                for f in fips:
                    server = servers.get(f.server)
                    if server is None:
                        continue
                    on = [
                        p
                        for p in spec.ports
                        if p.member.target == server.group
                        and p.member.part in (None, server.part)
                        and f.network in (None, p.network)
                    ]
                    if not on:
                        continue
                    port = ports.get(port_name(server.name, on[0].name or on[0].network))
                    if port is not None and str(port["id"]) in by_port:
                        out[NetworkFact(NetAttr.FLOATING_IP_ADDRESS, f.name)] = by_port[
                            str(port["id"])
                        ]
        if self.octavia is not None:
            for lb in spec.load_balancers:
                if lb.vip_address is not None:
                    continue
                state = await self.octavia.state(cluster.cluster_id, lb_key(lb.name))
                if state is not None and state.vip_address:
                    out[NetworkFact(NetAttr.VIP_ADDRESS, lb.name)] = state.vip_address
        return out
