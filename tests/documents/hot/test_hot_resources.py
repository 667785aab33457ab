"""Resource types onto Shoal's model, environments, nested templates, and invalid templates."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoal.documents import load_cluster
from shoal.documents.hot import load_hot, read_body, read_hot_files
from shoal.model import InvalidDocument
from shoal.model.catalogs import default_inventory
from shoal.model.enums import Rule
from shoal.placement import solve

TRIPLEO = Path(__file__).resolve().parents[2] / "data" / "hot" / "tripleo-style"


def tpl(
    resources: dict[str, object], version: str = "2016-10-14", **extra: object
) -> dict[str, object]:
    return {"heat_template_version": version, "resources": resources, **extra}


SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.small", "image": "cirros"}}


def test_server_is_an_instance_with_zone_and_metadata() -> None:
    body = tpl(
        {
            "web": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": "m1.small",
                    "image": "cirros",
                    "availability_zone": "az2",
                    "metadata": {"k": "v", "n": 1},
                },
            }
        }
    )
    spec = load_hot(body)
    (web,) = spec.instances
    assert web.name == "web" and web.profile.zone == "az2"
    assert web.profile.metadata == {"k": "v", "n": "1"}  # type: ignore[union-attr]


def test_volume_attachment_makes_a_unit() -> None:
    body = tpl(
        {
            "db": SERVER,
            "data": {"type": "OS::Cinder::Volume", "properties": {"size": 5, "volume_type": "ssd"}},
            "att": {
                "type": "OS::Cinder::VolumeAttachment",
                "properties": {
                    "instance_uuid": {"get_resource": "db"},
                    "volume_id": {"get_resource": "data"},
                },
            },
        }
    )
    spec = load_hot(body)
    (db,) = spec.node_groups
    assert [p.part for p in db.parts] == ["server", "data"] and db.count == 1


@pytest.mark.parametrize(
    "policy", ["affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity"]
)
def test_server_group_policies_become_groupings(policy: str) -> None:
    body = tpl(
        {
            "sg": {"type": "OS::Nova::ServerGroup", "properties": {"policies": [policy]}},
            "a": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": "m1.small",
                    "image": "cirros",
                    "scheduler_hints": {"group": {"get_resource": "sg"}},
                },
            },
            "b": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": "m1.small",
                    "image": "cirros",
                    "scheduler_hints": {"group": {"get_resource": "sg"}},
                },
            },
        }
    )
    (g,) = load_hot(body).groupings
    assert g.rule is Rule(policy) and {str(m) for m in g.members} == {"a", "b"}


def test_resource_group_is_a_node_group() -> None:
    body = tpl(
        {
            "web": {
                "type": "OS::Heat::ResourceGroup",
                "properties": {
                    "count": 4,
                    "index_var": "%i%",
                    "removal_policies": [{"resource_list": ["0"]}],
                    "resource_def": {
                        "type": "OS::Nova::Server",
                        "properties": {"name": "w-%i%", "flavor": "m1.small", "image": "cirros"},
                    },
                },
            }
        }
    )
    result = read_body(body, default_inventory())
    assert result.spec is not None
    (web,) = result.spec.node_groups
    assert web.name == "web" and web.count == 4
    assert any("removal_policies" in n.message for n in result.notices)


def test_heat_none_value_and_random_string_make_no_nodes() -> None:
    body = tpl(
        {
            "n": {"type": "OS::Heat::None", "properties": {"anything": 1}},
            "v": {"type": "OS::Heat::Value", "properties": {"value": "m1.small"}},
            "r": {"type": "OS::Heat::RandomString", "properties": {"length": 8}},
            "s": {
                "type": "OS::Nova::Server",
                "properties": {"flavor": {"get_attr": ["v", "value"]}, "image": "cirros"},
            },
        }
    )
    spec = load_hot(body)
    assert [i.name for i in spec.instances] == ["s"]


def test_depends_on_and_implicit_dependencies() -> None:
    body = tpl(
        {
            "db": SERVER,
            "cfg": {
                "type": "OS::Heat::Value",
                "properties": {"value": {"get_attr": ["db", "first_address"]}},
            },
            "app": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": "m1.small",
                    "image": "cirros",
                    "metadata": {"db": {"get_attr": ["cfg", "value"]}},
                },
            },
            "web": {**SERVER, "depends_on": ["app"]},
        }
    )
    spec = load_hot(body)
    deps = {i.name: i.depends_on for i in spec.instances}
    assert deps == {"db": (), "app": ("db",), "web": ("app",)}


def test_senlin_cluster_is_a_node_group() -> None:
    body = tpl(
        {
            "prof": {
                "type": "OS::Senlin::Profile",
                "properties": {
                    "type": "os.nova.server-1.0",
                    "properties": {"flavor": "m1.small", "image": "cirros"},
                },
            },
            "pol": {
                "type": "OS::Senlin::Policy",
                "properties": {
                    "type": "senlin.policy.affinity-1.0",
                    "properties": {"servergroup": {"policies": "anti-affinity"}},
                },
            },
            "cl": {
                "type": "OS::Senlin::Cluster",
                "properties": {
                    "profile": {"get_resource": "prof"},
                    "desired_capacity": 2,
                    "min_size": 1,
                    "max_size": 4,
                    "policies": [{"policy": {"get_resource": "pol"}}],
                },
            },
        }
    )
    spec = load_hot(body)
    (cl,) = spec.node_groups
    assert (cl.count, cl.min_size, cl.max_size) == (2, 1, 4)
    assert spec.groupings[0].rule is Rule.ANTI_AFFINITY


def test_software_deployments_validated_as_heat_does() -> None:
    body = tpl(
        {
            "s": SERVER,
            "cfg": {
                "type": "OS::Heat::SoftwareConfig",
                "properties": {"group": "script", "config": "echo hi", "inputs": [{"name": "x"}]},
            },
            "d1": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {"config": {"get_resource": "cfg"}, "server": {"get_resource": "s"}},
            },
            "d2": {
                "type": "OS::Heat::SoftwareDeployment",
                "properties": {
                    "config": {"get_resource": "s"},
                    "server": {"get_resource": "s"},
                    "actions": ["BOOT"],
                },
            },
        }
    )
    result = read_body(body, default_inventory())
    messages = [p.message for p in result.problems]
    assert not any("not supported yet" in m for m in messages)
    assert any("not a software config" in m for m in messages)
    assert any("actions" in p.path for p in result.problems)


def test_unsupported_type_is_one_problem_and_the_rest_still_checked() -> None:
    body = tpl(
        {
            "port": {"type": "OS::Zaqar::Queue", "properties": {"name": "x"}},
            "s": {
                "type": "OS::Nova::Server",
                "properties": {"flavor": "m9.huge", "image": "cirros", "colour": "red"},
            },
        }
    )
    with pytest.raises(InvalidDocument) as bad:
        load_cluster_tree(body)
    paths = {p.path for p in bad.value.problems}
    assert "/resources/port/type" in paths
    assert "/resources/s/properties/flavor" in paths
    assert "/resources/s/properties/colour" in paths


def load_cluster_tree(body: dict[str, object]) -> object:
    import json

    return load_cluster(json.dumps(body), default_inventory())


def test_invalid_template_all_problems_at_once() -> None:
    text = """
heat_template_version: 2015-04-30
parameters:
  n: {type: number, default: 12, constraints: [{range: {min: 1, max: 5}}]}
  s: {type: strin}
  p: {type: string, hidden: true, constraints: [{allowed_pattern: "[a-z]+"}], default: "S3cret!"}
conditions: {}
resources:
  a:
    type: OS::Nova::Server
    properties: {flavor: {get_param: missing}, image: cirros}
    depends_on: [b]
  b: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}, depends_on: [a]}
  c: {properties: {}}
outputs:
  o: {value: {get_resource: nope}}
"""
    with pytest.raises(InvalidDocument) as bad:
        load_cluster(text, default_inventory())
    found = {p.path: p.message for p in bad.value.problems}
    assert "/conditions" in found  # not a section before 2016-10-14
    assert "/parameters/s/type" in found
    assert "/parameters/n/default" in found
    assert "S3cret" not in " ".join(found.values())  # hidden values never quoted
    assert "/resources/a/properties/flavor/get_param" in found
    assert any("dependency cycle" in m for m in found.values())
    assert "/resources/c" in found
    assert "/outputs/o/value/get_resource" in found


def test_environment_merge_order_and_registry() -> None:
    template = tpl({"r": {"type": "My::Role", "properties": {"flavor": {"get_param": "f"}}}}, f={})
    template.pop("f")
    template["parameters"] = {"f": {"type": "string", "default": "m1.tiny"}}
    role = (
        "heat_template_version: 2016-10-14\n"
        "parameters: {flavor: {type: string}}\n"
        "resources:\n"
        "  s: {type: OS::Nova::Server, properties: {flavor: {get_param: flavor}, image: cirros}}\n"
    )
    envs = [
        {
            "parameters": {"f": "m1.small"},
            "resource_registry": {"My::Role": "role.yaml"},
            "event_sinks": [],
        },
        {"parameter_defaults": {"f": "m1.large"}, "parameters": {"f": "m1.medium"}},
    ]
    body = {
        "stack_name": "demo",
        "template": template,
        "environments": envs,
        "files": {"role.yaml": role},
    }
    result = read_body(body, default_inventory())
    assert result.spec is not None, result.problems
    (r,) = result.spec.instances
    assert r.name == "r" and r.profile.flavor.name == "m1.medium"  # type: ignore[union-attr]
    assert any("event_sinks" in n.path for n in result.notices)


def test_parameter_given_but_not_declared() -> None:
    body = {"template": tpl({}), "environment": {"parameters": {"nope": 1}}}
    assert any(
        "no parameter 'nope'" in p.message for p in read_body(body, default_inventory()).problems
    )


def test_tripleo_style_ha_and_single() -> None:
    inv = default_inventory()
    base = [TRIPLEO / "common.yaml"]
    ha = read_hot_files(TRIPLEO / "overcloud.yaml", [*base, TRIPLEO / "ha.yaml"], inv)
    single = read_hot_files(TRIPLEO / "overcloud.yaml", [*base, TRIPLEO / "single.yaml"], inv)
    assert ha.spec is not None and single.spec is not None, (ha.problems, single.problems)
    counts = {g.name: g.count for g in ha.spec.node_groups}
    assert counts == {"Controller": 3, "Compute": 2}
    assert [g.rule for g in ha.spec.groupings] == [Rule.ANTI_AFFINITY]
    assert {g.name: g.count for g in single.spec.node_groups} == {"Controller": 1}
    assert single.spec.groupings == ()
    assert solve(ha.spec, inv).feasible and solve(single.spec, inv).feasible
    placed = solve(ha.spec, inv)
    hosts = {
        a.host for a in placed.assignments if a.node.startswith("Controller") and a.kind == "server"
    }
    assert len(hosts) == 3
    assert ha.outputs["ControllerCount"] == 3


PAIR = """heat_template_version: 2016-10-14
resources:
  sg: {type: OS::Nova::ServerGroup, properties: {policies: [anti-affinity]}}
  a:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, scheduler_hints: {group: {get_resource: sg}}}
  b:
    type: OS::Nova::Server
    properties: {flavor: m1.tiny, image: cirros, scheduler_hints: {group: {get_resource: sg}}}
"""


def test_one_nested_file_used_twice_is_two_scopes() -> None:
    body = {
        "template": tpl({"x": {"type": "pair.yaml"}, "y": {"type": "pair.yaml"}}),
        "files": {"pair.yaml": PAIR},
    }
    result = read_body(body, default_inventory())
    assert result.spec is not None, result.problems
    groupings = {g.name: sorted(str(m) for m in g.members) for g in result.spec.groupings}
    assert groupings == {"x-sg": ["x-a", "x-b"], "y-sg": ["y-a", "y-b"]}
