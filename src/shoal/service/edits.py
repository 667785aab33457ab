"""The changes a request makes to a stored cluster, as typed values.

Each change is a frozen value (`Resize`, `AddInstances`, `RemoveNodes`, `AddGroup`,
`UpdateGroup`, `DeleteGroup`, `ReplaceDocument`, `AdoptNodes`, `ReleaseNodes`, `Converge`,
`ScaleByPolicy`, `ScaleWorkload`, `ScaleWorkloadByPolicy`) with one `apply(document, scene)`:
given a copy of the stored document (the native tree) and what the store says of the cluster
now (`Scene`), it returns the edited document, the nodes it removes by name and the store
writes it needs (`service/effects.py`), or refuses with every problem found, as a `Problem`
per request field. Nothing here reads or writes the store: `ClusterService` runs the edits of
a request in its one submit path (lock, validate, place, record, perform the effects), and
tests run them on plain documents.

A node group's `count` is followed by reading calls: `ClusterService.scale` -> `Resize` ->
`Resize.apply` -> `set_count` -> the document `_submit` stores.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from shoal.model.cluster import ClusterSpec, NodeGroup
from shoal.model.problems import Problem
from shoal.model.software import GENERATED_MARK
from shoal.model.workloads import Workload
from shoal.service.effects import Effect, JoinNodes, LeaveNodes, ScaledAt, Triggered
from shoal.service.errors import Conflict, Invalid, NotFound, NotReleasable
from shoal.service.resize import Adjustment, new_count
from shoal.service.triggers import (
    Scalable,
    bounded,
    check_cooldown,
    effective_policy,
    scaled,
    scaled_count,
)
from shoal.store.records import ClusterRecord, NodeRecord

Document = dict[str, Any]
"""A stored native cluster document (validated by `cluster_from_tree` after every edit)."""

GROUP_FIELDS = frozenset(
    {
        "count",
        "min",
        "max",
        "zones",
        "labels",
        "role",
        "depends_on",
        "profile",
        "unit",
        "health",
        "update",
        "deletion",
        "scaling",
    }
)
"""The node group fields a request may change in place (not its name)."""


def replace_document(doc: Document, new_doc: Document) -> Document:
    """A whole new document for the same cluster (renaming is refused)."""
    if new_doc["name"] != doc["name"]:
        raise Invalid(
            "a cluster cannot be renamed",
            [Problem("/name", f"is {new_doc['name']!r}, the cluster is {doc['name']!r}")],
        )
    return keep_generated(doc, copy.deepcopy(new_doc))


def keep_generated(doc: Document, new_doc: Document) -> Document:
    """Secrets Shoal drew (a Heat RandomString) keep their stored values when the new document
    drew them from the same properties (same description: mark and fingerprint), as Heat keeps
    a RandomString across stack updates unless its properties (e.g. `salt`) change."""
    old = doc.get("parameters")
    new = new_doc.get("parameters")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new_doc
    for name, param in new.items():
        before = old.get(name)
        if not (isinstance(param, dict) and isinstance(before, dict)):
            continue
        mark = param.get("description")
        drawn = isinstance(mark, str) and mark.startswith(GENERATED_MARK + " ")
        same = before.get("description") == mark and "default" in before
        if drawn and same and param.get("hidden") is True:
            param["default"] = before["default"]
    return new_doc


@dataclass(frozen=True, slots=True)
class Scene:
    """What an edit may read besides the document: the cluster as stored (None: a cluster
    being created), its nodes, its stored document read as a cluster (None when it no longer
    reads), and the time of the change."""

    cluster: ClusterRecord | None
    nodes: tuple[NodeRecord, ...] = ()
    current: ClusterSpec | None = None
    now: float = 0.0


@dataclass(frozen=True, slots=True)
class Applied:
    """An edit's outcome: the new document, the nodes it removes (by name; empty: the deletion
    policies choose), the store writes it needs, and the facts it decided (recorded with the
    action beside what the request said)."""

    document: Document
    victims: tuple[str, ...] = ()
    effects: tuple[Effect, ...] = ()
    decided: Mapping[str, Any] = field(default_factory=dict)


class Edit(Protocol):
    def apply(self, doc: Document, scene: Scene) -> Applied: ...


def apply_all(edits: Sequence[Edit], doc: Document, scene: Scene) -> Applied:
    """The edits of one request, in order, on one document: their victims, effects and
    decisions together."""
    victims: list[str] = []
    effects: list[Effect] = []
    decided: dict[str, Any] = {}
    for edit in edits:
        out = edit.apply(doc, scene)
        doc = out.document
        victims += [v for v in out.victims if v not in victims]
        effects += out.effects
        decided.update(out.decided)
    return Applied(doc, tuple(victims), tuple(effects), decided)


# -- finding a node group ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroupWording:
    """How a face words a node group it cannot find: `{cluster}`, `{count}`, `{names}` and
    `{name}` are filled in; `pointer` None leaves the request field unnamed."""

    ambiguous: str = "say which node group: this cluster has {count} node groups ({names})"
    none: str = "say which node group: this cluster has none"
    missing: str = "no node group {name!r}"
    pointer: str | None = "/nodegroup"
    ambiguous_problem: str = "required when a cluster has more than one node group"


NATIVE = GroupWording()
RECEIVER = GroupWording(
    ambiguous="say which node group: cluster {cluster} has {count}",
    none="say which node group: cluster {cluster} has 0",
    missing="no node group {name!r} in cluster {cluster}",
    ambiguous_problem="required unless the cluster has one node group",
)


def group_name(
    names: Sequence[str], wanted: str | None, cluster: str, wording: GroupWording = NATIVE
) -> str:
    """The node group a request names; with no name, the only one (else a refusal)."""
    fill = {"cluster": cluster, "count": len(names), "names": ", ".join(names), "name": wanted}
    if wanted is None:
        if len(names) == 1:
            return names[0]
        said = (wording.ambiguous if names else wording.none).format(**fill)
        where = wording.pointer
        raise Invalid(said, [Problem(where, wording.ambiguous_problem)] if where else [])
    if wanted in names:
        return wanted
    where = wording.pointer
    said = wording.missing.format(**fill)
    raise NotFound(said, [Problem(where, f"no node group {wanted!r}")] if where else [])


def pick_group(doc: Document, name: str | None, wording: GroupWording = NATIVE) -> dict[str, Any]:
    """The node group a request names, in the document (to be edited in place)."""
    groups: list[dict[str, Any]] = doc.get("node_groups", [])
    chosen = group_name([g["name"] for g in groups], name, str(doc.get("name")), wording)
    return next(g for g in groups if g["name"] == chosen)


def spec_group(spec: ClusterSpec, name: str | None, wording: GroupWording = NATIVE) -> NodeGroup:
    """The node group a request names, in a read cluster."""
    chosen = group_name([g.name for g in spec.node_groups], name, spec.name, wording)
    found = spec.node_group(chosen)
    assert found is not None
    return found


# -- the edits --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplaceDocument:
    """A whole new document: for a cluster being created, its first; for an existing one,
    the same cluster changed (renaming is refused; drawn secrets are kept)."""

    document: Mapping[str, Any]

    def apply(self, doc: Document, scene: Scene) -> Applied:
        new_doc = copy.deepcopy(dict(self.document))
        if scene.cluster is None:
            return Applied(new_doc)
        return Applied(replace_document(doc, new_doc))


@dataclass(frozen=True, slots=True)
class Resize:
    """How to change a node group's count, and its new bounds if any (`max_size` below 0:
    no upper bound). The one resize every face uses."""

    adjustment: Adjustment
    number: float
    nodegroup: str | None = None
    min_step: int = 1
    strict: bool = True
    min_size: int | None = None
    max_size: int | None = None
    pointer: str = "/number"
    """The request field the number came from (named by a refusal)."""
    wording: GroupWording = NATIVE

    def apply(self, doc: Document, scene: Scene) -> Applied:
        return Applied(resize(doc, self))


def resize(doc: Document, r: Resize) -> Document:
    group = pick_group(doc, r.nodegroup, r.wording)
    if r.min_size is not None:
        group["min"] = r.min_size
    if r.max_size is not None:
        if r.max_size < 0:
            group.pop("max", None)
        else:
            group["max"] = r.max_size
    high = group.get("max")
    set_count(
        group,
        new_count(
            int(group.get("count", 0)),
            r.adjustment,
            r.number,
            min_size=int(group.get("min", 0)),
            max_size=None if high is None else int(high),
            min_step=r.min_step,
            strict=r.strict,
            pointer=r.pointer,
        ),
    )
    return doc


@dataclass(frozen=True, slots=True)
class ScaleWorkload:
    """A workload's replica count set exactly (`shoal scale --workload`), within its `min` and
    `max`; the keeper (engine/workloads.py) starts or stops the difference once the cluster's
    placement of every replica has passed."""

    workload: str
    replicas: int

    def apply(self, doc: Document, scene: Scene) -> Applied:
        found = doc.get("workloads")
        w = found.get(self.workload) if isinstance(found, dict) else None
        if not isinstance(w, dict):
            names = sorted(found) if isinstance(found, dict) else []
            raise NotFound(
                f"cluster {doc.get('name')!r} has no workload {self.workload!r}"
                + (f" (it has {', '.join(names)})" if names else " (it has none)")
            )
        low = int(w.get("min", 0))
        high = w.get("max")
        problems = []
        if self.replicas < low:
            problems.append(Problem("/replicas", f"{self.replicas} is below the min {low}"))
        if high is not None and self.replicas > int(high):
            problems.append(Problem("/replicas", f"{self.replicas} is above the max {high}"))
        if problems:
            raise Invalid(
                f"workload {self.workload} cannot have {self.replicas} replicas", problems
            )
        w["replicas"] = self.replicas
        return Applied(doc, decided={"workload": self.workload, "replicas": self.replicas})


WORKLOAD_SCALED = "workload/"
"""The prefix of a workload's key in a cluster's `scaled_at` (node groups use their bare name;
`/` is in no name, so the two never meet)."""


def spec_workload(spec: ClusterSpec, name: str) -> Workload:
    """The workload a receiver names, in a read cluster, or a 404 naming the ones it has."""
    found = next((w for w in spec.workloads if w.name == name), None)
    if found is None:
        names = ", ".join(w.name for w in spec.workloads) or "none"
        raise NotFound(
            f"cluster {spec.name!r} has no workload {name!r} (it has {names})",
            [Problem("/workload", f"no workload {name!r} in cluster {spec.name!r}")],
        )
    return found


@dataclass(frozen=True, slots=True)
class ScaleWorkloadByPolicy:
    """A receiver's trigger on a workload: its replicas one step out or in by its `scaling`
    policy with the receiver's params over it (neither: one replica at a time, 60 s cooldown),
    within its `min` and `max` (clamped, or refused with `/params/number` when `strict`),
    refused within the cooldown; then exactly as `ScaleWorkload` (`shoal scale --workload`),
    with the workload's scale time and the receiver's fire time written with it."""

    receiver_id: str
    workload: str
    params: Mapping[str, Any]
    out: bool

    def apply(self, doc: Document, scene: Scene) -> Applied:
        spec = scene.current
        if spec is None or scene.cluster is None:
            raise Invalid("the cluster's stored document no longer reads as a cluster")
        w = spec_workload(spec, self.workload)
        params = dict(self.params)
        policy = effective_policy(w.scaling, params)
        key = WORKLOAD_SCALED + w.name
        last = scene.cluster.scaled_at.get(key)
        check_cooldown(w.name, last, policy, scene.now, what="workload")
        count = scaled(Scalable.of_workload(w), policy, out=self.out)
        applied = ScaleWorkload(w.name, count).apply(doc, scene)
        decided = {
            **applied.decided,
            "adjustment_type": str(policy.adjustment_type),
            "number": policy.number,
        }
        effects = (ScaledAt(key), Triggered(self.receiver_id))
        return Applied(applied.document, effects=effects, decided=decided)


def set_count(group: dict[str, Any], count: int) -> None:
    """Where every change of a node group's count lands in the document."""
    group["count"] = count


@dataclass(frozen=True, slots=True)
class ScaleByPolicy:
    """A receiver's trigger: its node group scaled one step out or in by the group's scaling
    policy with the receiver's overrides, refused within the cooldown; the group's scale time
    and the receiver's fire time are written with it."""

    receiver_id: str
    nodegroup: str | None
    params: Mapping[str, Any]
    out: bool

    def apply(self, doc: Document, scene: Scene) -> Applied:
        spec = scene.current
        if spec is None or scene.cluster is None:
            raise Invalid("the cluster's stored document no longer reads as a cluster")
        group = spec_group(spec, self.nodegroup, RECEIVER)
        params = dict(self.params)
        policy = effective_policy(group.scaling, params)
        check_cooldown(group.name, scene.cluster.scaled_at.get(group.name), policy, scene.now)
        group = bounded(group, params)
        count = scaled_count(group, policy, out=self.out)
        decided: dict[str, Any] = {
            "nodegroup": group.name,
            "adjustment_type": str(policy.adjustment_type),
            "number": policy.number,
            "count": count,
        }
        bounds = "min_size" in params or "max_size" in params
        if bounds:
            decided.update(min_size=group.min_size, max_size=group.max_size)
        high = -1 if group.max_size is None else group.max_size
        step = Resize(
            Adjustment.EXACT_CAPACITY,
            count,
            group.name,
            strict=False,
            min_size=group.min_size if bounds else None,
            max_size=high if bounds else None,
        )
        effects = (ScaledAt(group.name), Triggered(self.receiver_id))
        return Applied(resize(doc, step), effects=effects, decided=decided)


@dataclass(frozen=True, slots=True)
class AddInstances:
    instances: tuple[Mapping[str, Any], ...]

    def apply(self, doc: Document, scene: Scene) -> Applied:
        doc.setdefault("instances", []).extend(copy.deepcopy([dict(i) for i in self.instances]))
        return Applied(doc)


@dataclass(frozen=True, slots=True)
class RemoveNodes:
    """Nodes removed (by id or name) and deleted."""

    refs: tuple[str, ...]

    def apply(self, doc: Document, scene: Scene) -> Applied:
        edited, victims = remove_nodes(doc, list(scene.nodes), self.refs)
        return Applied(edited, tuple(victims))


@dataclass(frozen=True, slots=True)
class AdoptNodes:
    """Standalone nodes join the cluster as they are: each becomes an instance of the
    document, made already, and its row joins the cluster in the same transaction."""

    nodes: tuple[NodeRecord, ...]
    names: tuple[str, ...] = ()
    """The name each takes as a member, in order (default: its own): a name already taken in
    the cluster cannot be an instance's."""

    def apply(self, doc: Document, scene: Scene) -> Applied:
        names = self.names or tuple(n.name for n in self.nodes)
        joining = [
            {"name": name, "profile": copy.deepcopy(n.profile)}
            for n, name in zip(self.nodes, names, strict=True)
        ]
        doc.setdefault("instances", []).extend(joining)
        ids = tuple(n.id for n in self.nodes)
        return Applied(doc, effects=(JoinNodes(ids, names),))


@dataclass(frozen=True, slots=True)
class ReleaseNodes:
    """Members leave the cluster and stay, standalone: a group member lowers its group's
    count by one, an instance leaves the document."""

    nodes: tuple[NodeRecord, ...]
    names: tuple[str, ...] = ()
    """The name each takes back, standalone, in order (default: the one it has)."""

    def apply(self, doc: Document, scene: Scene) -> Applied:
        groups = {g["name"]: g for g in doc.get("node_groups", [])}
        gone: set[str] = set()
        for n in self.nodes:
            group = groups.get(n.group_name)
            if group is None:
                gone.add(n.name)
                continue
            count = int(group.get("count", 0))
            if "unit" in group or count - 1 < int(group.get("min", 0)):
                raise NotReleasable(
                    f"Node {n.name} cannot leave its node group (a unit of several "
                    "members, or at its min); use recover with operation REPLACE."
                )
            set_count(group, count - 1)
        doc["instances"] = [i for i in doc.get("instances", []) if i["name"] not in gone]
        ids = tuple(n.id for n in self.nodes)
        return Applied(doc, effects=(LeaveNodes(ids, self.names),))


@dataclass(frozen=True, slots=True)
class AddGroup:
    group: Mapping[str, Any]

    def apply(self, doc: Document, scene: Scene) -> Applied:
        doc.setdefault("node_groups", []).append(copy.deepcopy(dict(self.group)))
        return Applied(doc)


@dataclass(frozen=True, slots=True)
class UpdateGroup:
    """Fields of a node group changed in place; a field that cannot be is refused when the
    value is made, before anything is read or locked."""

    name: str
    changes: Mapping[str, Any]

    def __post_init__(self) -> None:
        check_group_changes(self.changes)

    def apply(self, doc: Document, scene: Scene) -> Applied:
        pick_group(doc, self.name).update(copy.deepcopy(dict(self.changes)))
        return Applied(doc)


@dataclass(frozen=True, slots=True)
class DeleteGroup:
    name: str

    def apply(self, doc: Document, scene: Scene) -> Applied:
        return Applied(delete_node_group(doc, self.name))


@dataclass(frozen=True, slots=True)
class Converge:
    """No change to the document: the cluster converges on what it declares (Senlin's check;
    a recover with nothing to repair)."""

    def apply(self, doc: Document, scene: Scene) -> Applied:
        return Applied(doc)


def remove_nodes(
    doc: Document, nodes: list[NodeRecord], refs: Sequence[str]
) -> tuple[Document, list[str]]:
    """Remove nodes (by id or name): a group member lowers its group's count by one (its
    whole unit replica goes), an instance leaves the document. Returns the edited document
    and the names of the nodes to delete (the victims)."""
    by_ref = {n.id: n for n in nodes} | {n.name: n for n in nodes}
    missing = [r for r in refs if r not in by_ref]
    if missing:
        raise NotFound(
            f"no node {', '.join(missing)} in this cluster",
            [Problem(f"/nodes/{refs.index(m)}", "no such node") for m in missing],
        )
    victims: list[str] = []
    gone_instances: set[str] = set()
    for r in dict.fromkeys(refs):
        n = by_ref[r]
        group = next((g for g in doc.get("node_groups", []) if g["name"] == n.group_name), None)
        if group is None:
            gone_instances.add(n.name)
            continue
        replica_nodes = [
            m.name for m in nodes if m.group_name == n.group_name and m.replica == n.replica
        ]
        if any(v in victims for v in replica_nodes):
            continue
        victims.extend(replica_nodes)
        set_count(group, int(group.get("count", 0)) - 1)
        if group["count"] < int(group.get("min", 0)):
            raise Conflict(
                f"removing {n.name} would take node group {n.group_name} below its min "
                f"{group.get('min', 0)}",
                [Problem(f"/nodes/{refs.index(r)}", "below the group's min")],
            )
    if gone_instances:
        doc["instances"] = [i for i in doc.get("instances", []) if i["name"] not in gone_instances]
        drop_members(doc, gone_instances)
    return doc, victims


def check_group_changes(changes: Mapping[str, Any]) -> None:
    """Refuse, naming each, fields that cannot be changed in place."""
    bad = sorted(set(changes) - GROUP_FIELDS)
    if bad:
        raise Invalid(
            "these node group fields cannot be changed in place",
            [Problem(f"/{k}", f"unknown or read-only field {k!r}") for k in bad],
        )


def delete_node_group(doc: Document, name: str) -> Document:
    pick_group(doc, name)
    users = [
        x["name"]
        for x in doc.get("node_groups", []) + doc.get("instances", [])
        if name in x.get("depends_on", [])
    ]
    if users:
        raise Conflict(
            f"{', '.join(users)} depend(s) on node group {name}; change that first",
            [Problem("", f"{u} depends on {name}") for u in users],
        )
    doc["node_groups"] = [g for g in doc["node_groups"] if g["name"] != name]
    drop_members(doc, {name})
    return doc


def drop_members(doc: Document, names: set[str]) -> None:
    """Remove references to deleted groups or instances from groupings (and empty groupings)."""
    kept = []
    for g in doc.get("groupings", []):
        members = [m for m in g.get("members", []) if m.split("/", 1)[0] not in names]
        if members:
            kept.append(dict(g, members=members))
    doc["groupings"] = kept
