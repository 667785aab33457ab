"""`group: docker-compose` on `local`: heat-agents' hook runs docker-compose 1.29.2 against the
node's podman socket; the container serves HTTP on the node's own address and comes back after
a kill -9 of its process (restart policy `always`)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import containers, podman
from tests.containers.conftest import IMAGE, StartServer
from tests.support.netns import in_namespace, node_namespace
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 120.0
DOC = f"""
name: box
instances:
  - name: web
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
software:
  configs:
    web:
      group: docker-compose
      config: |
        web:
          image: {IMAGE}
          command: ["/bin/httpd", "-f", "-p", "${{SHOAL_NODE_ADDRESS}}:18080", "-h", "/www"]
          net: host
          restart: always
  deployments:
    web: {{config: web, target: web}}
"""


def _deployments(client: httpx.Client) -> list[dict[str, Any]]:
    r = client.get("/v1/clusters/box/deployments")
    assert r.status_code == 200, r.text
    return list(r.json()["deployments"])


def test_compose_serves_http_and_survives_a_kill(home: Path, start_server: StartServer) -> None:
    server = start_server(
        home=home, provider="local", provider_options={"port": free_port(), "agent_poll_s": 1.0}
    )
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=DOC))

        def complete() -> list[dict[str, Any]] | None:
            found = _deployments(client)
            for d in found:
                shown = client.get(f"/v1/nodes/{d['node_id']}/deployments/{d['deployment']}")
                assert d["status"] != "FAILED", shown.json()["deployment"]["stderr"]
            return found if found and found[0]["status"] == "COMPLETE" else None

        eventually(complete, timeout_s=TIMEOUT_S, every_s=0.5)
        node = client.get("/v1/nodes", params={"cluster": "box"}).json()["nodes"][0]
        address = node["address"].split(":")[0]
        page = eventually(lambda: _get(f"http://{address}:18080/"), timeout_s=30)
        assert page == "hello from a container\n"

        store = podman.node_store(home / "local", home / "local" / "nodes" / node["physical_id"])
        names = containers.run(podman.Podman.find(), store, "ps", "--format", "{{.Names}}")
        name = names.split()[0]
        first = eventually(lambda: _pid_of(store, name), timeout_s=30)
        # The container runs in its node's own network (issue 39), not the host's.
        assert in_namespace(first, node_namespace(home, node["physical_id"]))
        os.kill(first, signal.SIGKILL)
        again = eventually(
            lambda: (p := _pid_of(store, name)) is not None and p != first and p, timeout_s=60
        )
        assert again != first
        assert eventually(lambda: _get(f"http://{address}:18080/"), timeout_s=30)

        # Shoal's manager saw it and says so on the node.
        def restarted() -> list[dict[str, Any]]:
            events = client.get("/v1/events", params={"cluster": "box"}).json()["events"]
            return [e for e in events if e["status"] == "CONTAINER_RESTARTED"]

        said = eventually(restarted, timeout_s=60, every_s=0.5)
        assert name in said[0]["message"] and said[0]["level"] == "WARNING"

        # Deleted, the node leaves nothing (issue 36): not its workdir and the container storage
        # in it, not podman's run state, not its network namespace (issue 39).
        namespace = node_namespace(home, node["physical_id"])
        wait_ok(client, client.delete("/v1/clusters/box"))
        eventually(lambda: client.get("/v1/clusters/box").status_code == 404, timeout_s=TIMEOUT_S)
        assert list((home / "local" / "nodes").iterdir()) == []
        assert not store.runroot.exists() and not namespace.exists()


def _pid_of(store: podman.Store, name: str) -> int | None:
    out = containers.run(podman.Podman.find(), store, "inspect", "-f", "{{.State.Pid}}", name)
    text = out.strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _get(url: str) -> str | None:
    try:
        r = httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None
    return r.text if r.status_code == 200 else None
