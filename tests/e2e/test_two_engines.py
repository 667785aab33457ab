"""Two servers, two engines, one PostgreSQL database and one simulated cloud.

A cluster created through one server is built by both: each engine claims node actions with
`FOR UPDATE SKIP LOCKED`, so both take a share, no action runs twice, and the cloud ends with
exactly one resource per node.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from tests.e2e.conftest import StartServer
from tests.e2e.flows import TINY, get_cluster
from tests.support.server import ServerProcess, wait_action

NODES = 60
DOC = {
    "name": "twin",
    "node_groups": [{"name": "web", "profile": TINY, "count": NODES, "min": 0, "max": NODES}],
}


def watch_owners(server: ServerProcess, cid: str, stop: threading.Event, seen: set[str]) -> None:
    """Collect the owners of running child actions until `stop` (owners clear when done)."""
    with server.client() as client:
        while not stop.is_set():
            r = client.get("/v1/actions", params={"cluster": cid, "all": "true"})
            if r.status_code == 200:
                seen.update(a["owner"] for a in r.json()["actions"] if a["parent"] and a["owner"])
            stop.wait(0.05)


def test_two_engines_share_the_work(pg_url: str, tmp_path: Path, start_server: StartServer) -> None:
    state = tmp_path / "sim-cloud.sqlite"
    options: dict[str, Any] = {"create_latency_s": 0.3, "state_path": str(state)}
    # Each engine keeps at most 8 creates in flight, so neither can take all 60 at once.
    # A long lease: nothing here dies, so no action may be taken over (attempts stay 1).
    extra = {"SHOAL_ENGINE_CONCURRENCY": "8"}
    a = start_server(
        home=tmp_path / "a",
        provider="sim",
        provider_options=options,
        database_url=pg_url,
        lease_s=30.0,
        extra=extra,
    )
    b = start_server(
        home=tmp_path / "b",
        provider="sim",
        provider_options=options,
        database_url=pg_url,
        lease_s=30.0,
        extra=extra,
    )
    # Both servers share one database, so a's admin token is b's too.
    with a.client() as client, b.client(a.token) as other:
        r = client.post("/v1/clusters", json=DOC)
        assert r.status_code == 202, r.text
        cid = r.json()["cluster"]["id"]
        owners: set[str] = set()
        stop = threading.Event()
        watcher = threading.Thread(target=watch_owners, args=(a, cid, stop, owners))
        watcher.start()
        try:
            body = wait_action(other, r.headers["Location"])
        finally:
            stop.set()
            watcher.join()
        assert body["action"]["status"] == "SUCCEEDED", body
        assert body["children"] == {"SUCCEEDED": NODES}, body

        c = get_cluster(other, cid)
        assert c["status"] == "ACTIVE", c
        assert len(c["nodes"]) == NODES
        assert all(n["status"] == "ACTIVE" for n in c["nodes"]), c["nodes"]
        actions = client.get("/v1/actions", params={"cluster": cid, "all": "true"}).json()[
            "actions"
        ]
        children = [x for x in actions if x["parent"]]
        assert len(children) == NODES
        twice = [(x["inputs"]["node"], x["attempts"]) for x in children if x["attempts"] != 1]
        assert twice == [], twice
        nodes = client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]

    assert len(owners) == 2, f"child actions were claimed by {sorted(owners)}"

    db = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
    try:
        resources = list(db.execute("SELECT id, key, state FROM resources"))
    finally:
        db.close()
    assert len(resources) == NODES, resources
    assert {key for _, key, _ in resources} == {n["id"] for n in nodes}
    assert {rid for rid, _, _ in resources} == {n["physical_id"] for n in nodes}
    assert {s for _, _, s in resources} == {"ACTIVE"}
