"""The flows of heat-tempest-plugin's API suite, through the façade over real HTTP (ASGI)."""

from __future__ import annotations

from typing import Any

from tests.heat_api.conftest import Heat

TEST_TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2016-04-08",
    "parameters": {"test_val": {"type": "string"}},
    "resources": {
        "test": {
            "type": "OS::Heat::TestResource",
            "properties": {"value": {"get_param": "test_val"}},
        }
    },
    "outputs": {"output_value": {"value": {"get_attr": ["test", "output"]}}},
}


async def test_stack_create_update_patch_outputs_delete(heat_db: Heat) -> None:
    heat = heat_db
    href = await heat.stack("s1", TEST_TEMPLATE, parameters={"test_val": "value"})
    assert "/stacks/s1/" in href
    shown = (await heat.ok("GET", href))["stack"]
    assert shown["stack_status"] == "CREATE_COMPLETE", shown
    assert shown["outputs"][0]["output_value"] == "value"
    r = await heat.call("GET", "/stacks/s1")
    assert r.status_code == 302 and r.headers["location"] == href
    body = {"stack_name": "s1", "template": TEST_TEMPLATE, "parameters": {"test_val": "new"}}
    assert (await heat.call("PUT", href, json=body)).status_code == 202
    assert (await heat.settled(href))["stack_status"] == "UPDATE_COMPLETE"
    assert (
        await heat.call("PATCH", href, json={"parameters": {"test_val": "p"}})
    ).status_code == 202
    assert (await heat.settled(href))["stack_status"] == "UPDATE_COMPLETE"
    out = await heat.ok("GET", href + "/outputs/output_value")
    assert out["output"]["output_value"] == "p"
    outs = await heat.ok("GET", href + "/outputs")
    assert outs["outputs"][0]["output_key"] == "output_value"
    events = (await heat.ok("GET", href + "/events"))["events"]
    stack_events = [e["resource_status"] for e in events if e["resource_name"] == "s1"]
    assert stack_events[-1] == "UPDATE_COMPLETE", events
    res = (await heat.ok("GET", href + "/resources"))["resources"]
    assert res[0]["logical_resource_id"] == "test"
    one = (await heat.ok("GET", href + "/resources/test"))["resource"]
    assert one["attributes"]["output"] == "p"
    await heat.ok(
        "PATCH",
        href + "/resources/test",
        json={"mark_unhealthy": True, "resource_status_reason": "gone"},
    )
    one = (await heat.ok("GET", href + "/resources/test"))["resource"]
    assert one["resource_status"] == "CHECK_FAILED" and one["resource_status_reason"] == "gone"
    r = await heat.call("POST", href + "/resources/test/signal")
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "ResourceActionNotSupported"
    assert (await heat.call("DELETE", "/stacks/s1")).status_code == 302
    assert (await heat.call("DELETE", href)).status_code == 204
