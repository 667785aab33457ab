"""The declared cluster: node groups, standalone instances, groupings and dependencies.

This is what a document means once it has been read and validated; names are the user's own
and every reference in it resolves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shoal.model.enums import Objective, Rule, Scope
from shoal.model.members import MemberRef
from shoal.model.networks import NetworkSpec
from shoal.model.outputs import ClusterOutput
from shoal.model.policies import (
    DeletionPolicy,
    HealthPolicy,
    ScalingPolicy,
    StrayHandling,
    UpdatePolicy,
)
from shoal.model.profile import Profile
from shoal.model.software import SoftwareSpec

__all__ = [
    "ClusterSpec",
    "Grouping",
    "Instance",
    "MemberRef",
    "NodeGroup",
    "UnitPart",
]


@dataclass(frozen=True, slots=True)
class UnitPart:
    """One named profile of a node group's unit (`part` is None for a single-profile group)."""

    part: str | None
    profile: Profile


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """`count` replicas of one unit: a profile, or several parts that share a host."""

    name: str
    parts: tuple[UnitPart, ...]
    count: int
    min_size: int = 0
    max_size: int | None = None
    zones: tuple[str, ...] = ()
    labels: dict[str, str] = field(default_factory=dict, compare=True, hash=False)
    role: str | None = None
    depends_on: tuple[str, ...] = ()
    replicas: tuple[int, ...] | None = None
    """Which replica indexes exist, when not simply 1..count (after a scale-in chose victims
    other than the newest); its length is `count`."""
    health: HealthPolicy | None = None
    update: UpdatePolicy | None = None
    deletion: DeletionPolicy | None = None
    scaling: ScalingPolicy | None = None

    @property
    def replica_indexes(self) -> tuple[int, ...]:
        return self.replicas if self.replicas is not None else tuple(range(1, self.count + 1))

    @property
    def is_unit(self) -> bool:
        return len(self.parts) > 1 or self.parts[0].part is not None

    def part(self, name: str | None) -> UnitPart | None:
        for p in self.parts:
            if p.part == name:
                return p
        return None


@dataclass(frozen=True, slots=True)
class Instance:
    """A single named server or volume, outside any node group."""

    name: str
    profile: Profile
    zone: str | None = None
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Grouping:
    """A placement rule over members, within a failure-domain scope."""

    name: str
    members: tuple[MemberRef, ...]
    rule: Rule
    scope: Scope = Scope.HOST
    max_per_domain: int = 1
    max_skew: int = 1

    def describe(self) -> str:
        """The grouping in the user's words, e.g. "db-spread (anti-affinity, zone)"."""
        extra = ""
        if self.rule is Rule.ANTI_AFFINITY and self.max_per_domain != 1:
            extra = f", max {self.max_per_domain} per {self.scope}"
        elif self.rule is Rule.SPREAD:
            extra = f", max skew {self.max_skew}"
        return f"grouping {self.name} ({self.rule}, {self.scope}{extra})"


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A whole declared cluster."""

    name: str
    node_groups: tuple[NodeGroup, ...] = ()
    instances: tuple[Instance, ...] = ()
    groupings: tuple[Grouping, ...] = ()
    objective: Objective = Objective.SPREAD
    metadata: dict[str, str] = field(default_factory=dict, compare=True, hash=False)
    health: HealthPolicy | None = None
    """Default health policy of every node group without its own."""
    deletion: DeletionPolicy | None = None
    strays: StrayHandling = StrayHandling.REPORT
    software: SoftwareSpec = field(default_factory=SoftwareSpec)
    """Configs and deployments run on the nodes (docs/software.md); empty by default."""
    outputs: tuple[ClusterOutput, ...] = ()
    """Values served from the live cluster (`model/outputs.py`), in document order."""
    networking: NetworkSpec = field(default_factory=NetworkSpec)
    """The cluster's own networks, security groups, ports, floating IPs and load balancers
    (`model/networks.py`, docs/networks.md); empty by default."""

    def health_of(self, group: str) -> HealthPolicy | None:
        g = self.node_group(group)
        return (g.health if g is not None and g.health is not None else None) or self.health

    def deletion_of(self, group: str) -> DeletionPolicy:
        g = self.node_group(group)
        if g is not None and g.deletion is not None:
            return g.deletion
        return self.deletion or DeletionPolicy()

    def node_group(self, name: str) -> NodeGroup | None:
        for g in self.node_groups:
            if g.name == name:
                return g
        return None

    def instance(self, name: str) -> Instance | None:
        for i in self.instances:
            if i.name == name:
                return i
        return None
