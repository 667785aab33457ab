"""Workloads' replicas through the node-side agents on `local` (issue 22, point 6), for real:
with `replicas = "agents"` the local provider runs no replica itself, as on `openstack`; each
server's real agent chain (os-collect-config, heat-config, heat-agents' `docker-compose` hook,
docker-compose 1.29.2 against the node's podman socket) starts the replicas Shoal serves in its
metadata. Two replicas start and read ready by their http probe (the secret in their env came
through the metadata's env file); a scale to one kills the other's compose project on its node;
a deleted node's replica is rescheduled onto the node left."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx

from shoal.model.replica_compose import REPLICA_LABEL, project_name
from shoal.providers.local import podman
from tests.containers.conftest import IMAGE, StartServer
from tests.support.server import eventually, free_port, wait_ok

PORT = 18091
SECRET = "agent-s3cret"
DOC = f"""
name: carried
parameters:
  pw: {{type: string, hidden: true, default: {SECRET}}}
node_groups:
  - name: ctl
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: 2
workloads:
  api:
    replicas: 2
    containers:
      - name: api
        image: {IMAGE}
        env: {{PW: {{secret: pw}}, PORT: "{PORT}"}}
        command:
          - /bin/sh
          - -c
          - >-
            mkdir -p /tmp/www && echo "$PW on $SHOAL_NODE_NAME" > /tmp/www/index.html &&
            exec /bin/httpd -f -p $SHOAL_NODE_ADDRESS:$PORT -h /tmp/www
        ports: [{PORT}]
        readiness: {{http: /, port: {PORT}, period_s: 1, timeout_s: 1}}
    rules: [{{rule: anti-affinity, scope: node}}]
"""


def _get(url: str) -> str:
    try:
        r = httpx.get(url, timeout=3)
    except httpx.HTTPError:
        return ""
    return r.text if r.status_code == 200 else ""


def _running(home: Path, physical_id: str) -> list[tuple[str, str]]:
    """(replica key, compose project) of the replica containers running in one node's store
    (a container the engine's own podman runtime started would have no compose project)."""
    store = podman.node_store(home / "local", home / "local" / "nodes" / physical_id)
    if not store.storage_conf.exists():
        return []
    done = subprocess.run(
        store.argv(
            podman.Podman.find(), "ps", "--filter", f"label={REPLICA_LABEL}", "--format", "json"
        ),
        env=store.environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return [
        (c["Labels"][REPLICA_LABEL], c["Labels"].get("com.docker.compose.project", ""))
        for c in json.loads(done.stdout or "[]")
    ]


def test_replicas_run_through_the_agents_compose_hook(
    home: Path, start_server: StartServer
) -> None:
    server = start_server(
        home=home,
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0, "replicas": "agents"},
        extra={"SHOAL_RECONCILE_INTERVAL_S": "1"},  # the keeper's tick (default 5 s)
    )
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=DOC))

        def nodes() -> dict[str, dict[str, Any]]:
            found = client.get("/v1/nodes", params={"cluster": "carried"}).json()["nodes"]
            return {n["name"]: n for n in found}

        def serving(count: int) -> dict[str, dict[str, Any]] | None:
            """`count` replicas listed ready, each answering on its node's address."""
            body = client.get("/v1/clusters/carried/workloads").json()
            replicas = body["replicas"]
            if len(replicas) != count or not all(r["ready"] for r in replicas):
                return None
            known = nodes()
            for r in replicas:
                node = known.get(r["node"])
                if node is None or not node["address"]:
                    return None
                page = _get(f"http://{node['address'].split(':')[0]}:{PORT}/")
                if page != f"{SECRET} on {r['node']}\n":
                    return None
            return {r["replica"]: r for r in replicas}

        first = eventually(lambda: serving(2), timeout_s=240, every_s=0.5)
        assert len({r["node"] for r in first.values()}) == 2  # anti-affine
        # Nothing was run by the engine's podman runtime: the agents' compose projects did.
        known = nodes()
        cid = known[first["api-1"]["node"]]["cluster_id"]
        on = {r: known[first[r]["node"]]["physical_id"] for r in first}
        assert _running(home, on["api-2"]) == [(f"{cid}/api-2", project_name("api-2"))]

        # Scale to one: api-2's project leaves its node's metadata; heat-config kills it.
        r = client.post(
            "/v1/clusters/carried/actions",
            json={"scale_workload": {"workload": "api", "replicas": 1}},
        )
        assert r.status_code == 202, r.text
        eventually(
            lambda: serving(1) and not _running(home, on["api-2"]),
            timeout_s=180,
            every_s=0.5,
        )

        # The node holding api-1 is deleted: api-1 is placed on the node left and started
        # there by that node's agents.
        gone = first["api-1"]["node"]
        r = client.post(
            "/v1/clusters/carried/actions",
            json={"del_nodes": {"nodes": [known[gone]["id"]]}},
        )
        assert r.status_code == 202, r.text
        moved = eventually(
            lambda: (s := serving(1)) and s["api-1"]["node"] != gone and s,
            timeout_s=240,
            every_s=0.5,
        )
        assert moved["api-1"]["node"] == first["api-2"]["node"]
