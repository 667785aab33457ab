"""Reading `load_balancers`: a VIP on a cluster network, listeners, pools over node groups.

A pool names its members as a node group or instance (`members: web`), never as addresses:
the provider keeps the pool in step with the group. A pool may name a workload instead: its
ready replicas serve, on the workload's named (else first) port unless the pool gives one of
its ports. Network names are checked by the caller
(`documents/networks.py`), which knows them all.
"""

from __future__ import annotations

from collections.abc import Callable

from shoal.documents.collect import ProblemList
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import suggest
from shoal.documents.net_common import Servers, address, bounded
from shoal.documents.tree import is_mapping, pairs_of
from shoal.model.members import MemberRef
from shoal.model.networks import (
    LIMITS,
    HealthMonitor,
    IpAddress,
    LbAlgorithm,
    LbProtocol,
    Listener,
    LoadBalancer,
    MonitorType,
    Pool,
)

NetworkCheck = Callable[[str, str], bool]
"""Whether a network name (at a pointer) is one of the cluster's; reports when not."""
VipCheck = Callable[[str, IpAddress, str], None]
"""Reports a VIP outside its network's subnets."""


def read_load_balancers(
    f: Fields, servers: Servers, network_ok: NetworkCheck, vip_ok: VipCheck
) -> tuple[LoadBalancer, ...]:
    result: list[LoadBalancer] = []
    for value, path in bounded(f, "load_balancers", "load balancers", LIMITS.load_balancers):
        lb = _balancer(value, path, f.out, servers, network_ok, vip_ok)
        if lb is not None:
            result.append(lb)
    return tuple(result)


def _balancer(
    value: object,
    path: str,
    out: ProblemList,
    servers: Servers,
    network_ok: NetworkCheck,
    vip_ok: VipCheck,
) -> LoadBalancer | None:
    b = mapping(value, path, out, "a load balancer")
    if b is None:
        return None
    before = len(out)
    name = b.name("name", required="name the load balancer")
    network = b.name("network", required="name the cluster network the VIP is on")
    if network is not None and not network_ok(network, b.at("network")):
        network = None
    vip = None
    if b.has("vip"):
        vip = address(b.raw("vip"), b.at("vip"), out)
        if vip is not None and network is not None:
            vip_ok(network, vip, b.at("vip"))
    pools: list[Pool] = []
    pool_names: dict[str, str] = {}
    for pv, ppath in bounded(b, "pools", "pools", LIMITS.pools_per_lb):
        given = _given_name(pv)
        if given is not None:
            if given in pool_names:
                out.add(ppath + "/name", f"pool {given} is already declared at {pool_names[given]}")
            pool_names[given] = ppath
        pool = _pool(pv, ppath, out, servers, network_ok)
        if pool is not None:
            pools.append(pool)
    listeners: list[Listener] = []
    ports: dict[int, str] = {}
    raw_listeners = bounded(b, "listeners", "listeners", LIMITS.listeners_per_lb)
    if not raw_listeners and b.raw("listeners") is None:
        b.problem("listeners", "'listeners' is missing: give at least one (port, protocol, pool)")
    for lv, lpath in raw_listeners:
        listener = _listener(lv, lpath, out, pool_names, ports)
        if listener is not None:
            listeners.append(listener)
    b.finish()
    if len(out) != before or name is None or network is None:
        return None
    return LoadBalancer(name, network, tuple(listeners), tuple(pools), vip)


def _given_name(value: object) -> str | None:
    """The name an element gives itself, read even when the rest of it is broken, so a
    reference to it is not reported a second time."""
    if is_mapping(value):
        for key, v in pairs_of(value):
            if key == "name" and isinstance(v, str):
                return v
    return None


def _listener(
    value: object, path: str, out: ProblemList, pools: dict[str, str], ports: dict[int, str]
) -> Listener | None:
    lf = mapping(value, path, out, "a listener")
    if lf is None:
        return None
    before = len(out)
    port = lf.integer("port", minimum=1, maximum=65535, required="give the port it listens on")
    if port is not None:
        if port in ports:
            lf.problem("port", f"port {port} is already taken by the listener at {ports[port]}")
        ports[port] = path
    protocol = lf.choice("protocol", LbProtocol, default=LbProtocol.TCP)
    pool = lf.name("pool", required="name the pool it sends to")
    if pool is not None and pool not in pools:
        lf.problem("pool", f"no pool '{pool}' in this load balancer{suggest(pool, list(pools))}")
    name = lf.name("name")
    lf.finish()
    if len(out) != before or port is None or protocol is None or pool is None:
        return None
    return Listener(name or f"{str(protocol).lower()}-{port}", port, pool, protocol)


def _pool(
    value: object, path: str, out: ProblemList, servers: Servers, network_ok: NetworkCheck
) -> Pool | None:
    pf = mapping(value, path, out, "a pool")
    if pf is None:
        return None
    before = len(out)
    name = pf.name("name", required="name the pool")
    text = pf.text(
        "members", required="name the node group, instance or workload whose servers serve"
    )
    workload = None
    if text and text not in servers.groups and text not in servers.instances:
        workload = servers.workloads.get(text)
    if workload is not None:
        # A workload's ready replicas serve, each on its server's address and the workload's
        # port (engine/networks.py feeds them to the driver as they come and go).
        members: MemberRef | None = MemberRef(text or "")
        port = pf.integer("port", minimum=1, maximum=65535, default=workload.member_port)
        if port is None and pf.raw("port") is None:
            pf.problem("port", f"workload {text} binds no port: give the members' port")
        elif port is not None and pf.raw("port") is not None and port not in workload.ports:
            bound = ", ".join(str(p) for p in sorted(workload.ports)) or "none"
            pf.problem("port", f"workload {text} binds no port {port} (its ports: {bound})")
    else:
        members = servers.member(text, pf.at("members"), out, "the pool") if text else None
        port = pf.integer("port", minimum=1, maximum=65535, required="give the members' port")
    protocol = pf.choice("protocol", LbProtocol, default=LbProtocol.TCP)
    algorithm = pf.choice("algorithm", LbAlgorithm, default=LbAlgorithm.ROUND_ROBIN)
    network = pf.name("network")
    if network is not None and not network_ok(network, pf.at("network")):
        network = None
    monitor = _monitor(pf) if pf.has("health") else None
    pf.finish()
    if len(out) != before or None in (name, members, port, protocol, algorithm):
        return None
    assert name is not None and members is not None and port is not None
    assert protocol is not None and algorithm is not None
    return Pool(name, members, port, protocol, algorithm, monitor, network)


def _monitor(pf: Fields) -> HealthMonitor | None:
    m = mapping(pf.raw("health"), pf.at("health"), pf.out, "a health monitor")
    if m is None:
        return None
    d = HealthMonitor()
    before = len(pf.out)
    kind = m.choice("type", MonitorType, default=d.type)
    delay = m.integer("delay", minimum=1, maximum=3600, default=d.delay_s)
    timeout = m.integer("timeout", minimum=1, maximum=3600, default=d.timeout_s)
    retries = m.integer("max_retries", minimum=1, maximum=10, default=d.max_retries)
    url = m.text("url_path") or d.url_path
    if not url.startswith("/") or len(url) > 1024:
        m.problem("url_path", "a path starting with '/', at most 1024 characters")
    codes = m.text("expected_codes") or d.expected_codes
    m.finish()
    if delay is not None and timeout is not None and timeout > delay:
        m.problem("timeout", f"the timeout ({timeout}s) must not exceed the delay ({delay}s)")
    if len(pf.out) != before or None in (kind, delay, timeout, retries):
        return None
    assert kind is not None and delay is not None and timeout is not None and retries is not None
    return HealthMonitor(kind, delay, timeout, retries, url, codes)
