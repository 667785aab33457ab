"""TripleO's style (documents/hot/through.py): deployments at the top level fed a role's servers
through the role's outputs, the role a registry-mapped nested template."""

from __future__ import annotations

from shoal.documents.hot import read_body
from shoal.documents.hot.load import HotResult
from shoal.model.catalogs import default_inventory
from shoal.model.members import MemberRef
from shoal.model.software import (
    LiteralInput,
    MemberFactsInput,
    NodeFact,
    NodeFactInput,
    SecretInput,
)

OVERCLOUD = """
heat_template_version: wallaby
parameters:
  ControllerCount: {type: number, default: 1}
  ComputeCount: {type: number, default: 0}
resources:
  Controller:
    type: OS::Seed::Controller
    properties: {count: {get_param: ControllerCount}}
  Compute:
    type: OS::Seed::Compute
    properties: {count: {get_param: ComputeCount}}
  ApiConfig:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "echo $me"}
  ApiDeployment:
    type: OS::Heat::SoftwareDeploymentGroup
    properties:
      config: {get_resource: ApiConfig}
      servers: {get_attr: [Controller, servers]}
      input_values:
        me: {get_attr: [Controller, addresses]}
        port: {get_attr: [Controller, info, ports, 0]}
  ComputeConfig:
    type: OS::Heat::StructuredConfig
    properties: {group: script, config: {k: v}}
  ComputeDeployment:
    type: OS::Heat::StructuredDeploymentGroup
    depends_on: ApiDeployment
    properties:
      config: {get_resource: ComputeConfig}
      servers: {get_attr: [Compute, servers]}
"""

SINGLE_ROLE = """
heat_template_version: wallaby
parameters:
  count: {type: number}
resources:
  Server: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
outputs:
  servers: {value: {"0": {get_resource: Server}}}
  addresses: {value: {get_attr: [Server, first_address]}}
  info: {value: {ports: [8080]}}
"""

HA_ROLE = """
heat_template_version: wallaby
parameters:
  count: {type: number}
resources:
  ControllerServerGroup:
    type: OS::Nova::ServerGroup
    properties: {policies: [anti-affinity]}
  ControllerGroup:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Nova::Server
        properties:
          flavor: m1.small
          image: cirros
          scheduler_hints: {group: {get_resource: ControllerServerGroup}}
outputs:
  servers: {value: {get_attr: [ControllerGroup, refs_map]}}
  addresses: {value: {get_attr: [ControllerGroup, first_address]}}
  info: {value: {ports: [8080]}}
"""

COMPUTE_ROLE = """
heat_template_version: wallaby
parameters:
  count: {type: number}
resources:
  ComputeGroup:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def: {type: OS::Seed::ComputeNode}
outputs:
  servers: {value: {get_attr: [ComputeGroup, attributes, nova_server_resource]}}
"""

COMPUTE_NODE = """
heat_template_version: wallaby
resources:
  Server: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
outputs:
  nova_server_resource: {value: {get_resource: Server}}
"""

FILES = {
    "overcloud.yaml": OVERCLOUD,
    "roles/single.yaml": SINGLE_ROLE,
    "roles/ha.yaml": HA_ROLE,
    "roles/compute.yaml": COMPUTE_ROLE,
    "roles/compute-node.yaml": COMPUTE_NODE,
}


def read(
    controller: str, params: dict[str, object], template: str = OVERCLOUD, **files: str
) -> HotResult:
    registry = {
        "OS::Seed::Controller": controller,
        "OS::Seed::Compute": "roles/compute.yaml",
        "OS::Seed::ComputeNode": "roles/compute-node.yaml",
    }
    body = {
        "template": template,
        "files": {**FILES, **files},
        "environment": {"resource_registry": registry, "parameter_defaults": params},
    }
    return read_body(body, default_inventory())


def test_single_environment_deploys_to_the_roles_one_server() -> None:
    result = read("roles/single.yaml", {"ControllerCount": 1})
    assert result.problems == [] and result.unsupported == []
    assert result.spec is not None
    assert [i.name for i in result.spec.instances] == ["Controller"]
    assert {g.name: g.count for g in result.spec.node_groups} == {"Compute": 0}
    sw = result.spec.software
    api, compute = sw.deployment("ApiDeployment"), sw.deployment("ComputeDeployment")
    assert api is not None and compute is not None
    assert api.target == MemberRef("Controller")
    # the role's own server's address, given to a deployment on that server
    assert api.inputs["me"] == NodeFactInput(NodeFact.ADDRESS)
    assert api.inputs["port"] == LiteralInput(8080)  # a path into the role's output
    # a count-0 role: its deployment targets an empty group, no error
    assert compute.target == MemberRef("Compute")
    assert compute.depends_on == ("ApiDeployment",)


def test_ha_environment_deploys_to_the_roles_group_of_three() -> None:
    result = read("roles/ha.yaml", {"ControllerCount": 3, "ComputeCount": 2})
    assert result.problems == [] and result.unsupported == []
    assert result.spec is not None
    assert {g.name: g.count for g in result.spec.node_groups} == {"Controller": 3, "Compute": 2}
    (grouping,) = result.spec.groupings
    assert grouping.name == "Controller-ControllerServerGroup"
    sw = result.spec.software
    api, compute = sw.deployment("ApiDeployment"), sw.deployment("ComputeDeployment")
    assert api is not None and compute is not None
    assert api.target == MemberRef("Controller")
    assert api.inputs["me"] == MemberFactsInput(MemberRef("Controller"), NodeFact.ADDRESS)
    assert compute.target == MemberRef("Compute")


def test_a_roles_map_of_several_servers_is_one_deployment_per_server() -> None:
    pair = """
heat_template_version: wallaby
parameters:
  count: {type: number}
resources:
  a: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  b: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
outputs:
  servers: {value: {"0": {get_resource: a}, "1": {get_attr: [b, id]}}}
  addresses: {value: known before anything exists}
  info: {value: {ports: [8080]}}
"""
    result = read("roles/pair.yaml", {}, **{"roles/pair.yaml": pair})
    assert result.problems == [] and result.unsupported == []
    assert result.spec is not None
    targets = {d.name: str(d.target) for d in result.spec.software.deployments}
    assert targets["ApiDeployment-0"] == "Controller-a"
    assert targets["ApiDeployment-1"] == "Controller-b"
    one = result.spec.software.deployment("ApiDeployment-1")
    assert one is not None and one.inputs["me"] == LiteralInput("known before anything exists")


def test_what_shoal_does_not_read_says_so_and_a_missing_output_is_a_problem() -> None:
    unread = OVERCLOUD.replace("[Controller, servers]", "[Controller, servers, '0']")
    result = read("roles/single.yaml", {}, template=unread)
    assert result.spec is None
    (u,) = result.unsupported
    assert u.path == "/template/resources/ApiDeployment/properties/servers"
    assert any("Shoal does not read" in p.message and "yet" in p.message for p in result.problems)
    missing = OVERCLOUD.replace("[Controller, servers]", "[Controller, nodes]")
    result = read("roles/single.yaml", {}, template=missing)
    assert result.spec is None
    (p,) = [p for p in result.problems if "nodes" in p.message]
    assert p.path == "/template/resources/ApiDeployment/properties/servers"
    assert "has no output 'nodes'" in p.message


def test_a_value_resource_passing_the_roles_output_on_is_followed() -> None:
    through_value = OVERCLOUD.replace(
        "servers: {get_attr: [Controller, servers]}",
        "servers: {get_attr: [ControllerServers, value]}",
    ) + (
        "  ControllerServers:\n"
        "    type: OS::Heat::Value\n"
        "    properties: {value: {get_attr: [Controller, servers]}}\n"
    )
    result = read("roles/ha.yaml", {"ControllerCount": 3}, template=through_value)
    assert result.problems == [] and result.unsupported == []
    assert result.spec is not None
    api = result.spec.software.deployment("ApiDeployment")
    assert api is not None and api.target == MemberRef("Controller")


def test_the_roles_outputs_are_served_from_the_cluster() -> None:
    with_outputs = OVERCLOUD + (
        "outputs:\n"
        "  controllers: {value: {get_attr: [Controller, addresses]}}\n"
        "  computes: {value: {get_attr: [Compute, servers]}}\n"
    )
    result = read("roles/ha.yaml", {"ControllerCount": 3}, template=with_outputs)
    assert result.problems == []
    assert result.spec is not None
    served = {o.name: o.value for o in result.spec.outputs}
    assert served == {"controllers": MemberFactsInput(MemberRef("Controller"), NodeFact.ADDRESS)}
    # a map of server ids has no Shoal counterpart in an output: left out, one notice
    assert [(s.reason, s.path) for s in result.skipped] == [
        ("get_attr of OS::Heat::ResourceGroup in an output", "/template/outputs/computes")
    ]


EXTRA_CONFIG = """
heat_template_version: wallaby
parameters:
  server: {type: string}
  servers: {type: json}
resources:
  cfg: {type: OS::Heat::SoftwareConfig, properties: {group: script, config: "true"}}
  one:
    type: OS::Heat::SoftwareDeployment
    properties: {config: {get_resource: cfg}, server: {get_param: server}}
  all:
    type: OS::Heat::SoftwareDeploymentGroup
    properties: {config: {get_resource: cfg}, servers: {get_param: servers}}
"""


def test_a_deployment_on_servers_passed_in_from_the_parent_targets_them() -> None:
    parent = """
heat_template_version: wallaby
resources:
  web: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  app:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  extra:
    type: extra.yaml
    properties:
      server: {get_resource: web}
      servers: {get_attr: [app, refs_map]}
"""
    body = {"template": parent, "files": {"extra.yaml": EXTRA_CONFIG}}
    result = read_body(body, default_inventory())
    assert result.problems == [] and result.unsupported == []
    assert result.spec is not None
    targets = {d.name: str(d.target) for d in result.spec.software.deployments}
    assert targets == {"extra-one": "web", "extra-all": "app"}


def test_in_a_group_member_a_deployment_on_a_parents_server_is_refused() -> None:
    parent = """
heat_template_version: wallaby
resources:
  web: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  app:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Nova::Server, properties: {flavor: m1.small, image: cirros}}
  extras:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: extra.yaml
        properties: {server: {get_resource: web}, servers: {get_attr: [app, refs_map]}}
"""
    body = {"template": parent, "files": {"extra.yaml": EXTRA_CONFIG}}
    result = read_body(body, default_inventory())
    assert result.spec is None
    assert {u.reason for u in result.unsupported} == {
        "deployment in a group member on a server outside it"
    }


def test_a_roles_output_showing_a_hidden_parameter_is_a_secret_never_a_literal() -> None:
    role = (
        SINGLE_ROLE.replace(
            "  count: {type: number}\n",
            "  count: {type: number}\n"
            "  AdminPassword: {type: string, hidden: true, default: s3cret-pw}\n",
        )
        + "  password: {value: {get_param: AdminPassword}}\n"
    )
    template = (
        OVERCLOUD.replace(
            "        me: {get_attr: [Controller, addresses]}\n",
            "        me: {get_attr: [Controller, addresses]}\n"
            "        pw: {get_attr: [Controller, password]}\n",
        )
        + "outputs:\n  pw: {value: {get_attr: [Controller, password]}}\n"
    )
    result = read("roles/secret.yaml", {}, template=template, **{"roles/secret.yaml": role})
    assert result.problems == []
    assert result.spec is not None
    api = result.spec.software.deployment("ApiDeployment")
    assert api is not None and api.inputs["pw"] == SecretInput("Controller-password")
    assert result.spec.software.secrets == {"Controller-password": "s3cret-pw"}
    assert [s.reason for s in result.skipped] == ["hidden parameter in an output"]
    assert result.spec.outputs == ()
