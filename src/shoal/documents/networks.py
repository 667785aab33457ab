"""Reading a native document's networking (docs/networks.md) into `NetworkSpec`.

The sections `networks`, `security_groups`, `ports`, `floating_ips` and `load_balancers` sit at
the top of the document, beside `node_groups`. They are read after the node groups and
instances, because every rule, port and pool names members of the same cluster; each problem
is reported with its JSON pointer, all of them at once (overlapping ranges, unknown groups, a
pool over a missing node group). Lists are counted against `NetworkLimits` before their
elements are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

from shoal.documents.collect import ProblemList, child
from shoal.documents.drafts import ClusterDraft
from shoal.documents.fields import Fields, mapping
from shoal.documents.names import suggest
from shoal.documents.net_balancers import read_load_balancers
from shoal.documents.net_common import Servers, WorkloadPorts, address, bounded, cidr, text_list
from shoal.documents.net_security import read_security_groups
from shoal.documents.tree import describe, is_mapping
from shoal.model.networks import (
    LIMITS,
    FloatingIp,
    IpAddress,
    IpNetwork,
    Network,
    NetworkSpec,
    PortSpec,
    Router,
    Subnet,
)

NETWORK_KEYS = ("networks", "security_groups", "ports", "floating_ips", "load_balancers")
"""The document's top-level fields read here (the native reader leaves them alone)."""


class _Known:
    """The cluster's networks as read so far, for the checks of names and addresses."""

    def __init__(self, networks: list[Network], broken: set[str], out: ProblemList) -> None:
        self.by_name = {n.name: n for n in networks}
        self.broken = broken
        self.out = out

    def network_ok(self, name: str, path: str) -> bool:
        if name in self.by_name:
            return True
        if name not in self.broken:
            self.out.add(
                path,
                f"no network '{name}' in this cluster's 'networks'"
                f"{suggest(name, list(self.by_name))}; an existing network is attached "
                "through a profile's 'networks' instead",
            )
        return False

    def inside(self, network: str, ip: IpAddress, path: str, what: str) -> None:
        net = self.by_name.get(network)
        if net is None:
            return
        subnet = net.subnet_for(ip)
        if subnet is None:
            ranges = ", ".join(str(s.cidr) for s in net.subnets)
            self.out.add(path, f"{what} {ip} is outside network {network} ({ranges})")
            return
        if ip in (subnet.cidr.network_address, subnet.cidr.broadcast_address):
            self.out.add(path, f"{what} {ip} is the range's own network or broadcast address")
        elif ip == gateway_of(subnet):
            self.out.add(path, f"{what} {ip} is the gateway of subnet {subnet.name}")


def gateway_of(subnet: Subnet) -> IpAddress:
    """The subnet's gateway: given, or the first host address (Neutron's default)."""
    if subnet.gateway is not None:
        return subnet.gateway
    return subnet.cidr.network_address + 1


def read_networking(
    data: object,
    draft: ClusterDraft | None,
    out: ProblemList,
    workloads: Mapping[str, WorkloadPorts] | None = None,
) -> NetworkSpec:
    """The networking of a (native) document; problems go to `out`. `workloads` are those a
    load balancer's pool may name (its ready replicas serve)."""
    if not is_mapping(data):
        return NetworkSpec()
    f = Fields(data, "", ProblemList())  # the native reader reported the top level's keys
    f.out = out
    servers = Servers.of(draft)
    servers.workloads = dict(workloads or {})
    networks, broken = _networks(f)
    known = _Known(networks, broken, out)
    groups, check_groups = read_security_groups(f, servers)
    check_groups({g.name for g in groups} | _broken_names(f, "security_groups"))
    _unique(f, "security_groups", [g.name for g in groups], "security group")
    ports = _ports(
        f, servers, known, {g.name for g in groups} | _broken_names(f, "security_groups")
    )
    fips = _floating_ips(f, servers, known, ports)
    lbs = read_load_balancers(
        f,
        servers,
        known.network_ok,
        lambda net, ip, where: known.inside(net, ip, where, "the VIP"),
    )
    _unique(f, "load_balancers", [b.name for b in lbs], "load balancer")
    return NetworkSpec(tuple(networks), groups, ports, fips, lbs)


def _broken_names(f: Fields, key: str) -> set[str]:
    """Names given to elements that did not read cleanly: references to them are not
    reported a second time."""
    raw = f.values.get(key)
    names: set[str] = set()
    if isinstance(raw, list):
        for item in raw:
            if is_mapping(item):
                for k, v in Fields(item, "", ProblemList()).values.items():
                    if k == "name" and isinstance(v, str):
                        names.add(v)
    return names


def _unique(f: Fields, key: str, names: list[str], what: str) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            f.out.add(child(f.at(key), i, "name"), f"{what} '{name}' is declared twice")
        seen.add(name)


def _networks(f: Fields) -> tuple[list[Network], set[str]]:
    networks: list[Network] = []
    broken: set[str] = set()
    ranges: list[tuple[IpNetwork, str]] = []
    names: dict[str, str] = {}
    routers: dict[str, str] = {}
    for value, path in bounded(f, "networks", "networks", LIMITS.networks):
        n = mapping(value, path, f.out, "a network")
        if n is None:
            continue
        before = len(f.out)
        name = n.name("name", required="name the network")
        if name is not None:
            if name in names:
                n.problem("name", f"network '{name}' is already declared at {names[name]}")
            names[name] = path
        subnets = _subnets(n, name, ranges)
        router = _router(n, name, routers)
        n.finish()
        if len(f.out) == before and name is not None and subnets:
            networks.append(Network(name, tuple(subnets), router))
        elif name is not None:
            broken.add(name)
    if len(routers) > LIMITS.routers:
        f.problem("networks", f"at most {LIMITS.routers} routers per cluster, found {len(routers)}")
    for (a, pa), (b, pb) in combinations(ranges, 2):
        if a.version == b.version and a.overlaps(b):
            f.out.add(pb, f"{b} overlaps {a} (at {pa}); the ranges of a cluster must not overlap")
    return networks, broken


def _subnets(n: Fields, network: str | None, ranges: list[tuple[IpNetwork, str]]) -> list[Subnet]:
    if n.has("cidr") and n.has("subnets"):
        n.out.add(n.path, "give either 'cidr' (one subnet) or 'subnets', not both")
        return []
    if n.has("cidr"):
        s = _subnet(n, network or "net", n.path, "cidr", ranges)
        return [s] if s is not None else []
    items = bounded(n, "subnets", "subnets", LIMITS.subnets_per_network)
    if not items:
        if n.raw("subnets") is None:
            n.problem(
                "cidr", "'cidr' is missing: give the network's address range, e.g. 10.0.0.0/24"
            )
        return []
    result: list[Subnet] = []
    for i, (value, path) in enumerate(items):
        sf = mapping(value, path, n.out, "a subnet")
        if sf is None:
            continue
        sub = _subnet(sf, f"{network or 'net'}-{i + 1}", path, "cidr", ranges, own=True)
        if sub is not None:
            result.append(sub)
    return result if len(result) == len(items) else []


def _subnet(
    s: Fields,
    default_name: str,
    path: str,
    key: str,
    ranges: list[tuple[IpNetwork, str]],
    own: bool = False,
) -> Subnet | None:
    before = len(s.out)
    name = (s.name("name") if own else None) or default_name
    net = cidr(s.raw(key, required="give the address range, e.g. 10.0.0.0/24"), s.at(key), s.out)
    if net is not None:
        low, high = (
            (LIMITS.min_prefix_v4, LIMITS.max_prefix_v4)
            if net.version == 4
            else (LIMITS.min_prefix_v6, LIMITS.max_prefix_v6)
        )
        if not low <= net.prefixlen <= high:
            s.problem(key, f"a subnet's prefix is /{low} to /{high}, found /{net.prefixlen}")
            net = None
        else:
            ranges.append((net, s.at(key)))
    dns: list[IpAddress] = []
    for text, where in text_list(s, "dns", "DNS server", LIMITS.dns_servers) or []:
        ip = address(text, where, s.out, "a DNS server's IP address")
        if ip is not None:
            dns.append(ip)
    gateway = address(s.raw("gateway"), s.at("gateway"), s.out) if s.has("gateway") else None
    if (
        gateway is not None
        and net is not None
        and (gateway.version != net.version or gateway not in net)
    ):
        s.problem("gateway", f"the gateway {gateway} is outside {net}")
    dhcp = s.flag("dhcp", default=True)
    if own:
        s.finish()
    if len(s.out) != before or net is None or dhcp is None:
        return None
    return Subnet(name, net, tuple(dns), gateway, dhcp)


def _router(n: Fields, network: str | None, routers: dict[str, str]) -> Router | None:
    raw = n.raw("router")
    if raw is None:
        return None
    if isinstance(raw, str):
        name, external = f"{network or 'net'}-router", raw.strip()
        if not external:
            n.problem("router", "name the external network the router goes out to")
            return None
    elif is_mapping(raw):
        r = Fields(raw, n.at("router"), n.out)
        external = r.text("external", required="name the external network", empty_ok=False) or ""
        name = r.name("name") or f"{network or 'net'}-router"
        r.finish()
        if not external:
            return None
    else:
        n.problem(
            "router", f"expected an external network's name or a mapping, found {describe(raw)}"
        )
        return None
    routers.setdefault(name, n.at("router"))
    return Router(name, external)


def _ports(f: Fields, servers: Servers, known: _Known, groups: set[str]) -> tuple[PortSpec, ...]:
    result: list[PortSpec] = []
    taken: dict[tuple[str, str], str] = {}
    fixed: dict[IpAddress, str] = {}
    for value, path in bounded(f, "ports", "ports", LIMITS.ports):
        p = mapping(value, path, f.out, "a port")
        if p is None:
            continue
        before = len(f.out)
        text = p.text("server", required="name the instance or node group the port is for")
        member = servers.member(text, p.at("server"), f.out, "the port") if text else None
        network = p.name("network", required="name the cluster network it is on")
        if network is not None and not known.network_ok(network, p.at("network")):
            network = None
        ip = address(p.raw("fixed_ip"), p.at("fixed_ip"), f.out) if p.has("fixed_ip") else None
        if ip is not None and member is not None and member.target not in servers.instances:
            p.problem(
                "fixed_ip",
                f"{member} is a node group: its replicas cannot share one fixed IP; "
                "give fixed IPs to instances only",
            )
        if ip is not None and network is not None:
            known.inside(network, ip, p.at("fixed_ip"), "the fixed IP")
            if ip in fixed:
                p.problem("fixed_ip", f"{ip} is already the fixed IP of the port at {fixed[ip]}")
            fixed[ip] = path
        sg: list[str] = []
        for name, where in p.names("security_groups", what="security group") or []:
            if name not in groups:
                f.out.add(
                    where,
                    f"no security group '{name}' in this cluster{suggest(name, sorted(groups))}",
                )
            sg.append(name)
        port_name = p.name("name")
        p.finish()
        if member is not None and network is not None:
            key = (str(member), network)
            if key in taken:
                f.out.add(path, f"{member} already has a port on {network} (at {taken[key]})")
            taken[key] = path
        if len(f.out) == before and member is not None and network is not None:
            result.append(PortSpec(member, network, ip, tuple(sg), port_name))
    return tuple(result)


def _floating_ips(
    f: Fields, servers: Servers, known: _Known, ports: tuple[PortSpec, ...]
) -> tuple[FloatingIp, ...]:
    result: list[FloatingIp] = []
    names: set[str] = set()
    for value, path in bounded(f, "floating_ips", "floating IPs", LIMITS.floating_ips):
        p = mapping(value, path, f.out, "a floating IP")
        if p is None:
            continue
        before = len(f.out)
        server = p.text("server", required="name the instance or node (e.g. web-1) it is for")
        if server is not None and not servers.server(server, p.at("server"), f.out):
            server = None
        external = p.text("external", required="name the external network", empty_ok=False)
        network = p.name("network")
        if network is not None and known.network_ok(network, p.at("network")) and server:
            owner = _owner(server, servers)
            if not any(q.network == network and q.member.target == owner for q in ports):
                p.problem("network", f"{server} has no port on {network}; add one under 'ports'")
        ip = address(p.raw("address"), p.at("address"), f.out) if p.has("address") else None
        name = p.name("name") or (f"{server}-fip" if server else None)
        if name is not None:
            if name in names:
                p.problem("name", f"floating IP '{name}' is declared twice")
            names.add(name)
        p.finish()
        if len(f.out) == before and server and external and name:
            result.append(FloatingIp(name, server, external, network, ip))
    return tuple(result)


def _owner(server: str, servers: Servers) -> str:
    """The instance or node group a server name belongs to (web-2 -> web)."""
    if server in servers.instances:
        return server
    return server.rsplit("-", 1)[0]
