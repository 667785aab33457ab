"""Documents and HTTP steps the end-to-end flows share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from shoal.model.catalogs import default_inventory
from shoal.providers.addressing import host_coordinates
from tests.support.server import wait_ok

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "vcluster-seed.json"
"""The seed blueprint's document with real sizes and refs (flavor "2" and "m1.small", cirros)."""

TINY = {"type": "server", "flavor": "m1.tiny", "image": "cirros"}

MANAGED = {"SHOAL_MANAGE_TICK_S": "0.2", "SHOAL_RECONCILE_INTERVAL_S": "1"}
"""Server settings for flows that watch the manager repair things: tick and reconcile fast."""

NATIVE: dict[str, Any] = {
    "name": "e2e-native",
    "profiles": {"small": TINY, "disk": {"type": "volume", "size": 1}},
    "node_groups": [
        {"name": "web", "profile": "small", "count": 2, "min": 1, "max": 5},
        {"name": "db", "unit": {"server": "small", "data": "disk"}, "count": 1, "min": 1, "max": 2},
    ],
    "groupings": [
        {"name": "web-apart", "members": ["web"], "rule": "anti-affinity", "scope": "host"},
    ],
}

WORKERS: dict[str, Any] = {"name": "worker", "profile": TINY, "count": 2, "min": 0, "max": 4}

COORDINATES = host_coordinates(default_inventory())
"""Host name -> (zone number, host number): the middle octets of a node's address."""


def get_cluster(client: httpx.Client, ref: str) -> dict[str, Any]:
    """The cluster's view with its first page of nodes (these clusters fit in one)."""
    r = client.get(f"/v1/clusters/{ref}", params={"nodes": 1000})
    assert r.status_code == 200, r.text
    cluster: dict[str, Any] = r.json()["cluster"]
    return cluster


def node_list(client: httpx.Client, ref: str) -> list[dict[str, Any]]:
    """Every node of the cluster, in full (with its provider's id)."""
    r = client.get("/v1/nodes", params={"cluster": ref})
    assert r.status_code == 200, r.text
    nodes: list[dict[str, Any]] = r.json()["nodes"]
    return nodes


def group_nodes(cluster: dict[str, Any], group: str) -> list[dict[str, Any]]:
    return [n for n in cluster["nodes"] if n["group"] == group]


def assert_all_active(cluster: dict[str, Any]) -> None:
    assert cluster["status"] == "ACTIVE", cluster
    bad = [(n["name"], n["status"]) for n in cluster["nodes"] if n["status"] != "ACTIVE"]
    assert not bad, bad


def create_vcluster(client: httpx.Client) -> dict[str, Any]:
    """POST the seed document as the admin tenant; wait; the vcluster as GET answers it."""
    r = client.post("/v2/admin/vclusters", content=SEED.read_bytes())
    assert r.status_code == 202, r.text
    assert r.headers["Location"].startswith("/v1/actions/")
    vcluster_id = r.json()["vcluster"]["id"]
    wait_ok(client, r)
    got = client.get(f"/v2/admin/vclusters/{vcluster_id}")
    assert got.status_code == 200, got.text
    vc: dict[str, Any] = got.json()["vcluster"]
    assert vc["id"] == vcluster_id
    assert vc["status"] == "ACTIVE", vc
    listed = client.get("/v2/admin/vclusters").json()["vclusters"]
    assert [v["id"] for v in listed] == [vcluster_id]
    return vc


def check_vcluster_placement(vc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The seed's four groupings hold; the instances by name."""
    inst = {i["name"]: i for i in vc["instances"]}
    assert set(inst) == {"db-server-1", "db-vol-1", "db-server-2", "db-vol-2"}
    assert all(i["status"] == "ACTIVE" for i in inst.values()), inst
    assert {g["name"] for g in vc["groupings"]} == {"group-1", "group-2", "group-3", "group-4"}
    # group-1, group-2: each server shares a host with its volume
    assert inst["db-server-1"]["host"] == inst["db-vol-1"]["host"]
    assert inst["db-server-2"]["host"] == inst["db-vol-2"]["host"]
    # group-3, group-4: servers apart, volumes apart
    assert inst["db-server-1"]["host"] != inst["db-server-2"]["host"]
    assert inst["db-vol-1"]["host"] != inst["db-vol-2"]["host"]
    return inst


def check_address(node: dict[str, Any], first_octet: int) -> None:
    """The address reads where the node landed: P.zone.host.slot."""
    ip = node["address"].rsplit(":", 1)[0]
    octets = [int(o) for o in ip.split(".")]
    zone, host = COORDINATES[node["host"]]
    assert octets[:3] == [first_octet, zone, host], (node["name"], node["host"], ip)


def scale(client: httpx.Client, ref: str, op: str, count: int, group: str) -> Any:
    r = client.post(f"/v1/clusters/{ref}/actions", json={op: {"count": count, "nodegroup": group}})
    return wait_ok(client, r)
