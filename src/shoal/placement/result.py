"""What placement answers: an assignment of every node to a host, or reasons it cannot be.

Every outcome is a value (see DESIGN.md, "outcomes as typed values"): an infeasible cluster is
an expected answer, not an exception. There are three (`PlacementStatus`): placed; infeasible,
only when proven; and undecided, when the exact method ran out of time without a placement or
a proof. Undecided is never reported as infeasible: "does not fit" must be true.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple


class PlacementStatus(StrEnum):
    PLACED = "placed"
    INFEASIBLE = "infeasible"
    """Proven: no placement keeps every hard rule (the reasons say why)."""
    UNDECIDED = "undecided"
    """No placement found and none proven impossible within the time limit."""


class Assignment(NamedTuple):
    """Where one node goes (or already is, when `existing`).

    A named tuple, not a frozen dataclass: a solve makes one per node, and a frozen
    dataclass costs three times as much to build.
    """

    node: str
    kind: str
    group: str
    part: str | None
    role: str | None
    flavor: str | None
    zone: str
    host: str
    existing: bool = False

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


@dataclass(frozen=True, slots=True)
class SoftViolation:
    """A soft rule the placement could not honour, and by how much."""

    grouping: str
    rule: str
    count: int
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "grouping": self.grouping,
            "rule": self.rule,
            "count": self.count,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class RuleCheck:
    """One grouping checked against the final placement, for the summary table."""

    grouping: str
    rule: str
    scope: str
    members: int
    domains_used: int
    satisfied: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "grouping": self.grouping,
            "rule": self.rule,
            "scope": self.scope,
            "members": self.members,
            "domains_used": self.domains_used,
            "satisfied": self.satisfied,
        }


class ReplicaAssignment(NamedTuple):
    """Where one replica of a workload runs: a server of the cluster (the second level)."""

    replica: str
    workload: str
    node: str
    host: str
    zone: str

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


@dataclass(frozen=True, slots=True)
class PlacementResult:
    """The solver's answer for one whole request."""

    feasible: bool
    assignments: tuple[Assignment, ...] = ()
    soft_violations: tuple[SoftViolation, ...] = ()
    reasons: tuple[str, ...] = ()
    solver: str = "greedy"
    objective: str = "spread"
    checks: tuple[RuleCheck, ...] = ()
    stats: dict[str, Any] = field(default_factory=dict)
    undecided: bool = False
    """Not feasible, but not proven infeasible either: see `status`."""
    replicas: tuple[ReplicaAssignment, ...] = ()
    """Workloads' replicas on the cluster's servers (`placement/workloads/`), when any."""

    @property
    def status(self) -> PlacementStatus:
        if self.feasible:
            return PlacementStatus.PLACED
        return PlacementStatus.UNDECIDED if self.undecided else PlacementStatus.INFEASIBLE

    @property
    def hosts(self) -> dict[str, str]:
        """Node name to host name."""
        return {a.node: a.host for a in self.assignments}

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON contract of `shoal plan -o json`."""
        return {
            "feasible": self.feasible,
            "status": str(self.status),
            "placement": [a.as_dict() for a in self.assignments],
            "soft_violations": [v.as_dict() for v in self.soft_violations],
            "reasons": list(self.reasons),
            "solver": self.solver,
            "objective": self.objective,
            "rules": [c.as_dict() for c in self.checks],
            "hosts_used": len({a.host for a in self.assignments}),
            "stats": dict(self.stats),
            **({"replicas": [r.as_dict() for r in self.replicas]} if self.replicas else {}),
        }
