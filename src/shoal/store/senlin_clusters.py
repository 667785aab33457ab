"""Renaming a cluster through the Senlin façade (Shoal's names stay unique per project)."""

from __future__ import annotations

from sqlalchemy import Connection, select, update

from shoal.store.tables import clusters as t


def name_taken(conn: Connection, project_id: str, name: str, other_than: str) -> bool:
    q = select(t.c.id).where(
        t.c.project_id == project_id,
        t.c.name == name,
        t.c.deleted_at.is_(None),
        t.c.id != other_than,
    )
    return conn.execute(q).first() is not None


def rename(conn: Connection, cluster_id: str, name: str) -> None:
    conn.execute(update(t).where(t.c.id == cluster_id).values(name=name))
