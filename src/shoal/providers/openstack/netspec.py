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
class NetworkSpec:
    """A private network with one IPv4 subnet, optionally routed to an external network."""

    name: str
    cidr: str
    dns: tuple[str, ...] = ()
    external: str | None = None
    """The name (or id) of the external network a router joins this subnet to; None: none."""


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One ingress rule: traffic of `protocol` to ports `port_min`..`port_max` from a source."""

    protocol: RuleProtocol = RuleProtocol.TCP
    port_min: int | None = None
    port_max: int | None = None
    remote_cidr: str | None = None
    remote_group: str | None = None
    """The name of another security group of the same request (its members are the source)."""


@dataclass(frozen=True, slots=True)
class SecurityGroupSpec:
    name: str
    rules: tuple[RuleSpec, ...] = ()


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


@dataclass(frozen=True, slots=True)
class ListenerSpec:
    protocol: LbProtocol
    port: int


@dataclass(frozen=True, slots=True)
class HealthMonitorSpec:
    type: str = "TCP"
    """"TCP", "HTTP", "PING"..."""
    delay_s: int = 5
    timeout_s: int = 5
    max_retries: int = 3
    url_path: str | None = None


@dataclass(frozen=True, slots=True)
class LoadBalancerRequest:
    key: str
    cluster: str
    name: str
    network: str
    """A network name of the cluster's `NetworksRequest`: the VIP's and the members' subnet."""
    listeners: tuple[ListenerSpec, ...]
    member_port: int
    vip_address: str | None = None
    algorithm: str = "ROUND_ROBIN"
    health_monitor: HealthMonitorSpec | None = None


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
