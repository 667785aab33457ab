"""Receiver rows: webhooks that trigger an action on a cluster, each with a secret.

The secret is stored only as its SHA-256 hash (like bearer tokens); `secret_matches` compares
hashes in constant time, so a trigger's answer time says nothing about how close a guess was.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, delete, func, insert, or_, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.exc import IntegrityError

from shoal.store.errors import NameTaken
from shoal.store.pages import page_rows
from shoal.store.tables import receivers


@dataclass(frozen=True, slots=True)
class ReceiverRecord:
    id: str
    project_id: str
    cluster_id: str
    name: str
    action: str
    nodegroup: str | None
    params: dict[str, Any]
    secret_hash: str
    created_at: float
    triggered_at: float | None

    @classmethod
    def from_row(cls, row: RowMapping) -> ReceiverRecord:
        values = dict(row)
        values["params"] = dict(values["params"] or {})
        return cls(**values)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(stored_hash: str, secret: str) -> bool:
    return hmac.compare_digest(stored_hash.encode(), hash_secret(secret).encode())


def insert_receiver(
    conn: Connection,
    *,
    id: str,
    project_id: str,
    cluster_id: str,
    name: str,
    action: str,
    nodegroup: str | None,
    params: dict[str, Any],
    secret: str,
    now: float,
) -> ReceiverRecord:
    if get_receiver(conn, name, project_id, by_id=False) is not None:
        raise NameTaken("receiver", name)
    try:
        conn.execute(
            insert(receivers).values(
                id=id,
                project_id=project_id,
                cluster_id=cluster_id,
                name=name,
                action=action,
                nodegroup=nodegroup,
                params=params,
                secret_hash=hash_secret(secret),
                created_at=now,
                triggered_at=None,
            )
        )
    except IntegrityError as e:
        raise NameTaken("receiver", name) from e
    found = get_receiver(conn, id)
    assert found is not None
    return found


def get_receiver(
    conn: Connection, ref: str, project_id: str | None = None, *, by_id: bool = True
) -> ReceiverRecord | None:
    """By id or name; `project_id` None means any project (admin). An id match wins."""
    match = (
        or_(receivers.c.id == ref, receivers.c.name == ref) if by_id else receivers.c.name == ref
    )
    cond = [match] if project_id is None else [and_(match, receivers.c.project_id == project_id)]
    rows = conn.execute(select(receivers).where(*cond)).mappings().all()
    rows = sorted(rows, key=lambda r: r["id"] != ref)
    return ReceiverRecord.from_row(rows[0]) if rows else None


def receiver_by_id(conn: Connection, receiver_id: str) -> ReceiverRecord | None:
    row = conn.execute(select(receivers).where(receivers.c.id == receiver_id)).mappings().first()
    return None if row is None else ReceiverRecord.from_row(row)


def list_receivers(conn: Connection, project_id: str | None) -> list[ReceiverRecord]:
    q = select(receivers).order_by(receivers.c.created_at, receivers.c.name)
    if project_id is not None:
        q = q.where(receivers.c.project_id == project_id)
    return [ReceiverRecord.from_row(r) for r in conn.execute(q).mappings()]


def page_receivers(
    conn: Connection, project_id: str | None, limit: int, marker: str | None
) -> tuple[list[ReceiverRecord], bool] | None:
    """A page of receivers after the receiver `marker` (by id); None: no such receiver."""
    q = select(receivers)
    if project_id is not None:
        q = q.where(receivers.c.project_id == project_id)
    got = page_rows(conn, receivers, q, limit, marker)
    if got is None:
        return None
    rows, more = got
    return [ReceiverRecord.from_row(r) for r in rows], more


def count_for_cluster(conn: Connection, cluster_id: str) -> int:
    """How many receivers a cluster has (bounded per cluster by the service)."""
    q = select(func.count()).select_from(receivers).where(receivers.c.cluster_id == cluster_id)
    return int(conn.execute(q).scalar_one())


def delete_receiver(conn: Connection, receiver_id: str) -> None:
    conn.execute(delete(receivers).where(receivers.c.id == receiver_id))


def mark_triggered(conn: Connection, receiver_id: str, now: float) -> None:
    conn.execute(update(receivers).where(receivers.c.id == receiver_id).values(triggered_at=now))
