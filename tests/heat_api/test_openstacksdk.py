"""openstacksdk's orchestration proxy (a real Heat client) against a real uvicorn server on
loopback, talking to /orchestration/v1/{project}: create and wait, the 302 name lookup (the
SDK's `get_stack` by id or name), resources, template, validate, update, delete and wait."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openstack
import pytest
from openstack.connection import Connection

from shoal.store.auth import ADMIN_PROJECT
from tests.senlin.test_openstacksdk import WAIT_S, LiveServer

TEMPLATE: dict[str, Any] = {
    "heat_template_version": "2018-08-31",
    "parameters": {"v": {"type": "string", "default": "one"}},
    "resources": {
        "test": {"type": "OS::Heat::TestResource", "properties": {"value": {"get_param": "v"}}},
        "pw": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
    },
    "outputs": {"out": {"value": {"get_attr": ["test", "output"]}}},
}


@pytest.fixture
def conn(live: LiveServer) -> Iterator[Connection]:
    connection = openstack.connect(
        auth_type="none",
        orchestration_endpoint_override=f"http://127.0.0.1:{live.port}/orchestration/v1/"
        f"{ADMIN_PROJECT}",
        load_yaml_config=False,
        load_envvars=False,
    )
    assert live.token is not None
    connection.session.additional_headers["Authorization"] = f"Bearer {live.token}"
    try:
        yield connection
    finally:
        connection.close()


def test_openstacksdk_drives_a_stack(conn: Connection) -> None:
    o = conn.orchestration
    validated = o.validate_template(template=TEMPLATE)
    assert "v" in validated["Parameters"] if isinstance(validated, dict) else validated
    stack = o.create_stack(name="sdk", template=TEMPLATE, parameters={"v": "two"})
    stack = o.wait_for_status(
        stack, "CREATE_COMPLETE", failures=["CREATE_FAILED"], interval=0.1, wait=WAIT_S
    )
    got = o.get_stack(stack.id)  # a 302 from /stacks/{id} to /stacks/sdk/{id}
    assert got.name == "sdk" and got.status == "CREATE_COMPLETE"
    assert {r.name for r in o.resources(got)} == {"test", "pw"}
    assert [x["output_value"] for x in got.outputs] == ["two"]
    assert o.get_stack_template(got).resources["test"]["type"] == "OS::Heat::TestResource"
    o.update_stack(got, template=TEMPLATE, parameters={"v": "three"})
    got = o.wait_for_status(
        got, "UPDATE_COMPLETE", failures=["UPDATE_FAILED"], interval=0.1, wait=WAIT_S
    )
    assert [x["output_value"] for x in o.get_stack(got.id).outputs] == ["three"]
    o.delete_stack(got)
    o.wait_for_delete(got, interval=0.1, wait=WAIT_S)
    assert o.find_stack("sdk") is None


@pytest.fixture
def live(tmp_path: Any) -> Iterator[LiveServer]:
    server = LiveServer(tmp_path / "home").start()
    try:
        yield server
    finally:
        server.stop()
