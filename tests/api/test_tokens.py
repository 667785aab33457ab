"""Tokens expire and can be revoked (issue 9, point 7): an expired or revoked token is a 401
saying which, on SQLite and PostgreSQL, with time driven by the manual clock."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Api


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def new_project(api: Api, name: str, **extra: Any) -> dict[str, Any]:
    r = await api.call("POST", "/v1/projects", json={"name": name, **extra})
    assert r.status_code == 201, r.text
    found: dict[str, Any] = r.json()
    return found


async def as_token(api: Api, token: str) -> httpx.Response:
    return await api.http.get("/v1/clusters", headers=bearer(token))


def refused(r: httpx.Response, message: str) -> None:
    assert r.status_code == 401, r.text
    assert r.json()["error"]["message"] == message
    assert r.headers["WWW-Authenticate"] == "Bearer"


async def test_a_token_expires_after_the_default_lifetime(api: Api) -> None:
    made = await new_project(api, "alpha")
    info = made["token_info"]
    assert info["status"] == "ACTIVE" and info["expires_at"] is not None
    assert (await as_token(api, made["token"])).status_code == 200

    api.clock.advance(api.runtime.settings.token_ttl_s - 1)
    assert (await as_token(api, made["token"])).status_code == 200
    api.clock.advance(1)
    refused(await as_token(api, made["token"]), "the token has expired")

    listed = (await api.call("GET", "/v1/projects/alpha/tokens")).json()["tokens"]
    assert [t["status"] for t in listed] == ["EXPIRED"]


async def test_the_creator_chooses_the_lifetime_or_none(api: Api) -> None:
    short = await new_project(api, "short", expires_in_s=60)
    forever = await new_project(api, "forever", expires_in_s=0)
    assert forever["token_info"]["expires_at"] is None
    api.clock.advance(10 * 365 * 86400)
    refused(await as_token(api, short["token"]), "the token has expired")
    assert (await as_token(api, forever["token"])).status_code == 200


async def test_a_revoked_token_is_refused_and_listed_as_revoked(api: Api) -> None:
    made = await new_project(api, "beta")
    extra = await api.call("POST", "/v1/projects/beta/tokens", json={"name": "ci"})
    assert extra.status_code == 201, extra.text
    second = extra.json()

    r = await api.call("DELETE", f"/v1/tokens/{made['token_info']['id']}")
    assert r.status_code == 200, r.text
    assert r.json()["token_info"]["status"] == "REVOKED"
    refused(await as_token(api, made["token"]), "the token has been revoked")
    assert (await as_token(api, second["token"])).status_code == 200

    listed = (await api.call("GET", "/v1/projects/beta/tokens")).json()["tokens"]
    assert {t["name"]: t["status"] for t in listed} == {"first": "REVOKED", "ci": "ACTIVE"}
    assert all("token" not in t for t in listed), "a listing never shows a secret"


async def test_a_project_revokes_its_own_tokens_but_no_one_elses(api: Api) -> None:
    gamma = await new_project(api, "gamma")
    delta = await new_project(api, "delta")
    own = bearer(gamma["token"])

    other = await api.http.delete(f"/v1/tokens/{delta['token_info']['id']}", headers=own)
    assert other.status_code == 404, other.text
    assert (await as_token(api, delta["token"])).status_code == 200
    issue = await api.http.post("/v1/projects/gamma/tokens", json={}, headers=own)
    assert issue.status_code == 403, issue.text

    mine = await api.http.delete(f"/v1/tokens/{gamma['token_info']['id']}", headers=own)
    assert mine.status_code == 200, mine.text
    refused(await as_token(api, gamma["token"]), "the token has been revoked")


async def test_expiry_is_bounded_and_checked(api: Api) -> None:
    for bad in (-1, 10**12, "soon"):
        r = await api.call("POST", "/v1/projects", json={"name": "x", "expires_in_s": bad})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"][0]["path"] == "/expires_in_s"
    r = await api.call("DELETE", "/v1/tokens/no-such-token")
    assert r.status_code == 404
