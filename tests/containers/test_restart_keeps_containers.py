"""Replicas outlive the server (issue 39): `shoal server` stopped leaves the nodes and their
workloads' containers running; the next server finds the containers by their labels and
restarts only the one that died meanwhile."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import podman
from shoal.providers.local.replicas import LABEL
from tests.containers.conftest import IMAGE, StartServer
from tests.support.netns import in_namespace, node_namespace
from tests.support.server import eventually, free_port, wait_ok

TIMEOUT_S = 240.0
PORT = 18087

DOC = f"""
name: kept
node_groups:
  - name: box
    profile: {{type: server, flavor: m1.small, image: cirros}}
    count: 2
workloads:
  api:
    replicas: 2
    containers:
      - name: api
        image: {IMAGE}
        command:
          - /bin/sh
          - -c
          - exec /bin/httpd -f -p $SHOAL_NODE_ADDRESS:{PORT} -h /www
        ports: [{PORT}]
        readiness: {{http: /, port: {PORT}, period_s: 1, timeout_s: 1}}
    rules: [{{rule: anti-affinity, scope: node}}]
"""


def _containers(home: Path) -> dict[str, dict[str, Any]]:
    """Running replica containers of the home, by replica key (podman ps, their labels)."""
    found = podman.Podman.find()
    out: dict[str, dict[str, Any]] = {}
    for root in (home / "local" / "nodes").glob("*/podman"):
        store = podman.Store(root)
        if not store.storage_conf.exists():
            continue
        done = subprocess.run(
            store.argv(found, "ps", "--filter", f"label={LABEL}", "--format", "json"),
            env=store.environment(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        for row in json.loads(done.stdout or "[]"):
            out[row["Labels"][LABEL]] = row
    return out


def _ready(client: httpx.Client) -> list[dict[str, Any]] | None:
    replicas: list[dict[str, Any]] = client.get("/v1/clusters/kept/workloads").json()["replicas"]
    return replicas if len(replicas) == 2 and all(r["ready"] for r in replicas) else None


def test_replicas_outlive_a_restart_and_only_the_dead_one_is_started(
    home: Path, start_server: StartServer
) -> None:
    options = {"port": free_port(), "agent_poll_s": 1.0}
    extra = {"SHOAL_AGENT_PORT": str(free_port()), "SHOAL_RECONCILE_INTERVAL_S": "1"}
    first = start_server(home=home, provider="local", provider_options=options, extra=extra)
    with first.client() as c:
        wait_ok(c, c.post("/v1/clusters", content=DOC))
        eventually(lambda: _ready(c), timeout_s=TIMEOUT_S, every_s=0.5)
    before = eventually(lambda: len(_containers(home)) == 2 and _containers(home), timeout_s=60)
    for row in before.values():
        server_id = row["Labels"]["shoal.server"]
        assert in_namespace(int(row["Pid"]), node_namespace(home, server_id)), row
    first.stop()

    # Without a server, both containers still run; then one dies.
    assert {k: r["Pid"] for k, r in _containers(home).items()} == {
        k: r["Pid"] for k, r in before.items()
    }
    dead, kept = sorted(before)
    os.kill(int(before[dead]["Pid"]), signal.SIGKILL)
    eventually(lambda: dead not in _containers(home) or None, timeout_s=60)

    second = start_server(home=home, provider="local", provider_options=options, extra=extra)
    with second.client() as c:
        # The new server's keeper found the dead one by its label and started it again.
        def restarted() -> dict[str, dict[str, Any]] | None:
            now = _containers(home)
            again = now.get(dead)
            return now if again is not None and again["Pid"] != before[dead]["Pid"] else None

        after = eventually(restarted, timeout_s=TIMEOUT_S, every_s=0.5)
        eventually(lambda: _ready(c), timeout_s=TIMEOUT_S, every_s=0.5)
    # The other was left alone: the same container, the same process.
    assert (after[kept]["Id"], after[kept]["Pid"]) == (before[kept]["Id"], before[kept]["Pid"])
    assert Path(f"/proc/{after[kept]['Pid']}").exists()
