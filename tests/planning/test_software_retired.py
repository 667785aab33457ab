"""Issue 36: which deployments a new document no longer declares on the nodes that stay
(`retired`): a deployment dropped, and one whose target moved to another group; nodes not
given (deleted, on their way out) are not judged; dependents before what they depend on."""

from __future__ import annotations

from shoal.model.members import MemberRef
from shoal.model.software import (
    Deployment,
    DeploymentRecord,
    DeploymentStatus,
    HookGroup,
    NodeFacts,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.planning.software import retired

COMPLETE = DeploymentStatus.COMPLETE


def _node(name: str, group: str) -> NodeFacts:
    return NodeFacts(name, MemberRef(group), 1, "127.0.0.2", "az1", "h1", True)


def _rec(deployment: str, node: str) -> DeploymentRecord:
    return DeploymentRecord(deployment, node, COMPLETE, "d")


def test_dropped_and_moved_deployments_are_retired_where_they_ran() -> None:
    config = SoftwareConfig("c", HookGroup.SCRIPT, "echo")
    spec = SoftwareSpec(
        configs=(config,),
        deployments=(Deployment("kept", "c", MemberRef("web")),
                     Deployment("moved", "c", MemberRef("db"))),
    )  # fmt: skip
    nodes = [_node("web-1", "web"), _node("db-1", "db")]
    records = [
        _rec("kept", "web-1"),
        _rec("moved", "web-1"),  # its target is db now
        _rec("moved", "db-1"),
        _rec("dropped", "db-1"),
        _rec("dropped", "gone-1"),  # a node not given: its own removal runs there
    ]
    found = [(r.deployment, r.node) for r in retired(spec, nodes, records)]
    assert found == [("dropped", "db-1"), ("moved", "web-1")]


def test_nothing_declared_retires_every_record_of_the_nodes_given() -> None:
    records = [_rec("a", "web-1"), _rec("b", "web-1")]
    assert len(retired(SoftwareSpec(), [_node("web-1", "web")], records)) == 2
