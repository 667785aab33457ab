"""The server's warm-up (issue 23): FastAPI's per-router state is built before the first
request, which then builds nothing; the warm-up's own requests leave the app serving as before."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import routing

from shoal.api.app import create_app, warm_up
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store.database import Database


async def test_first_requests_build_nothing_after_the_warm_up(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = db.engine.url.render_as_string(hide_password=False)
    settings = Settings(
        home=tmp_path / "home",
        database_url=url,
        provider="sim",
        provider_options={"state_path": "memory"},
        manage=False,
    )
    runtime = await Runtime.open(settings)
    try:
        app = create_app(runtime)
        await warm_up(app)
        built: list[object] = []
        original = routing._IncludedRouter._build_effective_context

        def counted(self: routing._IncludedRouter, route: routing.BaseRoute) -> object:
            built.append(route)
            return original(self, route)

        monkeypatch.setattr(routing._IncludedRouter, "_build_effective_context", counted)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
            assert (await http.get("/healthz")).status_code == 200
            assert (await http.get("/v1/clusters")).status_code == 401
            assert (await http.get("/clustering/v1/clusters")).status_code == 401
            assert (await http.get("/.warm-up")).status_code == 404
        assert built == []
    finally:
        await runtime.close()
