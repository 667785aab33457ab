"""Issue 36, item 4: a dry run lists every deployment, container, workload, replica, network and
balancer member a transition changes, removals first; here seed 003's single -> HA in the
native words (a compose deployment on ctl-1 dropped for a 3-replica workload behind a
balancer), and its way back."""

from __future__ import annotations

from shoal.documents.loader import cluster_from_tree
from shoal.documents.syntax import parse
from shoal.model.catalogs import default_inventory
from shoal.model.cluster import ClusterSpec
from shoal.service.transition_preview import Change, Deployed, Servers, changes

SINGLE = """
name: seed
node_groups:
  - {name: ctl, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 1}
software:
  configs:
    api: {group: docker-compose, config: "api: {image: img, net: host}\\n"}
  deployments:
    ApiDeployment: {config: api, target: ctl}
"""

HA = """
name: seed
node_groups:
  - {name: ctl, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 3}
networks: [{name: net, cidr: 10.0.0.0/24}]
load_balancers:
  - {name: lb, network: net, listeners: [{port: 80, pool: p}], pools: [{name: p, members: Api}]}
workloads:
  Api:
    replicas: 3
    nodes: {groups: [ctl]}
    containers: [{name: api, image: img, ports: [8081]}]
"""


def _spec(text: str) -> ClusterSpec:
    return cluster_from_tree(parse(text, "x"), default_inventory())


def _rows(found: list[Change]) -> list[tuple[str, str, str | None, str]]:
    return [(c.change.value, c.kind.value, c.node, c.name) for c in found]


def test_single_to_ha_lists_the_deployment_and_its_container_removed_first() -> None:
    servers = Servers({"ctl": ("ctl-1",)}, {"ctl": ("ctl-1", "ctl-2", "ctl-3")})
    ran = [Deployed("ApiDeployment", "ctl-1", "docker-compose", "api: {image: img, net: host}\n")]
    found = _rows(changes(_spec(SINGLE), _spec(HA), servers, ran, {}))
    assert found[:2] == [
        ("remove", "deployment", "ctl-1", "ApiDeployment"),
        ("remove", "container", "ctl-1", "ApiDeployment"),
    ]
    assert ("create", "workload", None, "Api") in found
    assert [r for r in found if r[1] == "replica"] == [
        ("create", "replica", None, f"Api-{i}") for i in (1, 2, 3)
    ]
    assert ("create", "network", None, "net") in found
    assert [r[2] for r in found if r[1] == "balancer_member"] == ["Api-1", "Api-2", "Api-3"]


def test_ha_to_single_lists_the_workload_its_replicas_and_members_removed() -> None:
    servers = Servers({"ctl": ("ctl-1", "ctl-2", "ctl-3")}, {"ctl": ("ctl-1",)})
    replicas = {"Api-1": "Api", "Api-2": "Api", "Api-3": "Api"}
    found = _rows(changes(_spec(HA), _spec(SINGLE), servers, [], replicas))
    removed = [r for r in found if r[0] == "remove"]
    assert ("remove", "workload", None, "Api") in removed
    assert {r[3] for r in removed if r[1] == "replica"} == {"Api-1", "Api-2", "Api-3"}
    assert ("remove", "network", None, "net") in removed
    assert found[-2:] == [
        ("create", "deployment", "ctl-1", "ApiDeployment"),
        ("create", "container", "ctl-1", "ApiDeployment"),
    ]
    assert all(r[0] == "remove" for r in found[: len(removed)])  # removals first
