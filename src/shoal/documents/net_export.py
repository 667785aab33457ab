"""A cluster's networking back to the native document's sections (`documents/export.py` calls it).

Shoal keeps every cluster as one native document, so what `documents/networks.py` reads must come
back out the same: loading the output again gives an equal `NetworkSpec`. Defaults are left out.
"""

from __future__ import annotations

from typing import Any

from shoal.model.networks import (
    CidrSource,
    Direction,
    GroupSource,
    HealthMonitor,
    LbAlgorithm,
    LbProtocol,
    LoadBalancer,
    Network,
    NetworkSpec,
    Pool,
    Protocol,
    SecurityRule,
)


def networking_document(spec: NetworkSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.networks:
        out["networks"] = [_network(n) for n in spec.networks]
    if spec.security_groups:
        out["security_groups"] = [
            {
                "name": g.name,
                **({"description": g.description} if g.description else {}),
                "rules": [_rule(r) for r in g.rules],
            }
            for g in spec.security_groups
        ]
    if spec.ports:
        out["ports"] = [
            {
                "server": str(p.member),
                "network": p.network,
                **({"fixed_ip": str(p.fixed_ip)} if p.fixed_ip is not None else {}),
                **({"security_groups": list(p.security_groups)} if p.security_groups else {}),
                **({"name": p.name} if p.name else {}),
            }
            for p in spec.ports
        ]
    if spec.floating_ips:
        out["floating_ips"] = [
            {
                "name": x.name,
                "server": x.server,
                "external": x.external_network,
                **({"network": x.network} if x.network else {}),
                **({"address": str(x.address)} if x.address is not None else {}),
            }
            for x in spec.floating_ips
        ]
    if spec.load_balancers:
        out["load_balancers"] = [_balancer(b) for b in spec.load_balancers]
    return out


def _network(n: Network) -> dict[str, Any]:
    out: dict[str, Any] = {"name": n.name}
    subnets = []
    for s in n.subnets:
        d: dict[str, Any] = {"cidr": str(s.cidr)}
        if s.dns:
            d["dns"] = [str(a) for a in s.dns]
        if s.gateway is not None:
            d["gateway"] = str(s.gateway)
        if not s.dhcp:
            d["dhcp"] = False
        if len(n.subnets) > 1 or s.name != n.name:
            d = {"name": s.name, **d}
        subnets.append(d)
    if len(n.subnets) == 1 and n.subnets[0].name == n.name:
        out.update(subnets[0])
    else:
        out["subnets"] = subnets
    if n.router is not None:
        if n.router.name == f"{n.name}-router":
            out["router"] = n.router.external_network
        else:
            out["router"] = {"name": n.router.name, "external": n.router.external_network}
    return out


def _rule(r: SecurityRule) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if r.direction is not Direction.INGRESS:
        out["direction"] = str(r.direction)
    if r.protocol is not Protocol.TCP:
        out["protocol"] = str(r.protocol)
    if r.port_min is not None and r.port_max is not None:
        out["ports"] = r.port_min if r.port_min == r.port_max else f"{r.port_min}-{r.port_max}"
    if isinstance(r.source, CidrSource):
        out["from"] = str(r.source.cidr)
    elif isinstance(r.source, GroupSource):
        out["from"] = {"group": r.source.group}
    elif r.source is not None:
        out["from"] = {"member": str(r.source.member)}
    return out


def _balancer(b: LoadBalancer) -> dict[str, Any]:
    out: dict[str, Any] = {"name": b.name, "network": b.network}
    if b.vip_address is not None:
        out["vip"] = str(b.vip_address)
    out["listeners"] = [
        {
            "name": x.name,
            "port": x.port,
            **({"protocol": str(x.protocol)} if x.protocol is not LbProtocol.TCP else {}),
            "pool": x.pool,
        }
        for x in b.listeners
    ]
    out["pools"] = [_pool(p) for p in b.pools]
    return out


def _pool(p: Pool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": p.name, "members": str(p.members), "port": p.member_port}
    if p.protocol is not LbProtocol.TCP:
        out["protocol"] = str(p.protocol)
    if p.algorithm is not LbAlgorithm.ROUND_ROBIN:
        out["algorithm"] = str(p.algorithm)
    if p.network is not None:
        out["network"] = p.network
    if p.monitor is not None:
        out["health"] = _monitor(p.monitor)
    return out


def _monitor(m: HealthMonitor) -> dict[str, Any]:
    d = HealthMonitor()
    out: dict[str, Any] = {}
    if m.type is not d.type:
        out["type"] = str(m.type)
    if m.delay_s != d.delay_s:
        out["delay"] = m.delay_s
    if m.timeout_s != d.timeout_s:
        out["timeout"] = m.timeout_s
    if m.max_retries != d.max_retries:
        out["max_retries"] = m.max_retries
    if m.url_path != d.url_path:
        out["url_path"] = m.url_path
    if m.expected_codes != d.expected_codes:
        out["expected_codes"] = m.expected_codes
    return out
