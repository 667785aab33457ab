"""Event rows as `add_events` writes them: a few through one JSON statement, a flush's hundreds
through COPY (issue 23), read back alike; `new_event`'s cheap construction."""

from __future__ import annotations

import dataclasses

import pytest

from shoal.store.database import Database
from shoal.store.events import NewEvent, add_events, list_events, new_event
from shoal.telemetry import requestid


def _events(count: int) -> list[NewEvent]:
    odd = ["plain", "tab\there", "line\nbreak", "back\\slash", "é ünïcode", ""]
    return [
        NewEvent(
            project_id="proj",
            obj_type="NODE",
            obj_name=f"node-{i}-{odd[i % len(odd)]}",
            status="ACTIVE" if i % 2 else "ERROR",
            message=odd[(i + 1) % len(odd)],
            cluster_id=None if i % 5 == 0 else "c1",
            node_id=None if i % 7 == 0 else f"n{i}",
            action_id=f"a{i}",
            level="INFO" if i % 3 else "ERROR",
            request_id=[None, "", f"req-{i}"][i % 3],
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("count", [3, 150])
def test_events_read_back_in_order_as_written(db: Database, count: int) -> None:
    new = _events(count)
    token = requestid.current.set("serving")
    try:
        with db.transaction() as conn:
            add_events(conn, new, 2.5)
    finally:
        requestid.current.reset(token)
    with db.reading() as conn:
        got = list_events(conn, None, limit=1000)
    assert [(e.ts, e.project_id, e.cluster_id, e.node_id, e.action_id) for e in got] == [
        (2.5, e.project_id, e.cluster_id, e.node_id, e.action_id) for e in new
    ]
    assert [(e.level, e.obj_type, e.obj_name, e.status, e.message) for e in got] == [
        (e.level, e.obj_type, e.obj_name, e.status, e.message) for e in new
    ]
    # A request's own id, else the one being served (an empty one too).
    assert [e.request_id for e in got] == [e.request_id or "serving" for e in new]
    assert [e.id for e in got] == sorted(e.id for e in got)


def test_events_without_a_request_keep_none(db: Database) -> None:
    new = _events(120)
    with db.transaction() as conn:
        add_events(conn, new, 1.0)
    with db.reading() as conn:
        got = list_events(conn, None, limit=1000)
    assert [e.request_id for e in got] == [e.request_id or None for e in new]


def test_new_event_is_a_frozen_new_event_like_any_other() -> None:
    made = new_event("p", "NODE", "n-1", "ACTIVE", "up", "c1", "n1", "a1", "INFO", None)
    built = NewEvent("p", "NODE", "n-1", "ACTIVE", "up", "c1", "n1", "a1", "INFO", None)
    assert type(made) is NewEvent
    assert made == built
    assert hash(made) == hash(built)
    assert repr(made) == repr(built)
    assert dataclasses.astuple(made) == dataclasses.astuple(built)
    for event in (made, built):
        with pytest.raises(dataclasses.FrozenInstanceError):
            event.status = "ERROR"  # type: ignore[misc]
        # No attribute beyond the slots (the frozen slotted dataclass's own `__setattr__`
        # fails so on any other name, a made event as a built one).
        with pytest.raises((AttributeError, TypeError)):
            event.other = 1  # type: ignore[attr-defined]
        assert not hasattr(event, "__dict__")
