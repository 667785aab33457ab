"""Senlin standalone nodes: a Shoal node with no cluster, made and deleted by the engine's node
workers through the provider; node actions and operations; checks before lookups."""

from __future__ import annotations

from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error


async def test_standalone_node_lifecycle(senlin: Senlin) -> None:
    profile = await senlin.profile("p")
    body = {"node": {"name": "n1", "profile_id": profile, "metadata": {"k": 1}, "role": "db"}}
    created, _ = await senlin.accepted("POST", "/nodes", json=body, version="1.13")
    node = created["node"]
    assert (node["cluster_id"], node["profile_id"], node["role"]) == ("", profile, "db")
    shown = (await senlin.ok("GET", f"/nodes/{node['id']}", version="1.13"))["node"]
    assert shown["status"] == "ACTIVE" and shown["physical_id"]
    assert (shown["metadata"], shown["tainted"], shown["profile_name"]) == ({"k": 1}, False, "p")
    assert [n["id"] for n in (await senlin.ok("GET", "/nodes"))["nodes"]] == [node["id"]]
    assert len(await senlin.runtime.provider.list_resources(f"standalone-{node['project']}")) == 1

    await senlin.accepted("POST", f"/nodes/{node['id']}/actions", json={"check": {}})
    await senlin.accepted("POST", "/nodes/n1/ops", json={"reboot": {"type": "SOFT"}}, version="1.4")
    patch = {"node": {"name": "n2", "metadata": {"k": 2}, "tainted": True}}
    await senlin.accepted("PATCH", f"/nodes/{node['id']}", json=patch, version="1.13")
    shown = (await senlin.ok("GET", "/nodes/n2", version="1.13"))["node"]
    assert (shown["metadata"], shown["tainted"]) == ({"k": 2}, True)

    await senlin.accepted("DELETE", f"/nodes/{node['id']}")
    senlin_error(await senlin.call("GET", f"/nodes/{node['id']}"), 404)
    assert await senlin.runtime.provider.list_resources(f"standalone-{node['project']}") == []


async def test_node_requests_are_checked_first(senlin: Senlin) -> None:
    r = await senlin.call("POST", "/nodes", json={})
    assert senlin_error(r, 400)["message"] == "Request body missing 'node' key."
    r = await senlin.call("POST", "/nodes", json={"node": {"profile_id": "x"}})
    assert senlin_error(r, 400)["message"] == "'name' is a required property"
    r = await senlin.call("POST", "/nodes", json={"node": {"name": "a", "profile_id": "nope"}})
    assert senlin_error(r, 400)["message"] == "The specified profile 'nope' could not be found."
    r = await senlin.call("POST", "/nodes/nope/actions", json={})
    assert senlin_error(r, 400)["message"] == "No action specified."
    r = await senlin.call("POST", "/nodes/nope/actions", json={"check": {}})
    senlin_error(r, 404)
    r = await senlin.call("POST", "/nodes/nope/ops", json={"reboot": {}}, version="1.3")
    assert senlin_error(r, 400)["message"] == "API version '1.3' is not supported on this method."
    profile = await senlin.profile("p")
    body = {"node": {"name": "n1", "profile_id": profile}}
    await senlin.accepted("POST", "/nodes", json=body)
    r = await senlin.call(
        "POST", "/nodes/n1/ops", json={"reboot": {"type": "Unknown"}}, version="1.4"
    )
    assert senlin_error(r, 400)["message"] == (
        "'Unknown' must be one of the allowed values: SOFT, HARD."
    )
    await senlin.accepted("POST", "/nodes", json={"node": {"name": "n1", "profile_id": profile}})
    r = await senlin.call("GET", "/nodes/n1")
    assert (
        "Multiple results found matching the query criteria 'n1'" in senlin_error(r, 400)["message"]
    )


async def test_repeated_cluster_names_and_collect(senlin: Senlin) -> None:
    first = await senlin.cluster("c-01", size=1)
    profile = first["profile_id"]
    body = {"cluster": {"name": "c-01", "profile_id": profile, "desired_capacity": 1}}
    created, _ = await senlin.accepted("POST", "/clusters", json=body)
    assert created["cluster"]["name"] == "c-01"
    r = await senlin.call("GET", "/clusters/c-01")
    assert senlin_error(r, 400)["message"] == (
        "Multiple results found matching the query criteria 'c-01'. Please be more specific."
    )
    got = await senlin.ok("GET", f"/clusters/{first['id']}/attrs/details.status", version="1.2")
    assert got["cluster_attributes"] == [{"id": first["nodes"][0], "value": "ACTIVE"}]
    r = await senlin.call("GET", f"/clusters/{first['id']}/attrs/name", version="1.1")
    assert senlin_error(r, 400)["message"] == "API version '1.1' is not supported on this method."
    services = await senlin.ok("GET", "/services", version="1.7")
    assert services["services"][0]["binary"] == "shoal-engine"


async def test_node_created_into_a_cluster(senlin: Senlin) -> None:
    cluster = await senlin.cluster("c", size=0)
    body = {
        "node": {
            "name": "N01",
            "profile_id": cluster["profile_id"],
            "cluster_id": cluster["id"],
            "metadata": {"k1": "v1"},
            "role": "member",
        }
    }
    created, _ = await senlin.accepted("POST", "/nodes", json=body)
    node = created["node"]
    assert (node["name"], node["cluster_id"], node["role"]) == ("N01", cluster["id"], "member")
    assert node["metadata"] == {"k1": "v1"}
    got = await senlin.ok("GET", f"/clusters/{cluster['id']}/attrs/name", version="1.2")
    assert got["cluster_attributes"] == [{"id": node["id"], "value": "N01"}]
    r = await senlin.call("DELETE", f"/nodes/{node['id']}")
    assert r.status_code == 202 and not r.content
    other = dict(body["node"], cluster_id="nope", name="N02")
    r = await senlin.call("POST", "/nodes", json={"node": other})
    assert senlin_error(r, 400)["message"] == "The specified cluster 'nope' could not be found."


async def test_actions_show_their_dependencies(senlin: Senlin) -> None:
    await senlin.cluster("deps", size=2)
    actions = (await senlin.ok("GET", "/actions"))["actions"]
    create = next(a for a in actions if a["action"] == "CLUSTER_CREATE")
    steps = [a for a in actions if a["id"] in create["depends_on"]]
    assert len(steps) == 2 and all(a["action"] == "NODE_CREATE" for a in steps)
    assert all(create["id"] in a["depended_by"] for a in steps)
    shown = (await senlin.ok("GET", f"/actions/{create['id']}"))["action"]
    assert shown["depends_on"] == create["depends_on"]
