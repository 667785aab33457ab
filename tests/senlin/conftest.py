"""Fixtures for the Senlin façade: the real app (engine started by its lifespan) over a SQLite
store and the sim provider, reached through httpx's ASGI transport at /clustering."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from shoal.api.app import create_app
from shoal.clock import Clock
from shoal.runtime import Runtime
from shoal.settings import Settings
from tests.databases import migrated_database_url
from tests.support.polling import until

TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")

NOVA_SPEC: dict[str, Any] = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {
        "name": "web-server",
        "flavor": "m1.tiny",
        "image": "cirros",
        "metadata": {"tier": "web"},
        "networks": [{"network": "private"}],
        "key_name": "oskey",
    },
}


def settings(home: Path, database_url: str | None = None, **sim: Any) -> Settings:
    return Settings(
        home=home,
        database_url=database_url,
        provider="sim",
        provider_options={"state_path": "memory", **sim},
        manage=False,
        retry_backoff_s=0.0,
    )


@dataclass
class Senlin:
    http: httpx.AsyncClient
    runtime: Runtime
    token: str

    async def call(
        self, method: str, path: str, *, version: str | None = None, **kw: Any
    ) -> httpx.Response:
        headers = {"X-Auth-Token": self.token, **kw.pop("headers", {})}
        if version is not None:
            headers["OpenStack-API-Version"] = f"clustering {version}"
        return await self.http.request(method, f"/clustering/v1{path}", headers=headers, **kw)

    async def ok(self, method: str, path: str, expect: int = 200, **kw: Any) -> Any:
        r = await self.call(method, path, **kw)
        assert r.status_code == expect, r.text
        return r.json() if r.content else None

    async def wait(self, action_id: str) -> dict[str, Any]:
        async def ended() -> dict[str, Any] | None:
            action: dict[str, Any] = (await self.ok("GET", f"/actions/{action_id}"))["action"]
            return action if action["status"] in TERMINAL else None

        action: dict[str, Any] = await until(ended, f"action {action_id} to end")
        return action

    async def accepted(self, method: str, path: str, **kw: Any) -> tuple[dict[str, Any], str]:
        """A 202 and its action, waited for; the body and the action id."""
        r = await self.call(method, path, **kw)
        assert r.status_code == 202, r.text
        action_id = r.headers["Location"].rsplit("/", 1)[-1]
        assert r.headers["Location"] == f"/clustering/v1/actions/{action_id}"
        action = await self.wait(action_id)
        assert action["status"] == "SUCCEEDED", action
        return (r.json() if r.content else {}), action_id

    async def profile(self, name: str = "web", spec: dict[str, Any] | None = None) -> str:
        body = {"profile": {"name": name, "spec": spec or NOVA_SPEC}}
        created = await self.ok("POST", "/profiles", 201, json=body)
        profile_id: str = created["profile"]["id"]
        return profile_id

    async def cluster(self, name: str = "web", size: int = 2, **extra: Any) -> dict[str, Any]:
        profile = await self.profile(f"{name}-profile")
        body = {"cluster": {"name": name, "profile_id": profile, "desired_capacity": size, **extra}}
        await self.accepted("POST", "/clusters", json=body)
        cluster: dict[str, Any] = (await self.ok("GET", f"/clusters/{name}"))["cluster"]
        return cluster


@asynccontextmanager
async def serving(
    home: Path, database_url: str | None = None, *, clock: Clock | None = None, **sim: Any
) -> AsyncIterator[Senlin]:
    runtime = await Runtime.open(settings(home, database_url, **sim), clock=clock)
    try:
        token = runtime.new_admin_token
        assert token is not None
        app = create_app(runtime, run_engine=True)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
                yield Senlin(http, runtime, token)
    finally:
        await runtime.close()


@pytest.fixture
async def senlin(tmp_path: Path) -> AsyncIterator[Senlin]:
    async with serving(tmp_path / "home") as served:
        yield served


@pytest.fixture(params=["sqlite", "postgres"])
async def senlin_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Senlin]:
    """The façade over SQLite, then over a fresh PostgreSQL database (both already migrated)."""
    with migrated_database_url(str(request.param), tmp_path) as url:
        async with serving(tmp_path / "home", url) as served:
            yield served
