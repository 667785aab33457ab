"""Named profiles a project keeps, so documents can refer to them by name."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from shoal.store.errors import NameTaken
from shoal.store.tables import profiles


def create_profile(
    conn: Connection, project_id: str, name: str, type_: str, spec: dict[str, Any], now: float
) -> dict[str, Any]:
    if get_profile(conn, project_id, name) is not None:
        raise NameTaken("profile", name)
    row = {
        "id": str(uuid.uuid4()),
        "project_id": project_id,
        "name": name,
        "type": type_,
        "spec": spec,
        "created_at": now,
    }
    conn.execute(insert(profiles).values(**row))
    return row


def get_profile(conn: Connection, project_id: str, ref: str) -> dict[str, Any] | None:
    row = (
        conn.execute(
            select(profiles).where(
                profiles.c.project_id == project_id,
                (profiles.c.name == ref) | (profiles.c.id == ref),
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else dict(row)


def list_profiles(conn: Connection, project_id: str) -> list[dict[str, Any]]:
    q = select(profiles).where(profiles.c.project_id == project_id).order_by(profiles.c.name)
    return [dict(r) for r in conn.execute(q).mappings()]


def delete_profile(conn: Connection, project_id: str, ref: str) -> bool:
    res = conn.execute(
        delete(profiles).where(
            profiles.c.project_id == project_id,
            (profiles.c.name == ref) | (profiles.c.id == ref),
        )
    )
    return res.rowcount > 0


def update_profile(conn: Connection, profile_id: str, values: dict[str, Any]) -> None:
    conn.execute(update(profiles).where(profiles.c.id == profile_id).values(**values))
