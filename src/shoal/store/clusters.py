"""Cluster rows: create, find by id or name within a project, lock, status, document.

A cluster that becomes DELETED takes its receivers with it, in the same statement batch.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from shoal.model.enums import ClusterStatus
from shoal.store.errors import NameTaken
from shoal.store.records import ClusterRecord
from shoal.store.tables import clusters, receivers


def insert_cluster(
    conn: Connection,
    *,
    id: str,
    project_id: str,
    name: str,
    document: dict[str, Any],
    source_format: str,
    now: float,
    lock_action_id: str | None = None,
) -> ClusterRecord:
    taken = conn.execute(
        select(clusters.c.id).where(
            clusters.c.project_id == project_id,
            clusters.c.name == name,
            clusters.c.deleted_at.is_(None),
        )
    ).first()
    if taken is not None:
        raise NameTaken("cluster", name)
    try:
        conn.execute(
            insert(clusters).values(
                id=id,
                project_id=project_id,
                name=name,
                status=ClusterStatus.INIT,
                status_reason="",
                document=document,
                source_format=source_format,
                lock_action_id=lock_action_id,
                generation=1,
                created_at=now,
                updated_at=now,
                deleted_at=None,
            )
        )
    except IntegrityError as e:
        raise NameTaken("cluster", name) from e
    found = get_cluster(conn, id)
    assert found is not None
    return found


def get_cluster(
    conn: Connection, ref: str, project_id: str | None = None, *, include_deleted: bool = False
) -> ClusterRecord | None:
    """By id, or by name among live clusters; `project_id` None means any project (admin)."""
    cond = [
        or_(clusters.c.id == ref, and_(clusters.c.name == ref, clusters.c.deleted_at.is_(None)))
    ]
    if project_id is not None:
        cond.append(clusters.c.project_id == project_id)
    if not include_deleted:
        cond.append(clusters.c.deleted_at.is_(None))
    rows = conn.execute(select(clusters).where(*cond)).mappings().all()
    # An id match wins over a name match.
    rows = sorted(rows, key=lambda r: r["id"] != ref)
    return ClusterRecord.from_row(rows[0]) if rows else None


def list_clusters(conn: Connection, project_id: str | None) -> list[ClusterRecord]:
    q = select(clusters).where(clusters.c.deleted_at.is_(None)).order_by(clusters.c.created_at)
    if project_id is not None:
        q = q.where(clusters.c.project_id == project_id)
    return [ClusterRecord.from_row(r) for r in conn.execute(q).mappings()]


def try_lock(conn: Connection, cluster_id: str, action_id: str, now: float) -> bool:
    """Take the cluster's one mutating-action slot; False when another action holds it."""
    res = conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id, clusters.c.lock_action_id.is_(None))
        .values(lock_action_id=action_id, updated_at=now)
    )
    return res.rowcount == 1


def unlock(conn: Connection, cluster_id: str, action_id: str, now: float) -> None:
    conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id, clusters.c.lock_action_id == action_id)
        .values(lock_action_id=None, updated_at=now)
    )


def set_status(
    conn: Connection, cluster_id: str, status: ClusterStatus, reason: str, now: float
) -> None:
    values: dict[str, Any] = {"status": status, "status_reason": reason, "updated_at": now}
    if status is ClusterStatus.DELETED:
        values["deleted_at"] = now
        # A webhook must not outlive its cluster (nor answer naming the deleted one).
        conn.execute(delete(receivers).where(receivers.c.cluster_id == cluster_id))
    conn.execute(update(clusters).where(clusters.c.id == cluster_id).values(**values))


def set_document(conn: Connection, cluster_id: str, document: dict[str, Any], now: float) -> None:
    conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id)
        .values(document=document, updated_at=now, generation=clusters.c.generation + 1)
    )


def set_scaled_at(conn: Connection, cluster_id: str, scaled_at: dict[str, float]) -> None:
    """Record when scaling triggers last changed each node group (read back for cooldowns)."""
    conn.execute(update(clusters).where(clusters.c.id == cluster_id).values(scaled_at=scaled_at))
