"""Senlin clusters over Shoal clusters: create, show, resize, update, actions, delete."""

from __future__ import annotations

from typing import Any

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error

SENLIN_FIELDS = {
    "id", "name", "profile_id", "profile_name", "status", "status_reason",
    "desired_capacity", "min_size", "max_size", "node_ids", "nodes", "created_at",
    "updated_at", "init_at", "metadata", "data", "policies", "project", "user", "domain",
    "timeout", "dependents", "config",
}  # fmt: skip


async def show(senlin: Senlin, ref: str) -> dict[str, Any]:
    cluster: dict[str, Any] = (await senlin.ok("GET", f"/clusters/{ref}"))["cluster"]
    return cluster


async def act(senlin: Senlin, ref: str, body: dict[str, Any]) -> dict[str, Any]:
    answer, action_id = await senlin.accepted("POST", f"/clusters/{ref}/actions", json=body)
    assert answer == {"action": action_id}
    return await show(senlin, ref)


async def test_create_answers_202_then_becomes_active(senlin: Senlin) -> None:
    profile = await senlin.profile()
    body = {
        "cluster": {
            "name": "web",
            "profile_id": profile,
            "desired_capacity": 3,
            "min_size": 1,
            "max_size": 5,
            "metadata": {"team": "shop", "replicas": 3},
            "timeout": 600,
        }
    }
    r = await senlin.call("POST", "/clusters", json=body)
    assert r.status_code == 202, r.text
    assert r.headers["Location"].startswith("/clustering/v1/actions/")
    early = r.json()["cluster"]
    assert set(early) >= SENLIN_FIELDS
    assert early["status"] in ("INIT", "CREATING", "ACTIVE")
    action_id = r.headers["Location"].rsplit("/", 1)[-1]
    action = await senlin.wait(action_id)
    assert action["action"] == "CLUSTER_CREATE"
    assert action["status"] == "SUCCEEDED"
    assert action["target"] == early["id"]
    assert action["cause"] == "RPC Request"

    cluster = await show(senlin, "web")
    assert cluster["status"] == "ACTIVE"
    assert (cluster["desired_capacity"], cluster["min_size"], cluster["max_size"]) == (3, 1, 5)
    assert (cluster["profile_id"], cluster["profile_name"]) == (profile, "web")
    assert cluster["metadata"] == {"team": "shop", "replicas": 3}
    assert cluster["timeout"] == 600
    assert len(cluster["nodes"]) == 3 and cluster["nodes"] == cluster["node_ids"]
    assert (await show(senlin, cluster["id"][:8]))["id"] == cluster["id"]

    listed = (await senlin.ok("GET", "/clusters"))["clusters"]
    assert [c["name"] for c in listed] == ["web"]
    assert (await senlin.ok("GET", "/clusters?status=ERROR"))["clusters"] == []

    nodes = (await senlin.ok("GET", f"/nodes?cluster_id={cluster['id']}"))["nodes"]
    assert sorted(n["id"] for n in nodes) == sorted(cluster["nodes"])
    assert {n["status"] for n in nodes} == {"ACTIVE"}
    assert {n["profile_id"] for n in nodes} == {profile}
    node = (await senlin.ok("GET", f"/nodes/{nodes[0]['id']}?show_details=true"))["node"]
    assert node["details"]["flavor"] == "m1.tiny"
    assert node["cluster_id"] == cluster["id"]
    assert node["physical_id"]


async def test_create_refuses_bad_sizes_and_unknown_profiles(senlin: Senlin) -> None:
    profile = await senlin.profile()

    async def refused(**fields: Any) -> str:
        body = {"cluster": {"name": "c", "profile_id": profile, **fields}}
        message: str = senlin_error(await senlin.call("POST", "/clusters", json=body), 400)[
            "message"
        ]
        return message

    assert "min_size" in await refused(desired_capacity=1, min_size=2)
    assert "max_size" in await refused(desired_capacity=3, max_size=2)
    assert "desired_capacity" in await refused(desired_capacity="many")
    assert "could not be found" in await refused(desired_capacity=1, profile_id="nope")
    assert "name" in await refused(desired_capacity=1, name="no spaces please")
    assert (await senlin.ok("GET", "/clusters"))["clusters"] == []


async def test_scale_out_and_in(senlin: Senlin) -> None:
    await senlin.cluster(size=2)
    assert len((await act(senlin, "web", {"scale_out": {"count": 2}}))["nodes"]) == 4
    grown = await act(senlin, "web", {"scale_out": {"count": None}})
    assert grown["desired_capacity"] == 5
    shrunk = await act(senlin, "web", {"scale_in": {"count": 3}})
    assert (shrunk["desired_capacity"], len(shrunk["nodes"]), shrunk["status"]) == (2, 2, "ACTIVE")
    actions = (await senlin.ok("GET", f"/actions?target={shrunk['id']}"))["actions"]
    kinds = [a["action"] for a in actions]
    assert kinds == [
        "CLUSTER_CREATE",
        "CLUSTER_SCALE_OUT",
        "CLUSTER_SCALE_OUT",
        "CLUSTER_SCALE_IN",
    ]


async def test_scaling_past_a_bound_is_400(senlin: Senlin) -> None:
    await senlin.cluster(size=2, min_size=1, max_size=3)
    r = await senlin.call("POST", "/clusters/web/actions", json={"scale_out": {"count": 2}})
    assert "max_size (3)" in senlin_error(r, 400)["message"]
    r = await senlin.call("POST", "/clusters/web/actions", json={"scale_in": {"count": 2}})
    assert "min_size (1)" in senlin_error(r, 400)["message"]


async def test_resize(senlin: Senlin) -> None:
    await senlin.cluster(size=2)
    exact = {"adjustment_type": "EXACT_CAPACITY", "number": 4, "max_size": 6}
    c = await act(senlin, "web", {"resize": exact})
    assert (c["desired_capacity"], c["max_size"], len(c["nodes"])) == (4, 6, 4)

    c = await act(
        senlin, "web", {"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -1}}
    )
    assert c["desired_capacity"] == 3

    percent = {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 50}
    assert (await act(senlin, "web", {"resize": percent}))["desired_capacity"] == 5

    loose = {"adjustment_type": "EXACT_CAPACITY", "number": 9, "strict": False}
    assert (await act(senlin, "web", {"resize": loose}))["desired_capacity"] == 6

    c = await act(senlin, "web", {"resize": {"min_size": 2, "max_size": -1}})
    assert (c["min_size"], c["max_size"], c["desired_capacity"]) == (2, -1, 6)

    r = await senlin.call("POST", "/clusters/web/actions", json={"resize": {"number": 2}})
    assert "adjustment_type" in senlin_error(r, 400)["message"]
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"resize": {"min_size": 5, "max_size": 3}}
    )
    senlin_error(r, 400)
    r = await senlin.call(
        "POST",
        "/clusters/web/actions",
        json={"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 1}},
    )
    assert "min_size (2)" in senlin_error(r, 400)["message"]


async def test_update_renames_and_changes_metadata(senlin: Senlin) -> None:
    before = await senlin.cluster(size=1)
    body = {"cluster": {"name": "shop", "metadata": {"v": "2"}, "timeout": 120}}
    answer, _ = await senlin.accepted("PATCH", "/clusters/web", json=body)
    assert answer["cluster"]["name"] == "shop"
    after = await show(senlin, before["id"])
    assert (after["name"], after["metadata"], after["timeout"]) == ("shop", {"v": "2"}, 120)
    assert after["nodes"] == before["nodes"], "no node changed"
    senlin_error(await senlin.call("GET", "/clusters/web"), 404)
    r = await senlin.call("PATCH", "/clusters/shop", json={"cluster": {}})
    assert senlin_error(r, 400)["message"] == "No property needs an update."


async def test_update_to_another_profile_rolls_the_nodes(senlin: Senlin) -> None:
    before = await senlin.cluster(size=2)
    bigger = {
        "type": "os.nova.server",
        "version": "1.0",
        "properties": {"flavor": "m1.small", "image": "cirros"},
    }
    new_profile = await senlin.profile("web-big", bigger)
    await senlin.accepted("PATCH", "/clusters/web", json={"cluster": {"profile_id": new_profile}})
    after = await show(senlin, "web")
    assert (after["profile_id"], after["profile_name"]) == (new_profile, "web-big")
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=web&show_details=true"))["nodes"]
    assert {n["details"]["flavor"] for n in nodes} == {"m1.small"}
    assert len(after["nodes"]) == 2 and after["nodes"] != before["nodes"]


async def test_check_and_recover_answer_with_actions(senlin: Senlin) -> None:
    c = await senlin.cluster(size=1)
    _, check_id = await senlin.accepted("POST", "/clusters/web/actions", json={"check": {}})
    assert (await senlin.ok("GET", f"/actions/{check_id}"))["action"]["action"] == "CLUSTER_CHECK"
    _, recover_id = await senlin.accepted(
        "POST", "/clusters/web/actions", json={"recover": {"operation": "REBUILD"}}
    )
    action = (await senlin.ok("GET", f"/actions/{recover_id}"))["action"]
    assert action["action"] == "CLUSTER_RECOVER"
    assert (await show(senlin, "web"))["nodes"] == c["nodes"]


async def test_add_and_delete_nodes(senlin: Senlin) -> None:
    """add_nodes adopts standalone nodes (Senlin's semantics): the node keeps its id and its
    server; the cluster's document gains it as an instance."""
    await senlin.cluster(size=1)
    r = await senlin.call("POST", "/clusters/web/actions", json={"add_nodes": {"nodes": ["x"]}})
    assert senlin_error(r, 400)["message"] == "Nodes not found: ['x']."
    profile = (await senlin.ok("GET", "/clusters/web"))["cluster"]["profile_id"]
    body = {"node": {"name": "bastion", "profile_id": profile}}
    created, _ = await senlin.accepted("POST", "/nodes", json=body)
    before = (await senlin.ok("GET", "/nodes/bastion"))["node"]["physical_id"]
    c = await act(senlin, "web", {"add_nodes": {"nodes": ["bastion"]}})
    assert c["desired_capacity"] == 2
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=web&name=bastion"))["nodes"]
    assert [(n["id"], n["physical_id"]) for n in nodes] == [(created["node"]["id"], before)]
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"add_nodes": {"nodes": ["bastion"]}}
    )
    assert "already owned by some cluster" in senlin_error(r, 400)["message"]

    c = await act(senlin, "web", {"del_nodes": {"nodes": [nodes[0]["id"]]}})
    assert c["desired_capacity"] == 1 and len(c["nodes"]) == 1

    _, _ = await senlin.accepted("DELETE", f"/nodes/{c['nodes'][0]}")
    c = await show(senlin, "web")
    assert (c["desired_capacity"], c["nodes"]) == (0, [])


async def test_a_busy_cluster_answers_409(senlin: Senlin) -> None:
    await senlin.cluster(size=1)
    first = await senlin.call("POST", "/clusters/web/actions", json={"scale_out": {"count": 5}})
    assert first.status_code == 202
    second = await senlin.call("POST", "/clusters/web/actions", json={"scale_out": {"count": 1}})
    if second.status_code == 202:  # the first finished already: nothing to race
        return
    senlin_error(second, 409, "ActionInProgress")


async def test_delete(senlin: Senlin) -> None:
    c = await senlin.cluster(size=2)
    answer, action_id = await senlin.accepted("DELETE", "/clusters/web")
    assert answer == {}
    action = (await senlin.ok("GET", f"/actions/{action_id}"))["action"]
    assert action["action"] == "CLUSTER_DELETE"
    senlin_error(await senlin.call("GET", f"/clusters/{c['id']}"), 404)
    assert (await senlin.ok("GET", "/clusters"))["clusters"] == []
    assert (await senlin.ok("GET", "/nodes"))["nodes"] == []


async def test_actions_and_events(senlin: Senlin) -> None:
    c = await senlin.cluster(size=2)
    actions = (await senlin.ok("GET", f"/actions?cluster_id={c['id']}"))["actions"]
    names = [a["action"] for a in actions]
    assert names.count("NODE_CREATE") == 2 and "CLUSTER_CREATE" in names
    assert "BARRIER" not in names
    node_action = next(a for a in actions if a["action"] == "NODE_CREATE")
    assert node_action["cause"] == "Derived Action"
    assert node_action["target"] in c["nodes"]
    assert set(node_action) >= {
        "id", "name", "action", "target", "status", "status_reason", "inputs", "outputs",
        "created_at", "start_time", "end_time", "depends_on", "depended_by", "owner",
        "interval", "timeout", "cause",
    }  # fmt: skip
    limited = (await senlin.ok("GET", f"/actions?cluster_id={c['id']}&limit=1"))["actions"]
    assert len(limited) == 1
    after = (await senlin.ok("GET", f"/actions?limit=1&marker={limited[0]['id']}"))["actions"]
    assert len(after) == 1 and after[0]["id"] != limited[0]["id"]

    events = (await senlin.ok("GET", f"/events?cluster_id={c['id']}"))["events"]
    assert events
    assert {"CLUSTER", "ACTION"} <= {e["otype"] for e in events}
    assert any(e["action"] == "CLUSTER_CREATE" for e in events)
    one = (await senlin.ok("GET", f"/events/{events[0]['id']}"))["event"]
    assert one == events[0]
