"""Senlin policies become parts of the cluster's document, where Shoal's engine acts on them."""

from __future__ import annotations

from typing import Any

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error


def spec(kind: str, version: str = "1.0", **properties: Any) -> dict[str, Any]:
    return {"type": f"senlin.policy.{kind}", "version": version, "properties": properties}


async def policy(senlin: Senlin, name: str, body: dict[str, Any]) -> str:
    created = await senlin.ok(
        "POST", "/policies", 201, json={"policy": {"name": name, "spec": body}}
    )
    policy_id: str = created["policy"]["id"]
    return policy_id


async def document(senlin: Senlin, cluster: str) -> dict[str, Any]:
    r = await senlin.http.get(f"/v1/clusters/{cluster}", headers={"X-Auth-Token": senlin.token})
    assert r.status_code == 200, r.text
    doc: dict[str, Any] = r.json()["cluster"]["document"]
    return doc


async def act(senlin: Senlin, cluster: str, body: dict[str, Any]) -> str:
    _, action_id = await senlin.accepted("POST", f"/clusters/{cluster}/actions", json=body)
    return action_id


async def test_policy_types_and_crud(senlin: Senlin) -> None:
    types = (await senlin.ok("GET", "/policy-types"))["policy_types"]
    assert {"name": "senlin.policy.deletion-1.1"} in types
    shown = (await senlin.ok("GET", "/policy-types/senlin.policy.scaling-1.0"))["policy_type"]
    assert shown["schema"]["event"]["required"] is True

    body = spec("deletion", "1.1", criteria="OLDEST_FIRST")
    pid = await policy(senlin, "dp", body)
    got = (await senlin.ok("GET", "/policies/dp"))["policy"]
    assert (got["id"], got["type"], got["spec"]) == (pid, "senlin.policy.deletion-1.1", body)
    renamed = await senlin.ok("PATCH", f"/policies/{pid}", json={"policy": {"name": "dp2"}})
    assert renamed["policy"]["name"] == "dp2"
    assert [p["name"] for p in (await senlin.ok("GET", "/policies"))["policies"]] == ["dp2"]
    assert (await senlin.ok("GET", "/profiles"))["profiles"] == [], "policies are not profiles"
    await senlin.ok("POST", "/policies/validate", json={"policy": {"spec": body}})
    bad = spec("deletion", criteria="BIGGEST_FIRST")
    r = await senlin.call("POST", "/policies", json={"policy": {"name": "x", "spec": bad}})
    assert senlin_error(r, 400, "BadRequest")["message"].startswith("Failed in creating policy x")
    r = await senlin.call("POST", "/policies", json={"policy": {"name": "x", "spec": spec("lb")}})
    senlin_error(r, 404)
    await senlin.ok("DELETE", f"/policies/{pid}", 204)
    assert (await senlin.ok("GET", "/policies"))["policies"] == []


async def test_attach_and_detach_write_the_document(senlin: Senlin) -> None:
    await senlin.cluster(size=0)
    deletion = await policy(senlin, "dp", spec("deletion", criteria="OLDEST_FIRST"))
    zones = await policy(senlin, "zp", spec("zone_placement", zones=[{"name": "az2"}]))
    batch = await policy(senlin, "bp", spec("batch", max_batch_size=2, pause_time=5))
    for pid in (deletion, zones, batch):
        action_id = await act(senlin, "web", {"policy_attach": {"policy_id": pid}})
    action = (await senlin.ok("GET", f"/actions/{action_id}"))["action"]
    assert action["action"] == "CLUSTER_ATTACH_POLICY"

    group = (await document(senlin, "web"))["node_groups"][0]
    assert group["deletion"] == {"victims": "oldest_first"}
    assert group["zones"] == ["az2"]
    assert group["update"] == {"max_unavailable": 2, "pause_s": 5}
    await act(senlin, "web", {"scale_out": {"count": 3}})
    nodes = (await senlin.ok("GET", "/nodes?cluster_id=web"))["nodes"]
    assert [n["data"]["zone"] for n in nodes] == ["az2"] * 3

    cluster = (await senlin.ok("GET", "/clusters/web"))["cluster"]
    assert sorted(cluster["policies"]) == sorted([deletion, zones, batch])
    bindings = (await senlin.ok("GET", "/clusters/web/policies"))["cluster_policies"]
    assert {b["policy_name"] for b in bindings} == {"dp", "zp", "bp"}
    one = (await senlin.ok("GET", "/clusters/web/policies/dp"))["cluster_policy"]
    assert (one["policy_type"], one["enabled"]) == ("senlin.policy.deletion-1.0", True)

    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"policy_attach": {"policy_id": "dp"}}
    )
    assert "already attached" in senlin_error(r, 400)["message"]
    other = await policy(senlin, "dp-2", spec("deletion"))
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"policy_attach": {"policy_id": other}}
    )
    assert "Only one instance" in senlin_error(r, 400)["message"]
    senlin_error(await senlin.call("DELETE", "/policies/dp"), 409, "ResourceInUse")

    await act(senlin, "web", {"policy_update": {"policy_id": "dp", "enabled": False}})
    assert "deletion" not in (await document(senlin, "web"))["node_groups"][0]
    await act(senlin, "web", {"policy_detach": {"policy_id": zones}})
    group = (await document(senlin, "web"))["node_groups"][0]
    assert "zones" not in group and group["update"]["max_unavailable"] == 2
    elsewhere = await policy(senlin, "az1-only", spec("zone_placement", zones=[{"name": "az1"}]))
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"policy_attach": {"policy_id": elsewhere}}
    )
    assert "already sits on host" in senlin_error(r, 409)["message"], "nodes are not moved"
    r = await senlin.call(
        "POST", "/clusters/web/actions", json={"policy_detach": {"policy_id": zones}}
    )
    assert "is not attached to the specified cluster" in senlin_error(r, 400)["message"]


async def test_a_scaling_policy_sizes_scale_out_without_a_count(senlin: Senlin) -> None:
    await senlin.cluster(size=1)
    out = spec(
        "scaling", event="CLUSTER_SCALE_OUT", adjustment={"type": "CHANGE_IN_CAPACITY", "number": 3}
    )
    pid = await policy(senlin, "grow", out)
    await act(senlin, "web", {"policy_attach": {"policy_id": pid}})
    group = (await document(senlin, "web"))["node_groups"][0]
    assert group["scaling"]["number"] == 3
    await act(senlin, "web", {"scale_out": {}})
    assert (await senlin.ok("GET", "/clusters/web"))["cluster"]["desired_capacity"] == 4
    await act(senlin, "web", {"scale_in": {}})
    assert (await senlin.ok("GET", "/clusters/web"))["cluster"]["desired_capacity"] == 3


async def test_affinity_and_health_policies(senlin: Senlin) -> None:
    await senlin.cluster(size=2)
    anti = await policy(
        senlin, "apart", spec("affinity", servergroup={"policies": "anti-affinity"})
    )
    health = await policy(
        senlin,
        "hp",
        spec(
            "health",
            detection={"type": "NODE_STATUS_POLLING", "options": {"interval": 30}},
            recovery={"actions": [{"name": "REBUILD"}]},
        ),
    )
    await act(senlin, "web", {"policy_attach": {"policy_id": anti}})
    await act(senlin, "web", {"policy_attach": {"policy_id": health}})
    doc = await document(senlin, "web")
    assert doc["groupings"] == [
        {"name": f"senlin-{anti[:8]}", "members": ["web"], "rule": "anti-affinity", "scope": "host"}
    ]
    assert doc["node_groups"][0]["health"] == {"interval_s": 30, "recovery": "rebuild"}
    hosts = [n["data"]["host"] for n in (await senlin.ok("GET", "/nodes?cluster_id=web"))["nodes"]]
    assert len(set(hosts)) == len(hosts)
    await act(senlin, "web", {"policy_detach": {"policy_id": anti}})
    assert "groupings" not in await document(senlin, "web")
