"""The Senlin edge maps refusals by type and kind, never by their text.

A busy cluster is `ClusterBusy` whichever check found it (the lock seen on reading, the lock
lost to a racing request, a recovery refused): each answers Senlin's 409 `ActionInProgress`.
Statuses come from the refusal's kind through the same map as Shoal's own API (an invalid
request is Senlin's 400).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI
from fastapi.testclient import TestClient

from shoal.api.senlin.errors import install
from shoal.service.errors import (
    ClusterBusy,
    Conflict,
    Invalid,
    NotFound,
    NotReleasable,
    ServiceError,
    TooMany,
)
from shoal.service.senlin.errors import BadRequest

CASES: dict[str, ServiceError] = {
    "busy-known": ClusterBusy("web", "a1"),
    "busy-unknown": ClusterBusy("web", None),
    "conflict-saying-busy": Conflict("the operator is busy"),
    "invalid": Invalid("bad"),
    "bad": BadRequest("Count for scale-out request cannot be 0."),
    "missing": NotFound("The node group 'x' could not be found."),
    "release": NotReleasable("Node n cannot leave its node group"),
    "many": TooMany("slow down", retry_after_s=7),
}


def _raising(exc: ServiceError) -> Callable[[], Awaitable[None]]:
    async def raise_it() -> None:
        raise exc

    return raise_it


def _client() -> TestClient:
    app = FastAPI()
    install(app)
    for name, exc in CASES.items():
        app.add_api_route(f"/{name}", _raising(exc))
    return TestClient(app)


def test_each_refusal_answers_by_its_type_and_kind() -> None:
    client = _client()
    seen = {}
    for name in CASES:
        r = client.get(f"/{name}")
        seen[name] = (r.status_code, r.json()["error"]["type"])
    assert seen == {
        "busy-known": (409, "ActionInProgress"),
        "busy-unknown": (409, "ActionInProgress"),
        # A conflict whose text says "busy" is not a busy cluster: text is never read.
        "conflict-saying-busy": (409, "ActionConflict"),
        "invalid": (400, "BadRequest"),
        "bad": (400, "BadRequest"),
        "missing": (404, "ResourceNotFound"),
        "release": (409, "FeatureNotSupported"),
        "many": (429, "HTTPTooManyRequests"),
    }
    assert client.get("/many").headers["Retry-After"] == "7"
    assert "locked by action a1" in client.get("/busy-known").json()["error"]["message"]
