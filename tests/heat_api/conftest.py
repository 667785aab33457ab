"""Fixtures for the orchestration (Heat) façade: the real app (engine started by its lifespan)
over a SQLite store and the sim provider, reached through httpx's ASGI transport at
/orchestration/v1/{project}."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.store.auth import ADMIN_PROJECT
from tests.databases import migrated_database_url
from tests.senlin.conftest import settings
from tests.support.polling import until


@dataclass
class Heat:
    http: httpx.AsyncClient
    runtime: Runtime
    token: str
    project: str

    @property
    def base(self) -> str:
        return f"/orchestration/v1/{self.project}"

    async def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {"X-Auth-Token": self.token, **kw.pop("headers", {})}
        url = path if path.startswith(("http:", "/orchestration")) else self.base + path
        return await self.http.request(method, url, headers=headers, **kw)

    async def ok(self, method: str, path: str, expect: int = 200, **kw: Any) -> Any:
        r = await self.call(method, path, **kw)
        assert r.status_code == expect, r.text
        return r.json() if r.content else None

    async def stack(self, name: str, template: dict[str, Any], **extra: Any) -> str:
        """Creates a stack and waits for it to leave IN_PROGRESS; its URL path."""
        body = {"stack_name": name, "template": template, **extra}
        r = await self.call("POST", "/stacks", json=body)
        assert r.status_code == 201, r.text
        href = r.headers["Location"]
        await self.settled(href)
        return href

    async def settled(self, href: str) -> dict[str, Any]:
        async def done() -> dict[str, Any] | None:
            shown: dict[str, Any] = (await self.ok("GET", href))["stack"]
            return None if shown["stack_status"].endswith("IN_PROGRESS") else shown

        found: dict[str, Any] = await until(done, f"stack {href} to settle")
        return found


@asynccontextmanager
async def serving(home: Path, database_url: str | None = None) -> AsyncIterator[Heat]:
    runtime = await Runtime.open(settings(home, database_url))
    try:
        token = runtime.new_admin_token
        assert token is not None
        app = create_app(runtime, run_engine=True)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
                yield Heat(http, runtime, token, ADMIN_PROJECT)
    finally:
        await runtime.close()


@pytest.fixture
async def heat(tmp_path: Path) -> AsyncIterator[Heat]:
    async with serving(tmp_path / "home") as served:
        yield served


@pytest.fixture(params=["sqlite", "postgres"])
async def heat_db(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Heat]:
    """The façade over SQLite, then over a fresh PostgreSQL database (both migrated)."""
    with migrated_database_url(str(request.param), tmp_path) as url:
        async with serving(tmp_path / "home", url) as served:
            yield served
