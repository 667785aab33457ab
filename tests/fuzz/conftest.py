"""Real servers for API fuzzing, and the figures each fuzzed schema produced.

A module-scoped `shoal` server (serve.py, the sim provider, SQLite or a fresh PostgreSQL) with a
small cluster, a profile and a receiver in it, so list endpoints answer real objects. Every
request the fuzzer makes is counted per schema and backend; the counts are printed as JSON lines
at the end of the run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.databases import database_url
from tests.support.server import ServerProcess, free_port, server_env, wait_ok

SEED_CLUSTER = """
name: seed
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    max: 4
    zones: [az1, az2]
"""


@dataclass
class Tally:
    """Per (schema, backend): requests sent, and answers by status class."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, key: str, status: int) -> None:
        c = self.counts.setdefault(key, Counter())
        c["requests"] += 1
        c[f"{status // 100}xx"] += 1


TALLY = Tally()


@dataclass
class Served:
    server: ServerProcess
    backend: str


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    """A real server with a little of everything in it, on each backend."""
    home = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    with database_url(request.param, home) as url:
        port = free_port()
        env = server_env(
            home,
            port=port,
            provider="sim",
            provider_options={"state_path": "memory"},
            database_url=url,
            extra={"SHOAL_MANAGE": "false"},
        )
        server = ServerProcess(home, env, home / "server.log").start()
        try:
            with server.client() as http:
                wait_ok(http, http.post("/v1/clusters", content=SEED_CLUSTER))
                http.post(
                    "/v1/profiles",
                    json={"name": "tiny", "type": "server", "flavor": "m1.tiny", "image": "cirros"},
                ).raise_for_status()
                http.post(
                    "/v1/receivers",
                    json={"name": "grow", "cluster": "seed", "action": "scale_out"},
                ).raise_for_status()
            yield Served(server, request.param)
        finally:
            server.stop()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for key, c in sorted(TALLY.counts.items()):
        schema, backend = key.split("@")
        line = {"fuzz": schema, "backend": backend, **dict(sorted(c.items()))}
        terminalreporter.write_line(json.dumps(line))
