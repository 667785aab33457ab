"""The event log: every state change of a cluster, node or action, in order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

from sqlalchemy import Connection, func, select

from shoal.frozen_twin import become, check_twin
from shoal.store.bulk import COPY_FROM, insert_columns, insert_from_json
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
    count = len(new)
    if count >= COPY_FROM and conn.dialect.name == "postgresql":
        # A flush of node work writes one event per node: COPY's text made column by column
        # (issue 23: `insert_from_json` went to `bulk_insert`, a dict and psycopg's
        # `write_row` per event, from 100 events on).
        columns: dict[str, Sequence[object]] = {"ts": [now] * count}
        for f in _EVENT_COLUMNS:
            columns[f] = list(map(attrgetter(f), new))
        requests = list(map(_REQUEST_ID, new))
        columns["request_id"] = requests if all(requests) else [r or serving for r in requests]
        insert_columns(conn, events, columns, count)
        return
    # Fewer: one statement too, whatever the count (`insert_from_json`).
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


_EVENT_COLUMNS = (
    "project_id",
    "cluster_id",
    "node_id",
    "action_id",
    "level",
    "obj_type",
    "obj_name",
    "status",
    "message",
)
_REQUEST_ID = attrgetter("request_id")


class _NewEventSlots:
    """`NewEvent`'s very slots, set by a plain `__init__`; `new_event` then makes the object a
    `NewEvent` (the same layout, so CPython allows the class change), as
    `records.action_record` does for claimed actions. Justified by `benchmarks/scale.py`'s
    `create-pg` (`shoal.frozen_twin`)."""

    __slots__ = NewEvent.__slots__

    def __init__(
        self,
        project_id: str,
        obj_type: str,
        obj_name: str,
        status: str,
        message: str,
        cluster_id: str | None,
        node_id: str | None,
        action_id: str | None,
        level: str,
        request_id: str | None,
    ) -> None:
        self.project_id = project_id
        self.obj_type = obj_type
        self.obj_name = obj_name
        self.status = status
        self.message = message
        self.cluster_id = cluster_id
        self.node_id = node_id
        self.action_id = action_id
        self.level = level
        self.request_id = request_id


def new_event(
    project_id: str,
    obj_type: str,
    obj_name: str,
    status: str,
    message: str,
    cluster_id: str | None,
    node_id: str | None,
    action_id: str | None,
    level: str,
    request_id: str | None,
) -> NewEvent:
    """`NewEvent(...)` of every field, by position, for the event per node a claim and a
    flush write (issue 23: the frozen dataclass's `__init__` sets each field through
    `object.__setattr__`); frozen and equal to one built so."""
    event = _NewEventSlots(
        project_id,
        obj_type,
        obj_name,
        status,
        message,
        cluster_id,
        node_id,
        action_id,
        level,
        request_id,
    )
    return become(event, NewEvent)


check_twin(_NewEventSlots, NewEvent)


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
