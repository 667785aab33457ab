"""The changes a request makes to a stored cluster document, as pure functions.

Each takes a copy of the document (the native tree, as stored) and what the request said, and
returns the edited document, or refuses with every problem found, as a `Problem` per request
field. Nothing here reads or writes the store: `ClusterService` runs an edit inside its one
submit path (lock, validate, place, record), and tests run edits on plain documents.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shoal.model.problems import Problem
from shoal.model.software import GENERATED_MARK
from shoal.service.errors import Conflict, Invalid, NotFound
from shoal.service.resize import Adjustment, new_count
from shoal.store.records import NodeRecord

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
class Resize:
    """A resize request: how to change a node group's count, and its new bounds if any."""

    adjustment: Adjustment
    number: float
    nodegroup: str | None = None
    min_step: int = 1
    strict: bool = True
    min_size: int | None = None
    max_size: int | None = None
    pointer: str = "/number"
    """The request field the number came from (named by a refusal)."""


def resize(doc: Document, r: Resize) -> Document:
    group = pick_group(doc, r.nodegroup)
    if r.min_size is not None:
        group["min"] = r.min_size
    if r.max_size is not None:
        group["max"] = r.max_size
    group["count"] = new_count(
        int(group.get("count", 0)),
        r.adjustment,
        r.number,
        min_size=int(group.get("min", 0)),
        max_size=group.get("max"),
        min_step=r.min_step,
        strict=r.strict,
        pointer=r.pointer,
    )
    return doc


def add_instances(doc: Document, instances: Sequence[Mapping[str, Any]]) -> Document:
    doc.setdefault("instances", []).extend(copy.deepcopy(list(instances)))
    return doc


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
        group["count"] = int(group.get("count", 0)) - 1
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


def add_node_group(doc: Document, group: Mapping[str, Any]) -> Document:
    doc.setdefault("node_groups", []).append(copy.deepcopy(dict(group)))
    return doc


def check_group_changes(changes: Mapping[str, Any]) -> None:
    """Refuse, naming each, fields that cannot be changed in place."""
    bad = sorted(set(changes) - GROUP_FIELDS)
    if bad:
        raise Invalid(
            "these node group fields cannot be changed in place",
            [Problem(f"/{k}", f"unknown or read-only field {k!r}") for k in bad],
        )


def update_node_group(doc: Document, name: str, changes: Mapping[str, Any]) -> Document:
    check_group_changes(changes)
    pick_group(doc, name).update(copy.deepcopy(dict(changes)))
    return doc


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


def pick_group(doc: Document, name: str | None) -> dict[str, Any]:
    """The node group a request names; with no name, the only one (else a refusal)."""
    groups: list[dict[str, Any]] = doc.get("node_groups", [])
    if name is None:
        if len(groups) == 1:
            return groups[0]
        raise Invalid(
            "say which node group: this cluster has "
            + (
                f"{len(groups)} node groups ({', '.join(g['name'] for g in groups)})"
                if groups
                else "none"
            ),
            [Problem("/nodegroup", "required when a cluster has more than one node group")],
        )
    for g in groups:
        if g["name"] == name:
            return g
    raise NotFound(f"no node group {name!r}", [Problem("/nodegroup", f"no node group {name!r}")])


def drop_members(doc: Document, names: set[str]) -> None:
    """Remove references to deleted groups or instances from groupings (and empty groupings)."""
    kept = []
    for g in doc.get("groupings", []):
        members = [m for m in g.get("members", []) if m.split("/", 1)[0] not in names]
        if members:
            kept.append(dict(g, members=members))
    doc["groupings"] = kept
