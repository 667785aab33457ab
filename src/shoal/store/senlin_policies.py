"""Senlin policy objects of the `/clustering` façade, in their own table (not among profiles,
so the native API never lists them). Names may repeat, as in Senlin; lookups by name or short
id answer every match, and the caller decides what several mean."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from shoal.store.tables import senlin_policies as t


@dataclass(frozen=True, slots=True)
class PolicyRecord:
    id: str
    project_id: str
    name: str
    type: str
    spec: dict[str, Any]
    created_at: float
    updated_at: float | None


def record_of(row: Any) -> PolicyRecord:
    return PolicyRecord(
        id=row.id,
        project_id=row.project_id,
        name=row.name,
        type=row.type,
        spec=dict(row.spec or {}),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def create_policy(
    conn: Connection, project_id: str, name: str, type_: str, spec: dict[str, Any], now: float
) -> PolicyRecord:
    record = PolicyRecord(str(uuid.uuid4()), project_id, name, type_, spec, now, None)
    conn.execute(
        insert(t).values(
            id=record.id,
            project_id=project_id,
            name=name,
            type=type_,
            spec=spec,
            created_at=now,
            updated_at=None,
        )
    )
    return record


def find_policies(conn: Connection, project_id: str, ref: str) -> list[PolicyRecord]:
    """The policy with id `ref`; else those named `ref`; else those whose id starts with it."""
    mine = select(t).where(t.c.project_id == project_id)
    by_id = conn.execute(mine.where(t.c.id == ref)).first()
    if by_id is not None:
        return [record_of(by_id)]
    named = [record_of(r) for r in conn.execute(mine.where(t.c.name == ref).limit(2))]
    if named:
        return named
    q = mine.where(t.c.id.startswith(ref, autoescape=True)).limit(2)
    return [record_of(r) for r in conn.execute(q)]


def rename_policy(conn: Connection, policy_id: str, name: str, now: float) -> None:
    conn.execute(update(t).where(t.c.id == policy_id).values(name=name, updated_at=now))


def delete_policy(conn: Connection, policy_id: str) -> None:
    conn.execute(delete(t).where(t.c.id == policy_id))
