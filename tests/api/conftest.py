"""Fixtures for API tests: the real app over a real store (SQLite and PostgreSQL), the sim
provider in memory, a manual clock, and the engine running so actions complete."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from shoal.api.app import create_app
from shoal.clock import ManualClock
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store.database import Database
from tests.support.polling import until


@dataclass
class Api:
    http: httpx.AsyncClient
    runtime: Runtime
    clock: ManualClock
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    async def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        return await self.http.request(method, path, headers=self.auth, **kw)

    async def wait(self, action_id: str) -> dict[str, Any]:
        """The action once it has ended (bounded, so a bug fails instead of hanging)."""

        async def ended() -> dict[str, Any] | None:
            r = await self.call("GET", f"/v1/actions/{action_id}")
            assert r.status_code == 200, r.text
            action: dict[str, Any] = r.json()["action"]
            return action if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED") else None

        action: dict[str, Any] = await until(ended, f"action {action_id} to end")
        return action

    async def up(self, document: str) -> dict[str, Any]:
        """Create a cluster and wait until its creation succeeded; the cluster."""
        r = await self.call("POST", "/v1/clusters", content=document)
        assert r.status_code == 202, r.text
        assert (await self.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
        cluster: dict[str, Any] = r.json()["cluster"]
        return cluster

    async def nodes(self, cluster: str) -> list[dict[str, Any]]:
        r = await self.call("GET", "/v1/nodes", params={"cluster": cluster})
        assert r.status_code == 200, r.text
        nodes: list[dict[str, Any]] = r.json()["nodes"]
        return nodes

    async def actions(self, cluster: str) -> list[dict[str, Any]]:
        r = await self.call("GET", "/v1/actions", params={"cluster": cluster})
        assert r.status_code == 200, r.text
        actions: list[dict[str, Any]] = r.json()["actions"]
        return actions


def sim_settings(db: Database, tmp_path: Path, **more: Any) -> Settings:
    """A server's settings on `db` (home `tmp_path/home`) with the in-memory sim and no
    manager, plus `more`."""
    return Settings(
        home=tmp_path / "home",
        database_url=db.engine.url.render_as_string(hide_password=False),
        provider="sim",
        provider_options={"state_path": "memory"},
        manage=False,
        **more,
    )


@asynccontextmanager
async def served(
    db: Database, home: Path, token: str | None = None, **more: Any
) -> AsyncIterator[Api]:
    """The API in process over `db` with `home` and the settings `more` (a test that needs
    other settings opens another over the same store, given the first's admin `token`)."""
    settings = sim_settings(db, home, retry_backoff_s=0.0, **more)
    clock = ManualClock()
    runtime = await Runtime.open(settings, clock=clock)
    try:
        token = token or runtime.new_admin_token
        assert token is not None
        await runtime.engine.start()
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
            yield Api(http, runtime, clock, token)
    finally:
        await runtime.close()


@pytest.fixture
async def api(db: Database, tmp_path: Path) -> AsyncIterator[Api]:
    async with served(db, tmp_path) as opened:
        yield opened
