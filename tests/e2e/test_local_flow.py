"""The embedded default end to end: local provider, SQLite, real node processes on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

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
    scale,
)
from tests.support.server import eventually, free_port, pid_gone, wait_ok


def ask_node(address: str) -> dict[str, Any]:
    r = httpx.get(f"http://{address}/", timeout=10.0, trust_env=False)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def check_servers(cluster_name: str, nodes: list[dict[str, Any]], pids: dict[str, int]) -> None:
    """Every server node answers on its address with its own name; remember its pid."""
    for n in nodes:
        if n["kind"] != "server":
            continue
        check_address(n, 127)
        me = ask_node(n["address"])
        assert me["name"] == f"{cluster_name}-{n['name']}", me
        assert me["host"] == n["host"]
        pids[n["name"]] = me["pid"]


def all_gone(pids: dict[str, int]) -> list[str]:
    return [name for name, pid in pids.items() if not pid_gone(pid)]


def test_local_vcluster_and_native_cluster(start_server: StartServer) -> None:
    server = start_server(provider="local", provider_options={"port": free_port()})
    local = server.home / "local"
    pids: dict[str, int] = {}
    with server.client() as client:
        # -- the seed blueprint, through the Nova-style endpoint ----------------------------
        vc = create_vcluster(client)
        inst = check_vcluster_placement(vc)
        servers = [i for i in inst.values() if i["type"] == "server"]
        for s in servers:
            check_address(s, 127)
            me = ask_node(s["address"])
            assert me["name"] == f"new-virtual-cluster-{s['name']}", me
            pids[f"vc/{s['name']}"] = me["pid"]
            # each server lists the one volume that shares its host (groupings 1 and 2)
            assert len(me["volumes"]) == 1, me
            volume = "db-vol-1" if s["name"] == "db-server-1" else "db-vol-2"
            assert me["volumes"][0]["name"].endswith(volume), me
            assert me["volumes"][0]["size_gb"] == 20, me
        s1, s2 = (inst[n]["address"].split(".")[1:3] for n in ("db-server-1", "db-server-2"))
        assert s1 != s2, "anti-affine servers share a host's addresses"

        # -- a native cluster: create, scale out, scale in, add a node group ----------------
        r = client.post("/v1/clusters", json=NATIVE)
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert len(group_nodes(c, "web")) == 2
        assert len(group_nodes(c, "db")) == 2  # the unit: a server and its volume
        check_servers("e2e-native", c["nodes"], pids)
        db_server = next(n for n in group_nodes(c, "db") if n["kind"] == "server")
        db_volume = next(n for n in group_nodes(c, "db") if n["kind"] == "volume")
        assert db_server["host"] == db_volume["host"]
        db_me = ask_node(db_server["address"])
        assert [v["name"] for v in db_me["volumes"]] == [f"e2e-native-{db_volume['name']}"]

        scale(client, cid, "scale_out", 2, "web")
        c = get_cluster(client, cid)
        assert_all_active(c)
        web = group_nodes(c, "web")
        assert len(web) == 4
        assert len({n["host"] for n in web}) == 4, "web-apart: one web node per host"
        check_servers("e2e-native", c["nodes"], pids)

        before = {n["name"] for n in web}
        scale(client, cid, "scale_in", 1, "web")
        c = get_cluster(client, cid)
        assert_all_active(c)
        web = group_nodes(c, "web")
        assert len(web) == 3
        (removed,) = before - {n["name"] for n in web}
        assert pid_gone(pids[removed]), f"{removed} still runs after scale-in"

        r = client.post(f"/v1/clusters/{cid}/nodegroups", json=WORKERS)
        wait_ok(client, r)
        c = get_cluster(client, cid)
        assert_all_active(c)
        assert len(group_nodes(c, "worker")) == 2
        assert {
            g["name"] for g in client.get(f"/v1/clusters/{cid}/nodegroups").json()["nodegroups"]
        } == {"web", "db", "worker"}
        check_servers("e2e-native", c["nodes"], pids)

        # -- delete both: no process, no workdir, no volume left ---------------------------
        wait_ok(client, client.delete(f"/v1/clusters/{cid}"))
        assert client.get(f"/v1/clusters/{cid}").status_code == 404
        assert all_gone({k: v for k, v in pids.items() if not k.startswith("vc/")}) == []

        r = client.delete(f"/v2/admin/vclusters/{vc['id']}")
        wait_ok(client, r)
        assert client.get(f"/v2/admin/vclusters/{vc['id']}").status_code == 404
        assert client.get("/v2/admin/vclusters").json()["vclusters"] == []

    assert len(pids) == 2 + 4 + 1 + 2  # vcluster servers, web (all ever), db server, workers
    eventually(lambda: all_gone(pids) == [], timeout_s=30)
    assert leftovers(local) == []


def leftovers(local: Path) -> list[str]:
    """Resource records, server workdirs and volume directories still under the provider."""
    found = []
    for sub, pattern in (("resources", "*.json"), ("nodes", "*"), ("volumes", "*")):
        found += [str(p.relative_to(local)) for p in (local / sub).glob(pattern)]
    return sorted(found)
