"""The server's warm-up (issue 23): FastAPI's per-router state (a pydantic `TypeAdapter` per
field of every route) is built before the first request, which then builds nothing; the warm-up's
own requests leave the app serving as before.

What a request builds is watched, not replaced: a profile hook counts the `TypeAdapter`s made
while the requests are served (pydantic's public class), on an app warmed up and, to show the
count can tell, on one that is not."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import TypeAdapter

from shoal.api.app import create_app, warm_up
from shoal.runtime import Runtime
from shoal.store.database import Database
from tests.api.conftest import sim_settings


async def _adapters_made_serving(app: FastAPI) -> int:
    """How many `TypeAdapter`s are made while `app` answers four requests on its routers."""
    made = 0

    def watch(frame: FrameType, event: str, _arg: Any) -> None:
        nonlocal made
        if event == "call" and frame.f_code is TypeAdapter.__init__.__code__:
            made += 1

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
        sys.setprofile(watch)
        try:
            assert (await http.get("/healthz")).status_code == 200
            assert (await http.get("/v1/clusters")).status_code == 401
            assert (await http.get("/clustering/v1/clusters")).status_code == 401
            assert (await http.get("/.warm-up")).status_code == 404
        finally:
            sys.setprofile(None)
    return made


async def test_first_requests_build_nothing_after_the_warm_up(db: Database, tmp_path: Path) -> None:
    runtime = await Runtime.open(sim_settings(db, tmp_path))
    try:
        cold = await _adapters_made_serving(create_app(runtime))
        warmed = create_app(runtime)
        await warm_up(warmed)
        assert await _adapters_made_serving(warmed) == 0
        assert cold > 0, "the count sees what a first request builds"
    finally:
        await runtime.close()
