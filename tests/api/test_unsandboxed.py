"""A Shoal whose local nodes run unsandboxed (`sandbox = "off"`, issue 29) serves its admin
only: a node there could read the admin token, so no other project is served (403)."""

from __future__ import annotations

from pathlib import Path

import httpx

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store.database import Database


async def test_an_unsandboxed_local_shoal_refuses_projects(db: Database, tmp_path: Path) -> None:
    settings = Settings(
        home=tmp_path / "home",
        database_url=db.engine.url.render_as_string(hide_password=False),
        provider="local",
        provider_options={"sandbox": "off"},
        manage=False,
    )
    runtime = await Runtime.open(settings)
    try:
        admin = {"Authorization": f"Bearer {runtime.new_admin_token}"}
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
            r = await http.post("/v1/projects", json={"name": "tenant"}, headers=admin)
            assert r.status_code == 201, r.text
            tenant = {"Authorization": f"Bearer {r.json()['token']}"}
            assert (await http.get("/v1/clusters", headers=admin)).status_code == 200
            r = await http.get("/v1/clusters", headers=tenant)
            assert r.status_code == 403, r.text
            assert "unsandboxed" in r.json()["error"]["message"]
    finally:
        await runtime.close()
