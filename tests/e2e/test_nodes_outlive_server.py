"""Nodes outlive the server (issue 39): `shoal server` stopped leaves every local node, its agents
and its network running; the next server on the home re-attaches to them by their records and
repairs only what is really gone (a node killed while no server ran). And `shoal delete --wait`
of a cluster busy with an action waits for that action instead of failing.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import processes
from tests.cli.support import Shoal, explain
from tests.e2e.conftest import StartServer
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 240.0

DOC = """
name: keep
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
software:
  configs:
    hello:
      group: script
      config: |
        #!/bin/sh
        echo "deployed on $SHOAL_NODE_NAME"
  deployments:
    hello: {config: hello, target: web}
"""


def _records(home: Path) -> dict[str, dict[str, Any]]:
    """The local provider's server records by server id."""
    out = {}
    for path in (home / "local" / "resources").glob("server-*.json"):
        data: dict[str, Any] = json.loads(path.read_text())
        out[str(data["id"])] = data
    return out


def _settled(client: httpx.Client) -> list[dict[str, Any]] | None:
    r = client.get("/v1/clusters/keep")
    if r.status_code != 200 or r.json()["cluster"]["status"] != "ACTIVE":
        return None
    runs: list[dict[str, Any]] = client.get("/v1/clusters/keep/deployments").json()["deployments"]
    done = [d for d in runs if d["status"] == "COMPLETE"]
    return runs if len(done) == 3 else None


def test_a_restart_keeps_every_node_and_repairs_only_the_one_gone(
    start_server: StartServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    options = {"port": free_port(), "agent_poll_s": 1.0}
    # The agents' port is the home's across restarts (as `shoal server` remembers it): the
    # nodes' agents keep polling the URL they were given.
    extra = {"SHOAL_AGENT_PORT": str(free_port()), "SHOAL_MANAGE_TICK_S": "0.5"}
    first = start_server(home=home, provider="local", provider_options=options, extra=extra)
    with first.client() as c:
        wait_ok(c, c.post("/v1/clusters", content=DOC))
        before_runs = eventually(lambda: _settled(c), timeout_s=TIMEOUT_S, every_s=0.5)
    before = _records(home)
    assert len(before) == 3
    first.stop()

    # Everything still runs without a server: nodes, their agents, their networks.
    for r in before.values():
        assert processes.is_running(r["pid"], r["key"]), r
        assert processes.is_running(r["agent_pid"], r["key"]), r
        assert Path("/run/netns", r["netns"]).exists(), r
    # While no server runs, one node dies.
    gone_id = sorted(before)[0]
    gone = before[gone_id]
    os.killpg(gone["pid"], signal.SIGKILL)
    eventually(lambda: not processes.is_running(gone["pid"], gone["key"]), timeout_s=30)

    second = start_server(home=home, provider="local", provider_options=options, extra=extra)
    with second.client() as c:
        # The dead one is repaired: started again in place (same id, address, network).
        def repaired() -> dict[str, Any] | None:
            now = _records(home).get(gone_id)
            alive = now is not None and processes.is_running(now["pid"], now["key"])
            return now if alive and now["pid"] != gone["pid"] else None

        again = eventually(repaired, timeout_s=TIMEOUT_S, every_s=0.5)
        assert (again["address"], again["netns"]) == (gone["address"], gone["netns"])
        eventually(lambda: _settled(c), timeout_s=TIMEOUT_S, every_s=0.5)
        after_runs = {
            d["node"]: d for d in c.get("/v1/clusters/keep/deployments").json()["deployments"]
        }
    # The others were left alone: the same processes, agents and runs as before the restart.
    after = _records(home)
    assert set(after) == set(before)
    for sid, r in before.items():
        if sid == gone_id:
            continue
        assert (after[sid]["pid"], after[sid]["agent_pid"]) == (r["pid"], r["agent_pid"])
        assert processes.is_running(r["pid"], r["key"])
    for run in before_runs:
        if run["node_id"] != gone["key"]:
            assert after_runs[run["node"]]["started_at"] == run["started_at"], run


def test_delete_wait_waits_for_the_action_a_cluster_is_busy_with(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(provider="sim", provider_options={"create_latency_s": 4.0})
    with server.client() as c:
        r = c.post("/v1/clusters", content=DOC.split("software:")[0])
        assert r.status_code == 202, r.text
        shoal = Shoal(tmp_path / "client", url=server.url, token=server.token)
        (tmp_path / "client").mkdir()
        done = shoal("delete", "keep", "--wait", "--timeout", "120")
        assert done.returncode == 0, explain(done)
        assert "busy with action" in done.stderr and "waiting for it" in done.stderr, explain(done)
        assert c.get("/v1/clusters/keep").status_code == 404
