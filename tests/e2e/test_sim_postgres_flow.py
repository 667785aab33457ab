"""The same flow on the sim provider with PostgreSQL as the store: statuses and counts."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import StartServer
from tests.e2e.flows import (
    NATIVE,
    WORKERS,
    assert_all_active,
    check_address,
    check_vcluster_placement,
    create_vcluster,
    get_cluster,
    group_nodes,
    node_list,
    scale,
)
from tests.support.server import wait_ok


def counts(cluster: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in cluster["nodes"]:
        out[n["group"]] = out.get(n["group"], 0) + 1
    return out


def test_sim_postgres_flow(pg_url: str, start_server: StartServer) -> None:
    server = start_server(provider="sim", database_url=pg_url)
    with server.client() as client:
        assert client.get("/v1").json()["provider"] == "sim"
        vc = create_vcluster(client)
        inst = check_vcluster_placement(vc)
        for i in inst.values():
            if i["type"] == "server":
                check_address(i, 10)

        r = client.post("/v1/clusters", json=NATIVE)
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert counts(c) == {"web": 2, "db": 2}
        assert c["desired_capacity"] == 3
        for n in c["nodes"]:
            if n["kind"] == "server":
                check_address(n, 10)

        scale(client, cid, "scale_out", 2, "web")
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert counts(c) == {"web": 4, "db": 2}
        assert len({n["host"] for n in group_nodes(c, "web")}) == 4
        web_group = client.get(f"/v1/clusters/{cid}/nodegroups/web").json()["nodegroup"]
        assert (web_group["count"], web_group["nodes"]) == (4, 4)

        scale(client, cid, "scale_in", 3, "web")
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert counts(c) == {"web": 1, "db": 2}
        assert [n["name"] for n in group_nodes(c, "web")] == ["web-1"]  # newest go first

        r = client.post(f"/v1/clusters/{cid}/nodegroups", json=WORKERS)
        wait_ok(client, r)
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert counts(c) == {"web": 1, "db": 2, "worker": 2}
        nodes = node_list(client, cid)
        assert sorted(n["name"] for n in nodes) == sorted(n["name"] for n in c["nodes"])
        assert all(n["status"] == "ACTIVE" and n["physical_id"] for n in nodes), nodes

        actions = client.get("/v1/actions", params={"cluster": cid}).json()["actions"]
        assert [a["action"] for a in actions] == [
            "CLUSTER_CREATE",
            "CLUSTER_SCALE_OUT",
            "CLUSTER_SCALE_IN",
            "NODEGROUP_CREATE",
        ]
        assert all(a["status"] == "SUCCEEDED" for a in actions), actions

        wait_ok(client, client.delete(f"/v1/clusters/{cid}"))
        assert client.get(f"/v1/clusters/{cid}").status_code == 404
        assert client.get("/v1/nodes", params={"cluster": cid}).status_code == 404
        wait_ok(client, client.delete(f"/v2/admin/vclusters/{vc['id']}"))
        assert client.get("/v1/clusters").json()["clusters"] == []
        assert client.get("/v1/nodes").json()["nodes"] == []
