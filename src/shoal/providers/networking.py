"""What a provider that realises a cluster's networking is given, and what it reports back.

The engine (`engine/networks.py`) hands a `NetworkDriver` the cluster's `NetworkSpec` with the
servers that exist right now (`ServerAddress`), level-triggered: the same call again changes
nothing, and a call with a server more or less re-renders the pools and the filters. A
provider that has no driver leaves networking to whatever the cloud does by itself.

A server's own ports and floating IPs are not the driver's: they belong to the server and are
made with it. The engine gives a server's create its `ServerNetworking` (what `ports` and
`floating_ips` of the document name it), and a provider that boots servers on ports of its own
(`openstack`) makes them first and deletes them after the server.

Such a provider's driver is also a `NetworkPreparer`: what those ports need of the cluster (its
networks, subnets, routers, security groups) is made by `prepare`, which the engine calls under
a lease in the database before the first create of a cluster action, so several engines
creating one cluster's servers make its networks once (engine/netlease.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from shoal.model.networks import FloatingIp, NetworkSpec, PortSpec
from shoal.model.outputs import NetworkFact


@dataclass(frozen=True, slots=True)
class ServerAddress:
    """One server of the cluster as it is now: where it is reached, and which member it is."""

    name: str
    group: str
    part: str | None
    address: str
    """Its IP address alone (no port)."""
    healthy: bool = True


@dataclass(frozen=True, slots=True)
class ClusterNetworks:
    """Everything a driver needs for one cluster."""

    cluster_id: str
    cluster_name: str
    spec: NetworkSpec
    servers: tuple[ServerAddress, ...]
    replicas: tuple[ServerAddress, ...] = ()
    """The ready replicas of the workloads a pool names (issue 22): `group` is the workload,
    `name` the replica, `address` its server's. Members of pools only, never servers: a driver
    makes no server's networking for them."""

    def members(self, target: str, part: str | None = None) -> tuple[ServerAddress, ...]:
        """The servers of a node group or instance (or one part of a unit), or the ready
        replicas of a workload, in name order."""
        found = [
            s
            for s in (*self.servers, *self.replicas)
            if s.group == target and (part is None or s.part == part)
        ]
        return tuple(sorted(found, key=lambda s: s.name))


@dataclass(frozen=True, slots=True)
class ServerNetworking:
    """One server's share of its cluster's networking: its ports (in the document's order) and
    the floating IPs named for it; `cluster.servers` is empty (not needed to make them)."""

    cluster: ClusterNetworks
    node: str
    """The server's node name (`web-2`)."""
    ports: tuple[PortSpec, ...]
    floating_ips: tuple[FloatingIp, ...] = ()


def server_networking(
    cluster: ClusterNetworks, node: str, group: str, part: str | None
) -> ServerNetworking | None:
    """What of `cluster`'s networking is node `node`'s (of node group or instance `group`, unit
    part `part`); None when it has no port of its own."""
    spec = cluster.spec
    ports = tuple(
        p for p in spec.ports if p.member.target == group and p.member.part in (None, part)
    )
    if not ports:
        return None
    fips = tuple(f for f in spec.floating_ips if f.server in (node, group))
    return ServerNetworking(cluster, node, ports, fips)


class MemberHealth(StrEnum):
    UP = "UP"
    DOWN = "DOWN"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True, slots=True)
class PoolMemberState:
    server: str
    address: str
    port: int
    health: MemberHealth


@dataclass(frozen=True, slots=True)
class BalancerState:
    """A load balancer as it serves now: where, and its members' health."""

    name: str
    address: str
    """Where it listens (the provider's own address for the VIP)."""
    listeners: tuple[int, ...]
    members: tuple[PoolMemberState, ...]


class NetworkToolsMissingError(Exception):
    """The tools a provider needs for networking are not installed; `packages` names them."""

    def __init__(self, packages: tuple[str, ...], detail: str) -> None:
        self.packages = packages
        super().__init__(
            f"{detail}: install the Debian package(s) {', '.join(packages)} "
            "(clusters without networks keep working without them)"
        )


@runtime_checkable
class NetworkDriver(Protocol):
    async def apply(self, cluster: ClusterNetworks) -> None:
        """Make the cluster's networking what `cluster` says (idempotent)."""

    async def remove(self, cluster_id: str) -> None:
        """Remove everything made for the cluster (nothing left behind; idempotent)."""

    async def clusters(self) -> set[str]:
        """The ids of the clusters this driver holds something for."""

    async def balancers(self, cluster: ClusterNetworks) -> tuple[BalancerState, ...]:
        """The cluster's load balancers as they serve now."""


@runtime_checkable
class NetworkPreparer(Protocol):
    """A driver whose cluster networks a server's ports need made before it boots (openstack:
    Neutron networks and security groups, found again by tag). Cloud resources shared by all
    of a cluster's servers: the engine makes sure only one engine at a time prepares a
    cluster (engine/netlease.py); `local` and `sim` make no such thing and are none."""

    async def prepare(self, cluster: ClusterNetworks) -> None:
        """Make what `cluster`'s ports need that is missing (idempotent: what exists is found
        by tag and made again by nobody)."""


@runtime_checkable
class AddressSource(Protocol):
    """A driver whose cloud assigns addresses the document may leave open (openstack: a port's
    fixed IP, a floating IP's address, a balancer's VIP)."""

    async def addresses(self, cluster: ClusterNetworks) -> dict[NetworkFact, str]:
        """The addresses assigned now to the cluster's named ports, floating IPs and balancers
        whose document gives none (those not made yet are left out)."""


@runtime_checkable
class ServerPortMaker(Protocol):
    """A provider that boots servers on ports it makes itself (openstack): it deletes a
    server's ports with the server, and `release_ports` deletes those of a node whose create
    died before its server existed (nothing else would find them before the cluster's delete)."""

    async def release_ports(self, node: str) -> None:
        """Delete the ports and floating IPs made for node `node` (a no-op when none)."""
