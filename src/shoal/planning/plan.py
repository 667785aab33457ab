"""The plan: create, delete and attach steps, with the dependencies that order them.

Dependencies come from three places: `depends_on` between node groups and instances (creation
waits for what it depends on; deletion runs in reverse), volumes (attach after both the volume
and its server exist), and barriers — one per group and direction — so a group of 1,000 nodes
waiting on another of 1,000 costs 2,000 edges, not a million.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import NodeKind, Rule, Scope
from shoal.model.nodes import NodeSpec, expand, member_units
from shoal.planning.replicas import ObservedNode


class StepKind(StrEnum):
    CREATE = "create"
    DELETE = "delete"
    ATTACH = "attach"
    RECREATE = "recreate"
    """Create an existing node again in place (same id, same host): drift repair."""
    REBOOT = "reboot"
    REBUILD = "rebuild"
    BARRIER = "barrier"


@dataclass(slots=True)
class Step:
    """One thing to do. `id` is unique within the plan; `depends_on` names other steps' ids."""

    id: str
    kind: StepKind
    node: str
    """The node created, deleted or attached (a volume), or the barrier's label."""
    depends_on: list[str] = field(default_factory=list)
    spec: NodeSpec | None = None
    host: str | None = None
    zone: str | None = None
    server: str | None = None
    """For ATTACH: the server the volume attaches to."""


@dataclass(slots=True)
class Plan:
    steps: list[Step]

    def of(self, kind: StepKind) -> list[Step]:
        return [s for s in self.steps if s.kind is kind]

    def summary(self) -> dict[str, int]:
        out = {k.value: 0 for k in StepKind if k is not StepKind.BARRIER}
        for s in self.steps:
            if s.kind is not StepKind.BARRIER:
                out[s.kind.value] += 1
        return out

    @property
    def empty(self) -> bool:
        return not any(s.kind is not StepKind.BARRIER for s in self.steps)


def attach_targets(spec: ClusterSpec, nodes: list[NodeSpec]) -> dict[str, str]:
    """Volume node to the server node it attaches to.

    A unit's volumes attach to the unit's server; a standalone volume attaches to the one server
    a host-affinity grouping ties it to (the seed vcluster's server-with-its-volume).
    """
    out: dict[str, str] = {}
    if all(n.kind is not NodeKind.VOLUME for n in nodes):
        return out  # only volumes attach (issue 23: a cluster of servers indexes nothing)
    by_unit: dict[str, list[NodeSpec]] = {}
    for n in nodes:
        by_unit.setdefault(n.unit, []).append(n)
    for members in by_unit.values():
        servers = [n for n in members if n.kind is NodeKind.SERVER]
        if servers:
            for v in members:
                if v.kind is NodeKind.VOLUME:
                    out[v.name] = servers[0].name
    instance_kind = {i.name: i.profile.kind for i in spec.instances}
    for g in spec.groupings:
        if g.rule is not Rule.AFFINITY or g.scope is not Scope.HOST:
            continue
        units = [u for ref in g.members for u in member_units(spec, ref)]
        server_names = [u for u in units if instance_kind.get(u) is NodeKind.SERVER]
        if len(server_names) == 1:
            for u in units:
                if instance_kind.get(u) is NodeKind.VOLUME and u not in out:
                    out[u] = server_names[0]
    return out


def _entity(n: NodeSpec) -> str:
    return n.group


def make_plan(
    desired: ClusterSpec | None,
    hosts: Mapping[str, str],
    zones: Mapping[str, str],
    observed: list[ObservedNode],
    attached: Mapping[str, str] | None = None,
    dependencies: Mapping[str, tuple[str, ...]] | None = None,
    expanded: list[NodeSpec] | None = None,
) -> Plan:
    """Steps from what exists (`observed`) to `desired` placed at `hosts` (None: delete all).

    `attached` maps existing volume names to the server they are attached to; `dependencies`
    (group or instance to what it depends on) default to the desired cluster's, and should be
    given when deleting everything, so deletion still runs in reverse order. `expanded` is
    `expand(desired)` when the caller has it already.
    """
    if desired is None:
        want: list[NodeSpec] = []
    else:
        want = expand(desired) if expanded is None else expanded
    want_names = {n.name for n in want} if observed else set()
    have = {o.name: o for o in observed}
    deps: dict[str, tuple[str, ...]] = dict(dependencies or {})
    if desired is not None and dependencies is None:
        deps.update({g.name: g.depends_on for g in desired.node_groups})
        deps.update({i.name: i.depends_on for i in desired.instances})
    steps: list[Step] = []

    creates = [n for n in want if n.name not in have]
    targets = attach_targets(desired, want) if desired is not None else {}
    create_ids: dict[str, list[str]] = {}
    for n in creates:
        sid = f"create:{n.name}"
        steps.append(
            Step(sid, StepKind.CREATE, n.name, spec=n, host=hosts[n.name], zone=zones[n.name])
        )
        create_ids.setdefault(_entity(n), []).append(sid)
    # Issue 23: the sets and indexes below are made only when something uses them (a plain
    # 100,000-node create attaches nothing, waits on nothing, deletes nothing).
    creating = {n.name for n in creates} if targets else set()
    for n in creates if targets else ():
        server = targets.get(n.name)
        if n.kind is NodeKind.VOLUME and server is not None:
            after = [f"create:{x}" for x in (n.name, server) if x in creating]
            sid = f"attach:{n.name}"
            steps.append(Step(sid, StepKind.ATTACH, n.name, depends_on=after, server=server))
            create_ids[_entity(n)].append(sid)
    # Creation waits for what each entity depends on, through one barrier per entity.
    waits = any(dep in create_ids for e in create_ids for dep in deps.get(e, ()))
    by_id = {s.id: s for s in steps} if waits else {}
    for entity, ids in create_ids.items() if waits else ():
        for dep in deps.get(entity, ()):
            if dep in create_ids:
                barrier = f"created:{dep}"
                if barrier not in by_id:
                    b = Step(barrier, StepKind.BARRIER, dep, depends_on=list(create_ids[dep]))
                    steps.append(b)
                    by_id[barrier] = b
                for sid in ids:
                    if by_id[sid].kind is StepKind.CREATE:
                        by_id[sid].depends_on.append(barrier)

    deletes = [o for o in observed if o.name not in want_names]
    if not deletes:
        return Plan(steps)
    delete_ids: dict[str, list[str]] = {}
    for o in deletes:
        sid = f"delete:{o.name}"
        steps.append(Step(sid, StepKind.DELETE, o.name))
        delete_ids.setdefault(o.group, []).append(sid)
    by_id = {s.id: s for s in steps}
    deleting = {o.name for o in deletes}
    # A volume goes after the server it is attached to.
    for vol, server in (attached or {}).items():
        if vol in deleting and server in deleting:
            by_id[f"delete:{vol}"].depends_on.append(f"delete:{server}")
    # Deletion runs in reverse dependency order: what depends on X goes before X.
    for entity, ids in delete_ids.items():
        dependents = [e for e, ds in deps.items() if entity in ds and e in delete_ids]
        for e in dependents:
            barrier = f"deleted:{e}"
            if barrier not in by_id:
                b = Step(barrier, StepKind.BARRIER, e, depends_on=list(delete_ids[e]))
                steps.append(b)
                by_id[barrier] = b
            for sid in ids:
                by_id[sid].depends_on.append(barrier)
    return Plan(steps)
