"""Issue 36, item 2: two declared things binding one address:port on one node are refused when
the document is read, naming both: two Pod deployments on one group, a workload whose every
eligible server runs a Pod binding its port; a workload that may run elsewhere is taken."""

from __future__ import annotations

import pytest

from shoal.documents.loader import cluster_from_tree
from shoal.documents.syntax import parse
from shoal.model.catalogs import default_inventory
from shoal.model.problems import InvalidDocument

DOC = """
name: x
node_groups:
  - {name: ctl, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 2}
  - {name: web, profile: {type: server, flavor: m1.tiny, image: cirros}, count: 2}
software:
  configs:
    pod:
      group: kubelet
      config: |
        apiVersion: v1
        kind: Pod
        metadata: {name: api}
        spec:
          hostNetwork: true
          containers: [{name: api, image: img, ports: [{containerPort: 8081}]}]
  deployments:
    api: {config: pod, target: ctl}
DEPLOYMENTS
workloads:
  w:
    replicas: 2
    nodes: {groups: GROUPS}
    containers: [{name: c, image: img, ports: [PORT]}]
"""


def _problems(extra: str = "", groups: str = "[ctl]", port: int = 8081) -> list[tuple[str, str]]:
    text = DOC.replace("DEPLOYMENTS\n", extra).replace("GROUPS", groups).replace("PORT", str(port))
    try:
        cluster_from_tree(parse(text, "x"), default_inventory())
    except InvalidDocument as e:
        return [(p.path, p.message) for p in e.problems]
    return []


def test_a_workload_and_a_pod_binding_one_port_on_every_eligible_server_are_refused() -> None:
    assert _problems() == [
        (
            "/workloads/w/containers",
            "workload w binds port 8081, which deployment api binds on every server it may "
            "run on (ctl)",
        )
    ]


def test_two_pod_deployments_binding_one_port_on_one_group_are_refused_with_the_workload() -> None:
    found = _problems("    api2: {config: pod, target: ctl}\n")
    assert (
        "/software/deployments/api2/config",
        "deployment api2 and deployment api both bind port 8081 on every server of ctl",
    ) in found
    assert len(found) == 2  # and the workload's, all at once


@pytest.mark.parametrize(("groups", "port"), [("[ctl, web]", 8081), ("[ctl]", 8082)])
def test_a_workload_with_somewhere_else_to_go_or_another_port_is_taken(
    groups: str, port: int
) -> None:
    assert _problems(groups=groups, port=port) == []
