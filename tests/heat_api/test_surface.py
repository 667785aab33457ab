"""The rest of the façade's surface: the name lookup for every method and sub-path, Heat's
error body, refusals naming what Shoal cannot create, TestResource's knobs, previews, software
configs and deployments, resource types, template versions and functions, projects kept apart."""

from __future__ import annotations

from typing import Any

import pytest

from shoal.store.auth import ADMIN_PROJECT
from tests.heat_api.conftest import Heat
from tests.heat_api.test_gabbi_flow import TEST_TEMPLATE

ONE: dict[str, Any] = {
    "heat_template_version": "2016-10-14",
    "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"value": "x"}}},
    "outputs": {"o": {"value": {"get_attr": ["r", "output"]}}},
}


def _error(body: dict[str, Any], status: int, kind: str) -> str:
    assert set(body) == {"explanation", "code", "error", "title"}, body
    assert body["code"] == status and body["error"]["type"] == kind, body
    assert body["error"]["traceback"] is None
    return str(body["error"]["message"])


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE", "POST"])
async def test_name_lookup_redirects_every_method_and_subpath(heat: Heat, method: str) -> None:
    href = await heat.stack("look", ONE)
    stack_id = href.rsplit("/", 1)[-1]
    for tail in ("", "/resources", "/resources/r", "/events", "/outputs/o", "/template"):
        r = await heat.call(method, f"/stacks/look{tail}?x=1")
        assert r.status_code == 302, (method, tail, r.text)
        assert r.headers["location"].endswith(f"/stacks/look/{stack_id}{tail}?x=1")
    r = await heat.call(method, f"/stacks/{stack_id}")
    assert r.status_code == 302 and r.headers["location"].endswith(f"/stacks/look/{stack_id}")
    r = await heat.call(method, "/stacks/nosuch/resources")
    assert r.status_code == 404
    _error(r.json(), 404, "EntityNotFound")


async def test_refusals_in_heats_shape(heat: Heat) -> None:
    bad = {**ONE, "resources": {"x": {"type": "OS::Trove::Instance"}}}
    r = await heat.call("POST", "/stacks", json={"stack_name": "t", "template": bad})
    assert "OS::Trove::Instance" in _error(r.json(), 400, "StackValidationFailed")
    r = await heat.call("POST", "/stacks", json={"stack_name": "9bad", "template": ONE})
    assert "Invalid stack name" in _error(r.json(), 400, "HTTPBadRequest")
    r = await heat.call("POST", "/stacks", json={"stack_name": "u", "template_url": "http://x"})
    assert "template_url" in _error(r.json(), 400, "HTTPBadRequest")
    r = await heat.call("POST", "/stacks", content=b"[" * 100 + b"]" * 100)
    _error(r.json(), 400, "HTTPBadRequest")
    r = await heat.call("POST", "/stacks", content=b'{"stack_name": "a\\u0000b"}')
    assert "cannot be stored" in _error(r.json(), 400, "HTTPBadRequest")
    r = await heat.call("GET", "/stacks/a%00b")
    assert "cannot be stored" in _error(r.json(), 400, "HTTPBadRequest")
    text = "heat_template_version: 2016-10-14\nresources: {}\n"  # YAML reads a date: as text
    r = await heat.call("POST", "/stacks", json={"stack_name": "text", "template": text})
    assert r.status_code == 201, r.text
    await heat.stack("dup", ONE)
    r = await heat.call("POST", "/stacks", json={"stack_name": "dup", "template": ONE})
    assert "already exists" in _error(r.json(), 409, "StackExists")
    r = await heat.call("GET", "/stacks/dup/00000000-0000-0000-0000-000000000000")
    _error(r.json(), 404, "EntityNotFound")
    r = await heat.call("GET", "/stacks", params={"sort_dir": "sideways"})
    _error(r.json(), 400, "HTTPBadRequest")


async def test_projects_are_kept_apart(heat: Heat) -> None:
    r = await heat.http.get(
        "/orchestration/v1/someone-else/stacks", headers={"X-Auth-Token": "not-a-token"}
    )
    _error(r.json(), 401, "HTTPUnauthorized")
    href = await heat.stack("mine", ONE)
    r = await heat.http.post(
        "/v1/projects", json={"name": "p2"}, headers={"X-Auth-Token": heat.token}
    )
    assert r.status_code == 201, r.text
    made = r.json()
    other = Heat(heat.http, heat.runtime, made["token"], made["project"]["id"])
    assert (await other.ok("GET", "/stacks"))["stacks"] == []
    r = await other.call("GET", f"/orchestration/v1/{ADMIN_PROJECT}/stacks")
    _error(r.json(), 403, "Forbidden")
    stack_id = href.rsplit("/", 1)[-1]
    r = await other.call("GET", f"/stacks/mine/{stack_id}")
    _error(r.json(), 404, "EntityNotFound")
    assert (await other.call("GET", "/stacks/mine")).status_code == 404
    await other.stack("mine", ONE)  # names are the project's own


async def test_testresource_fail_makes_the_stack_fail(heat: Heat) -> None:
    failing = {
        **ONE,
        "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"fail": True}}},
    }
    r = await heat.call("POST", "/stacks", json={"stack_name": "f", "template": failing})
    assert r.status_code == 201, r.text
    shown = await heat.settled(r.headers["Location"])
    assert shown["stack_status"] == "CREATE_FAILED"
    res = (await heat.ok("GET", r.headers["Location"] + "/resources/r"))["resource"]
    assert res["resource_status"] == "CREATE_FAILED"
    assert "Test Resource failed" in res["resource_status_reason"]
    events = (await heat.ok("GET", r.headers["Location"] + "/events"))["events"]
    assert events[-1]["resource_name"] == "f" and events[-1]["resource_status"] == "CREATE_FAILED"


async def test_an_update_while_in_progress_is_refused(heat: Heat) -> None:
    waiting = {
        **ONE,
        "resources": {"r": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 3600}}},
    }
    r = await heat.call("POST", "/stacks", json={"stack_name": "w", "template": waiting})
    href = r.headers["Location"]
    shown = (await heat.ok("GET", href))["stack"]
    assert shown["stack_status"] == "CREATE_IN_PROGRESS"
    r = await heat.call("PUT", href, json={"template": ONE})
    assert "in progress" in _error(r.json(), 409, "ActionInProgress")
    assert (await heat.call("DELETE", href)).status_code == 204


async def test_previews_and_validate(heat: Heat) -> None:
    body = {"stack_name": "p", "template": TEST_TEMPLATE, "parameters": {"test_val": "v"}}
    shown = (await heat.ok("POST", "/stacks/preview", json=body))["stack"]
    assert [r["resource_name"] for r in shown["resources"]] == ["test"]
    assert (await heat.ok("GET", "/stacks"))["stacks"] == []
    href = await heat.stack("p", TEST_TEMPLATE, parameters={"test_val": "v"})
    two = {**TEST_TEMPLATE, "resources": {**TEST_TEMPLATE["resources"], **ONE["resources"]}}
    changes = await heat.ok(
        "PUT", href + "/preview", json={"template": two, "parameters": {"test_val": "w"}}
    )
    assert [c["resource_name"] for c in changes["resource_changes"]["added"]] == ["r"]
    assert [c["resource_name"] for c in changes["resource_changes"]["updated"]] == ["test"]
    valid = await heat.ok("POST", "/validate", json={"template": TEST_TEMPLATE})
    assert valid["Parameters"]["test_val"]["Type"] == "String"
    r = await heat.call("POST", "/validate", json={"template": {"heat_template_version": "x"}})
    _error(r.json(), 400, "StackValidationFailed")


async def test_stack_list_filters_sorts_pages(heat: Heat) -> None:
    for name in ("b", "a", "c"):
        await heat.stack(name, ONE, tags="x,y" if name != "c" else "z")
    names = [
        s["stack_name"]
        for s in (
            await heat.ok("GET", "/stacks", params={"sort_keys": "stack_name", "sort_dir": "asc"})
        )["stacks"]
    ]
    assert names == ["a", "b", "c"]
    tagged = (await heat.ok("GET", "/stacks", params={"tags": "x"}))["stacks"]
    assert sorted(s["stack_name"] for s in tagged) == ["a", "b"]
    first = (
        await heat.ok(
            "GET", "/stacks", params={"sort_keys": "stack_name", "sort_dir": "asc", "limit": 1}
        )
    )["stacks"]
    nxt = await heat.ok(
        "GET",
        "/stacks",
        params={"sort_keys": "stack_name", "sort_dir": "asc", "limit": 1, "marker": first[0]["id"]},
    )
    assert [s["stack_name"] for s in nxt["stacks"]] == ["b"]
    done = (await heat.ok("GET", "/stacks", params={"status": "COMPLETE"}))["stacks"]
    assert len(done) == 3


async def test_software_configs_and_deployments(heat_db: Heat) -> None:
    heat = heat_db
    config = (
        await heat.ok(
            "POST",
            "/software_configs",
            json={
                "name": "c",
                "group": "script",
                "config": "#!/bin/sh\necho hi",
                "inputs": [{"name": "foo"}],
            },
        )
    )["software_config"]
    assert (await heat.ok("GET", f"/software_configs/{config['id']}"))["software_config"][
        "group"
    ] == "script"
    dep = (
        await heat.ok(
            "POST",
            "/software_deployments",
            json={
                "config_id": config["id"],
                "server_id": "srv",
                "action": "CREATE",
                "input_values": {"foo": "bar"},
            },
        )
    )["software_deployment"]
    meta = (await heat.ok("GET", "/software_deployments/metadata/srv"))["metadata"]
    assert meta[0]["group"] == "script" and meta[0]["inputs"][0]["value"] == "bar"
    put = await heat.ok(
        "PUT",
        f"/software_deployments/{dep['id']}",
        json={
            "status": "COMPLETE",
            "status_reason": "ok",
            "output_values": {"deploy_stdout": "hi"},
        },
    )
    assert put["software_deployment"]["output_values"] == {"deploy_stdout": "hi"}
    r = await heat.call(
        "POST", "/software_deployments", json={"config_id": "nope", "server_id": "srv"}
    )
    _error(r.json(), 404, "EntityNotFound")
    r = await heat.call("POST", "/software_configs", json={"config": "x" * 600_000})
    _error(r.json(), 400, "HTTPBadRequest")
    await heat.ok("DELETE", f"/software_deployments/{dep['id']}", 204)
    await heat.ok("DELETE", f"/software_configs/{config['id']}", 204)
    assert (await heat.ok("GET", "/software_configs"))["software_configs"] == []


async def test_types_versions_functions_build_info(heat: Heat) -> None:
    types = (await heat.ok("GET", "/resource_types"))["resource_types"]
    assert {"OS::Heat::TestResource", "OS::Nova::Server", "OS::Heat::ResourceGroup"} <= set(types)
    assert "OS::Trove::Instance" not in types
    shown = await heat.ok("GET", "/resource_types/OS::Heat::TestResource")
    assert shown["properties"]["wait_secs"]["default"] == 0
    tmpl = await heat.ok(
        "GET", "/resource_types/OS::Heat::TestResource/template", params={"template_type": "hot"}
    )
    assert tmpl["resources"]["TestResource"]["type"] == "OS::Heat::TestResource"
    versions = (await heat.ok("GET", "/template_versions"))["template_versions"]
    assert {"version": "heat_template_version.2016-04-08", "type": "hot", "aliases": []} in versions
    fns = await heat.ok("GET", "/template_versions/heat_template_version.2016-04-08/functions")
    names = {f["functions"] for f in fns["template_functions"]}
    assert "map_merge" in names and "filter" not in names
    r = await heat.call("GET", "/template_versions/heat_template_version.1999-01-01/functions")
    _error(r.json(), 404, "EntityNotFound")
    assert "revision" in (await heat.ok("GET", "/build_info"))["api"]
    r = await heat.http.get("/orchestration/")
    assert r.status_code == 300 and r.json()["versions"][0]["id"] == "v1.0"
    assert heat.project == ADMIN_PROJECT
