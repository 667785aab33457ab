"""What a Senlin receiver keeps beyond Shoal's receiver row: the Senlin action it was made for
(when it is not one of Shoal's own), and renames through the façade."""

from __future__ import annotations

from sqlalchemy import Connection, delete, insert, select, update

from shoal.store.tables import receivers
from shoal.store.tables import senlin_receivers as t


def set_action(conn: Connection, receiver_id: str, action: str) -> None:
    conn.execute(delete(t).where(t.c.receiver_id == receiver_id))
    conn.execute(insert(t).values(receiver_id=receiver_id, action=action))


def actions_of(conn: Connection, receiver_ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(receiver_ids), 500):
        chunk = receiver_ids[start : start + 500]
        for row in conn.execute(select(t).where(t.c.receiver_id.in_(chunk))):
            out[row.receiver_id] = row.action
    return out


def rename(conn: Connection, receiver_id: str, name: str) -> None:
    conn.execute(update(receivers).where(receivers.c.id == receiver_id).values(name=name))
