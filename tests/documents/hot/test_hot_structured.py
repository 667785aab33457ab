"""Structured deployments: `get_input` (or the deployment's `input_key`) in a structured
config is replaced by the input's value when the config is served to the node, as Heat's
`StructuredDeployment.parse` does; `input_values_validate: STRICT` wants every name given."""

from __future__ import annotations

import json
from typing import Any

from shoal.documents.export import to_document
from shoal.documents.hot import read_body
from shoal.documents.hot.load import HotResult
from shoal.documents.loader import cluster_from_tree
from shoal.model.catalogs import default_inventory
from shoal.model.heat_agent import server_metadata
from shoal.model.software import DeployAction, NodeFact, NodeFactInput, ResolvedDeployment

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small", "image": "cirros"}}
BODY = {
    "/etc/app.json": {
        "foo": {"get_input": "foo"},
        "where": [{"get_input": "bar"}, "literal"],
        "action": {"get_input": "deploy_action"},
        "missing": {"get_input": "nope"},
        "mine": {"my_input": "foo"},
        "two_keys": {"get_input": "foo", "other": 1},
    }
}


def template(**deployment: object) -> dict[str, object]:
    return {
        "heat_template_version": "2016-10-14",
        "resources": {
            "a": SERVER,
            "cfg": {
                "type": "OS::Heat::StructuredConfig",
                "properties": {"group": "json-file", "config": BODY},
            },
            "d": {
                "type": "OS::Heat::StructuredDeployment",
                "properties": {
                    "config": {"get_resource": "cfg"},
                    "server": {"get_resource": "a"},
                    "input_values": {"foo": "fooooo", "bar": {"get_attr": ["a", "first_address"]}},
                    **deployment,
                },
            },
        },
    }


def read(body: dict[str, object]) -> HotResult:
    return read_body(body, default_inventory())


def served(result: HotResult, inputs: dict[str, Any]) -> Any:
    """The config the node's agents are given, as JSON."""
    assert result.problems == [], result.problems
    assert result.spec is not None
    sw = result.spec.software
    config = sw.configs[0]
    run = ResolvedDeployment("d", "a", DeployAction.CREATE, config, inputs, digest="x")
    metadata = server_metadata([run], lambda _r: "http://signal", server_id="n1")
    entry = metadata["deployments"][0]  # type: ignore[index]
    return json.loads(entry["config"])  # type: ignore[index,call-overload]


def test_get_input_is_replaced_by_the_inputs_values_when_served() -> None:
    result = read(template())
    assert result.spec is not None
    assert result.spec.software.configs[0].input_key == "get_input"
    deployment = result.spec.software.deployments[0]
    assert deployment.inputs["bar"] == NodeFactInput(NodeFact.ADDRESS)
    config = served(result, {"foo": "fooooo", "bar": "127.1.1.2"})
    assert config == {
        "/etc/app.json": {
            "foo": "fooooo",
            "where": ["127.1.1.2", "literal"],
            "action": "CREATE",  # Heat's derived inputs are inputs too
            "missing": None,  # LAX, Heat's default: null
            "mine": {"my_input": "foo"},
            "two_keys": {"get_input": "foo", "other": 1},  # not a lone key: left as it is
        }
    }


def test_input_key_names_the_placeholder() -> None:
    result = read(template(input_key="my_input"))
    config = served(result, {"foo": "F", "bar": "B"})["/etc/app.json"]
    assert config["mine"] == "F"
    assert config["foo"] == {"get_input": "foo"}


def test_strict_wants_every_name_given_all_at_once() -> None:
    result = read(template(input_values_validate="STRICT"))
    assert result.spec is None
    assert [(p.path, p.message) for p in result.problems] == [
        (
            "/resources/cfg/properties/config/~1etc~1app.json/missing",
            "OS::Heat::StructuredDeployment d validates its inputs STRICT, and gives no input "
            "'nope'",
        )
    ]
    bad = read(template(input_values_validate="LOOSE", input_key=3))
    assert sorted(p.path for p in bad.problems) == [
        "/resources/d/properties/input_key",
        "/resources/d/properties/input_values_validate",
    ]


def test_a_software_deployment_substitutes_nothing_and_mixing_is_refused() -> None:
    body = template()
    resources: dict[str, Any] = body["resources"]  # type: ignore[assignment]
    resources["d"]["type"] = "OS::Heat::SoftwareDeployment"
    result = read(body)
    assert result.spec is not None
    assert result.spec.software.configs[0].input_key is None
    resources["e"] = {**resources["d"], "type": "OS::Heat::StructuredDeployment"}
    mixed = read(body)
    assert mixed.spec is None
    assert [u.reason for u in mixed.unsupported] == [
        "a structured config deployed with different input_keys"
    ]


def test_kept_through_the_native_document() -> None:
    result = read(template(input_key="my_input"))
    assert result.spec is not None
    stored = to_document(result.spec)
    assert stored["software"]["configs"]["cfg"]["input_key"] == "my_input"
    again = cluster_from_tree(stored, default_inventory())
    assert again.software == result.spec.software
    stored["software"]["configs"]["cfg"]["config"] = "not json"
    try:
        cluster_from_tree(stored, default_inventory())
    except Exception as e:  # InvalidDocument, with the config's pointer
        problems = getattr(e, "problems", [])
        assert [p.path for p in problems] == ["/software/configs/cfg/config"], problems
    else:
        raise AssertionError("a non-JSON structured config was accepted")
