"""What python-senlinclient's functional suite reads (issue 38, item 6), in process on SQLite
and PostgreSQL: after `cluster check` and `cluster recover` the cluster's `status_reason` names
the operation as Senlin's engine writes it (`CLUSTER_CHECK: number of active nodes is equal or
above desired_capacity (1).`), after `node check` and `node recover` the node's says `Check`
and `Recover`; a node named like its cluster (the suite names both alike) is added, deleted
and used as a replacement, found by that name throughout, and the fields the suite reads are
never left empty when Senlin fills them. The texts are real Senlin 16's (tests/senlin_live)."""

from __future__ import annotations

from typing import Any

from tests.senlin.conftest import Senlin


async def _node(senlin: Senlin, name: str, profile: str) -> dict[str, Any]:
    created, _ = await senlin.accepted(
        "POST", "/nodes", json={"node": {"name": name, "profile_id": profile}}
    )
    node: dict[str, Any] = created["node"]
    return node


async def _cluster(senlin: Senlin, ref: str) -> dict[str, Any]:
    found: dict[str, Any] = (await senlin.ok("GET", f"/clusters/{ref}"))["cluster"]
    return found


async def test_check_and_recover_leave_senlins_words(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster("c1", size=1, min_size=0, max_size=3)
    assert (await _cluster(senlin, "c1"))["status_reason"] == (
        "CLUSTER_CREATE: number of active nodes is equal or above desired_capacity (1)."
    )
    await senlin.accepted("POST", "/clusters/c1/actions", json={"check": {}})
    after = await _cluster(senlin, "c1")
    assert after["status"] == "ACTIVE"
    assert after["status_reason"] == (
        "CLUSTER_CHECK: number of active nodes is equal or above desired_capacity (1)."
    )
    await senlin.accepted(
        "POST", "/clusters/c1/actions", json={"recover": {"params": {"check": True}}}
    )
    after = await _cluster(senlin, "c1")
    assert after["status_reason"] == (
        "CLUSTER_RECOVER: number of active nodes is equal or above desired_capacity (1)."
    )
    # attaching a policy keeps the reason the last evaluated operation left, as in Senlin
    spec = {"type": "senlin.policy.deletion", "version": "1.1", "properties": {}}
    policy = await senlin.ok("POST", "/policies", 201, json={"policy": {"name": "d", "spec": spec}})
    await senlin.accepted(
        "POST",
        "/clusters/c1/actions",
        json={"policy_attach": {"policy_id": policy["policy"]["id"]}},
    )
    assert (await _cluster(senlin, "c1"))["status_reason"].startswith("CLUSTER_RECOVER: ")

    node = await _node(senlin, "n1", c["profile_id"])
    await senlin.accepted("POST", f"/nodes/{node['id']}/actions", json={"check": {}})
    shown = (await senlin.ok("GET", "/nodes/n1"))["node"]
    assert shown["status"] == "ACTIVE" and "Check" in shown["status_reason"], shown
    await senlin.accepted("POST", f"/nodes/{node['id']}/actions", json={"recover": {"check": True}})
    shown = (await senlin.ok("GET", "/nodes/n1"))["node"]
    assert shown["status"] == "ACTIVE" and "Recover" in shown["status_reason"], shown


async def test_a_node_named_like_its_cluster_joins_leaves_and_replaces(
    senlin_db: Senlin,
) -> None:
    """python-senlinclient's test_cluster_members_add_and_del and _replace, in API calls."""
    senlin = senlin_db
    c = await senlin.cluster("twin", size=0)
    assert (await _cluster(senlin, "twin"))["node_ids"] == []
    node = await _node(senlin, "twin", c["profile_id"])

    await senlin.accepted("POST", "/clusters/twin/actions", json={"add_nodes": {"nodes": ["twin"]}})
    added = await _cluster(senlin, c["id"])
    assert added["node_ids"] == [node["id"]] and added["status"] == "ACTIVE"
    member = (await senlin.ok("GET", f"/nodes/{node['id']}"))["node"]
    assert (member["name"], member["cluster_id"]) == ("twin", c["id"])  # its own name still
    assert (await senlin.ok("GET", "/nodes/twin"))["node"]["id"] == node["id"]

    await senlin.accepted("POST", "/clusters/twin/actions", json={"del_nodes": {"nodes": ["twin"]}})
    left = await _cluster(senlin, c["id"])
    assert left["node_ids"] == [] and left["status"] == "ACTIVE"
    alone = (await senlin.ok("GET", f"/nodes/{node['id']}"))["node"]
    assert (alone["name"], alone["cluster_id"], alone["index"]) == ("twin", "", -1)

    # replace: the cluster's one member by a standalone node of the cluster's name
    c2 = await senlin.cluster("pair", size=1)
    [old] = (await _cluster(senlin, "pair"))["node_ids"]
    spare = await _node(senlin, "pair", c2["profile_id"])
    body = {"replace_nodes": {"nodes": {old: spare["id"]}}}
    await senlin.accepted("POST", "/clusters/pair/actions", json=body, version="1.3")
    replaced = await _cluster(senlin, c2["id"])
    assert replaced["node_ids"] == [spare["id"]], replaced
    assert old not in replaced["node_ids"]
    gone = (await senlin.ok("GET", f"/nodes/{old}"))["node"]
    assert gone["cluster_id"] == "" and gone["status"] == "ACTIVE"
