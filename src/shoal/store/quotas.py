"""Quota rows and the usage they are checked against.

A project's overrides are stored per resource; the defaults live in settings. Usage counts
what a project holds (live clusters, live node rows with their demands) and what its accepted,
unplanned actions have reserved, so two concurrent requests cannot both spend the last unit.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select

from shoal.store.reservations import reserved_by_project
from shoal.store.tables import clusters, nodes, quotas


@dataclass(frozen=True, slots=True)
class Usage:
    clusters: int = 0
    nodes: int = 0
    vcpus: int = 0
    ram_mb: int = 0
    volume_gb: int = 0

    def of(self, resource: str) -> int:
        return int(getattr(self, resource))


def overrides(conn: Connection, project_id: str) -> dict[str, int]:
    q = select(quotas.c.resource, quotas.c.hard_limit).where(quotas.c.project_id == project_id)
    return {str(r[0]): int(r[1]) for r in conn.execute(q)}


def set_overrides(conn: Connection, project_id: str, limits: dict[str, int], now: float) -> None:
    """Replace the named resources' overrides (others keep theirs)."""
    if not limits:
        return
    conn.execute(
        delete(quotas).where(quotas.c.project_id == project_id, quotas.c.resource.in_(limits))
    )
    conn.execute(
        insert(quotas),
        [
            {"project_id": project_id, "resource": k, "hard_limit": v, "updated_at": now}
            for k, v in limits.items()
        ],
    )


def usage(conn: Connection, project_id: str, exclude_cluster: str | None = None) -> Usage:
    """What `project_id` holds and has reserved, leaving out one cluster (the one changing)."""
    cq = select(func.count()).where(
        clusters.c.project_id == project_id, clusters.c.deleted_at.is_(None)
    )
    nq = select(
        func.count(), func.sum(nodes.c.vcpus), func.sum(nodes.c.ram_mb), func.sum(nodes.c.volume_gb)
    ).where(nodes.c.project_id == project_id, nodes.c.deleted_at.is_(None))
    if exclude_cluster is not None:
        cq = cq.where(clusters.c.id != exclude_cluster)
        nq = nq.where(nodes.c.cluster_id != exclude_cluster)
    n_clusters = int(conn.execute(cq).scalar_one())
    row = conn.execute(nq).one()
    held_nodes, held = reserved_by_project(conn, project_id, exclude_cluster)
    return Usage(
        clusters=n_clusters,
        nodes=int(row[0] or 0) + held_nodes,
        vcpus=int(row[1] or 0) + held.vcpus,
        ram_mb=int(row[2] or 0) + held.ram_mb,
        volume_gb=int(row[3] or 0) + held.volume_gb,
    )
