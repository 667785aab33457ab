"""Live nodes counted per host and status in SQL, for the dashboard's topology (issue 23).

The topology drew every node; at 100,000 nodes loading them all to draw them takes minutes and
draws nothing readable. These counts are one GROUP BY, whatever the size: the view draws nodes
one by one below its maximum and counts per host above it. Kept apart from `store/nodes.py`,
whose writes are tuned elsewhere; this module only reads.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from shoal.model.enums import NodeStatus
from shoal.store.tables import nodes


@dataclass(frozen=True, slots=True)
class HostCount:
    """How many live nodes of one status sit on one host (None: not placed yet)."""

    host: str | None
    zone: str | None
    status: NodeStatus
    count: int


def count_by_host(
    conn: Connection, *, cluster_id: str | None, project_id: str | None
) -> list[HostCount]:
    """Live nodes of one cluster, or of a project (None: every project), counted per
    (host, zone, status). A host's nodes share its zone, so a host appears under one zone."""
    q = select(nodes.c.host, nodes.c.zone, nodes.c.status, func.count()).where(
        nodes.c.deleted_at.is_(None)
    )
    if cluster_id is not None:
        q = q.where(nodes.c.cluster_id == cluster_id)
    if project_id is not None:
        q = q.where(nodes.c.project_id == project_id)
    q = q.group_by(nodes.c.host, nodes.c.zone, nodes.c.status)
    return [
        HostCount(host, zone, NodeStatus(status), int(n))
        for host, zone, status, n in conn.execute(q)
    ]
