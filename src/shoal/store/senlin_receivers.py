"""What a Senlin receiver keeps beyond Shoal's receiver row: the Senlin action it was made for
(when it is not one of Shoal's own), the name and params as the client gave them (Senlin's
names repeat, Shoal's are unique per project; Senlin's params may be strings), and the native
row's changes the façade makes (a rename, a new action or params)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from shoal.store.tables import receivers
from shoal.store.tables import senlin_receivers as t


@dataclass(frozen=True, slots=True)
class SenlinReceiver:
    receiver_id: str
    action: str | None = None
    """The Senlin action when Shoal's receivers have none like it (CLUSTER_RESIZE)."""
    name: str | None = None
    params: dict[str, Any] | None = None


def put(conn: Connection, extras: SenlinReceiver) -> None:
    conn.execute(delete(t).where(t.c.receiver_id == extras.receiver_id))
    conn.execute(
        insert(t).values(
            receiver_id=extras.receiver_id,
            action=extras.action,
            name=extras.name,
            params=extras.params,
        )
    )


def extras_of(conn: Connection, receiver_ids: list[str]) -> dict[str, SenlinReceiver]:
    out: dict[str, SenlinReceiver] = {}
    for start in range(0, len(receiver_ids), 500):
        chunk = receiver_ids[start : start + 500]
        for row in conn.execute(select(t).where(t.c.receiver_id.in_(chunk))).mappings():
            params = row["params"]
            out[row["receiver_id"]] = SenlinReceiver(
                row["receiver_id"],
                row["action"],
                row["name"],
                None if params is None else dict(params),
            )
    return out


def native_name_taken(conn: Connection, project_id: str, name: str, other_than: str = "") -> bool:
    q = select(receivers.c.id).where(
        receivers.c.project_id == project_id, receivers.c.name == name, receivers.c.id != other_than
    )
    return conn.execute(q).first() is not None


def retarget(
    conn: Connection,
    receiver_id: str,
    *,
    name: str,
    action: str,
    nodegroup: str | None,
    params: dict[str, Any],
) -> None:
    """The native row's new name, action and params (a Senlin receiver update)."""
    conn.execute(
        update(receivers)
        .where(receivers.c.id == receiver_id)
        .values(name=name, action=action, nodegroup=nodegroup, params=params)
    )
