"""What a Senlin node keeps beyond Shoal's node row (profile, metadata, role, tainted), and
standalone nodes: a node row with no cluster plus the top-level NODE_CREATE / NODE_DELETE
action that the engine's node workers run like any other node action."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, or_, select, update

from shoal.model.enums import ActionStatus
from shoal.store import actions as action_repo
from shoal.store import nodes as node_repo
from shoal.store.records import NewNode, NodeRecord
from shoal.store.tables import actions, nodes, placement_lock
from shoal.store.tables import senlin_nodes as t


@dataclass(frozen=True, slots=True)
class NodeExtras:
    node_id: str
    project_id: str
    profile_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    role: str = ""
    tainted: bool = False


def _values(e: NodeExtras) -> dict[str, Any]:
    return {
        "node_id": e.node_id,
        "project_id": e.project_id,
        "profile_id": e.profile_id,
        "metadata": e.metadata,
        "role": e.role,
        "tainted": e.tainted,
    }


def get_extras(conn: Connection, node_ids: list[str]) -> dict[str, NodeExtras]:
    out: dict[str, NodeExtras] = {}
    for start in range(0, len(node_ids), 500):
        chunk = node_ids[start : start + 500]
        for r in conn.execute(select(t).where(t.c.node_id.in_(chunk))).mappings():
            out[r["node_id"]] = NodeExtras(
                r["node_id"],
                r["project_id"],
                r["profile_id"],
                dict(r["metadata"] or {}),
                r["role"],
                bool(r["tainted"]),
            )
    return out


def put_extras(conn: Connection, extras: NodeExtras) -> None:
    exists = conn.execute(select(t.c.node_id).where(t.c.node_id == extras.node_id)).first()
    values = _values(extras)
    if exists is None:
        conn.execute(insert(t).values(**values))
    else:
        conn.execute(update(t).where(t.c.node_id == extras.node_id).values(**values))


def delete_extras(conn: Connection, node_id: str) -> None:
    conn.execute(delete(t).where(t.c.node_id == node_id))


def create_standalone(
    conn: Connection,
    node_row: NewNode,
    extras: NodeExtras,
    action: action_repo.NewAction,
    now: float,
) -> None:
    """The node row (with its host claim), its Senlin extras and the action that makes it, in
    the caller's transaction, so the claim and the work are recorded together."""
    node_repo.insert_nodes(conn, [node_row])
    put_extras(conn, extras)
    action_repo.insert_actions(conn, [action], now)


def lock_placement(conn: Connection, is_sqlite: bool, holder: str, now: float) -> None:
    """Take the placement lock, as the engine's planner does, so a standalone node's host claim
    and a cluster's planning never hand out the same capacity."""
    if not is_sqlite:
        conn.execute(select(placement_lock.c.id).where(placement_lock.c.id == 1).with_for_update())
    conn.execute(
        update(placement_lock).where(placement_lock.c.id == 1).values(holder=holder, updated_at=now)
    )


def busy_with(conn: Connection, node_id: str) -> str | None:
    """The id of an unfinished action on this node, if any."""
    live = (ActionStatus.INIT, ActionStatus.READY, ActionStatus.RUNNING)
    row = conn.execute(
        select(actions.c.id).where(actions.c.node_id == node_id, actions.c.status.in_(live))
    ).first()
    return None if row is None else str(row[0])


def create_action(conn: Connection, action: action_repo.NewAction, now: float) -> None:
    action_repo.insert_actions(conn, [action], now)


def record_profiles(
    conn: Connection,
    project_id: str,
    node_ids: list[str],
    profile_id: str | None,
    *,
    only_unset: bool,
) -> None:
    """Set the Senlin profile these nodes show: every node's (a cluster's profile change), or
    only those that show none of their own yet (`only_unset`: a change of the cluster's
    profile alone, after which its nodes keep showing the one they were made from)."""
    have = get_extras(conn, node_ids)
    for node_id in node_ids:
        found = have.get(node_id)
        if found is None:
            conn.execute(insert(t).values(**_values(NodeExtras(node_id, project_id, profile_id))))
        elif not only_unset or found.profile_id is None:
            conn.execute(update(t).where(t.c.node_id == node_id).values(profile_id=profile_id))


def named_or_prefixed(
    conn: Connection, project_id: str | None, ref: str, also_named: str | None = None
) -> list[NodeRecord]:
    """Live nodes named `ref`, or whose id starts with it (a Senlin short id), or whose name
    starts with `also_named` (the caller tells which of those it means); at most four."""

    def escaped(text: str) -> str:
        return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"

    alike = [nodes.c.name == ref, nodes.c.id.like(escaped(ref), escape="\\")]
    if also_named is not None:
        alike.append(nodes.c.name.like(escaped(also_named), escape="\\"))
    q = (
        select(nodes)
        .where(nodes.c.deleted_at.is_(None), or_(*alike))
        .order_by(nodes.c.created_at)
        .limit(4)
    )
    if project_id is not None:
        q = q.where(nodes.c.project_id == project_id)
    return [NodeRecord.from_row(r) for r in conn.execute(q).mappings()]
