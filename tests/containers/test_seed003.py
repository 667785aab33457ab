"""Seed 003's example on `local`: `shoal up template -e single.yaml` serves its API from a
container (docker-compose), and `shoal apply template -e pods.yaml` converts that cluster in place
to three controllers whose APIs are Pods, with a balancer listing every one of them, and
`-e single.yaml` back. The template is in TripleO's style: its deployments are at the top
level, fed the Controller role's servers through the role's output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from tests.containers.conftest import StartServer
from tests.support.server import eventually, free_port

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "seed003"
PORT = 8081


def _get(url: str) -> str | None:
    try:
        r = httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None
    return r.text if r.status_code == 200 else None


def _serving(client: httpx.Client, controllers: int, how: str) -> dict[str, Any] | None:
    nodes = {n["name"]: n for n in client.get("/v1/nodes").json()["nodes"]}
    ctl = [n for name, n in nodes.items() if name.startswith("Controller")]
    if len(ctl) != controllers:
        return None
    for n in ctl:
        page = _get(f"http://{n['address'].split(':')[0]}:{PORT}/") or ""
        if how not in page:
            return None
    if controllers > 1:
        lb = nodes.get("Balancer")
        page = (_get(f"http://{lb['address']}/www/index.html") if lb else None) or ""
        if any(f"{n['address'].split(':')[0]}:{PORT}" not in page for n in ctl):
            return None
    return nodes


def test_seed003_single_then_converted_to_ha(home: Path, start_server: StartServer) -> None:
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
        eventually(lambda: _serving(client, 1, "in a container"), timeout_s=120, every_s=0.5)
        shoal("apply", template, "-e", str(EXAMPLE / "pods.yaml"))
        eventually(lambda: _serving(client, 3, "in a pod"), timeout_s=180, every_s=0.5)
        listed = client.get("/v1/clusters/template/deployments").json()["deployments"]
        assert {d["node"] for d in listed} == {
            "Controller-1",
            "Controller-2",
            "Controller-3",
            "Balancer",
        }
        # and back: one controller, its API a compose project again, the balancer gone
        shoal("apply", template, "-e", str(EXAMPLE / "single.yaml"))

        def single_again() -> dict[str, Any] | None:
            nodes = _serving(client, 1, "in a container")
            return nodes if nodes is not None and "Balancer" not in nodes else None

        eventually(single_again, timeout_s=180, every_s=0.5)
