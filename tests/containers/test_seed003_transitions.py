"""Issue 36 on `local` with real podman: seed 003 converted in place single -> HA -> single ->
pods -> single -> HA, each step with every service answering HTTP on its controller's address
from what that shape declares (a compose container, a workload's replica, a Pod), the balancer
listing every controller, `shoal deployments` and `shoal workloads` listing only what the shape
declares, and no container or Pod left of another shape on any node.

The order matters (single -> HA): the compose container holding :8081 on Controller-1 is
removed before the replica Api-1 starts there; HA -> single: the replicas are stopped before the
compose deployment's container starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from shoal.providers.local import containers, podman
from tests.containers.conftest import StartServer
from tests.support.server import eventually, free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed003"
PORT = 8081
SAYS = {"single.yaml": "in a container", "ha.yaml": "replica", "pods.yaml": "in a pod"}


def _get(url: str) -> str | None:
    try:
        r = httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None
    return r.text if r.status_code == 200 else None


def _ip(node: dict[str, Any]) -> str:
    return str(node["address"]).split(":")[0]


def _running(home: Path) -> dict[str, list[str]]:
    """Every container and Pod on every node's podman store, by kind: a compose project's,
    a replica's, a Pod's."""
    found = podman.Podman.find()
    kinds: dict[str, list[str]] = {"compose": [], "replica": [], "pod": []}
    for root in (home / "local" / "nodes").glob("*/podman"):
        store = podman.Store(root)
        if not store.storage_conf.exists():
            continue
        names = containers.run(found, store, "ps", "--all", "--format", "{{.Names}}").split()
        kinds["compose"] += [n for n in names if n.startswith("apideployment")]
        kinds["replica"] += [n for n in names if n.startswith("shoal-Api-")]
        pods = containers.run(found, store, "pod", "ps", "--format", "{{.Name}}").split()
        kinds["pod"] += [p for p in pods if p == "api"]
    return kinds


def _as_declared(client: httpx.Client, home: Path, env: str) -> dict[str, Any] | None:
    """The cluster as `env` declares it, every service answering, nothing of another shape."""
    controllers = 1 if env == "single.yaml" else 3
    nodes = {n["name"]: n for n in client.get("/v1/nodes").json()["nodes"]}
    ctl = [n for name, n in nodes.items() if name.startswith("Controller")]
    if len(ctl) != controllers or any(n["status"] != "ACTIVE" for n in ctl):
        return None
    for n in ctl:
        if SAYS[env] not in (_get(f"http://{_ip(n)}:{PORT}/") or ""):
            return None
    if controllers > 1:
        lb = nodes.get("Balancer")
        page = (_get(f"http://{lb['address']}/www/index.html") if lb else None) or ""
        if any(f"{_ip(n)}:{PORT}" not in page for n in ctl):
            return None
    elif "Balancer" in nodes:
        return None
    deployed = client.get("/v1/clusters/template/deployments").json()["deployments"]
    api = {d["node"] for d in deployed if d["deployment"] == "ApiDeployment"}
    replicas = client.get("/v1/clusters/template/workloads").json()["replicas"]
    running = _running(home)
    if env == "ha.yaml":
        ok = not api and len(replicas) == 3 and len(running["replica"]) == 3
        ok = ok and not running["compose"] and not running["pod"]
    else:
        ok = api == {n["name"] for n in ctl} and not replicas and not running["replica"]
        if env == "single.yaml":
            ok = ok and len(running["compose"]) == 1 and not running["pod"]
        else:
            ok = ok and not running["compose"] and len(running["pod"]) == 3
    return nodes if ok else None


def test_seed003_converts_in_place_every_way(home: Path, start_server: StartServer) -> None:
    server = start_server(
        home=home, provider="local", provider_options={"port": free_port(), "agent_poll_s": 1.0}
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
    shoal("up", template, "-e", str(EXAMPLE / "single.yaml"))
    with server.client() as client:
        eventually(lambda: _as_declared(client, home, "single.yaml"), "single", timeout_s=180)
        for shape in ("ha.yaml", "single.yaml", "pods.yaml", "single.yaml", "ha.yaml"):
            shoal("apply", template, "-e", str(EXAMPLE / shape))
            eventually(
                lambda shape=shape: _as_declared(client, home, shape),
                lambda shape=shape: f"{shape}: {_running(home)}",
                timeout_s=240,
                every_s=0.5,
            )
