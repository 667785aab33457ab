"""A tenant's node against a real `shoal server` on `local` (issue 39): its deployment script, run
by Heat's real agents in the node's sandbox and its own network namespace, tries to reach the
database and the machine's other services, Shoal's API and its admin routes (on the API's port
and on the agents' own), HAProxy's stats socket, another project's node, another cluster's node
and balancer, and fails; it reaches its own address, a peer of its cluster, its metadata and its
signal URL. The probes are benchmarks/isolation_probes.py's, which `benchmarks/isolation.py`
runs too.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local.balancer import Balancer
from tests.e2e.conftest import StartServer
from tests.support.server import ServerProcess, eventually, free_port, wait_ok

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import isolation_probes as iso

TIMEOUT_S = 240.0


def _tenant(server: ServerProcess, name: str) -> httpx.Client:
    with server.client() as admin:
        r = admin.post("/v1/projects", json={"name": name})
        assert r.status_code == 201, r.text
    return server.client(r.json()["token"])


def _active(client: httpx.Client, name: str) -> dict[str, Any]:
    def ready() -> dict[str, Any] | None:
        r = client.get(f"/v1/clusters/{name}")
        found = r.json().get("cluster") if r.status_code == 200 else None
        return found if found and found["status"] == "ACTIVE" else None

    found: dict[str, Any] = eventually(ready, timeout_s=TIMEOUT_S, every_s=0.5)
    return found


def _nodes(client: httpx.Client, cluster: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.get("/v1/nodes", params={"cluster": cluster}).json()[
        "nodes"
    ]
    return found


def _address(client: httpx.Client, cluster: str) -> str:
    return str(_nodes(client, cluster)[0]["address"]).rsplit(":", 1)[0]


def _vip(client: httpx.Client, cluster: str) -> str | None:
    nets = client.get(f"/v1/clusters/{cluster}/networks").json()["networking"]
    found = [lb["serving_at"] for lb in nets["load_balancers"] if lb["serving_at"]]
    return str(found[0]) if found else None


def _runs(client: httpx.Client) -> list[dict[str, Any]] | None:
    found = client.get(f"/v1/clusters/{iso.PROBE_CLUSTER}/deployments").json()["deployments"]
    ended = [d for d in found if d["status"] in ("COMPLETE", "FAILED")]
    return ended if len(ended) == 2 else None


def _namespace(pid: int) -> tuple[int, int]:
    st = os.stat(f"/proc/{pid}/ns/net")
    return st.st_dev, st.st_ino


def test_a_hostile_node_reaches_only_what_is_its_own(
    start_server: StartServer, tmp_path: Path
) -> None:
    node_port, agent_port = free_port(), free_port()
    server = start_server(
        home=tmp_path / "home",
        provider="local",
        provider_options={"port": node_port, "agent_poll_s": 1.0},
        extra={"SHOAL_AGENT_PORT": str(agent_port)},
    )
    a, b = _tenant(server, "tenant-a"), _tenant(server, "tenant-b")
    with a, b:
        wait_ok(b, b.post("/v1/clusters", content=iso.plain_document("victim", node_port)))
        neighbour_doc = iso.plain_document("neighbour", node_port, balancer=True)
        wait_ok(a, a.post("/v1/clusters", content=neighbour_doc))
        victim, neighbour = _active(b, "victim"), _active(a, "neighbour")
        vip = eventually(lambda: _vip(a, "neighbour"), timeout_s=TIMEOUT_S, every_s=0.5)
        directory = server.home / "local" / "networking" / str(neighbour["id"])
        probes = iso.probes(
            node_port=node_port,
            api_port=server.port,
            agent_port=agent_port,
            victim=_address(b, str(victim["id"])),
            neighbour=_address(a, str(neighbour["id"])),
            vip=vip,
            stats_socket=Balancer(directory, "front").socket,
        )
        wait_ok(a, a.post("/v1/clusters", content=iso.probe_document(probes)))
        runs = eventually(lambda: _runs(a), timeout_s=TIMEOUT_S, every_s=0.5)
        for run in runs:
            r = a.get(f"/v1/nodes/{run['node_id']}/deployments/{run['deployment']}")
            assert r.status_code == 200, r.text
            stdout = r.json()["deployment"]["stdout"]
            # Its signal reached Shoal: the run completed (heat-config-notify POSTed it).
            assert run["status"] == "COMPLETE", (run, stdout)
            found = iso.results(stdout)
            assert {x["probe"] for x in found} == {p.probe for p in probes}, stdout
            assert iso.failing(found) == [], stdout

        # Each node runs in a network namespace of its own, not the host's, nor its peer's.
        nodes = _nodes(a, str(_active(a, iso.PROBE_CLUSTER)["id"]))
        pids = [int(server_details(server, str(n["physical_id"]))["pid"]) for n in nodes]
        spaces = {_namespace(pid) for pid in pids}
        assert len(spaces) == 2 and _namespace(os.getpid()) not in spaces


def server_details(server: ServerProcess, physical_id: str) -> dict[str, Any]:
    """The local provider's record of a server (its pid, its namespace)."""
    for path in (server.home / "local" / "resources").glob("server-*.json"):
        data: dict[str, Any] = json.loads(path.read_text())
        if data["id"] == physical_id:
            return data
    raise AssertionError(f"no record of {physical_id}")
