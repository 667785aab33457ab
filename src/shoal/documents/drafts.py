"""Partly read documents: every element with what could be read of it, and where it came from.

The readers of both formats produce these drafts; the semantic checks run on them, skipping
whatever was already found broken (a None field), so one mistake is reported once and not again
by every check that looks at it. Only a draft without problems is turned into the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from shoal.model.cluster import ClusterSpec, Grouping, Instance, MemberRef, NodeGroup, UnitPart
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.policies import (
    DeletionPolicy,
    HealthPolicy,
    ScalingPolicy,
    StrayHandling,
    UpdatePolicy,
)
from shoal.model.profile import Profile

_T = TypeVar("_T")

Located = tuple[str, str]
"""A text as written and its JSON pointer."""


@dataclass(slots=True)
class PartDraft:
    part: str | None
    profile: Profile | None
    path: str


@dataclass(slots=True)
class InstanceDraft:
    path: str
    label: str | None
    """The name as written, if it is text at all (also when it is not a valid name)."""
    name: str | None = None
    profile: Profile | None = None
    zone: str | None = None
    depends_on: list[Located] | None = field(default_factory=list)


@dataclass(slots=True)
class GroupDraft:
    path: str
    label: str | None
    name: str | None = None
    parts: list[PartDraft] | None = None
    count: int | None = None
    min_size: int | None = 0
    max_size: int | None = None
    zones: tuple[str, ...] | None = ()
    labels: dict[str, str] | None = field(default_factory=dict)
    role: str | None = None
    depends_on: list[Located] | None = field(default_factory=list)
    health: HealthPolicy | None = None
    """None: absent, or broken (then a problem was reported); likewise for the other policies."""
    update: UpdatePolicy | None = None
    deletion: DeletionPolicy | None = None
    scaling: ScalingPolicy | None = None

    @property
    def is_unit(self) -> bool:
        return self.parts is not None and any(p.part is not None for p in self.parts)


@dataclass(slots=True)
class GroupingDraft:
    path: str
    label: str | None
    members_path: str
    name: str | None = None
    members: list[Located] | None = None
    rule: Rule | None = None
    scope: Scope | None = Scope.HOST
    max_per_domain: int | None = None
    max_skew: int | None = None


@dataclass(slots=True)
class ClusterDraft:
    name: str | None
    objective: Objective | None = Objective.SPREAD
    metadata: dict[str, str] | None = field(default_factory=dict)
    instances: list[InstanceDraft] = field(default_factory=list)
    groups: list[GroupDraft] = field(default_factory=list)
    groupings: list[GroupingDraft] = field(default_factory=list)
    health: HealthPolicy | None = None
    """None: absent, or broken (then a problem was reported); likewise for `deletion`."""
    deletion: DeletionPolicy | None = None
    strays: StrayHandling | None = StrayHandling.REPORT


class IncompleteDraftError(Exception):
    """A draft lacked a value although no problem was reported: a bug in a reader."""


def _need(value: _T | None, what: str) -> _T:
    if value is None:
        raise IncompleteDraftError(f"no problem was reported, yet {what} is missing")
    return value


def build(draft: ClusterDraft) -> ClusterSpec:
    """The model of a draft that produced no problems."""
    return ClusterSpec(
        name=_need(draft.name, "the cluster name"),
        node_groups=tuple(_group(g) for g in draft.groups),
        instances=tuple(_instance(i) for i in draft.instances),
        groupings=tuple(_grouping(g) for g in draft.groupings),
        objective=_need(draft.objective, "the objective"),
        metadata=_need(draft.metadata, "the metadata"),
        health=draft.health,
        deletion=draft.deletion,
        strays=_need(draft.strays, "the stray handling"),
    )


def _profile(value: Profile | None, what: str) -> Profile:
    if value is None:
        raise IncompleteDraftError(f"no problem was reported, yet {what} is missing")
    return value


def _names(items: list[Located] | None, what: str) -> tuple[str, ...]:
    return tuple(text for text, _ in _need(items, what))


def _group(g: GroupDraft) -> NodeGroup:
    return NodeGroup(
        name=_need(g.name, f"the name at {g.path}"),
        parts=tuple(
            UnitPart(p.part, _profile(p.profile, f"the profile at {p.path}"))
            for p in _need(g.parts, f"the profile at {g.path}")
        ),
        count=_need(g.count, f"the count at {g.path}"),
        min_size=_need(g.min_size, f"the min at {g.path}"),
        max_size=g.max_size,
        zones=_need(g.zones, f"the zones at {g.path}"),
        labels=_need(g.labels, f"the labels at {g.path}"),
        role=g.role,
        depends_on=_names(g.depends_on, f"depends_on at {g.path}"),
        health=g.health,
        update=g.update,
        deletion=g.deletion,
        scaling=g.scaling,
    )


def _instance(i: InstanceDraft) -> Instance:
    return Instance(
        name=_need(i.name, f"the name at {i.path}"),
        profile=_profile(i.profile, f"the profile at {i.path}"),
        zone=i.zone,
        depends_on=_names(i.depends_on, f"depends_on at {i.path}"),
    )


def _grouping(g: GroupingDraft) -> Grouping:
    return Grouping(
        name=_need(g.name, f"the name at {g.path}"),
        members=tuple(MemberRef.parse(m) for m in _names(g.members, f"members at {g.path}")),
        rule=_need(g.rule, f"the rule at {g.path}"),
        scope=_need(g.scope, f"the scope at {g.path}"),
        max_per_domain=1 if g.max_per_domain is None else g.max_per_domain,
        max_skew=1 if g.max_skew is None else g.max_skew,
    )
