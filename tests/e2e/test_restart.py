"""A server killed (-9) in the middle of a create; a new one on the same home finishes it.

The simulated cloud lives in a SQLite file (`state_path`), so it survives the server like a
real cloud would. The new server takes the action over once the dead one's lease (2 s) runs
out. Afterwards there is exactly one node per declared node, one cloud resource per node, and
no action left behind.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e.conftest import StartServer
from tests.e2e.flows import TINY, get_cluster
from tests.support.server import TERMINAL, eventually, wait_action

NODES = 30
DOC = {
    "name": "phoenix",
    "node_groups": [{"name": "web", "profile": TINY, "count": NODES, "min": 0, "max": NODES}],
}


def sim_resources(state: Path) -> list[tuple[str, str, str, str, str]]:
    """(id, key, kind, state, cluster) of every resource in the simulated cloud's file."""
    db = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
    try:
        return list(db.execute("SELECT id, key, kind, state, cluster FROM resources"))
    finally:
        db.close()


def test_kill_mid_create_then_restart(tmp_path: Path, start_server: StartServer) -> None:
    home = tmp_path / "home"
    state = tmp_path / "sim-cloud.sqlite"
    options: dict[str, Any] = {"create_latency_s": 0.5, "state_path": str(state)}
    # Four creates at a time, half a second each: about four seconds for the whole cluster.
    extra = {"SHOAL_ENGINE_CONCURRENCY": "4"}
    first = start_server(home=home, provider="sim", provider_options=options, extra=extra)
    with first.client() as client:
        r = client.post("/v1/clusters", json=DOC)
        assert r.status_code == 202, r.text
        cid = r.json()["cluster"]["id"]
        location = r.headers["Location"]

        def eight_active() -> list[str] | None:
            nodes = client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
            active = [n["name"] for n in nodes if n["status"] == "ACTIVE"]
            return active if len(active) >= 8 else None

        before = eventually(eight_active, every_s=0.05)
        first.kill()

    second = start_server(home=home, provider="sim", provider_options=options, extra=extra)
    with second.client() as client:
        action_at_kill = client.get(location).json()["action"]
        body = wait_action(client, location)
        assert body["action"]["status"] == "SUCCEEDED", body
        assert body["children"] == {"SUCCEEDED": NODES}, body

        c = get_cluster(client, cid)
        assert c["status"] == "ACTIVE", c
        nodes = client.get("/v1/nodes", params={"cluster": cid}).json()["nodes"]
        names = [n["name"] for n in nodes]
        assert sorted(names) == sorted(f"web-{i}" for i in range(1, NODES + 1)), names
        assert all(n["status"] == "ACTIVE" and n["physical_id"] for n in nodes), nodes

        actions = client.get("/v1/actions", params={"cluster": cid, "all": "true"}).json()[
            "actions"
        ]
        left = [(a["action"], a["status"]) for a in actions if a["status"] not in TERMINAL]
        assert left == [], left

    # The cloud holds exactly one resource per node, under that node's key, all built.
    resources = sim_resources(state)
    keys = [r[1] for r in resources]
    assert len(keys) == len(set(keys)) == NODES, resources
    assert set(keys) == {n["id"] for n in nodes}
    assert {r[0] for r in resources} == {n["physical_id"] for n in nodes}
    assert {r[3] for r in resources} == {"ACTIVE"}, resources
    assert {r[4] for r in resources} == {cid}

    # The kill really happened mid-way: some nodes were done, the action was not.
    assert 8 <= len(before) < NODES
    assert action_at_kill is not None and action_at_kill["status"] not in TERMINAL
    # The new server took the cluster action over from the dead one (a second claim).
    assert body["action"]["attempts"] == 2, body
