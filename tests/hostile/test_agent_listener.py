"""The agents' own listener (issue 39) is all of Shoal a local node reaches: on it, every route
of the API but the agents' two answers 404, whatever the method and whoever asks (the admin's
token included); the agents' routes answer there as on the API's port."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from shoal.api.agentgate import allowed
from tests.support.server import ServerProcess, free_port, server_env

GATE = "this port serves agents only"


def _concrete(path: str) -> str:
    """An OpenAPI path with each `{param}` filled."""
    return re.sub(r"\{[^}]+\}", "x1", path)


def test_only_the_agents_routes_answer_on_the_agents_port(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    agent_port = free_port()
    env = server_env(
        home,
        port=free_port(),
        provider="sim",
        provider_options={"state_path": "memory"},
        extra={"SHOAL_AGENT_PORT": str(agent_port)},
    )
    server = ServerProcess(home, env, tmp_path / "server.log").start()
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        spec = httpx.get(f"{server.url}/openapi.json", timeout=60).json()
        agents = f"http://127.0.0.1:{agent_port}"
        leaked: list[str] = []
        tried = 0
        with httpx.Client(base_url=agents, headers=headers, timeout=60) as http:
            for path, methods in spec["paths"].items():
                for method in methods:
                    concrete = _concrete(path)
                    r = http.request(method.upper(), concrete)
                    tried += 1
                    gated = r.status_code == 404 and GATE in r.text
                    if allowed(method.upper(), concrete) == gated:
                        leaked.append(f"{method.upper()} {path}: {r.status_code}")
            for path in ("/ui/", "/metrics", "/docs", "/healthz", "/clustering/v1/clusters"):
                r = http.get(path)
                tried += 1
                if not (r.status_code == 404 and GATE in r.text):
                    leaked.append(f"GET {path}: {r.status_code}")
        assert tried > 50 and leaked == [], leaked
        # The agents' routes are served there: a wrong token is the service's own 404.
        r = httpx.get(f"{agents}/v1/software/servers/x1/metadata?token=nope", timeout=60)
        assert r.status_code == 404 and GATE not in r.text, r.text
    finally:
        server.kill()
