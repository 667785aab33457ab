"""Seed 003's `-e ha.yaml` on `local` with real podman containers (issue 22, "done when"): the
API service is a 3-replica host-anti-affine workload on three controllers. With no command from
the user, a container killed with `kill -9` is restarted, and a replica on a failed host is
rescheduled onto a live controller; a change of the workload's env rolls every replica, a broken
image (one no store has) rolls back; deleting the cluster leaves no container behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import podman
from shoal.providers.local.replicas import LABEL
from tests.containers.conftest import StartServer
from tests.support.netns import in_namespace, node_namespace
from tests.support.server import eventually, free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed003"
PORT = 8081


def _get(url: str) -> str:
    try:
        r = httpx.get(url, timeout=3)
    except httpx.HTTPError:
        return ""
    return r.text if r.status_code == 200 else ""


def _replica_containers(home: Path) -> list[dict[str, Any]]:
    """Every replica container of every node store of the home (podman ps -a)."""
    found = podman.Podman.find()
    rows: list[dict[str, Any]] = []
    for root in (home / "local" / "nodes").glob("*/podman"):
        store = podman.Store(root)
        if not store.storage_conf.exists():
            continue
        done = subprocess.run(
            store.argv(found, "ps", "-a", "--filter", f"label={LABEL}", "--format", "json"),
            env=store.environment(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        rows += json.loads(done.stdout or "[]")
    return rows


def test_seed003_ha_workload_kept_rolled_and_removed(
    home: Path, start_server: StartServer, tmp_path: Path
) -> None:
    server = start_server(
        home=home,
        provider="local",
        provider_options={"port": free_port(), "agent_poll_s": 1.0},
        extra={"SHOAL_RECONCILE_INTERVAL_S": "1"},  # the keeper's tick (default 5 s)
    )
    env = {**os.environ, "SHOAL_URL": server.url, "SHOAL_TOKEN": server.token}

    def shoal(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "shoal", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    template = str(EXAMPLE / "template.yaml")
    ha = str(EXAMPLE / "ha.yaml")
    # No balancer here (benchmarks/workloads.py runs it): a server and its agents fewer.
    lean = tmp_path / "lean.yaml"
    lean.write_text("parameter_defaults: {WithBalancer: false}\n")
    with server.client() as client:

        def view() -> dict[str, Any]:
            body: dict[str, Any] = client.get("/v1/clusters/template/workloads").json()
            return body

        def serving(greeting: str) -> dict[str, Any] | None:
            """Every replica ready and answering with `greeting` on its node's address."""
            nodes = {n["name"]: n for n in client.get("/v1/nodes").json()["nodes"]}
            replicas = view()["replicas"]
            if len(replicas) != 3 or not all(r["ready"] for r in replicas):
                return None
            for r in replicas:
                node = nodes.get(r["node"])
                if node is None or not node["address"]:  # (being replaced: seen next tick)
                    return None
                address = node["address"].split(":")[0]
                page = _get(f"http://{address}:{PORT}/")
                if not page.startswith(f"{greeting} on ") or f"({address})" not in page:
                    return None
            return {r["replica"]: r for r in replicas}

        shoal("up", template, "-e", ha, "-e", str(lean))
        first = eventually(lambda: serving("api"), timeout_s=180, every_s=0.5)
        assert len({r["node"] for r in first.values()}) == 3  # one per controller (host)

        # Each replica runs in its server's own network (issue 39), not the host's.
        running = [c for c in _replica_containers(home) if int(c["Pid"]) > 0]
        assert running
        for c in running:
            server_id = c["Labels"]["shoal.server"]
            assert in_namespace(int(c["Pid"]), node_namespace(home, server_id)), c
        # kill -9 of a replica's container: restarted by the keeper (its first exit at once).
        victim = next(c for c in _replica_containers(home) if c["Labels"][LABEL].endswith("/Api-1"))
        os.kill(int(victim["Pid"]), signal.SIGKILL)
        eventually(
            lambda: (s := serving("api")) and s["Api-1"]["restarts"] >= 1 and s,
            timeout_s=180,
            every_s=0.5,
        )

        # A controller's host fails: its replica is rescheduled to a live controller.
        nodes = {n["name"]: n for n in client.get("/v1/nodes").json()["nodes"]}
        lost_node = first["Api-2"]["node"]
        shoal("host", "fail", nodes[lost_node]["host"])
        moved = eventually(
            lambda: (
                (s := serving("api"))
                and {n["name"]: n["host"] for n in client.get("/v1/nodes").json()["nodes"]}.get(
                    s["Api-2"]["node"]
                )
                != nodes[lost_node]["host"]
                and s
            ),
            timeout_s=180,
            every_s=0.5,
        )
        assert moved["Api-1"]["node"] == first["Api-1"]["node"]  # the others stayed

        # A change of env rolls every replica; a broken image rolls back to it.
        greet = tmp_path / "greet.yaml"
        greet.write_text("parameter_defaults: {ApiGreeting: hello, WithBalancer: false}\n")
        shoal("apply", template, "-e", ha, "-e", str(greet))
        # Rolled when the rollout says COMPLETE, not merely when every replica answers: a change
        # made while it still reads ROLLING rolls (and would roll back) from where it began.
        rolled = eventually(
            lambda: (
                (s := serving("hello"))
                and len({r["revision"] for r in s.values()}) == 1
                and all(r["phase"] == "COMPLETE" for r in view()["rollouts"])
                and s
            ),
            timeout_s=180,
            every_s=0.5,
        )
        broken = tmp_path / "broken.yaml"
        broken.write_text(
            "parameter_defaults: {ApiGreeting: hello, WithBalancer: false,"
            " ServiceImage: 'localhost/missing:1'}\n"
        )
        shoal("apply", template, "-e", ha, "-e", str(broken))
        eventually(
            lambda: any(r["phase"] == "ROLLED_BACK" for r in view()["rollouts"]) or None,
            timeout_s=180,
            every_s=0.5,
        )
        back = eventually(lambda: serving("hello"), timeout_s=180, every_s=0.5)
        assert {r["revision"] for r in back.values()} == {r["revision"] for r in rolled.values()}

        shoal("delete", "template", "--wait")
    assert _replica_containers(home) == []
    assert not _conmons(home), "a replica's container outlived its cluster"


def _conmons(home: Path) -> list[str]:
    """Command lines of live processes that run a replica container of this home (conmon names
    it, and its store's root, under the home: other tests on the machine run seed 003 too)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            line = proc.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "conmon" in line and "shoal-Api-" in line and str(home) in line:
            found.append(line)
    return found
