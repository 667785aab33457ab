"""Action dependencies as Senlin shows them (`depends_on`, `depended_by`): a cluster action
waits for its steps, and a step for the steps before it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, select

from shoal.model.enums import ActionKind
from shoal.store.tables import action_deps, actions


def dependencies(
    conn: Connection, ids: list[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """For each action of `ids`: the actions it waits for, and the actions waiting for it."""
    on: dict[str, list[str]] = defaultdict(list)
    by: dict[str, list[str]] = defaultdict(list)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        q = select(action_deps).where(
            action_deps.c.action_id.in_(chunk) | action_deps.c.depends_on.in_(chunk)
        )
        for row in conn.execute(q):
            on[row.action_id].append(row.depends_on)
            by[row.depends_on].append(row.action_id)
        steps = select(actions.c.id, actions.c.parent_id).where(
            actions.c.kind != ActionKind.BARRIER,
            actions.c.parent_id.in_(chunk) | actions.c.id.in_(chunk),
        )
        for row in conn.execute(steps):
            if row.parent_id is not None:
                on[row.parent_id].append(row.id)
                by[row.id].append(row.parent_id)
    return dict(on), dict(by)


def ids_with_prefix(conn: Connection, prefix: str, project_id: str | None) -> list[str]:
    """At most two action ids starting with `prefix` (a Senlin short id)."""
    q = select(actions.c.id).where(actions.c.id.startswith(prefix, autoescape=True)).limit(2)
    if project_id is not None:
        q = q.where(actions.c.project_id == project_id)
    return [str(i) for i in conn.execute(q).scalars()]


def kinds_and_inputs(conn: Connection, ids: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        q = select(actions.c.id, actions.c.kind, actions.c.inputs).where(actions.c.id.in_(chunk))
        for row in conn.execute(q):
            out[row.id] = (str(row.kind), dict(row.inputs or {}))
    return out


@dataclass(frozen=True, slots=True)
class Ended:
    """An ended top-level action, as the façade's words about its target need it."""

    kind: str
    inputs: dict[str, Any]
    created_at: float


def latest_of_clusters(
    conn: Connection, cluster_ids: Iterable[str], per_cluster: int = 20
) -> dict[str, list[Ended]]:
    """For each cluster: its latest ended top-level cluster actions (not a node's), newest
    first, at most `per_cluster` (the words Senlin leaves in a cluster's `status_reason` name
    the last operation that evaluated it)."""
    out: dict[str, list[Ended]] = {}
    for cid in dict.fromkeys(cluster_ids):
        q = (
            select(actions.c.kind, actions.c.inputs, actions.c.created_at)
            .where(
                actions.c.cluster_id == cid,
                actions.c.parent_id.is_(None),
                actions.c.node_id.is_(None),
                actions.c.ended_at.is_not(None),
            )
            .order_by(actions.c.created_at.desc())
            .limit(per_cluster)
        )
        out[cid] = [Ended(str(r.kind), dict(r.inputs or {}), r.created_at) for r in conn.execute(q)]
    return out


def latest_of_nodes(conn: Connection, node_ids: list[str]) -> dict[str, Ended]:
    """For each node that has one: its latest ended top-level action of its own (the façade's
    node actions: check, recover, update, operations, a standalone node's create)."""
    out: dict[str, Ended] = {}
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start : start + 500]
        q = (
            select(actions.c.node_id, actions.c.kind, actions.c.inputs, actions.c.created_at)
            .where(
                actions.c.node_id.in_(chunk),
                actions.c.parent_id.is_(None),
                actions.c.ended_at.is_not(None),
            )
            .order_by(actions.c.created_at)
        )
        for r in conn.execute(q):
            out[r.node_id] = Ended(str(r.kind), dict(r.inputs or {}), r.created_at)
    return out
