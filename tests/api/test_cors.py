"""CORS for browser clients: none by default; the `cors_origins` setting allows listed origins,
preflights included, and exposes `Location` (issue 9, point 7)."""

from __future__ import annotations

import httpx

from shoal.api.app import create_app
from tests.api.conftest import Api

ORIGIN = "https://console.example"
PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization,content-type",
}


async def test_no_origin_is_allowed_by_default(api: Api) -> None:
    r = await api.http.get("/v1/clusters", headers={**api.auth, "Origin": ORIGIN})
    assert r.status_code == 200
    assert "access-control-allow-origin" not in r.headers
    pre = await api.http.options("/v1/clusters", headers=PREFLIGHT)
    assert "access-control-allow-origin" not in pre.headers


async def test_configured_origins_are_allowed(api: Api) -> None:
    api.runtime.settings.cors_origins = [ORIGIN]
    transport = httpx.ASGITransport(app=create_app(api.runtime))
    async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
        pre = await http.options("/v1/clusters", headers=PREFLIGHT)
        assert pre.status_code == 200, pre.text
        assert pre.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in pre.headers["access-control-allow-methods"]

        r = await http.get("/v1/clusters", headers={**api.auth, "Origin": ORIGIN})
        assert r.headers["access-control-allow-origin"] == ORIGIN
        assert "Location" in r.headers["access-control-expose-headers"]
        refused = await http.get("/v1/clusters", headers={"Origin": ORIGIN})
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == ORIGIN

        other = await http.options(
            "/v1/clusters", headers={**PREFLIGHT, "Origin": "https://evil.example"}
        )
        assert "access-control-allow-origin" not in other.headers
