"""The optional network part of the provider protocol: a cluster's own networks, security
groups, ports, floating IPs and load balancers.

Kept apart from `base.py` because only some backends have it (OpenStack through Neutron and
Octavia; the local provider with nftables and HAProxy), like `HostAdmin`. The engine asks
`isinstance(provider, NetworkProvider)` before it plans any of this.

Every create is idempotent the way servers are: it carries a `key` unique within its cluster
(`net:<name>`, `port:<node id>:<network>`...), the backend records it on the resource, and a
create retried after a crash (even a `kill -9` between the backend's answer and Shoal's
record) finds the first resource instead of making a second. `delete_networks(cluster)`
removes everything the cluster's keys name, in dependency order (balancers and floating IPs,
then ports, router interfaces, routers, subnets, networks, security groups), and succeeds when
it is already gone, so a delete retried after a crash finishes the job.

Rules name their remote side by the name of another security group of the same request, never
by a backend id: the backend resolves names after making the groups.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable


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


@runtime_checkable
class NetworkProvider(Protocol):
    """Optional: a backend that makes a cluster's networks, rules, ports and balancers."""

    async def ensure_networks(self, request: NetworksRequest) -> NetworkResources:
        """Make (or find) every network, subnet, router and security group of the request."""
        ...

    async def ensure_port(self, request: PortRequest) -> Port:
        """Make (or find, by key) a port; a server boots on it (`ServerRequest.ports`)."""
        ...

    async def delete_port(self, port_id: str) -> None:
        """Delete a port (and a floating IP on it); succeeds if it is already gone."""
        ...

    async def ensure_floating_ip(self, request: FloatingIpRequest) -> FloatingIp:
        """Make (or find, by key) a floating IP on the external network, bound to the port."""
        ...

    async def ensure_load_balancer(self, request: LoadBalancerRequest) -> LoadBalancer:
        """Make (or find, by key) a balancer with its listeners, pool and monitor; wait until
        it accepts changes."""
        ...

    async def set_members(self, cluster: str, key: str, members: list[Member]) -> LoadBalancer:
        """Make the balancer's pool exactly `members` (scale, replace, host failure)."""
        ...

    async def delete_networks(self, cluster: str) -> None:
        """Delete everything network-side the cluster owns; waits out a balancer that is
        still being provisioned rather than leaving it behind."""
        ...

    async def list_network_resources(self, cluster: str | None = None) -> list[NetResource]:
        """Every network resource the backend holds for Shoal (for one cluster when given)."""
        ...
