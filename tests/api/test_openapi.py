"""The served OpenAPI document says what the API really answers (issue 9, point 9): typed
success bodies, Shoal's error shape for every error status (not FastAPI's `{detail}`), the event
stream as `text/event-stream`, and the security schemes. tests/fuzz checks real answers
against it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

ERROR_STATUSES = {"400", "401", "403", "404", "409", "413", "422"}

# The document comes from the routes' declarations, not from the store: on PostgreSQL it is the
# same document, so the tests that only read it run on one backend (a real answer, the last
# test, still runs on both).
DOCUMENT_ONLY = pytest.mark.parametrize("db", ["sqlite"], indirect=True)


async def document(api: Api) -> dict[str, Any]:
    r = await api.http.get("/openapi.json")
    assert r.status_code == 200
    doc: dict[str, Any] = r.json()
    return doc


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if path.startswith(("/v1", "/v2"))
    ]


@DOCUMENT_ONLY
async def test_every_success_answer_has_a_typed_schema(api: Api) -> None:
    doc = await document(api)
    untyped = []
    for method, path, op in operations(doc):
        for status, answer in op["responses"].items():
            if not status.startswith("2") or status == "204" or path == "/v1/events/stream":
                continue
            content = answer.get("content", {})
            if content.get("text/plain", {}).get("schema") == {"type": "string"}:
                continue  # a text answer (a node's log), declared as such
            schema = content.get("application/json", {}).get("schema", {})
            if "$ref" not in schema:
                untyped.append(f"{method} {path} {status}: {schema}")
    assert untyped == []


@DOCUMENT_ONLY
async def test_errors_are_documented_in_shoals_shape(api: Api) -> None:
    doc = await document(api)
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    error = doc["components"]["schemas"]["ErrorBody"]
    assert error["required"] == ["error"]
    for method, path, op in operations(doc):
        if path == "/v1":
            continue  # the version document: no token, no input, nothing to refuse
        assert set(op["responses"]) >= ERROR_STATUSES, f"{method} {path}"
        for status in ERROR_STATUSES:
            schema = op["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)


@DOCUMENT_ONLY
async def test_the_event_stream_is_declared_as_server_sent_events(api: Api) -> None:
    doc = await document(api)
    ok = doc["paths"]["/v1/events/stream"]["get"]["responses"]["200"]
    assert set(ok["content"]) == {"text/event-stream"}


@DOCUMENT_ONLY
async def test_documents_are_declared_as_json_or_yaml_bodies(api: Api) -> None:
    doc = await document(api)
    create = doc["paths"]["/v1/clusters"]["post"]["requestBody"]
    assert set(create["content"]) == {"application/json", "application/yaml"}


@DOCUMENT_ONLY
async def test_tokens_are_declared_as_security_schemes(api: Api) -> None:
    doc = await document(api)
    schemes = doc["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
    assert schemes["APIKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-Auth-Token",
        "description": schemes["APIKeyHeader"]["description"],
    }


async def test_a_real_answer_keeps_every_key_of_its_view(api: Api) -> None:
    """Response models filter nothing out and add nothing: a receiver shown later has no
    `webhook_url`, a listed cluster no `nodes`."""
    await api.up(
        "name: c\nnode_groups:\n  - name: web\n    profile: {type: server, flavor: m1.tiny, "
        "image: cirros}\n    count: 1\n"
    )
    listed = (await api.call("GET", "/v1/clusters")).json()["clusters"][0]
    assert "nodes" not in listed and "document" not in listed
    one = (await api.call("GET", "/v1/clusters/c")).json()["cluster"]
    assert {"node_counts", "node_groups", "document"} <= set(one) and "nodes" not in one
    asked = (await api.call("GET", "/v1/clusters/c", params={"nodes": 1})).json()["cluster"]
    assert len(asked["nodes"]) == 1 and "nodes_next_marker" not in asked
    r = await api.call(
        "POST", "/v1/receivers", json={"name": "h", "cluster": "c", "action": "scale_out"}
    )
    assert "webhook_url" in r.json()["receiver"]
    shown = (await api.call("GET", "/v1/receivers/h")).json()["receiver"]
    assert "webhook_url" not in shown


def _types(prop: dict[str, Any]) -> set[str]:
    found = {prop["type"]} if "type" in prop else set()
    for alt in prop.get("anyOf", []):
        found |= _types(alt)
    return found


@DOCUMENT_ONLY
async def test_every_time_in_every_view_is_iso_8601_text(api: Api) -> None:
    """Issue 36: a replica's and a rollout's `started_at` were epoch seconds beside ISO 8601
    everywhere else. No time a native view declares may be a number."""
    doc = await document(api)
    numbers = [
        f"{model}.{name}: {sorted(_types(prop))}"
        for model, schema in doc["components"]["schemas"].items()
        for name, prop in schema.get("properties", {}).items()
        if (name.endswith("_at") or name in ("timestamp", "time"))
        and _types(prop) & {"number", "integer"}
    ]
    assert numbers == []
