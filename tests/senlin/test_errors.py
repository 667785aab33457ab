"""Every error under /clustering answers in Senlin's shape, whatever produced it."""

from __future__ import annotations

from typing import Any

import httpx

from tests.senlin.conftest import Senlin


def senlin_error(r: httpx.Response, status: int, kind: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body: dict[str, Any] = r.json()
    assert set(body) == {"code", "title", "explanation", "error"}
    assert body["code"] == status
    assert body["title"] and body["explanation"]
    assert body["error"]["code"] == status
    assert body["error"]["message"]
    if kind is not None:
        assert body["error"]["type"] == kind
    error: dict[str, Any] = body["error"]
    return error


async def test_missing_and_bad_tokens_are_401(senlin: Senlin) -> None:
    senlin_error(await senlin.http.get("/clustering/v1/clusters"), 401)
    r = await senlin.http.get("/clustering/v1/clusters", headers={"X-Auth-Token": "nope"})
    senlin_error(r, 401)


async def test_a_bearer_token_works_too(senlin: Senlin) -> None:
    r = await senlin.http.get(
        "/clustering/v1/clusters", headers={"Authorization": f"Bearer {senlin.token}"}
    )
    assert r.status_code == 200
    assert r.json() == {"clusters": []}


async def test_unknown_things_are_404(senlin: Senlin) -> None:
    senlin_error(await senlin.call("GET", "/clusters/nope"), 404, "ResourceNotFound")
    senlin_error(await senlin.call("GET", "/profiles/nope"), 404, "ResourceNotFound")
    senlin_error(await senlin.call("GET", "/nodes/nope"), 404, "ResourceNotFound")
    senlin_error(await senlin.call("GET", "/actions/nope"), 404, "ResourceNotFound")
    senlin_error(await senlin.call("GET", "/profile-types/os.bogus.thing-1.0"), 404)
    senlin_error(await senlin.call("GET", "/no-such-collection"), 404, "HTTPNotFound")


async def test_a_wrong_method_is_405(senlin: Senlin) -> None:
    senlin_error(await senlin.call("PUT", "/clusters"), 405, "HTTPMethodNotAllowed")


async def test_malformed_bodies_are_400(senlin: Senlin) -> None:
    r = await senlin.call("POST", "/clusters", content=b"{not json")
    senlin_error(r, 400, "BadRequest")
    r = await senlin.call("POST", "/clusters", json={"name": "x"})
    error = senlin_error(r, 400, "BadRequest")
    assert "missing 'cluster' key" in error["message"]


async def test_cluster_actions_need_exactly_one_known_action(senlin: Senlin) -> None:
    cluster = await senlin.cluster(size=1)
    path = f"/clusters/{cluster['id']}/actions"
    senlin_error(await senlin.call("POST", path, json={}), 400)
    error = senlin_error(
        await senlin.call("POST", path, json={"scale_out": {}, "scale_in": {}}), 400
    )
    assert error["message"] == "Multiple actions specified"
    error = senlin_error(await senlin.call("POST", path, json={"explode": {}}), 400)
    assert error["message"] == "Unrecognized action 'explode' specified"


async def test_the_native_api_keeps_its_own_error_shape(senlin: Senlin) -> None:
    r = await senlin.http.get("/v1/clusters/nope", headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
