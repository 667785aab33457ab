"""The Neutron and Octavia resources of a template onto the cluster's `NetworkSpec`.

Resources are written as the native document's sections (`networks`, `security_groups`,
`ports`, `floating_ips`, `load_balancers`) and read by the same reader (`documents/networks.py`), so
a template's networking is checked exactly as a native document's is; a problem found there
points back at the resource it came from. What maps:

- `Net` + its `Subnet`s (the subnet's `network` a `get_resource` of the net); `Router` with
  `external_gateway_info.network` and a `RouterInterface` to one of the net's subnets → the net's
  router;
- `SecurityGroup` rules and `SecurityGroupRule`s (protocol, port range, `remote_ip_prefix`, or
  `remote_mode: remote_group_id` → another group, or the group itself);
- a `Port` on one of the template's nets that a server boots on (`networks: [{port: ...}]`),
  with its fixed IP and groups; `FloatingIP` on such a port (or through
  `FloatingIPAssociation`);
- `LoadBalancer` (its VIP subnet's net, `vip_address`), `Listener`, `Pool`, `HealthMonitor`;
  the pool's members are the servers its `PoolMember`s name by `get_attr` (one server, or a
  ResourceGroup whose member template holds the `PoolMember`: the group, followed as it scales),
  or a `Shoal::Workload` a `PoolMember`'s `address` names by `get_attr` (the PoolMember stands
  for each of its ready replicas, as a group member's PoolMember stands for each server: the
  native `members: WORKLOAD`, docs/networks.md).

Nets, subnets or ports that name an existing network by name or id are left out with a notice
(only what the cluster owns is in its networking); a server keeps such a network by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shoal.documents.collect import ProblemList
from shoal.documents.drafts import ClusterDraft
from shoal.documents.hot.assemble import Placed
from shoal.documents.hot.report import Report
from shoal.documents.hot.shapes import NetResource, Shape
from shoal.documents.hot.values import Attr, Ref
from shoal.documents.net_common import WorkloadPorts
from shoal.documents.networks import read_networking
from shoal.model.networks import NetworkSpec

_PROTOCOLS = {"tcp": "tcp", "udp": "udp", "icmp": "icmp", "6": "tcp", "17": "udp", "1": "icmp"}


def _ref(value: object) -> str | None:
    return value.name if isinstance(value, Ref) else None


class _Map:
    def __init__(
        self, shape: Shape, placed: Placed, report: Report, server_networks: dict[str, object]
    ) -> None:
        self.server_networks = server_networks
        self.shape = shape
        self.placed = placed
        self.report = report
        self.by_kind: dict[str, list[NetResource]] = {}
        for r in shape.network:
            self.by_kind.setdefault(r.kind, []).append(r)
        self.tree: dict[str, list[dict[str, Any]]] = {}
        self.origins: dict[str, str] = {}
        """Native pointer ("/networks/0") -> the resource's pointer in the template."""

    def of(self, kind: str) -> list[NetResource]:
        return self.by_kind.get(kind, [])

    def add(self, section: str, item: dict[str, Any], origin: str) -> None:
        items = self.tree.setdefault(section, [])
        self.origins[f"/{section}/{len(items)}"] = origin
        items.append(item)

    def element(self, resource: str) -> str | None:
        found = self.placed.elements.get((self.shape.scope, resource))
        return found[0] if found else None

    def server_of_port(self) -> dict[str, str]:
        """Port resource -> the element of the server that boots on it."""
        out: dict[str, str] = {}
        for server in self.shape.servers:
            element = self.element(server.name)
            if element is None:
                continue
            for port in self._ports_named(server.name):
                out[port] = element
        return out

    def _ports_named(self, server: str) -> Iterator[str]:
        nets = self.server_networks.get(server)
        for item in nets if isinstance(nets, list) else []:
            if isinstance(item, dict):
                name = _ref(item.get("port"))
                if name is not None:
                    yield name


def map_networking(
    shape: Shape,
    placed: Placed,
    draft: ClusterDraft,
    report: Report,
    server_networks: dict[str, object],
    workloads: dict[str, WorkloadPorts] | None = None,
) -> NetworkSpec | None:
    """The template's networking; None (with the problems reported) when it does not read.
    `workloads` are the template's workloads' ports (a pool may serve one's replicas)."""
    if not shape.network:
        _nested_notice(shape, report)
        return NetworkSpec()
    m = _Map(shape, placed, report, server_networks)
    _networks(m)
    _groups(m)
    ports = _ports(m)
    _floating(m, ports)
    _balancers(m)
    _nested_notice(shape, report)
    local = ProblemList()
    spec = read_networking(m.tree, draft, local, workloads)
    for p in local.items:
        origin = next(
            (
                o
                for k, o in sorted(m.origins.items(), key=lambda x: -len(x[0]))
                if p.path.startswith(k)
            ),
            "",
        )
        report.problem(origin or p.path, p.message)
    return None if local.items else spec


def _nested_notice(shape: Shape, report: Report) -> None:
    for nested in shape.nested:
        for r in nested.shape.network:
            report.notice(r.path, f"{r.kind} in a nested template is left out of the cluster")
    for g in shape.groups:
        for r in g.member.network:
            if r.kind != "OS::Octavia::PoolMember":
                report.notice(r.path, f"{r.kind} in a group's member is left out of the cluster")


def _networks(m: _Map) -> None:
    subnets: dict[str, list[NetResource]] = {}
    for s in m.of("OS::Neutron::Subnet"):
        owner = _ref(s.props.get("network")) or _ref(s.props.get("network_id"))
        if owner is None:
            m.report.notice(s.path, "a subnet of a network outside the template is left out")
            continue
        subnets.setdefault(owner, []).append(s)
    router_of: dict[str, NetResource] = {}
    for i in m.of("OS::Neutron::RouterInterface"):
        router_name = _ref(i.props.get("router")) or _ref(i.props.get("router_id"))
        subnet = _ref(i.props.get("subnet")) or _ref(i.props.get("subnet_id"))
        if router_name is None or subnet is None:
            m.report.notice(i.path, "a router interface of an outside router or port is left out")
            continue
        found = [r for r in m.of("OS::Neutron::Router") if r.name == router_name]
        if found:
            router_of[subnet] = found[0]
    for net in m.of("OS::Neutron::Net"):
        mine = subnets.get(net.name, [])
        entries = []
        gateway: dict[str, str] | None = None
        for s in mine:
            entry: dict[str, Any] = {"name": s.name, "cidr": s.props.get("cidr")}
            if s.props.get("dns_nameservers"):
                entry["dns"] = s.props.get("dns_nameservers")
            if s.props.get("gateway_ip") not in (None, ""):
                entry["gateway"] = s.props.get("gateway_ip")
            if s.props.get("enable_dhcp") is False:
                entry["dhcp"] = False
            entries.append(entry)
            r = router_of.get(s.name)
            info = r.props.get("external_gateway_info") if r is not None else None
            external = info.get("network") if isinstance(info, dict) else None
            if r is not None and isinstance(external, str) and external:
                gateway = {"name": r.name, "external": external}
        if not entries:
            m.report.notice(net.path, "a network without a subnet is left out of the cluster")
            continue
        item: dict[str, Any] = {"name": net.name, "subnets": entries}
        if gateway is not None:
            item["router"] = gateway
        m.add("networks", item, net.path)


def _rule(props: dict[str, object], own: str) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if props.get("direction") == "egress":
        out["direction"] = "egress"
    proto = props.get("protocol")
    if proto is None:
        out["protocol"] = "any"
    elif str(proto).lower() in _PROTOCOLS:
        out["protocol"] = _PROTOCOLS[str(proto).lower()]
    else:
        return None
    low, high = props.get("port_range_min"), props.get("port_range_max")
    if out["protocol"] in ("tcp", "udp") and low is not None:
        out["ports"] = f"{low}-{high if high is not None else low}"
    if props.get("remote_mode") == "remote_group_id" or props.get("remote_group") is not None:
        named = _ref(props.get("remote_group")) or _ref(props.get("remote_group_id"))
        out["from"] = {"group": named or own}
    elif isinstance(props.get("remote_ip_prefix"), str):
        out["from"] = props["remote_ip_prefix"]
    return out


def _groups(m: _Map) -> None:
    extra: dict[str, list[dict[str, object]]] = {}
    for r in m.of("OS::Neutron::SecurityGroupRule"):
        group = _ref(r.props.get("security_group"))
        if group is not None:
            extra.setdefault(group, []).append(r.props)
    for g in m.of("OS::Neutron::SecurityGroup"):
        raw = g.props.get("rules")
        rules: list[dict[str, Any]] = []
        for props in [*(raw if isinstance(raw, list) else []), *extra.get(g.name, [])]:
            if not isinstance(props, dict):
                continue
            rule = _rule(props, g.name)
            if rule is None:
                m.report.notice(g.path, f"a rule of protocol {props.get('protocol')} is left out")
            else:
                rules.append(rule)
        m.add("security_groups", {"name": g.name, "rules": rules}, g.path)


def _ports(m: _Map) -> dict[str, str]:
    """Port resource -> the server element it belongs to (ports mapped)."""
    owners = m.server_of_port()
    nets = {n.name for n in m.of("OS::Neutron::Net")}
    mapped: dict[str, str] = {}
    for p in m.of("OS::Neutron::Port"):
        net = _ref(p.props.get("network")) or _ref(p.props.get("network_id"))
        owner = owners.get(p.name)
        if net is None or net not in nets or owner is None:
            m.report.notice(
                p.path,
                "a port on an outside network, or that no server of the template boots on, "
                "is left out",
            )
            continue
        item: dict[str, Any] = {"server": owner, "network": net, "name": p.name}
        fixed = p.props.get("fixed_ips")
        if isinstance(fixed, list) and fixed and isinstance(fixed[0], dict):
            ip = fixed[0].get("ip_address")
            if isinstance(ip, str) and ip:
                item["fixed_ip"] = ip
        groups = p.props.get("security_groups")
        names = [_ref(g) for g in groups] if isinstance(groups, list) else []
        if any(n is not None for n in names):
            item["security_groups"] = [n for n in names if n is not None]
        m.add("ports", item, p.path)
        mapped[p.name] = owner
    return mapped


def _floating(m: _Map, ports: dict[str, str]) -> None:
    assoc = {
        _ref(a.props.get("floatingip_id")): _ref(a.props.get("port_id"))
        for a in m.of("OS::Neutron::FloatingIPAssociation")
    }
    for f in m.of("OS::Neutron::FloatingIP"):
        port = _ref(f.props.get("port_id")) or assoc.get(f.name)
        external = f.props.get("floating_network") or f.props.get("floating_network_id")
        if port is None or port not in ports or not isinstance(external, str):
            m.report.notice(f.path, "a floating IP not on a port of the cluster is left out")
            continue
        server = ports[port]
        if server not in {i.name for i in _instances(m)}:
            server = f"{server}-1"
        m.add(
            "floating_ips",
            {"name": f.name, "server": server, "external": external},
            f.path,
        )


def _instances(m: _Map) -> Iterator[Any]:
    yield from (s for s in m.shape.servers)


def _members(m: _Map, pool: str) -> str | None:
    """The element the pool's members are: the servers its PoolMembers name, or the workload
    whose replicas a PoolMember's address names."""
    workloads = {w.name for w in m.shape.workloads}
    for pm in m.of("OS::Octavia::PoolMember"):
        if _ref(pm.props.get("pool")) == pool and isinstance(pm.props.get("address"), Attr):
            address = pm.props["address"]
            assert isinstance(address, Attr)
            if address.name in workloads:
                return address.name
            return m.element(address.name)
    for g in m.shape.groups:
        for pm in g.member.network:
            if pm.kind == "OS::Octavia::PoolMember" and _ref(pm.props.get("pool")) == pool:
                return m.element(g.name)
    return None


def _member_of(m: _Map, pool: str) -> NetResource | None:
    """The first PoolMember of `pool` (the template's own, else one in a group's member)."""
    for pm in [
        *m.of("OS::Octavia::PoolMember"),
        *(x for g in m.shape.groups for x in g.member.network),
    ]:
        if pm.kind == "OS::Octavia::PoolMember" and _ref(pm.props.get("pool")) == pool:
            return pm
    return None


def _balancers(m: _Map) -> None:
    subnet_net = {
        s.name: _ref(s.props.get("network")) or _ref(s.props.get("network_id"))
        for s in m.of("OS::Neutron::Subnet")
    }
    for lb in m.of("OS::Octavia::LoadBalancer"):
        network = subnet_net.get(_ref(lb.props.get("vip_subnet")) or "") or _ref(
            lb.props.get("vip_network")
        )
        listeners = [
            x for x in m.of("OS::Octavia::Listener") if _ref(x.props.get("loadbalancer")) == lb.name
        ]
        pools = [
            p
            for p in m.of("OS::Octavia::Pool")
            if _ref(p.props.get("loadbalancer")) == lb.name
            or _ref(p.props.get("listener")) in {x.name for x in listeners}
        ]
        if network is None or not listeners or not pools:
            m.report.notice(
                lb.path, "a load balancer without a cluster network, listener or pool is left out"
            )
            continue
        pool_items = []
        for p in pools:
            members = _members(m, p.name)
            if members is None:
                m.report.cannot(
                    "pool members not named by a server's get_attr",
                    p.path,
                    f"the members of pool {p.name} must be PoolMembers whose address is a "
                    "get_attr of a server (or of a group's member) or of a Shoal::Workload of "
                    "the template",
                )
                return
            item: dict[str, Any] = {
                "name": p.name,
                "members": members,
                "port": next(
                    (
                        pm.props.get("protocol_port")
                        for pm in [
                            *m.of("OS::Octavia::PoolMember"),
                            *(x for g in m.shape.groups for x in g.member.network),
                        ]
                        if pm.kind == "OS::Octavia::PoolMember"
                        and _ref(pm.props.get("pool")) == p.name
                    ),
                    None,
                ),
                "protocol": p.props.get("protocol"),
                "algorithm": p.props.get("lb_algorithm"),
            }
            for hm in m.of("OS::Octavia::HealthMonitor"):
                if _ref(hm.props.get("pool")) == p.name:
                    health = {
                        k: hm.props.get(k)
                        for k in (
                            "type",
                            "delay",
                            "timeout",
                            "max_retries",
                            "url_path",
                            "expected_codes",
                        )
                        if hm.props.get(k) is not None
                    }
                    item["health"] = health
            pool_items.append(item)
        listener_items = []
        for x in listeners:
            pool = _ref(x.props.get("default_pool")) or next(
                (p.name for p in pools if _ref(p.props.get("listener")) == x.name), None
            )
            listener_items.append(
                {
                    "name": x.name,
                    "port": x.props.get("protocol_port"),
                    "protocol": x.props.get("protocol"),
                    "pool": pool,
                }
            )
        entry: dict[str, Any] = {
            "name": lb.name,
            "network": network,
            "listeners": listener_items,
            "pools": pool_items,
        }
        if isinstance(lb.props.get("vip_address"), str):
            entry["vip"] = lb.props["vip_address"]
        at = f"/load_balancers/{len(m.tree.get('load_balancers', []))}"
        m.add("load_balancers", entry, lb.path)
        # A pool's problems point at the pool, its members' and port's at the PoolMember.
        for j, p in enumerate(pools):
            m.origins[f"{at}/pools/{j}"] = p.path
            member = _member_of(m, p.name)
            if member is not None:
                m.origins[f"{at}/pools/{j}/members"] = member.path
                m.origins[f"{at}/pools/{j}/port"] = f"{member.path}/properties/protocol_port"
