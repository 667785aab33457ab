"""A cluster's networking as people read it: networks, which rules allow what to whom, ports,
floating IPs, and each load balancer with its members' health (the API and the dashboard).

Rules are given in words and resolved to the servers they concern right now (a rule over
`web` lists web-1, web-2 ...), so "who may talk to the database" is answered without reading
the document. Balancer states come from the provider's `NetworkDriver` (HAProxy's own checks
on `local`); a provider without one shows the declared balancer with members UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shoal.engine.networks import cluster_networks, driver_of, replicas_of, workload_pools
from shoal.model.cluster import ClusterSpec
from shoal.model.networks import GroupSource, MemberSource, SecurityRule
from shoal.providers.base import Provider
from shoal.providers.networking import BalancerState, ClusterNetworks
from shoal.store.records import ClusterRecord, NodeRecord
from shoal.store.workloads import ReplicaRow


def _sources(rule: SecurityRule, c: ClusterNetworks) -> list[str] | None:
    """The servers a rule's source stands for now; None for a CIDR or anywhere."""
    if isinstance(rule.source, MemberSource):
        m = rule.source.member
        return [s.name for s in c.members(m.target, m.part)]
    if isinstance(rule.source, GroupSource):
        group = rule.source.group
        return [s.name for s in c.servers if group in c.spec.groups_of(s.group, s.part)]
    return None


def networking_view(c: ClusterNetworks, balancers: tuple[BalancerState, ...]) -> dict[str, Any]:
    spec = c.spec
    states = {b.name: b for b in balancers}
    groups = []
    for g in spec.security_groups:
        members = [s.name for s in c.servers if g.name in spec.groups_of(s.group, s.part)]
        groups.append(
            {
                "name": g.name,
                "description": g.description,
                "servers": members,
                "rules": [
                    {
                        "allows": r.describe(),
                        "direction": str(r.direction),
                        "protocol": str(r.protocol),
                        "port_min": r.port_min,
                        "port_max": r.port_max,
                        "from_servers": _sources(r, c),
                    }
                    for r in g.rules
                ],
            }
        )
    lbs = []
    for lb in spec.load_balancers:
        state = states.get(lb.name)
        health = {(m.server, m.port): m.health for m in state.members} if state else {}
        pools = []
        for p in lb.pools:
            servers = c.members(p.members.target, p.members.part)
            pools.append(
                {
                    "name": p.name,
                    "members_of": str(p.members),
                    "protocol": str(p.protocol),
                    "algorithm": str(p.algorithm),
                    "port": p.member_port,
                    "monitor": None if p.monitor is None else str(p.monitor.type),
                    "members": [
                        {
                            "server": s.name,
                            "address": s.address,
                            "health": str(health.get((s.name, p.member_port), "UNKNOWN")),
                        }
                        for s in servers
                    ],
                }
            )
        lbs.append(
            {
                "name": lb.name,
                "network": lb.network,
                "vip_address": None if lb.vip_address is None else str(lb.vip_address),
                "serving_at": state.address if state else None,
                "listeners": [
                    {"name": x.name, "port": x.port, "protocol": str(x.protocol), "pool": x.pool}
                    for x in lb.listeners
                ],
                "pools": pools,
            }
        )
    return {
        "networks": [
            {
                "name": n.name,
                "subnets": [
                    {"name": s.name, "cidr": str(s.cidr), "dns": [str(d) for d in s.dns]}
                    for s in n.subnets
                ],
                "router": None
                if n.router is None
                else {"name": n.router.name, "external_network": n.router.external_network},
            }
            for n in spec.networks
        ],
        "security_groups": groups,
        "ports": [
            {
                "server": str(p.member),
                "network": p.network,
                "fixed_ip": None if p.fixed_ip is None else str(p.fixed_ip),
                "security_groups": list(p.security_groups),
            }
            for p in spec.ports
        ],
        "floating_ips": [
            {"name": f.name, "server": f.server, "external_network": f.external_network}
            for f in spec.floating_ips
        ],
        "load_balancers": lbs,
    }


__all__ = ["cluster_networking", "networking_view", "workload_pools"]


async def cluster_networking(
    provider: Provider,
    cluster: ClusterRecord,
    spec: ClusterSpec,
    nodes: list[NodeRecord],
    replicas: Sequence[ReplicaRow] = (),
) -> dict[str, Any]:
    """`replicas`: the cluster's replica rows, whose ready ones serve the pools over workloads."""
    c = cluster_networks(cluster, spec, nodes, replicas_of(spec, nodes, replicas))
    driver = driver_of(provider)
    balancers: tuple[BalancerState, ...] = ()
    if driver is not None and spec.networking.load_balancers:
        balancers = await driver.balancers(c)
    return networking_view(c, balancers)
