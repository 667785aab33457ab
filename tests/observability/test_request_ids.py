"""Request ids (issue 27): every response carries X-Openstack-Request-Id, a caller's valid id
is kept, and the id is stored on the actions and events its request caused and is on every
log line of that work."""

from __future__ import annotations

import logging
import re

from shoal.store import actions as action_repo
from shoal.store import events as event_repo
from shoal.telemetry import requestid
from tests.observability.conftest import Api

DOC = """
name: traced
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
"""
PATTERN = re.compile(r"^req-[0-9a-f-]{36}$")
GIVEN = "req-0b7a4c1e-2d3f-4a5b-8c6d-7e8f9a0b1c2d"


async def test_every_response_carries_an_id(api: Api) -> None:
    ids = set()
    for path in ("/healthz", "/v1/clusters", "/v1/nope"):
        r = await api.http.get(path)  # 200, 401 (no token) and 404 alike
        assert PATTERN.match(r.headers["x-openstack-request-id"]), r.headers
        ids.add(r.headers["x-openstack-request-id"])
    assert len(ids) == 3
    r = await api.http.get("/healthz", headers={"X-Openstack-Request-Id": GIVEN})
    assert r.headers["x-openstack-request-id"] == GIVEN
    for bad in ("req-nope", "x" * 300, GIVEN + "0", "req-" + "G" * 36, GIVEN.upper()):
        r = await api.http.get("/healthz", headers={"X-Openstack-Request-Id": bad})
        got = r.headers["x-openstack-request-id"]
        assert got != bad and PATTERN.match(got)
    r = await api.call("POST", "/v1/clusters", content="{")
    assert r.status_code in (400, 422) and PATTERN.match(r.headers["x-openstack-request-id"])


async def test_the_id_follows_the_work(api: Api) -> None:
    lines: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record)

    handler = Keep(level=logging.DEBUG)
    handler.addFilter(requestid.LogFilter())
    shoal = logging.getLogger("shoal")
    old_level = shoal.level
    shoal.addHandler(handler)
    shoal.setLevel(logging.INFO)
    try:
        r = await api.http.post(
            "/v1/clusters",
            content=DOC,
            headers={**api.auth, "X-Openstack-Request-Id": GIVEN},
        )
        assert r.status_code == 202, r.text
        assert r.headers["x-openstack-request-id"] == GIVEN
        action = await api.wait(r.json()["action"]["id"])
    finally:
        shoal.removeHandler(handler)
        shoal.setLevel(old_level)
    assert action["status"] == "SUCCEEDED"
    assert action["request_id"] == GIVEN
    db = api.runtime.db
    with db.reading() as conn:
        children = action_repo.list_actions(conn, None, parent_id=action["id"])
        events = event_repo.list_events(conn, None, cluster_id=action["cluster_id"])
    assert len(children) >= 2
    assert {c.request_id for c in children} == {GIVEN}
    assert events and {e.request_id for e in events} == {GIVEN}
    r = await api.call("GET", "/v1/events", params={"cluster": "traced"})
    assert {e["request_id"] for e in r.json()["events"]} == {GIVEN}
    # Every log line of that work (the engine's, in its own tasks and threads) carries it.
    about = [rec for rec in lines if "traced" in rec.getMessage()]
    assert about, [rec.getMessage() for rec in lines]
    assert {getattr(rec, "request_id", None) for rec in about} == {GIVEN}
