"""A settled cluster's status, judged against its document, with the reason in words.

Judging from the node rows alone is wrong twice over: a cluster whose creation failed before
any node was recorded has no rows, and `all()` of nothing is true, so it looked ACTIVE; and a
cluster whose failed nodes were dropped looked complete. So the declared node count (read from
the stored native document, no inventory needed) is part of the judgement: a cluster lacking a
declared node is never ACTIVE. A WARNING or ERROR always carries an explanation.
"""

from __future__ import annotations

from typing import Any

from shoal.model.enums import ClusterStatus, NodeStatus
from shoal.store import nodes as node_repo
from shoal.store.database import Connection
from shoal.store.nodes import Standing
from shoal.store.records import NodeRecord

_SAMPLES = 5


def declared_nodes(document: dict[str, Any]) -> int:
    """How many nodes a stored native document declares (O(groups), no per-node work)."""
    total = len(document.get("instances", []) or [])
    for g in document.get("node_groups", []) or []:
        parts = len(g["unit"]) if isinstance(g.get("unit"), dict) and g["unit"] else 1
        total += int(g.get("count", 0)) * parts
    return total


def current_nodes(nodes: list[NodeRecord]) -> list[NodeRecord]:
    """The nodes standing for declared ones (not those on their way out, nor renamed ones)."""
    return [
        n
        for n in nodes
        if n.status not in (NodeStatus.DELETING, NodeStatus.DELETED) and "~" not in n.name
    ]


def settled_status(nodes: list[NodeRecord], declared: int) -> tuple[ClusterStatus, str]:
    """ACTIVE when every declared node exists and is ACTIVE; else WARNING (some ACTIVE) or
    ERROR (none), with what is wrong."""
    live = current_nodes(nodes)
    troubled = [n for n in live if n.status is not NodeStatus.ACTIVE]
    return _judged(len(live), len(troubled), troubled[:_SAMPLES], declared)


def settled_standing(counted: Standing, declared: int) -> tuple[ClusterStatus, str]:
    """`settled_status` from the nodes counted in SQL (`store/nodes.standing`)."""
    return _judged(counted.current, counted.troubled, counted.samples, declared)


def standing_of(conn: Connection, cluster_id: str) -> Standing:
    """A cluster's nodes counted for `settled_standing`."""
    return node_repo.standing(conn, cluster_id, _SAMPLES)


def _judged(
    live: int, troubled: int, samples: list[NodeRecord], declared: int
) -> tuple[ClusterStatus, str]:
    missing = max(0, declared - live)
    if not missing and not troubled:
        return ClusterStatus.ACTIVE, ""
    words: list[str] = []
    if missing:
        words.append(f"{missing} of {declared} declared node(s) do not exist")
    if troubled:
        shown = ", ".join(
            f"{n.name} {n.status}" + (f" ({n.status_reason})" if n.status_reason else "")
            for n in samples[:_SAMPLES]
        )
        more = f" and {troubled - _SAMPLES} more" if troubled > _SAMPLES else ""
        words.append(f"{troubled} node(s) not ACTIVE: {shown}{more}")
    active = live - troubled
    status = ClusterStatus.WARNING if active else ClusterStatus.ERROR
    return status, "; ".join(words)
