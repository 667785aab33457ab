"""The openstack provider's own vocabulary for what it makes in Neutron and Octavia.

`netdriver.py` turns a cluster's networking (`shoal.model.networks.NetworkSpec`, handed over
as `ClusterNetworks` by the engine) into these requests; `neutron.py` and `octavia.py` carry
them out. Every create carries a `key` unique within its cluster (`net:<name>`,
`port:<server>:<network>`...), recorded on the resource, so a create retried after a crash
(even a `kill -9` between the service's answer and Shoal's record) finds the first resource
instead of making a second; `delete_networks(cluster)` removes everything of the cluster in
dependency order and succeeds when it is already gone.

Rules name their remote side by the name of another security group of the same request, never
by a backend id: the backend resolves names after making the groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class RuleProtocol(StrEnum):
    ANY = "any"
    TCP = "tcp"
    UDP = "udp"
    ICMP = "icmp"


@dataclass(frozen=True, slots=True)
class SubnetSpec:
    """One address range of a network. `gateway` None: Neutron's default (the first host)."""

    name: str
    cidr: str
    dns: tuple[str, ...] = ()
    gateway: str | None = None
    dhcp: bool = True


@dataclass(frozen=True, slots=True)
class NetworkSpec:
    """A private network with its subnets (at least one), optionally routed to an external
    network: the router gets an interface on every subnet."""

    name: str
    subnets: tuple[SubnetSpec, ...]
    external: str | None = None
    """The name (or id) of the external network a router joins the subnets to; None: none."""

    @classmethod
    def single(
        cls, name: str, cidr: str, dns: tuple[str, ...] = (), external: str | None = None
    ) -> NetworkSpec:
        """A network with one subnet named like it (most clusters' networks)."""
        return cls(name, (SubnetSpec(name, cidr, dns),), external)


class RuleDirection(StrEnum):
    INGRESS = "ingress"
    EGRESS = "egress"


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One allow rule: traffic of `protocol` to ports `port_min`..`port_max` from a source
    (ingress) or to a destination (egress)."""

    protocol: RuleProtocol = RuleProtocol.TCP
    port_min: int | None = None
    port_max: int | None = None
    remote_cidr: str | None = None
    remote_group: str | None = None
    """The name of another security group of the same request (its members are the source)."""
    direction: RuleDirection = RuleDirection.INGRESS


@dataclass(frozen=True, slots=True)
class SecurityGroupSpec:
    name: str
    rules: tuple[RuleSpec, ...] = ()

    @property
    def manages_egress(self) -> bool:
        """A group with egress rules has exactly those out (Neutron's allow-all egress rules
        are removed); one without keeps Neutron's default (everything allowed out)."""
        return any(r.direction is RuleDirection.EGRESS for r in self.rules)


@dataclass(frozen=True, slots=True)
class NetworksRequest:
    """Everything cluster-wide: made before any of the cluster's ports or servers."""

    cluster: str
    networks: tuple[NetworkSpec, ...] = ()
    security_groups: tuple[SecurityGroupSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class NetworkResources:
    """Backend ids by the request's names."""

    networks: dict[str, str] = field(default_factory=dict)
    subnets: dict[str, str] = field(default_factory=dict)
    routers: dict[str, str] = field(default_factory=dict)
    security_groups: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PortRequest:
    """A server's port on one of the cluster's networks."""

    key: str
    cluster: str
    name: str
    network: str
    """A network name of the cluster's `NetworksRequest`."""
    fixed_ip: str | None = None
    security_groups: tuple[str, ...] = ()
    """Security group names of the cluster's `NetworksRequest`."""
    node: str | None = None
    """The Shoal node the port is for: tagged `shoal-node:<node>`, so deleting the node's server
    finds and deletes its ports (and their floating IPs) too."""


@dataclass(frozen=True, slots=True)
class Port:
    id: str
    key: str
    network_id: str
    address: str | None
    status: str
    """The backend's own word (Neutron: DOWN until an agent binds it, ACTIVE after)."""


@dataclass(frozen=True, slots=True)
class FloatingIpRequest:
    key: str
    cluster: str
    external_network: str
    port_id: str
    node: str | None = None
    """As `PortRequest.node`."""
    address: str | None = None
    """The address asked for (Neutron lets an admin choose it); None: Neutron picks."""


@dataclass(frozen=True, slots=True)
class FloatingIp:
    id: str
    key: str
    address: str
    port_id: str | None


class LbProtocol(StrEnum):
    TCP = "TCP"
    HTTP = "HTTP"
    HTTPS = "HTTPS"
    UDP = "UDP"


POOL = "pool"
"""The pool's name when a balancer has one pool and names none."""


@dataclass(frozen=True, slots=True)
class ListenerSpec:
    protocol: LbProtocol
    port: int
    pool: str = POOL
    """The name of the balancer's pool this listener sends to."""


@dataclass(frozen=True, slots=True)
class HealthMonitorSpec:
    type: str = "TCP"
    """"TCP", "HTTP", "PING"..."""
    delay_s: int = 5
    timeout_s: int = 5
    max_retries: int = 3
    url_path: str | None = None


@dataclass(frozen=True, slots=True)
class PoolSpec:
    """One pool of a balancer: its members (set by `set_members`) answer on `member_port`."""

    member_port: int
    name: str = POOL
    protocol: LbProtocol | None = None
    """None: the protocol of the first listener that sends to it (HTTPS pools speak HTTP)."""
    algorithm: str = "ROUND_ROBIN"
    health_monitor: HealthMonitorSpec | None = None


@dataclass(frozen=True, slots=True)
class LoadBalancerRequest:
    key: str
    cluster: str
    name: str
    network: str
    """A network name of the cluster's `NetworksRequest`: the VIP's and the members' subnet."""
    listeners: tuple[ListenerSpec, ...]
    pools: tuple[PoolSpec, ...]
    vip_address: str | None = None

    def pool_protocol(self, pool: PoolSpec) -> str:
        if pool.protocol is not None:
            protocol = pool.protocol.value
        else:
            protocol = next(
                (ln.protocol.value for ln in self.listeners if ln.pool == pool.name), "TCP"
            )
        return "HTTP" if protocol == "HTTPS" else protocol


@dataclass(frozen=True, slots=True)
class Member:
    """A backend server of a balancer's pool; `key` is the Shoal node it stands for."""

    key: str
    address: str
    port: int


@dataclass(frozen=True, slots=True)
class MemberState:
    key: str
    address: str
    port: int
    health: str
    """The backend's operating status: ONLINE, ERROR, NO_MONITOR, OFFLINE..."""
    pool: str = POOL


@dataclass(frozen=True, slots=True)
class LoadBalancer:
    id: str
    key: str
    name: str
    vip_address: str | None
    status: str
    """Provisioning status: ACTIVE, PENDING_CREATE, PENDING_UPDATE, ERROR..."""
    members: tuple[MemberState, ...] = ()


class NetKind(StrEnum):
    NETWORK = "network"
    SUBNET = "subnet"
    ROUTER = "router"
    SECURITY_GROUP = "security_group"
    PORT = "port"
    FLOATING_IP = "floating_ip"
    LOAD_BALANCER = "load_balancer"


@dataclass(frozen=True, slots=True)
class NetResource:
    """One network resource Shoal owns, as a listing for reconcilers and orphan checks."""

    kind: NetKind
    id: str
    key: str
    cluster: str
    name: str
    status: str
