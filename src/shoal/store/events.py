"""The event log: every state change of a cluster, node or action, in order."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from shoal.store.bulk import insert_from_json
from shoal.store.records import EventRecord
from shoal.store.tables import events
from shoal.telemetry import requestid


@dataclass(frozen=True, slots=True)
class NewEvent:
    project_id: str
    obj_type: str
    obj_name: str
    status: str
    message: str
    cluster_id: str | None = None
    node_id: str | None = None
    action_id: str | None = None
    level: str = "INFO"
    request_id: str | None = None
    """Default: the request being served (shoal.telemetry.requestid), if any."""


def add_events(conn: Connection, new: list[NewEvent], now: float) -> None:
    if not new:
        return
    serving = requestid.get()
    # A flush of node work writes one event per node: one statement, whatever the count.
    insert_from_json(
        conn,
        events,
        [
            {
                "ts": now,
                "project_id": e.project_id,
                "cluster_id": e.cluster_id,
                "node_id": e.node_id,
                "action_id": e.action_id,
                "level": e.level,
                "obj_type": e.obj_type,
                "obj_name": e.obj_name,
                "status": e.status,
                "message": e.message,
                "request_id": e.request_id or serving,
            }
            for e in new
        ],
    )


def newest_id(conn: Connection) -> int:
    """The newest event's id (0 if none): one indexed read, for held requests to ask first."""
    return int(conn.execute(select(func.max(events.c.id))).scalar() or 0)


def list_events(
    conn: Connection,
    project_id: str | None,
    *,
    cluster_id: str | None = None,
    after_id: int = 0,
    limit: int = 500,
) -> list[EventRecord]:
    q = select(events).where(events.c.id > after_id).order_by(events.c.id).limit(limit)
    if project_id is not None:
        q = q.where(events.c.project_id == project_id)
    if cluster_id is not None:
        q = q.where(events.c.cluster_id == cluster_id)
    return [EventRecord.from_row(r) for r in conn.execute(q).mappings()]
