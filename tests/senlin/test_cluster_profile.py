"""A cluster's profile changed through the façade: the nodes follow it, or (`profile_only`,
from microversion 1.6) only the cluster's profile changes and its nodes keep theirs."""

from __future__ import annotations

from typing import Any

from tests.senlin.conftest import NOVA_SPEC, Senlin

BIGGER: dict[str, Any] = {
    "type": "os.nova.server",
    "version": "1.0",
    "properties": {"flavor": "m1.small", "image": "cirros"},
}


async def _cluster_with_member(senlin: Senlin) -> tuple[str, str, str]:
    """A cluster of one replica plus a node created into it; its profile, and the node's id."""
    c = await senlin.cluster(size=1)
    body = {"node": {"name": "n01", "profile_id": c["profile_id"], "cluster_id": "web"}}
    created, _ = await senlin.accepted("POST", "/nodes", json=body)
    return c["id"], c["profile_id"], created["node"]["id"]


async def _node_profiles(senlin: Senlin) -> dict[str, str]:
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=web"))["nodes"]
    return {n["id"]: n["profile_id"] for n in nodes}


async def test_profile_only_changes_the_cluster_not_its_nodes(senlin_db: Senlin) -> None:
    senlin = senlin_db
    cluster_id, old, member = await _cluster_with_member(senlin)
    before = await _node_profiles(senlin)
    assert set(before.values()) == {old} and member in before
    new = await senlin.profile("web-big", BIGGER)
    body = {"cluster": {"profile_id": new, "profile_only": True}}
    await senlin.accepted("PATCH", "/clusters/web", json=body, version="1.6")
    shown = (await senlin.ok("GET", f"/clusters/{cluster_id}"))["cluster"]
    assert (shown["profile_id"], shown["profile_name"]) == (new, "web-big")
    assert await _node_profiles(senlin) == before, "the same nodes, on their own profile"


async def test_before_1_6_profile_only_is_ignored_and_the_nodes_follow(senlin_db: Senlin) -> None:
    senlin = senlin_db
    _, _, member = await _cluster_with_member(senlin)
    new = await senlin.profile("web-big", BIGGER)
    body = {"cluster": {"profile_id": new, "profile_only": True}}
    await senlin.accepted("PATCH", "/clusters/web", json=body, version="1.5")
    after = await _node_profiles(senlin)
    assert len(after) == 2 and set(after.values()) == {new}
    assert member not in after, "Shoal replaces a node whose profile changed"
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=web&show_details=true"))["nodes"]
    assert {n["details"]["flavor"] for n in nodes} == {"m1.small"}
    assert NOVA_SPEC["properties"]["flavor"] == "m1.tiny"
