"""Nodes leaving a cluster as Senlin did it: `replace_nodes` (the original leaves and stays a
standalone node, the standalone replacement joins) and `del_nodes` (the nodes stay, standalone,
unless `destroy_after_deletion`)."""

from __future__ import annotations

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error


async def _standalone(senlin: Senlin, name: str, profile: str) -> str:
    body = {"node": {"name": name, "profile_id": profile}}
    created, _ = await senlin.accepted("POST", "/nodes", json=body)
    node_id: str = created["node"]["id"]
    return node_id


async def test_replace_a_member_and_a_replica(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=2)
    body = {"node": {"name": "n01", "profile_id": c["profile_id"], "cluster_id": "web"}}
    member = (await senlin.accepted("POST", "/nodes", json=body))[0]["node"]["id"]
    spare1 = await _standalone(senlin, "spare1", c["profile_id"])
    spare2 = await _standalone(senlin, "spare2", c["profile_id"])
    replica = c["nodes"][0]
    pairs = {member: spare1, replica: spare2}
    answer, _ = await senlin.accepted(
        "POST", "/clusters/web/actions", json={"replace_nodes": {"nodes": pairs}}, version="1.3"
    )
    after = (await senlin.ok("GET", "/clusters/web"))["cluster"]
    assert after["desired_capacity"] == 3
    assert set(after["nodes"]) == (set(c["nodes"]) - {replica}) | {spare1, spare2}
    for old in (member, replica):
        node = (await senlin.ok("GET", f"/nodes/{old}"))["node"]
        assert (node["cluster_id"], node["status"]) == ("", "ACTIVE")
        assert node["profile_id"] == c["profile_id"]
        await senlin.accepted("DELETE", f"/nodes/{old}")
    action = (await senlin.ok("GET", f"/actions/{answer['action']}"))["action"]
    assert action["action"] == "CLUSTER_REPLACE_NODES"


async def test_a_replacement_must_be_standalone(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=2)
    pairs = {c["nodes"][0]: c["nodes"][1]}
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"replace_nodes": {"nodes": pairs}}, version="1.3"
    )
    assert "already member of a cluster" in senlin_error(r, 400)["message"]


async def test_del_nodes_leaves_them_standalone_unless_destroyed(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=2, min_size=0)
    body = {"node": {"name": "n01", "profile_id": c["profile_id"], "cluster_id": "web"}}
    member = (await senlin.accepted("POST", "/nodes", json=body))[0]["node"]["id"]
    kept, destroyed = c["nodes"]
    for ref in (member, kept):
        answer, _ = await senlin.accepted(
            "POST", "/clusters/web/actions", json={"del_nodes": {"nodes": [ref]}}
        )
        node = (await senlin.ok("GET", f"/nodes/{ref}"))["node"]
        assert (node["cluster_id"], node["status"]) == ("", "ACTIVE")
        action = (await senlin.ok("GET", f"/actions/{answer['action']}"))["action"]
        assert action["action"] == "CLUSTER_DEL_NODES"
    gone = {"del_nodes": {"nodes": [destroyed], "destroy_after_deletion": True}}
    await senlin.accepted("POST", "/clusters/web/actions", json=gone)
    senlin_error(await senlin.call("GET", f"/nodes/{destroyed}"), 404)
    after = (await senlin.ok("GET", "/clusters/web"))["cluster"]
    assert (after["desired_capacity"], after["nodes"]) == (0, [])
    r = await senlin.call("POST", "/clusters/web/actions", json={"del_nodes": {"nodes": [kept]}})
    assert "not members of specified cluster" in senlin_error(r, 400)["message"]
