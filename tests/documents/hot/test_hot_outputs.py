"""A template's `outputs` onto the cluster's outputs (documents/hot/outputs.py), one shape each."""

from __future__ import annotations

import json

import pytest

from shoal.documents import cluster_from_tree
from shoal.documents.export import to_document
from shoal.documents.hot import read_body
from shoal.documents.hot.load import HotResult
from shoal.model.catalogs import default_inventory
from shoal.model.members import MemberRef
from shoal.model.outputs import (
    ClusterOutput,
    JoinedText,
    ListValue,
    MapValue,
    MemberFact,
    OutputValue,
    TextTemplate,
)
from shoal.model.software import (
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    OutputInput,
    OutputScope,
)

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small", "image": "cirros"}}
GROUP = {
    "type": "OS::Heat::ResourceGroup",
    "properties": {"count": 2, "resource_def": SERVER},
}
CONFIG = {
    "type": "OS::Heat::SoftwareConfig",
    "properties": {"group": "script", "config": "echo", "outputs": [{"name": "result"}]},
}
RESOURCES: dict[str, object] = {
    "db": SERVER,
    "web": GROUP,
    "cfg": CONFIG,
    "on_db": {
        "type": "OS::Heat::SoftwareDeployment",
        "properties": {"config": {"get_resource": "cfg"}, "server": {"get_resource": "db"}},
    },
    "on_web": {
        "type": "OS::Heat::SoftwareDeploymentGroup",
        "properties": {
            "config": {"get_resource": "cfg"},
            "servers": {"get_attr": ["web", "refs_map"]},
        },
    },
    "vol": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
}
DB = MemberRef("db")
WEB = MemberRef("web")


def read(value: object, version: str = "2016-10-14", **extra: object) -> HotResult:
    body = {
        "heat_template_version": version,
        "parameters": {
            "port": {"type": "number", "default": 5432},
            "pw": {"type": "string", "default": "s3cret", "hidden": True},
        },
        "resources": RESOURCES,
        "outputs": {"out": {"value": value, "description": "the output"}},
        **extra,
    }
    return read_body(body, default_inventory())


def mapped(value: object, version: str = "2016-10-14") -> OutputValue:
    result = read(value, version)
    assert result.problems == []
    assert result.spec is not None
    (out,) = result.spec.outputs
    assert out.name == "out" and out.description == "the output"
    # what the service stores reads back the same
    again = cluster_from_tree(json.loads(json.dumps(to_document(result.spec))), default_inventory())
    assert again.outputs == result.spec.outputs
    return out.value


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"get_attr": ["db", "first_address"]}, MemberFact(DB, NodeFact.ADDRESS)),
        ({"get_attr": ["db", "accessIPv4"]}, MemberFact(DB, NodeFact.ADDRESS)),
        ({"get_attr": ["db", "name"]}, MemberFact(DB, NodeFact.NAME)),
        ({"get_attr": ["db", "networks", "private", 0]}, MemberFact(DB, NodeFact.ADDRESS)),
        (
            {"get_attr": ["db", "networks", "private"]},
            ListValue((MemberFact(DB, NodeFact.ADDRESS),)),
        ),
        ({"get_resource": "db"}, MemberFact(DB, NodeFact.NAME)),
        (
            {"get_attr": ["web", "attributes", "first_address"]},
            MemberFactsInput(WEB, NodeFact.ADDRESS),
        ),
        ({"get_attr": ["web", "first_address"]}, MemberFactsInput(WEB, NodeFact.ADDRESS)),
        ({"get_attr": ["web", "attributes", "name"]}, MemberFactsInput(WEB, NodeFact.NAME)),
        ({"get_attr": ["web", "refs"]}, MemberFactsInput(WEB, NodeFact.NAME)),
        ({"get_attr": ["on_db", "result"]}, OutputInput("on_db", "result", OutputScope.NODE)),
        (
            {"get_attr": ["on_db", "deploy_stdout"]},
            OutputInput("on_db", "deploy_stdout", OutputScope.NODE),
        ),
        ({"get_attr": ["on_web", "result"]}, OutputInput("on_web", "result", OutputScope.ALL)),
        (
            {"get_attr": ["on_web", "deploy_stdouts"]},
            OutputInput("on_web", "deploy_stdout", OutputScope.ALL),
        ),
        ({"get_param": "port"}, LiteralInput(5432)),
        ("plain text", LiteralInput("plain text")),
        ({"a": [1, 2]}, LiteralInput({"a": [1, 2]})),
        (
            {
                "str_replace": {
                    "template": "postgres://HOST:PORT/db",
                    "params": {
                        "HOST": {"get_attr": ["db", "first_address"]},
                        "PORT": {"get_param": "port"},
                    },
                }
            },
            TextTemplate(
                "postgres://HOST:PORT/db",
                {"HOST": MemberFact(DB, NodeFact.ADDRESS), "PORT": LiteralInput(5432)},
            ),
        ),
        (
            {"list_join": [",", {"get_attr": ["web", "attributes", "first_address"]}]},
            JoinedText(",", (MemberFactsInput(WEB, NodeFact.ADDRESS),)),
        ),
        (
            {"list_join": [" ", ["a", {"get_attr": ["db", "name"]}], ["b"]]},
            JoinedText(
                " ",
                (
                    ListValue((LiteralInput("a"), MemberFact(DB, NodeFact.NAME))),
                    LiteralInput(["b"]),
                ),
            ),
        ),
        (
            {"db": {"get_attr": ["db", "first_address"]}, "n": 1},
            MapValue({"db": MemberFact(DB, NodeFact.ADDRESS), "n": LiteralInput(1)}),
        ),
        (
            {"if": [True, {"get_attr": ["db", "name"]}, "none"]},
            MemberFact(DB, NodeFact.NAME),
        ),
    ],
)
def test_each_shape_maps(value: object, expected: OutputValue) -> None:
    assert mapped(value) == expected


def test_fn_join_of_an_old_template_maps() -> None:
    value = {"Fn::Join": ["-", ["x", {"get_attr": ["db", "first_address"]}]]}
    assert mapped(value, "2013-05-23") == JoinedText(
        "-", (ListValue((LiteralInput("x"), MemberFact(DB, NodeFact.ADDRESS))),)
    )


def test_a_server_with_a_volume_is_its_units_server_part() -> None:
    resources = {
        **RESOURCES,
        "att": {
            "type": "OS::Cinder::VolumeAttachment",
            "properties": {
                "instance_uuid": {"get_resource": "db"},
                "volume_id": {"get_resource": "vol"},
            },
        },
    }
    body = {
        "heat_template_version": "2016-10-14",
        "resources": resources,
        "outputs": {"ip": {"value": {"get_attr": ["db", "first_address"]}}},
    }
    result = read_body(body, default_inventory())
    assert result.problems == []
    assert result.spec is not None
    assert result.spec.outputs == (
        ClusterOutput("ip", MemberFact(MemberRef("db", "server"), NodeFact.ADDRESS)),
    )


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"get_attr": ["vol", "size"]}, "get_attr of OS::Cinder::Volume in an output"),
        ({"get_attr": ["db", "show"]}, "get_attr of OS::Nova::Server in an output"),
        ({"get_attr": ["db", "networks", "private", 1]}, "a server's second address in an output"),
        ({"get_resource": "vol"}, "get_resource of OS::Cinder::Volume in an output"),
        ({"get_param": "pw"}, "hidden parameter in an output"),
        (
            {"str_replace": {"template": "p=X", "params": {"X": {"get_param": "pw"}}}},
            "hidden parameter in an output",
        ),
        (
            {"if": [True, {"get_param": "pw"}, "none"]},
            "hidden parameter in an output",
        ),
        ({"digest": ["sha256", {"get_attr": ["db", "name"]}]}, "output computed at run time"),
        (
            {"str_replace": {"template": {"get_attr": ["db", "name"]}, "params": {"a": "b"}}},
            "str_replace of a template known only at run time in an output",
        ),
    ],
)
def test_what_cannot_map_is_one_notice_per_output_not_a_failure(value: object, reason: str) -> None:
    result = read(value)
    assert result.problems == []
    assert result.spec is not None
    assert result.spec.outputs == ()
    assert [s.reason for s in result.skipped] == [reason]
    assert [n.path for n in result.notices if n.message.startswith("output 'out'")] == [
        "/outputs/out"
    ]


def test_an_output_switched_off_by_its_condition_is_not_served() -> None:
    result = read(
        {"get_attr": ["db", "name"]},
        conditions={"never": False},
    )
    assert result.spec is not None and len(result.spec.outputs) == 1
    body = {
        "heat_template_version": "2016-10-14",
        "conditions": {"never": False},
        "resources": RESOURCES,
        "outputs": {
            "off": {"value": {"get_attr": ["db", "name"]}, "condition": "never"},
            "on": {"value": {"get_attr": ["db", "name"]}},
        },
    }
    result = read_body(body, default_inventory())
    assert result.spec is not None
    assert [o.name for o in result.spec.outputs] == ["on"]


def test_the_readers_words_for_outputs_are_kept() -> None:
    result = read({"get_attr": ["db", "first_address"]})
    assert result.outputs == {"out": "<db.first_address>"}


def test_a_deployment_group_over_a_map_of_servers_gives_heats_map_by_server() -> None:
    resources = {
        "a": SERVER,
        "b": SERVER,
        "cfg": CONFIG,
        "deps": {
            "type": "OS::Heat::SoftwareDeploymentGroup",
            "properties": {
                "config": {"get_resource": "cfg"},
                "servers": {"x": {"get_resource": "a"}, "y": {"get_resource": "b"}},
            },
        },
    }
    body = {
        "heat_template_version": "2016-10-14",
        "resources": resources,
        "outputs": {
            "result": {"value": {"get_attr": ["deps", "result"]}},
            "stdouts": {"value": {"get_attr": ["deps", "deploy_stdouts"]}},
        },
    }
    result = read_body(body, default_inventory())
    assert result.problems == []
    assert result.spec is not None
    by = {o.name: o.value for o in result.spec.outputs}
    assert by["result"] == MapValue(
        {
            "x": OutputInput("deps-x", "result", OutputScope.NODE),
            "y": OutputInput("deps-y", "result", OutputScope.NODE),
        }
    )
    assert by["stdouts"] == MapValue(
        {
            "x": OutputInput("deps-x", "deploy_stdout", OutputScope.NODE),
            "y": OutputInput("deps-y", "deploy_stdout", OutputScope.NODE),
        }
    )
