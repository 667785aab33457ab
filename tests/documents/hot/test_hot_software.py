"""Heat software configs and deployments onto Shoal's software model (documents/hot/
deployments.py)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from shoal.cli.main import app
from shoal.documents.hot import read_body
from shoal.documents.hot.load import HotResult
from shoal.model.catalogs import default_inventory
from shoal.model.members import MemberRef
from shoal.model.software import (
    DeployAction,
    HookGroup,
    IOType,
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFactInput,
    OutputInput,
    OutputScope,
    SecretInput,
)
from shoal.planning.software import order

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small", "image": "cirros"}}


def tpl(resources: dict[str, object], **extra: object) -> dict[str, object]:
    return {"heat_template_version": "2016-10-14", "resources": resources, **extra}


def config(body: str = "echo hi", **props: object) -> dict[str, object]:
    return {
        "type": "OS::Heat::SoftwareConfig",
        "properties": {"group": "script", "config": body, **props},
    }


def deploy(cfg: str, server: str, **props: object) -> dict[str, object]:
    return {
        "type": "OS::Heat::SoftwareDeployment",
        "properties": {
            "config": {"get_resource": cfg},
            "server": {"get_resource": server},
            **props,
        },
    }


def read(body: dict[str, object]) -> HotResult:
    return read_body(body, default_inventory())


def test_server_config_and_deployment_map_onto_the_model() -> None:
    body = tpl(
        {
            "web": SERVER,
            "cfg": config(
                "#!/bin/sh\necho $msg > /tmp/out",
                inputs=[{"name": "msg", "default": "x"}],
                outputs=[{"name": "result"}],
                options={"k": 1},
            ),
            "hello": deploy(
                "cfg",
                "web",
                input_values={"msg": "hello", "port": 80},
                actions=["CREATE", "UPDATE", "DELETE"],
            ),
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    (cfg,) = sw.configs
    assert cfg.group is HookGroup.SCRIPT
    assert cfg.config.startswith("#!/bin/sh")
    assert cfg.options == {"k": 1}
    assert [o.name for o in cfg.outputs] == ["result"]
    # Heat passes undeclared input values on; Shoal declares them on the config.
    assert {i.name: i.type for i in cfg.inputs} == {"msg": IOType.STRING, "port": IOType.JSON}
    (d,) = sw.deployments
    assert (d.name, d.config, d.target) == ("hello", "cfg", MemberRef("web"))
    assert d.inputs["msg"] == LiteralInput("hello")
    assert d.inputs["port"] == LiteralInput(80)
    assert d.actions == frozenset(DeployAction)


def test_server_with_a_volume_is_targeted_at_its_server_part() -> None:
    body = tpl(
        {
            "db": SERVER,
            "vol": {"type": "OS::Cinder::Volume", "properties": {"size": 10}},
            "att": {
                "type": "OS::Cinder::VolumeAttachment",
                "properties": {
                    "instance_uuid": {"get_resource": "db"},
                    "volume_id": {"get_resource": "vol"},
                },
            },
            "cfg": config(),
            "setup": deploy("cfg", "db"),
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    assert result.spec.software.deployments[0].target == MemberRef("db", "server")


def test_resource_group_with_a_deployment_group_and_address_facts() -> None:
    body = tpl(
        {
            "app": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {"count": 3, "resource_def": SERVER},
            },
            "lb": SERVER,
            "app_cfg": config(inputs=[{"name": "me"}]),
            "lb_cfg": config(inputs=[{"name": "backends", "type": "CommaDelimitedList"}]),
            "app_sw": {
                "type": "OS::Heat::SoftwareDeploymentGroup",
                "properties": {
                    "config": {"get_resource": "app_cfg"},
                    "servers": {"get_attr": ["app", "refs_map"]},
                    "input_values": {"me": "app"},
                },
            },
            "lb_sw": {
                "type": "OS::Heat::SoftwareDeployment",
                "depends_on": ["app_sw"],
                "properties": {
                    "config": {"get_resource": "lb_cfg"},
                    "server": {"get_resource": "lb"},
                    "input_values": {
                        "backends": {"get_attr": ["app", "first_address"]},
                        "self": {"get_attr": ["lb", "first_address"]},
                    },
                },
            },
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    app_sw = sw.deployment("app_sw")
    lb_sw = sw.deployment("lb_sw")
    assert app_sw is not None and lb_sw is not None
    assert app_sw.target == MemberRef("app")
    assert lb_sw.target == MemberRef("lb")
    assert lb_sw.depends_on == ("app_sw",)
    assert lb_sw.inputs["backends"] == MemberFactsInput(MemberRef("app"), NodeFact.ADDRESS)
    assert lb_sw.inputs["self"] == NodeFactInput(NodeFact.ADDRESS)


def test_output_of_one_deployment_feeds_the_input_of_another() -> None:
    body = tpl(
        {
            "db": SERVER,
            "web": SERVER,
            "db_cfg": config(outputs=[{"name": "dsn"}]),
            "web_cfg": config(inputs=[{"name": "dsn"}, {"name": "log"}]),
            "db_sw": deploy("db_cfg", "db"),
            "web_sw": deploy(
                "web_cfg",
                "web",
                input_values={
                    "dsn": {"get_attr": ["db_sw", "dsn"]},
                    "log": {"get_attr": ["db_sw", "deploy_stdout"]},
                },
            ),
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    web_sw = result.spec.software.deployment("web_sw")
    assert web_sw is not None
    assert web_sw.inputs["dsn"] == OutputInput("db_sw", "dsn", OutputScope.NODE)
    assert web_sw.all_dependencies() == ("db_sw",)


def test_hidden_parameter_becomes_a_secret() -> None:
    body = tpl(
        {
            "db": SERVER,
            "cfg": config(inputs=[{"name": "pw"}]),
            "sw": deploy(
                "cfg",
                "db",
                input_values={"pw": {"get_param": "db_password"}, "user": {"get_param": "user"}},
            ),
        },
        parameters={
            "db_password": {"type": "string", "hidden": True, "default": "s3cret"},
            "user": {"type": "string", "default": "admin"},
        },
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    assert sw.deployments[0].inputs["pw"] == SecretInput("db_password")
    assert sw.deployments[0].inputs["user"] == LiteralInput("admin")
    assert sw.secrets == {"db_password": "s3cret"}
    assert "s3cret" not in repr(sw)


def test_what_cannot_map_is_one_problem_each_with_its_pointer() -> None:
    body = tpl(
        {
            "a": SERVER,
            "b": SERVER,
            "ungrouped": {"type": "OS::Heat::SoftwareConfig", "properties": {"config": "x"}},
            "cfg": config(inputs=[{"name": "peer"}]),
            "d1": deploy("ungrouped", "a"),
            "d2": deploy("cfg", "a", input_values={"peer": {"get_attr": ["b", "first_address"]}}),
            "d3": deploy("cfg", "a", input_values={"peer": {"get_attr": ["b", "show"]}}),
        }
    )
    result = read(body)
    assert result.spec is None
    reasons = {u.reason: u.path for u in result.unsupported}
    assert reasons == {
        "software config group Heat::Ungrouped": "/resources/ungrouped/properties/group",
        "another server's attribute as text": "/resources/d2/properties/input_values/peer",
        "get_attr of OS::Nova::Server into a deployment input": (
            "/resources/d3/properties/input_values/peer"
        ),
    }
    assert not any("not supported yet" in p.message for p in result.problems)


def test_suspend_actions_are_noticed_and_dropped() -> None:
    body = tpl(
        {"a": SERVER, "cfg": config(), "d": deploy("cfg", "a", actions=["CREATE", "SUSPEND"])}
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    assert result.spec.software.deployments[0].actions == frozenset({DeployAction.CREATE})
    assert any("SUSPEND" in n.message for n in result.notices)


def test_structured_config_is_served_as_json_text() -> None:
    body = tpl(
        {
            "a": SERVER,
            "cfg": {
                "type": "OS::Heat::StructuredConfig",
                "properties": {"group": "json-file", "config": {"/tmp/x": {"a": 1}}},
            },
            "d": {
                "type": "OS::Heat::StructuredDeployment",
                "properties": {
                    "config": {"get_resource": "cfg"},
                    "server": {"get_resource": "a"},
                },
            },
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    assert result.spec.software.configs[0].config == '{"/tmp/x": {"a": 1}}'


def test_deployment_group_over_a_map_of_servers_is_one_deployment_per_server() -> None:
    body = tpl(
        {
            "a": SERVER,
            "b": SERVER,
            "cfg": config(),
            "both": {
                "type": "OS::Heat::SoftwareDeploymentGroup",
                "properties": {
                    "config": {"get_resource": "cfg"},
                    "servers": {"0": {"get_resource": "a"}, "1": {"get_resource": "b"}},
                },
            },
            "after": {**deploy("cfg", "a"), "depends_on": "both"},
        }
    )
    result = read(body)
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    assert {d.name: str(d.target) for d in sw.deployments} == {
        "both-0": "a",
        "both-1": "b",
        "after": "a",
    }
    after = sw.deployment("after")
    assert after is not None and after.depends_on == ("both-0", "both-1")


CORPUS = (
    Path(__file__).resolve().parents[2]
    / "data"
    / "hot"
    / "heat-templates"
    / "hot"
    / "software-config"
    / "example-templates"
)


def test_heat_deploy_sequence_example_orders_like_heat() -> None:
    """heat-templates' example-deploy-sequence: a → b (through stdout) → c (depends_on)."""
    path = CORPUS / "example-deploy-sequence.yaml"
    env = {"parameters": {"flavor": "m1.small", "image": "cirros"}}
    result = read_body({"template": path.read_text(), "environment": env}, default_inventory())
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    assert order(sw) == ("deployment_a", "deployment_b", "deployment_c")
    b = sw.deployment("deployment_b")
    assert b is not None
    assert next(iter(b.inputs.values())) == OutputInput(
        "deployment_a", "deploy_stdout", OutputScope.NODE
    )


def test_plan_shows_mapped_deployments_and_never_a_secret(tmp_path: Path) -> None:
    t = tmp_path / "app.yaml"
    t.write_text(
        "heat_template_version: 2016-10-14\n"
        "parameters:\n  pw: {type: string, hidden: true, default: hunter2-secret}\n"
        "resources:\n"
        "  app:\n    type: OS::Heat::ResourceGroup\n    properties:\n      count: 2\n"
        "      resource_def: {type: OS::Nova::Server, "
        "properties: {flavor: m1.small, image: cirros}}\n"
        "  cfg: {type: OS::Heat::SoftwareConfig, properties: {group: script, config: 'true'}}\n"
        "  sw:\n    type: OS::Heat::SoftwareDeploymentGroup\n    properties:\n"
        "      config: {get_resource: cfg}\n      servers: {get_attr: [app, refs_map]}\n"
        "      input_values: {pw: {get_param: pw}}\n"
    )
    result = CliRunner().invoke(app, ["plan", str(t), "-o", "json"])
    assert result.exit_code == 0, result.stdout
    data = json.loads(result.stdout)
    assert data["deployments"] == [
        {
            "name": "sw",
            "config": "cfg",
            "target": "app",
            "nodes": 2,
            "depends_on": [],
            "actions": ["CREATE", "UPDATE"],
        }
    ]
    assert "hunter2-secret" not in result.stdout


ROLE = """
heat_template_version: 2016-10-14
parameters:
  pw: {type: string, hidden: true}
resources:
  server: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  cfg:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "echo $me", outputs: [{name: url}]}
  install:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: cfg}
      server: {get_resource: server}
      input_values:
        me: {get_attr: [server, first_address]}
        pw: {get_param: pw}
  start:
    type: OS::Heat::SoftwareDeployment
    depends_on: install
    properties:
      config: {get_resource: cfg}
      server: {get_resource: server}
      input_values: {url: {get_attr: [install, url]}}
"""


def test_deployments_in_a_group_member_template_target_the_group() -> None:
    body = {
        "template": tpl(
            {
                "app": {
                    "type": "OS::Heat::ResourceGroup",
                    "properties": {
                        "count": 3,
                        "resource_def": {"type": "role.yaml", "properties": {"pw": "s3cret-pw"}},
                    },
                }
            }
        ),
        "files": {"role.yaml": ROLE},
    }
    result = read_body(body, default_inventory())
    assert result.problems == []
    assert result.spec is not None
    sw = result.spec.software
    assert [c.name for c in sw.configs] == ["app-cfg"]
    install, start = sw.deployment("app-install"), sw.deployment("app-start")
    assert install is not None and start is not None
    assert install.target == start.target == MemberRef("app")
    assert install.inputs["me"] == NodeFactInput(NodeFact.ADDRESS)
    assert install.inputs["pw"] == SecretInput("app-pw")
    assert sw.secrets == {"app-pw": "s3cret-pw"}
    assert start.inputs["url"] == OutputInput("app-install", "url", OutputScope.NODE)
    assert order(sw) == ("app-install", "app-start")


def test_deployments_in_a_nested_template_used_once_are_named_under_it() -> None:
    body = {
        "template": tpl({"db": {"type": "role.yaml", "properties": {"pw": "x"}}, "web": SERVER}),
        "files": {"role.yaml": ROLE},
    }
    result = read_body(body, default_inventory())
    assert result.problems == []
    assert result.spec is not None
    assert {d.name: str(d.target) for d in result.spec.software.deployments} == {
        "db-install": "db",
        "db-start": "db",
    }
