"""A cluster's own networking: networks, security groups, ports, floating IPs, load balancers.

What a document's `networks`, `security_groups`, `ports`, `floating_ips` and `load_balancers`
mean once read and checked (docs/networks.md). Every name in here resolves: a rule's source
group exists, a port's network is one of the cluster's, a pool's members are a node group or
instance of the cluster. Providers realise it (`openstack`: Neutron and Octavia; `local`:
nftables and HAProxy); placement never looks at it.

Members are named by `MemberRef` (an instance, a node group, or one part of a unit), so a pool
or a rule over a node group follows the group as it scales, is repaired or replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

from shoal.model.members import MemberRef

__all__ = [
    "CidrSource",
    "Direction",
    "FloatingIp",
    "GroupSource",
    "HealthMonitor",
    "IpAddress",
    "IpNetwork",
    "LbAlgorithm",
    "LbProtocol",
    "Listener",
    "LoadBalancer",
    "MemberSource",
    "MonitorType",
    "Network",
    "NetworkLimits",
    "NetworkSpec",
    "Pool",
    "PortSpec",
    "Protocol",
    "Router",
    "RuleSource",
    "SecurityGroup",
    "SecurityRule",
    "Subnet",
]

IpNetwork = IPv4Network | IPv6Network
IpAddress = IPv4Address | IPv6Address


class Protocol(StrEnum):
    """What a security-group rule matches; `any` is every protocol."""

    TCP = "tcp"
    UDP = "udp"
    ICMP = "icmp"
    ANY = "any"

    @property
    def has_ports(self) -> bool:
        return self in (Protocol.TCP, Protocol.UDP)


class Direction(StrEnum):
    INGRESS = "ingress"
    EGRESS = "egress"


class LbProtocol(StrEnum):
    """A listener's or pool's protocol, as Octavia names them."""

    TCP = "TCP"
    HTTP = "HTTP"
    HTTPS = "HTTPS"
    UDP = "UDP"


class LbAlgorithm(StrEnum):
    ROUND_ROBIN = "ROUND_ROBIN"
    LEAST_CONNECTIONS = "LEAST_CONNECTIONS"
    SOURCE_IP = "SOURCE_IP"


class MonitorType(StrEnum):
    TCP = "TCP"
    HTTP = "HTTP"
    HTTPS = "HTTPS"
    PING = "PING"
    UDP_CONNECT = "UDP-CONNECT"


@dataclass(frozen=True, slots=True)
class NetworkLimits:
    """Bounds on what one document may declare, checked while reading, before anything is
    made: each one is far above what a real cluster needs and far below what would hurt."""

    networks: int = 16
    subnets_per_network: int = 8
    routers: int = 8
    dns_servers: int = 5
    security_groups: int = 64
    rules_per_group: int = 128
    ports: int = 256
    floating_ips: int = 64
    load_balancers: int = 16
    listeners_per_lb: int = 16
    pools_per_lb: int = 16
    min_prefix_v4: int = 8
    """The widest private IPv4 subnet (/8); a /0 would overlap every other network."""
    max_prefix_v4: int = 29
    """The narrowest IPv4 subnet (/29) still leaves addresses once Neutron takes its own."""
    min_prefix_v6: int = 48
    max_prefix_v6: int = 126


LIMITS = NetworkLimits()


@dataclass(frozen=True, slots=True)
class Subnet:
    """An address range of a network; `gateway` None means the first host address."""

    name: str
    cidr: IpNetwork
    dns: tuple[IpAddress, ...] = ()
    gateway: IpAddress | None = None
    dhcp: bool = True


@dataclass(frozen=True, slots=True)
class Router:
    """A router from a cluster's network to an existing external network (by name), which
    gives the network's servers a way out and floating IPs a way in."""

    name: str
    external_network: str


@dataclass(frozen=True, slots=True)
class Network:
    """A private network of the cluster: its subnets and, optionally, a router out."""

    name: str
    subnets: tuple[Subnet, ...]
    router: Router | None = None

    def subnet_for(self, address: IpAddress) -> Subnet | None:
        for s in self.subnets:
            if address.version == s.cidr.version and address in s.cidr:
                return s
        return None


@dataclass(frozen=True, slots=True)
class CidrSource:
    """Traffic from (or, for egress, to) an address range."""

    cidr: IpNetwork


@dataclass(frozen=True, slots=True)
class GroupSource:
    """Traffic from any port in another (or the same) security group of the cluster."""

    group: str


@dataclass(frozen=True, slots=True)
class MemberSource:
    """Traffic from the servers of a node group or an instance of the cluster, whatever their
    addresses are now: the rule follows the group as it scales and is repaired."""

    member: MemberRef


RuleSource = CidrSource | GroupSource | MemberSource


@dataclass(frozen=True, slots=True)
class SecurityRule:
    """One allow rule. `port_min`/`port_max` None: every port (and always None for icmp/any)."""

    protocol: Protocol = Protocol.TCP
    port_min: int | None = None
    port_max: int | None = None
    source: RuleSource | None = None
    """None: from anywhere (0.0.0.0/0 and ::/0)."""
    direction: Direction = Direction.INGRESS

    def allows_port(self, port: int) -> bool:
        if self.port_min is None or self.port_max is None:
            return True
        return self.port_min <= port <= self.port_max

    def describe(self) -> str:
        """The rule in words: "tcp 80-81 from group web"."""
        if not self.protocol.has_ports or self.port_min is None:
            ports = "all ports" if self.protocol.has_ports else ""
        elif self.port_min == self.port_max:
            ports = str(self.port_min)
        else:
            ports = f"{self.port_min}-{self.port_max}"
        words = " ".join(w for w in (str(self.protocol), ports) if w)
        if self.source is None:
            origin = "anywhere"
        elif isinstance(self.source, CidrSource):
            origin = str(self.source.cidr)
        elif isinstance(self.source, GroupSource):
            origin = f"security group {self.source.group}"
        else:
            origin = f"members of {self.source.member}"
        side = "from" if self.direction is Direction.INGRESS else "to"
        return f"{self.direction} {words} {side} {origin}"


@dataclass(frozen=True, slots=True)
class SecurityGroup:
    """A set of allow rules; a port in the group accepts what any of them allows (and the
    replies to what it sent), nothing else."""

    name: str
    rules: tuple[SecurityRule, ...] = ()
    description: str = ""


@dataclass(frozen=True, slots=True)
class PortSpec:
    """A port of every server of `member` on one of the cluster's networks.

    For a node group, each replica gets its own port; `fixed_ip` is only for an instance (one
    server). A server with ports is booted on them (and on its profile's `networks` too)."""

    member: MemberRef
    network: str
    fixed_ip: IpAddress | None = None
    security_groups: tuple[str, ...] = ()
    name: str | None = None
    """The port's own name when the document gives one (HOT's resource name); else derived."""


@dataclass(frozen=True, slots=True)
class FloatingIp:
    """A public address from `external_network` given to one named server (an instance, or a
    node such as `web-1`), through its port on `network` (None: its first port)."""

    name: str
    server: str
    external_network: str
    network: str | None = None
    address: IpAddress | None = None


@dataclass(frozen=True, slots=True)
class HealthMonitor:
    """How the balancer decides a member is up."""

    type: MonitorType = MonitorType.TCP
    delay_s: int = 5
    timeout_s: int = 3
    max_retries: int = 3
    url_path: str = "/"
    expected_codes: str = "200"


@dataclass(frozen=True, slots=True)
class Pool:
    """Backends: every server of `members`, on `member_port`, kept in step with the group."""

    name: str
    members: MemberRef
    member_port: int
    protocol: LbProtocol = LbProtocol.TCP
    algorithm: LbAlgorithm = LbAlgorithm.ROUND_ROBIN
    monitor: HealthMonitor | None = None
    network: str | None = None
    """The network the members are reached on (None: the load balancer's)."""


@dataclass(frozen=True, slots=True)
class Listener:
    name: str
    port: int
    pool: str
    protocol: LbProtocol = LbProtocol.TCP


@dataclass(frozen=True, slots=True)
class LoadBalancer:
    """A virtual IP on one of the cluster's networks, its listeners and their pools."""

    name: str
    network: str
    listeners: tuple[Listener, ...]
    pools: tuple[Pool, ...]
    vip_address: IpAddress | None = None

    def pool(self, name: str) -> Pool | None:
        for p in self.pools:
            if p.name == name:
                return p
        return None


@dataclass(frozen=True, slots=True)
class NetworkSpec:
    """Everything network-shaped a cluster declares; empty for most clusters."""

    networks: tuple[Network, ...] = ()
    security_groups: tuple[SecurityGroup, ...] = ()
    ports: tuple[PortSpec, ...] = ()
    floating_ips: tuple[FloatingIp, ...] = ()
    load_balancers: tuple[LoadBalancer, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.networks
            or self.security_groups
            or self.ports
            or self.floating_ips
            or self.load_balancers
        )

    def network(self, name: str) -> Network | None:
        for n in self.networks:
            if n.name == name:
                return n
        return None

    def security_group(self, name: str) -> SecurityGroup | None:
        for g in self.security_groups:
            if g.name == name:
                return g
        return None

    def ports_of(self, member: str) -> tuple[PortSpec, ...]:
        """The ports of an instance or node group (any part of it)."""
        return tuple(p for p in self.ports if p.member.target == member)

    def groups_of(self, member: str, part: str | None = None) -> tuple[str, ...]:
        """The security groups a member's servers are in, through any of their ports."""
        names: list[str] = []
        for p in self.ports:
            if p.member.target != member or (p.member.part not in (None, part)):
                continue
            names.extend(g for g in p.security_groups if g not in names)
        return tuple(names)
