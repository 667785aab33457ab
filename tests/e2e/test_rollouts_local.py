"""A config change rolling through a node group on `local`, with Heat's real agent chain.

Three app servers whose deployment writes the page each node serves (`/www/index.html`). A
new version of the script rolls one node at a time (the group's update policy) and every node
serves it; then a broken version (it writes its page, then exits 1) fails on the first node,
the rollout rolls back, and that node serves the previous page again while the others never
ran the broken script.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.conftest import StartServer
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0


def document(version: str, broken: bool = False) -> str:
    tail = "exit 1" if broken else "true"
    return f"""
name: web
node_groups:
  - name: app
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: 3
    update: {{max_unavailable: 1, gate_timeout_s: 60}}
software:
  configs:
    page:
      group: script
      inputs: [version]
      config: |
        #!/bin/sh
        mkdir -p "$SHOAL_NODE_WORKDIR/www"
        echo "version $version" > "$SHOAL_NODE_WORKDIR/www/index.html"
        {tail}
  deployments:
    page:
      config: page
      target: app
      inputs: {{version: "{version}"}}
"""


def listing(client: httpx.Client) -> dict[str, Any]:
    r = client.get("/v1/clusters/web/deployments")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def pages(client: httpx.Client) -> dict[str, str]:
    listed = client.get("/v1/nodes", params={"cluster": "web"}).json()["nodes"]
    return {
        n["name"]: httpx.get(f"http://{n['address']}/www/index.html", timeout=30).text.strip()
        for n in listed
    }


def rollout(client: httpx.Client, phase: str) -> dict[str, Any] | None:
    found = listing(client)["rollouts"]
    return found[0] if found and found[0]["phase"] == phase else None


def test_a_script_change_rolls_and_a_broken_one_rolls_back(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(
        home=tmp_path / "home",
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
    )
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=document("1")))

        def complete() -> bool:
            rows = listing(client)["deployments"]
            return len(rows) == 3 and all(d["status"] == "COMPLETE" for d in rows)

        eventually(complete, timeout_s=TIMEOUT_S, every_s=0.5)
        assert set(pages(client).values()) == {"version 1"}

        wait_ok(client, client.put("/v1/clusters/web", content=document("2")))
        done = eventually(lambda: rollout(client, "done"), timeout_s=TIMEOUT_S, every_s=0.5)
        assert done["batches"] == 3, (done, server.log_tail())
        assert set(pages(client).values()) == {"version 2"}
        rows = listing(client)["deployments"]
        ends = sorted((d["started_at"], d["ended_at"]) for d in rows)
        for (_, ended), (started, _) in itertools.pairwise(ends):
            assert started >= ended  # one node at a time

        wait_ok(client, client.put("/v1/clusters/web", content=document("3", broken=True)))
        back = eventually(lambda: rollout(client, "rolled_back"), timeout_s=TIMEOUT_S, every_s=0.5)
        assert "app-1" in back["reason"] and back["restored"] == ["app-1"], back
        # app-1 ran the broken script (its page said version 3), then got version 2 back.
        assert pages(client) == {"app-1": "version 2", "app-2": "version 2", "app-3": "version 2"}
        rows = {d["node"]: d for d in listing(client)["deployments"]}
        assert all(d["status"] == "COMPLETE" for d in rows.values()), rows
        r = client.get(f"/v1/nodes/{rows['app-1']['node_id']}/deployments/page")
        assert r.json()["deployment"]["inputs"]["version"] == "2"


def test_servers_made_before_the_cluster_had_software_get_agents(
    start_server: StartServer, tmp_path: Path
) -> None:
    """A cluster without software, then the same document with some: the running servers
    were created without agents; they get them, and the deployment runs, no recreation."""
    server = start_server(
        home=tmp_path / "home",
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
    )
    with_software = document("1")
    bare = with_software[: with_software.index("software:")]
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=bare))
        before = {
            n["name"]: n["physical_id"]
            for n in client.get("/v1/nodes", params={"cluster": "web"}).json()["nodes"]
        }
        wait_ok(client, client.put("/v1/clusters/web", content=with_software))

        def complete() -> bool:
            rows = listing(client)["deployments"]
            return len(rows) == 3 and all(d["status"] == "COMPLETE" for d in rows)

        eventually(complete, timeout_s=TIMEOUT_S, every_s=0.5)
        assert set(pages(client).values()) == {"version 1"}
        after = {
            n["name"]: n["physical_id"]
            for n in client.get("/v1/nodes", params={"cluster": "web"}).json()["nodes"]
        }
        assert after == before  # the same servers
