"""The server's warm-up (issue 23): FastAPI's per-router state is built before the first
request, which then builds nothing; the warm-up's own requests leave the app serving as before."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import routing

from shoal.api.app import create_app, warm_up
from shoal.runtime import Runtime
from shoal.store.database import Database
from tests.api.conftest import sim_settings


async def test_first_requests_build_nothing_after_the_warm_up(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = await Runtime.open(sim_settings(db, tmp_path))
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
