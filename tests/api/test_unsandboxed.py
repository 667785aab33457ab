"""A Shoal whose local nodes run unsandboxed (`sandbox = "off"`, issue 29) or on the host's
network (`isolation = "off"`, or no means to isolate them: issue 39) serves its admin only: a
node there could read the admin token or reach the database, so no other project is served
(403). With both, every project is served."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from shoal.api.app import create_app
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.store.database import Database


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ({"sandbox": "off"}, "unsandboxed"),
        ({"isolation": "off"}, "share the host's network"),
        ({"isolation": "netns"}, None),
    ],
)
async def test_an_unconfined_local_shoal_refuses_projects(
    db: Database, tmp_path: Path, options: dict[str, str], refusal: str | None
) -> None:
    settings = Settings(
        home=tmp_path / "home",
        database_url=db.engine.url.render_as_string(hide_password=False),
        provider="local",
        provider_options=options,
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
            if refusal is None:
                assert r.status_code == 200, r.text
            else:
                assert r.status_code == 403, r.text
                assert refusal in r.json()["error"]["message"]
    finally:
        await runtime.close()
