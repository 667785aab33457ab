"""Event ids a client names are bounded: a 23-digit `after` or a 5,000-digit `Last-Event-ID`
is a 422 in the error shape naming the parameter, never an unhandled 500 (issue 9, point 6)."""

from __future__ import annotations

import httpx
import pytest

from shoal.api.routes_work import MAX_EVENT_ID
from tests.api.conftest import Api


def assert_problem(r: httpx.Response, path: str) -> None:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert set(error) == {"code", "title", "message", "details"}
    assert [d["path"] for d in error["details"]] == [path], error


@pytest.mark.parametrize("route", ["/v1/events", "/v1/events/stream"])
async def test_an_after_beyond_64_bits_is_a_422(api: Api, route: str) -> None:
    assert_problem(await api.call("GET", route, params={"after": "1" * 23}), "query:after")
    assert_problem(
        await api.call("GET", route, params={"after": str(MAX_EVENT_ID + 1)}), "query:after"
    )


async def test_the_largest_event_id_is_answered(api: Api) -> None:
    r = await api.call("GET", "/v1/events", params={"after": str(MAX_EVENT_ID)})
    assert r.status_code == 200, r.text
    assert r.json() == {"events": [], "next": MAX_EVENT_ID}


@pytest.mark.parametrize("value", ["9" * 5000, "1" * 21, str(2**31), "abc", "-1", "1.5"])
async def test_a_last_event_id_that_is_no_event_id_is_a_422(api: Api, value: str) -> None:
    headers = {**api.auth, "Last-Event-ID": value}
    r = await api.http.get("/v1/events/stream", headers=headers)
    assert_problem(r, "header:last-event-id")


async def test_every_integer_query_parameter_has_bounds(api: Api) -> None:
    """Any integer a request names in its query has a maximum in the served document."""
    doc = (await api.http.get("/openapi.json")).json()
    unbounded = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for p in op.get("parameters", []):
                schema = p.get("schema", {})
                kinds = {schema.get("type")} | {s.get("type") for s in schema.get("anyOf", [])}
                if kinds & {"integer", "number"} and not (
                    "maximum" in schema or any("maximum" in s for s in schema.get("anyOf", []))
                ):
                    unbounded.append(f"{method.upper()} {path} {p['name']}")
    assert unbounded == []
