"""Fixtures for end-to-end tests: Shoal servers as real processes, fresh PostgreSQL databases.

`start_server(...)` starts `tests/support/serve.py` on a free loopback port with its own
`SHOAL_HOME` (and provider, database, lease) and returns once `/healthz` answers. Every server
a test started is killed with its process group at teardown, and every node process the local
provider left running under its home is swept, whatever the test's outcome.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from tests.support.postgres import fresh_database
from tests.support.server import ServerProcess, free_port, server_env, sweep_local_nodes


class StartServer(Protocol):
    def __call__(
        self,
        *,
        home: Path | None = None,
        provider: str = "local",
        provider_options: dict[str, Any] | None = None,
        database_url: str | None = None,
        lease_s: float = 2.0,
        extra: dict[str, str] | None = None,
    ) -> ServerProcess: ...


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_database() as url:
        yield url


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    started: list[ServerProcess] = []

    def start(
        *,
        home: Path | None = None,
        provider: str = "local",
        provider_options: dict[str, Any] | None = None,
        database_url: str | None = None,
        lease_s: float = 2.0,
        extra: dict[str, str] | None = None,
    ) -> ServerProcess:
        home = home or tmp_path / "home"
        home.mkdir(parents=True, exist_ok=True)
        port = free_port()
        env = server_env(
            home,
            port=port,
            provider=provider,
            provider_options=provider_options,
            database_url=database_url,
            lease_s=lease_s,
            extra=extra,
        )
        server = ServerProcess(home, env, tmp_path / f"server-{port}.log")
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in started:
            server.kill()
        for home in {s.home for s in started}:
            sweep_local_nodes(home)
