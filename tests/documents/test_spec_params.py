"""Parameters, conditions and environments in native documents; the controller example."""

from __future__ import annotations

import pytest

from shoal.documents import load_cluster
from shoal.documents.environment_native import MAX_ENVIRONMENTS
from shoal.documents.export import to_document
from shoal.documents.loader import cluster_from_tree
from shoal.documents.syntax import parse
from shoal.model import InvalidDocument, Inventory, Problem
from shoal.model.enums import Rule, Scope
from shoal.model.software import LiteralInput, SecretInput
from tests.documents.support import EXAMPLES

DOC = """
name: c
parameters:
  n: {type: number, default: 2, constraints: {range: {min: 1, max: 5}}}
  flavor: {type: string, default: m1.tiny, constraints: {allowed_values: [m1.tiny, m1.small]}}
  big: {type: boolean, default: false}
  tag: {type: string, default: abc, constraints: {allowed_pattern: "[a-z]+", length: {max: 5}}}
  pw: {type: string, hidden: true}
conditions:
  large: {param: big}
  small: {not: large}
  both: {and: [large, {equals: [{param: n}, 3]}]}
profiles:
  p: {type: server, flavor: {param: flavor}, image: cirros}
instances:
  - {name: extra, profile: p, condition: large}
  - {name: tiny, profile: p, condition: small}
node_groups:
  - {name: web, profile: p, count: {param: n}, labels: {tag: {param: tag}}, role: Web}
groupings:
  - {name: apart, members: [extra, web], rule: anti-affinity, condition: large}
"""


def env(text: str) -> object:
    return parse(text, "env.yaml")


def load(inventory: Inventory, *envs: str, text: str = DOC) -> object:
    return load_cluster(text, inventory, environments=[env(e) for e in envs])


def problems(inventory: Inventory, *envs: str, text: str = DOC) -> list[Problem]:
    with pytest.raises(InvalidDocument) as caught:
        load(inventory, *envs, text=text)
    return caught.value.problems


def test_defaults_and_conditions(inventory: Inventory) -> None:
    spec = load_cluster(DOC, inventory)
    assert [g.count for g in spec.node_groups] == [2]
    assert spec.node_groups[0].labels == {"tag": "abc"}
    assert [i.name for i in spec.instances] == ["tiny"]
    assert spec.groupings == ()


def test_environments_merge_in_order_later_wins(inventory: Inventory) -> None:
    spec = load_cluster(
        DOC,
        inventory,
        environments=[
            env("parameters: {n: 4, big: true}\nparameter_defaults: {flavor: m1.small}"),
            env("parameters: {n: 3}\nparameter_defaults: {unknown_is_fine: 1}"),
        ],
    )
    assert spec.node_groups[0].count == 3
    assert spec.node_groups[0].parts[0].profile.flavor.name == "m1.small"  # type: ignore[union-attr]
    assert [i.name for i in spec.instances] == ["extra"]
    assert [g.name for g in spec.groupings] == ["apart"]


def test_constraints_and_unknown_names_all_at_once(inventory: Inventory) -> None:
    found = problems(
        inventory,
        "parameters: {n: 9, flavor: m1.huge, tag: ABC, nope: 1, big: maybe}",
    )
    by_path = {p.path: p.message for p in found}
    assert "at most 5" in by_path["/environment/0/parameters/n"]
    assert "must be one of" in by_path["/environment/0/parameters/flavor"]
    assert "pattern" in by_path["/environment/0/parameters/tag"]
    assert "declares no parameter 'nope'" in by_path["/environment/0/parameters/nope"]
    assert "expected a boolean value" in by_path["/environment/0/parameters/big"]


def test_a_hidden_pattern_mismatch_does_not_show_the_value(inventory: Inventory) -> None:
    text = DOC.replace(
        "pw: {type: string, hidden: true}",
        "pw: {type: string, hidden: true, constraints: {allowed_pattern: '[0-9]+'}}",
    )
    [problem] = problems(inventory, "parameters: {pw: letmein}", text=text)
    assert "letmein" not in problem.message


def test_unknown_parameter_and_condition_references(inventory: Inventory) -> None:
    text = DOC.replace("count: {param: n}", "count: {param: m}").replace(
        "condition: small", "condition: smal"
    )
    paths = {p.path for p in problems(inventory, text=text)}
    assert "/node_groups/0/count/param" in paths
    assert "/instances/1/condition" in paths


def test_condition_cycle_and_depth(inventory: Inventory) -> None:
    text = DOC.replace("small: {not: large}", "small: {not: loop}\n  loop: small")
    found = problems(inventory, text=text)
    assert any("condition cycle" in p.message for p in found)
    deep = "{not: " * 40 + "true" + "}" * 40
    found = problems(inventory, text=DOC.replace("{not: large}", deep))
    assert any("deeper than" in p.message for p in found)


def test_a_parameter_without_value_is_reported_where_used(inventory: Inventory) -> None:
    text = DOC.replace("labels: {tag: {param: tag}}", "labels: {tag: {param: pw}}")
    [problem] = problems(inventory, text=text)
    assert problem.path == "/node_groups/0/labels/tag/param"
    assert "has no value" in problem.message


def test_roles_become_a_bigger_group_with_anti_affinity(inventory: Inventory) -> None:
    spec = load_cluster(
        DOC, inventory, environments=[env("roles: {Web: {count: 3, anti_affinity: host}}")]
    )
    assert spec.node_groups[0].count == 3
    [grouping] = spec.groupings
    assert (grouping.rule, grouping.scope) == (Rule.ANTI_AFFINITY, Scope.HOST)
    assert [str(m) for m in grouping.members] == ["web"]


def test_roles_become_one_instance_and_a_later_env_wins(inventory: Inventory) -> None:
    spec = load_cluster(
        DOC,
        inventory,
        environments=[
            env("roles: {Web: {count: 3}}"),
            env("roles: {Web: {shape: instance}}"),
        ],
    )
    assert spec.node_groups == ()
    assert [i.name for i in spec.instances] == ["tiny", "web"]


def test_an_unknown_role_and_too_many_environments(inventory: Inventory) -> None:
    [problem] = problems(inventory, "roles: {Db: {count: 2}}")
    assert problem.path == "/environment/0/roles/Db"
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(DOC, inventory, environments=[env("{}")] * (MAX_ENVIRONMENTS + 1))
    assert caught.value.problems[0].path == "/environment"


def test_environments_are_refused_for_vcluster_documents(inventory: Inventory) -> None:
    text = (EXAMPLES / "vcluster-seed.json").read_text()
    with pytest.raises(InvalidDocument) as caught:
        load_cluster(text, inventory, environments=[env("{}")])
    assert caught.value.problems[0].path == "/environment"


@pytest.mark.parametrize(("environment", "controllers"), [("ha.yaml", 3), ("single.yaml", 0)])
def test_the_controller_example_in_both_environments(
    inventory: Inventory, environment: str, controllers: int
) -> None:
    folder = EXAMPLES / "controller"
    spec = load_cluster(
        (folder / "controller.yaml").read_text(),
        inventory,
        environments=[env((folder / environment).read_text())],
    )
    counts = [g.count for g in spec.node_groups if g.name == "controller"]
    assert counts == ([controllers] if controllers else [])
    assert ("controller" in [i.name for i in spec.instances]) == (controllers == 0)
    names = [d.name for d in spec.software.deployments]
    assert names == ["database", "api", "balancer"]
    api = spec.software.deployment("api")
    assert api is not None and str(api.target) == "controller"
    assert api.inputs["port"] == LiteralInput(8080)
    database = spec.software.deployment("database")
    assert database is not None and database.inputs["password"] == SecretInput("db_password")
    again = cluster_from_tree(to_document(spec), inventory)
    assert again.software == spec.software
    assert [g.count for g in again.node_groups] == [g.count for g in spec.node_groups]


def test_switching_off_a_deployment_by_condition(inventory: Inventory) -> None:
    folder = EXAMPLES / "controller"
    spec = load_cluster(
        (folder / "controller.yaml").read_text(),
        inventory,
        environments=[env("parameters: {with_lb: false}\nroles: {Controller: {shape: instance}}")],
    )
    assert [d.name for d in spec.software.deployments] == ["database", "api"]
    assert [i.name for i in spec.instances] == ["db", "controller"]
