"""The second level's inputs and answers as types: the servers replicas may go on, and the
placement (replica -> server) or the refusal (typed rejections, worded in the user's names)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shoal.model.workloads import NodeSelector, Workload, WorkloadScope
from shoal.placement.workloads.rejection import WorkloadRejection, WorkloadRejectionKind


@dataclass(frozen=True, slots=True)
class NodeSlot:
    """One of the cluster's servers as a place for replicas."""

    node: str
    member: str
    """The node group or instance it belongs to (what a node selector's `groups` name)."""
    cpu_milli: int
    memory_mb: int
    host: str | None = None
    zone: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict, hash=False)
    bound_ports: frozenset[int] = frozenset()
    """Ports already bound on the server by something this placement does not move."""

    def domain(self, scope: WorkloadScope) -> str:
        """The failure domain the server is in at `scope`; a server whose host or zone is not
        known is a domain of its own (never grouped with another by accident)."""
        if scope is WorkloadScope.HOST:
            return self.host or f"node:{self.node}"
        if scope is WorkloadScope.ZONE:
            return self.zone or f"node:{self.node}"
        return self.node

    def matches(self, selector: NodeSelector) -> bool:
        if selector.groups and self.member not in selector.groups:
            return False
        return all(self.labels.get(k) == v for k, v in selector.labels.items())


@dataclass(frozen=True, slots=True)
class WorkloadPlacement:
    """Every replica's server; `moved` lists replicas placed elsewhere than before."""

    node_of: Mapping[str, str]
    workload_of: Mapping[str, str]
    method: str = "greedy"
    moved: tuple[str, ...] = ()

    def replicas_on(self, node: str) -> list[str]:
        return sorted(r for r, n in self.node_of.items() if n == node)


@dataclass(frozen=True, slots=True)
class WorkloadRefusal:
    rejections: tuple[WorkloadRejection, ...]
    """Why, typed (`rejection.py`): each a proof on its own, or the exact search's verdict."""

    @property
    def undecided(self) -> bool:
        """True when the exact search ran out of time or size, not proven impossible."""
        return any(r.kind is WorkloadRejectionKind.UNDECIDED for r in self.rejections)

    @property
    def reasons(self) -> tuple[str, ...]:
        """The rejections in the user's words."""
        return tuple(r.words() for r in self.rejections)


class Selection:
    """The servers each node selector picks, worked out once per selector (many workloads
    share one, and 50 workloads x 1,000 servers of label matching adds up)."""

    def __init__(self, slots: Sequence[NodeSlot]) -> None:
        self.slots = slots
        self._memo: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], list[NodeSlot]] = {}

    def of(self, selector: NodeSelector) -> list[NodeSlot]:
        key = (selector.groups, tuple(sorted(selector.labels.items())))
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = [s for s in self.slots if s.matches(selector)]
        return found


def replica_names(w: Workload) -> list[str]:
    return [f"{w.name}-{i}" for i in range(1, w.replicas + 1)]
