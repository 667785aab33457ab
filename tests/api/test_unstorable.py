"""A NUL or a lone surrogate anywhere in a request is a 400 naming where, never a 500:
PostgreSQL text cannot hold NUL and UTF-8 cannot encode a lone surrogate, so lookups, stores and
error messages echoing them failed. Found by probing every path and query parameter on
PostgreSQL, and by a deeper fuzz run (a PUT whose body held `\\ud9f5`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shoal.api.errors import ErrorJSON
from tests.api.conftest import Api

GETS = [
    "/v1/clusters/a%00b",
    "/v1/clusters/a%00b/nodegroups/x",
    "/v1/nodes/a%00b",
    "/v1/actions/a%00b",
    "/v1/profiles/a%00b",
    "/v1/receivers/a%00b",
    "/v1/projects/a%00b/tokens",
    "/v2/a%00b/vclusters",
    "/v2/admin/vclusters/a%00b",
]
QUERIES = ["/v1/events?cluster=a%00b", "/v1/nodes?cluster=a%00b", "/v1/actions?cluster=a%00b"]
BODIES: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/projects/admin/tokens", {"json": {"name": "a\x00b"}}),
    ("POST", "/v1/receivers", {"json": {"name": "a\x00b", "cluster": "c", "action": "scale_out"}}),
    ("POST", "/v1/profiles", {"json": {"name": "p", "type": "server", "image": "ci\x00rros"}}),
    ("POST", "/v1/clusters", {"content": b'{"name": "a\\u0000b", "node_groups": []}'}),
    ("PUT", "/v1/clusters/x", {"content": b'"\\u00a7\\ud9f5\\u0001"'}),
    ("POST", "/v1/clusters", {"content": b'name: "\\ud800"\n'}),
]


def refused(r: Any, where: str) -> None:
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"][0]["path"] == where


@pytest.mark.parametrize("path", GETS)
async def test_a_nul_in_the_path_is_a_400(api: Api, path: str) -> None:
    refused(await api.call("GET", path), "path")


@pytest.mark.parametrize("path", QUERIES)
async def test_a_nul_in_the_query_is_a_400(api: Api, path: str) -> None:
    refused(await api.call("GET", path), "query")


async def test_a_nul_in_a_body_is_a_400(api: Api) -> None:
    for method, path, kw in BODIES:
        refused(await api.call(method, path, **kw), "")
    raw = await api.call("POST", "/v1/clusters", content=b"name: x\x00y\n")
    assert raw.status_code == 422, raw.text  # a raw NUL: the document parser refuses it
    refused(await api.http.post("/v1/webhooks/a%00b/trigger?token=x"), "path")
    refused(await api.http.post("/v1/webhooks/abc/trigger?token=a%00b"), "query")


async def test_an_escaped_backslash_before_u0000_is_text_not_a_nul(api: Api) -> None:
    r = await api.call(
        "POST",
        "/v1/profiles",
        content=b'{"name": "p", "type": "server", "flavor": "m1.tiny", "image": "cirros", '
        b'"user_data": "echo \\\\u0000"}',
    )
    assert r.status_code != 400 or "NUL" not in r.text, r.text


def test_an_error_quoting_a_lone_surrogate_can_still_be_sent() -> None:
    answer = ErrorJSON({"error": {"message": "found the text '\ud9f5x'"}}, status_code=422)
    assert json.loads(answer.body) == {"error": {"message": "found the text '\ud9f5x'"}}
    assert b"\\ud9f5" in answer.body
