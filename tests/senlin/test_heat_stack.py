"""Senlin profiles of type `os.heat.stack`, read by the HOT reader: checked at profile create
(every template problem at its pointer under /spec/properties), a standalone node is the
template's one server or a `stack` node with nothing to place, a cluster of such a profile
builds servers, and a type mismatch against a Nova cluster is Senlin's 400."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error

# The plugin's own spec (senlin_tempest_plugin.common.constants.spec_heat_stack).
RANDOM_STACK: dict[str, Any] = {
    "type": "os.heat.stack",
    "version": "1.0",
    "properties": {
        "template": {
            "heat_template_version": "2014-10-16",
            "parameters": {"str_length": {"type": "number", "default": 64}},
            "resources": {
                "random": {
                    "type": "OS::Heat::RandomString",
                    "properties": {"length": {"get_param": "str_length"}},
                }
            },
            "outputs": {"result": {"value": {"get_attr": ["random", "value"]}}},
        }
    },
}

SERVER_TEMPLATE = """
heat_template_version: 2016-10-14
description: one web server
parameters:
  flavor: {type: string, default: m1.tiny}
resources:
  web:
    type: OS::Nova::Server
    properties: {flavor: {get_param: flavor}, image: cirros, metadata: {tier: web}}
"""


def stack_spec(template: object, **props: Any) -> dict[str, Any]:
    return {
        "type": "os.heat.stack",
        "version": "1.0",
        "properties": {"template": template, **props},
    }


async def test_profile_create_reads_the_template(senlin: Senlin) -> None:
    profile = await senlin.profile("random", RANDOM_STACK)
    shown = (await senlin.ok("GET", f"/profiles/{profile}"))["profile"]
    assert shown["type"] == "os.heat.stack-1.0"
    assert shown["spec"]["properties"] == RANDOM_STACK["properties"]
    checked = await senlin.ok(
        "POST", "/profiles/validate", json={"profile": {"spec": RANDOM_STACK}}
    )
    assert checked["profile"]["type"] == "os.heat.stack-1.0"
    # Text templates and parameters are read too.
    spec = stack_spec(SERVER_TEMPLATE, parameters={"flavor": "m1.small"})
    await senlin.profile("web", spec)


async def test_template_problems_are_400s_with_pointers(senlin: Senlin) -> None:
    bad = {
        "heat_template_version": "2016-10-14",
        "resources": {
            "web": {"type": "OS::Nova::Server", "properties": {"flavor": "huge", "image": "x"}},
            "odd": {"type": "OS::Zaqar::Queue"},
            "len": {"type": "OS::Heat::RandomString", "properties": {"length": {"get_param": "n"}}},
        },
    }
    body = {"profile": {"name": "bad", "spec": stack_spec(bad)}}
    r = await senlin.call("POST", "/profiles", json=body)
    error = senlin_error(r, 400)
    message = error["message"]
    assert message.startswith("Failed in creating profile bad: Failed in validating template: ")
    for where in (
        "/spec/properties/template/resources/web/properties/flavor",
        "/spec/properties/template/resources/odd/type",
    ):
        assert where in message, message
    assert "OS::Zaqar::Queue" in message
    r = await senlin.call("POST", "/profiles/validate", json={"profile": {"spec": stack_spec(bad)}})
    assert "/spec/properties/template/resources/odd/type" in senlin_error(r, 400)["message"]

    # Every property is checked, all at once; nothing is stored.
    odd = stack_spec({"heat_template_version": "2016-10-14"}, files=[1], timeout=10**9)
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "t", "spec": odd}})
    message = senlin_error(r, 400)["message"]
    assert "/spec/properties/files" in message and "/spec/properties/timeout" in message
    r = await senlin.call(
        "POST", "/profiles", json={"profile": {"name": "t", "spec": stack_spec("{")}}
    )
    assert "/spec/properties/template" in senlin_error(r, 400)["message"]
    params = stack_spec(SERVER_TEMPLATE, parameters={"nope": 1})
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "t", "spec": params}})
    assert "nope" in senlin_error(r, 400)["message"]
    assert (await senlin.ok("GET", "/profiles"))["profiles"] == []


async def test_template_url_is_not_fetched(senlin: Senlin) -> None:
    spec = copy.deepcopy(RANDOM_STACK)
    spec["properties"] = {"template_url": "http://127.0.0.1:9/t.yaml"}
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "u", "spec": spec}})
    message = senlin_error(r, 400)["message"]
    assert "does not fetch 'template_url'" in message
    spec["properties"] = {}
    r = await senlin.call("POST", "/profiles", json={"profile": {"name": "u", "spec": spec}})
    assert "Both template and template_url are not specified" in senlin_error(r, 400)["message"]


async def test_profile_type_describes_the_schema(senlin: Senlin) -> None:
    got = (await senlin.ok("GET", "/profile-types/os.heat.stack-1.0"))["profile_type"]
    assert got["name"] == "os.heat.stack-1.0"
    assert {"template", "template_url", "environment", "files", "parameters"} <= set(got["schema"])
    got = await senlin.ok("GET", "/profile-types/os.heat.stack-1.0", version="1.5")
    assert got["profile_type"]["support_status"] == {
        "1.0": [{"status": "SUPPORTED", "since": "2016.04"}]
    }
    ops = await senlin.ok("GET", "/profile-types/os.heat.stack-1.0/ops", version="1.4")
    assert ops == {"operations": {}}


async def test_a_stack_with_nothing_to_place_is_a_stack_node(senlin_db: Senlin) -> None:
    senlin = senlin_db
    profile = await senlin.profile("random", RANDOM_STACK)
    body = {"node": {"name": "rs", "profile_id": profile, "role": "r"}}
    created, _ = await senlin.accepted("POST", "/nodes", json=body)
    node = created["node"]
    shown = (await senlin.ok("GET", f"/nodes/{node['id']}", params={"show_details": True}))["node"]
    assert (shown["status"], shown["physical_id"], shown["profile_id"]) == ("ACTIVE", None, profile)
    assert shown["details"]["kind"] == "stack"
    assert shown["details"]["stack"]["resources"] == [
        {"resource_name": "random", "resource_type": "OS::Heat::RandomString"}
    ]
    assert await senlin.runtime.provider.list_resources(f"standalone-{node['project']}") == []
    r = await senlin.call("POST", "/nodes/rs/ops", json={"reboot": {}}, version="1.4")
    assert senlin_error(r, 400)["message"] == (
        "The requested operation 'reboot' is not supported by the profile type 'os.heat.stack-1.0'."
    )
    await senlin.accepted("POST", "/nodes/rs/actions", json={"check": {}})
    await senlin.accepted("DELETE", f"/nodes/{node['id']}")
    senlin_error(await senlin.call("GET", f"/nodes/{node['id']}"), 404)


async def test_a_stack_of_one_server_is_a_server_node(senlin_db: Senlin) -> None:
    senlin = senlin_db
    profile = await senlin.profile("web", stack_spec(SERVER_TEMPLATE))
    created, _ = await senlin.accepted(
        "POST", "/nodes", json={"node": {"name": "w1", "profile_id": profile}}
    )
    node = created["node"]
    shown = (await senlin.ok("GET", "/nodes/w1", params={"show_details": True}))["node"]
    assert shown["status"] == "ACTIVE" and shown["physical_id"]
    details = shown["details"]
    assert (details["kind"], details["flavor"], details["metadata"]) == (
        "server",
        "m1.tiny",
        {"tier": "web"},
    )
    assert details["stack"]["template_description"] == "one web server"
    assert details["stack"]["resources"] == [
        {"resource_name": "web", "resource_type": "OS::Nova::Server"}
    ]
    made = await senlin.runtime.provider.list_resources(f"standalone-{node['project']}")
    assert [m.key for m in made] == [node["id"]]
    await senlin.accepted("DELETE", "/nodes/w1")
    assert await senlin.runtime.provider.list_resources(f"standalone-{node['project']}") == []


async def test_a_cluster_of_a_server_stack(senlin: Senlin) -> None:
    profile = await senlin.profile("web", stack_spec(SERVER_TEMPLATE))
    body = {"cluster": {"name": "webs", "profile_id": profile, "desired_capacity": 2}}
    await senlin.accepted("POST", "/clusters", json=body)
    cluster = (await senlin.ok("GET", "/clusters/webs"))["cluster"]
    assert (cluster["status"], len(cluster["nodes"]), cluster["profile_id"]) == (
        "ACTIVE",
        2,
        profile,
    )
    member = cluster["nodes"][0]
    shown = (await senlin.ok("GET", f"/nodes/{member}", params={"show_details": True}))["node"]
    assert shown["details"]["stack"]["resources"][0]["resource_type"] == "OS::Nova::Server"
    # A standalone node of the same profile type joins it.
    await senlin.accepted("POST", "/nodes", json={"node": {"name": "extra", "profile_id": profile}})
    await senlin.accepted(
        "POST", f"/clusters/{cluster['id']}/actions", json={"add_nodes": {"nodes": ["extra"]}}
    )
    assert len((await senlin.ok("GET", "/clusters/webs"))["cluster"]["nodes"]) == 3
    await senlin.accepted("DELETE", "/clusters/webs")


@pytest.mark.parametrize(
    "template, makes",
    [
        (
            {
                "heat_template_version": "2016-10-14",
                "resources": {
                    "a": {
                        "type": "OS::Nova::Server",
                        "properties": {"flavor": "m1.tiny", "image": "cirros"},
                    },
                    "b": {
                        "type": "OS::Nova::Server",
                        "properties": {"flavor": "m1.tiny", "image": "cirros"},
                    },
                },
            },
            "2 server(s)",
        ),
        (
            {
                "heat_template_version": "2016-10-14",
                "resources": {"v": {"type": "OS::Cinder::Volume", "properties": {"size": 1}}},
            },
            "1 volume(s)",
        ),
        (
            {
                "heat_template_version": "2016-10-14",
                "resources": {
                    "s": {
                        "type": "OS::Nova::Server",
                        "properties": {"flavor": "m1.tiny", "image": "cirros"},
                    },
                    "cfg": {
                        "type": "OS::Heat::SoftwareConfig",
                        "properties": {"group": "script", "config": "echo hi"},
                    },
                    "dep": {
                        "type": "OS::Heat::SoftwareDeployment",
                        "properties": {
                            "config": {"get_resource": "cfg"},
                            "server": {"get_resource": "s"},
                        },
                    },
                },
            },
            "1 software deployment(s)",
        ),
    ],
)
async def test_what_a_node_cannot_be(senlin: Senlin, template: object, makes: str) -> None:
    profile = await senlin.profile("many", stack_spec(template))
    r = await senlin.call("POST", "/nodes", json={"node": {"name": "n", "profile_id": profile}})
    message = senlin_error(r, 400)["message"]
    assert message.startswith("Failed in creating node n: ") and makes in message, message
    body = {"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 1}}
    r = await senlin.call("POST", "/clusters", json=body)
    assert makes in senlin_error(r, 400)["message"]
    assert (await senlin.ok("GET", "/nodes"))["nodes"] == []


async def test_profile_types_must_match(senlin: Senlin) -> None:
    """The plugin's TestClusterAddNodesNegativeProfileTypeUnmatch and
    TestClusterReplaceNodeNegativeProfileUnmatch, as one."""
    cluster = await senlin.cluster("nova", size=1)
    stack = await senlin.profile("random", RANDOM_STACK)
    created, _ = await senlin.accepted(
        "POST", "/nodes", json={"node": {"name": "rs", "profile_id": stack}}
    )
    node = created["node"]["id"]
    r = await senlin.call(
        "POST", f"/clusters/{cluster['id']}/actions", json={"add_nodes": {"nodes": [node]}}
    )
    assert senlin_error(r, 400)["message"] == (
        f"Profile type of nodes ['{node}'] does not match that of the cluster."
    )
    old = cluster["nodes"][0]
    r = await senlin.call(
        "POST",
        f"/clusters/{cluster['id']}/actions",
        json={"replace_nodes": {"nodes": {old: node}}},
        version="1.3",
    )
    message = senlin_error(r, 400)["message"]
    assert "Profile type of nodes" in message and "do not match that of the cluster" in message
    r = await senlin.call("PATCH", f"/nodes/{old}", json={"node": {"profile_id": stack}})
    assert senlin_error(r, 400)["message"] == (
        "Cannot update a node to a different profile type, operation aborted."
    )
    await senlin.accepted("DELETE", f"/nodes/{node}")
