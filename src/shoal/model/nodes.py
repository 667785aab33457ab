"""Expanding a declared cluster into the nodes it stands for, with their names and demands.

Node names are stable and derived: replica i of group `web` is `web-i`; part `data` of a unit
replica is `web-i-data`; an instance keeps its own name. Scale-out adds higher indexes, so
existing nodes keep their names.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from shoal.model.cluster import ClusterSpec, Instance, MemberRef, NodeGroup
from shoal.model.enums import NodeKind
from shoal.model.profile import Profile, ServerProfile


@dataclass(frozen=True, slots=True)
class Demand:
    """Capacity one node takes from its host."""

    vcpus: int = 0
    ram_mb: int = 0
    disk_gb: int = 0
    volume_gb: int = 0

    def __add__(self, other: Demand) -> Demand:
        return Demand(
            self.vcpus + other.vcpus,
            self.ram_mb + other.ram_mb,
            self.disk_gb + other.disk_gb,
            self.volume_gb + other.volume_gb,
        )


def demand_of(profile: Profile) -> Demand:
    if isinstance(profile, ServerProfile):
        f = profile.flavor
        disk = max(f.disk_gb, profile.image.min_disk_gb)
        return Demand(vcpus=f.vcpus, ram_mb=f.ram_mb, disk_gb=disk)
    return Demand(volume_gb=profile.size_gb)


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One node the cluster declares: a server or a volume with where it may go."""

    name: str
    kind: NodeKind
    group: str
    part: str | None
    replica: int
    profile: Profile
    zones: tuple[str, ...]
    unit: str
    """Nodes with the same `unit` always share a host (a unit replica, or an instance alone)."""

    @property
    def demand(self) -> Demand:
        return demand_of(self.profile)

    @property
    def flavor_name(self) -> str | None:
        return self.profile.flavor.name if isinstance(self.profile, ServerProfile) else None


def replica_name(group: str, replica: int) -> str:
    return f"{group}-{replica}"


def node_name(group: NodeGroup, replica: int, part: str | None) -> str:
    base = replica_name(group.name, replica)
    return base if part is None else f"{base}-{part}"


def allowed_zones(zones: tuple[str, ...], profile: Profile) -> tuple[str, ...]:
    """Zones a node may use: the group's (or instance's) zones, else its profile's zone."""
    if zones:
        return zones
    return (profile.zone,) if profile.zone else ()


def group_nodes(group: NodeGroup) -> Iterator[NodeSpec]:
    """The nodes of `group`, replica by replica."""
    name = group.name
    # What every replica of a part shares, worked out once per part (a large cluster
    # expands 100,000 replicas of a handful of parts).
    parts = [
        (p.part, p.profile.kind, p.profile, allowed_zones(group.zones, p.profile), f"-{p.part}")
        for p in group.parts
    ]
    if len(parts) == 1 and parts[0][0] is None:
        # A plain server group: each node's name is its unit's, one string for both, not two
        # equal ones (a string per node less to make and to keep in memory).
        _, kind, profile, zones, _ = parts[0]
        for i in group.replica_indexes:
            unit = replica_name(name, i)
            yield NodeSpec(unit, kind, name, None, i, profile, zones, unit)
        return
    for i in group.replica_indexes:
        unit = replica_name(name, i)
        for part, kind, profile, zones, suffix in parts:
            yield NodeSpec(
                unit if part is None else unit + suffix, kind, name, part, i, profile, zones, unit
            )


def instance_node(inst: Instance) -> NodeSpec:
    return NodeSpec(
        name=inst.name,
        kind=inst.profile.kind,
        group=inst.name,
        part=None,
        replica=0,
        profile=inst.profile,
        zones=allowed_zones((inst.zone,) if inst.zone else (), inst.profile),
        unit=inst.name,
    )


def expand(spec: ClusterSpec) -> list[NodeSpec]:
    """Every node of the cluster: instances first, then node groups in declared order."""
    nodes = [instance_node(i) for i in spec.instances]
    for g in spec.node_groups:
        nodes.extend(group_nodes(g))
    return nodes


def member_units(spec: ClusterSpec, ref: MemberRef) -> list[str]:
    """Unit names a grouping member stands for (a part shares its replica's unit)."""
    group = spec.node_group(ref.target)
    if group is not None:
        return [replica_name(group.name, i) for i in group.replica_indexes]
    return [ref.target] if spec.instance(ref.target) is not None else []
