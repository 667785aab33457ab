"""A compose deployment whose container keeps exiting, on `local` with real podman (issue 36,
items 3 and 5): its restart policy (`restart: always`) restarted it ten times a second while the
deployment read COMPLETE. Now the local provider's guard lets the runtime restart a first exit
at once and backs the next ones off (the container held stopped until a time it names), and the
deployment reads DEGRADED — in the API, `shoal deployments` (exit 1) — with the container's
last output in its reason; the node's events say it once (CONTAINER_LOOP)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.containers.conftest import IMAGE, StartServer
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 180.0
DOC = f"""
name: loopy
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
          command: ["/bin/sh", "-c", "echo 'httpd: bind: Address already in use'; exit 3"]
          net: host
          restart: always
  deployments:
    LoopyWeb: {{config: web, target: web}}
"""


def _deployments(client: httpx.Client) -> list[dict[str, Any]]:
    r = client.get("/v1/clusters/loopy/deployments")
    assert r.status_code == 200, r.text
    return list(r.json()["deployments"])


def test_a_crash_looping_compose_container_backs_off_and_reads_degraded(
    home: Path, start_server: StartServer
) -> None:
    server = start_server(
        home=home,
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
        extra={"SHOAL_RECONCILE_INTERVAL_S": "1"},
    )
    with server.client() as client:
        wait_ok(client, client.post("/v1/clusters", content=DOC))

        def degraded() -> dict[str, Any] | None:
            found = _deployments(client)
            return found[0] if found and found[0]["status"] == "DEGRADED" else None

        eventually(degraded, "LoopyWeb DEGRADED", timeout_s=TIMEOUT_S, every_s=0.5)
        # Held stopped for its back-off (until a time the guard decided: 10 s, then doubling),
        # with what it said last (read once it was stopped).
        d = eventually(
            lambda: (
                (x := degraded())
                and "it starts again at" in x["status_reason"]
                and "Address already in use" in x["status_reason"]
                and x
            ),
            "the loop held for its back-off, with its output",
            timeout_s=TIMEOUT_S,
            every_s=0.5,
        )
        reason = d["status_reason"]
        assert "keeps exiting" in reason and "last exit code 3" in reason, reason
        assert "httpd: bind: Address already in use" in reason, reason
        page = client.get("/v1/clusters/loopy/deployments", params={"status": "DEGRADED"})
        assert [x["deployment"] for x in page.json()["deployments"]] == ["LoopyWeb"]
        assert page.json()["counts"].get("DEGRADED") == 1
        node = client.get("/v1/nodes", params={"cluster": "loopy"}).json()["nodes"][0]
        on_node = client.get(f"/v1/nodes/{node['id']}/deployments").json()
        assert "DEGRADED" in str(on_node)

        events = client.get("/v1/events", params={"cluster": "loopy"}).json()["events"]
        loops = [e for e in events if e["status"] == "CONTAINER_LOOP"]
        assert len(loops) == 1 and loops[0]["level"] == "WARNING", loops

        env = {**os.environ, "SHOAL_URL": server.url, "SHOAL_TOKEN": server.token}
        shown = subprocess.run(
            [sys.executable, "-m", "shoal", "deployments", "loopy"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert shown.returncode == 1, shown.stdout + shown.stderr
        assert "DEGRADED" in shown.stdout and "keeps exiting" in shown.stdout

        wait_ok(client, client.delete("/v1/clusters/loopy"))
        eventually(lambda: client.get("/v1/clusters/loopy").status_code == 404, timeout_s=TIMEOUT_S)
