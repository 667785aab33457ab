"""`shoal.api.ui.topology.build`: zones -> hosts -> nodes, in a stable, natural order."""

from __future__ import annotations

from typing import Any

from shoal.api.ui.topology import Capacity, HostFacts, build


def node(name: str, host: str | None, zone: str | None = "az1", **kw: Any) -> dict[str, Any]:
    return {
        "id": f"id-{name}",
        "name": name,
        "cluster_id": kw.get("cluster_id", "c1"),
        "group": name.rsplit("-", 1)[0],
        "kind": "server",
        "status": kw.get("status", "ACTIVE"),
        "address": None,
        "host": host,
        "zone": zone,
    }


def facts(name: str, zone: str, failed: bool = False) -> HostFacts:
    return HostFacts(name, zone, failed, Capacity(16, 32768, 500, 1000), Capacity(0, 0, 0, 0))


def test_hosts_sort_naturally_within_their_zones_and_nodes_land_on_their_host() -> None:
    hosts = [facts("h10", "az2"), facts("h2", "az1"), facts("h1", "az1", failed=True)]
    topo = build(
        admin=True,
        hosts=hosts,
        nodes=[node("web-10", "h2"), node("web-2", "h2"), node("db-1", "h10", "az2")],
        cluster_names={"c1": "shop"},
    )
    assert [z.name for z in topo.zones] == ["az1", "az2"]
    assert [h.name for h in topo.zones[0].hosts] == ["h1", "h2"]
    h1, h2 = topo.zones[0].hosts
    assert h1.failed and h1.nodes == []
    assert [n.name for n in h2.nodes] == ["web-2", "web-10"]
    assert {n.cluster for n in h2.nodes} == {"shop"}
    assert topo.total_nodes == 3


def test_a_node_on_an_unlisted_host_brings_the_host_and_one_without_a_host_is_unplaced() -> None:
    topo = build(
        admin=False,
        hosts=[],
        nodes=[node("a-1", "az3-host1", "az3"), node("a-2", None, None, status="CREATING")],
        cluster_names={},
    )
    assert [(z.name, [h.name for h in z.hosts]) for z in topo.zones] == [("az3", ["az3-host1"])]
    host = topo.zones[0].hosts[0]
    assert host.capacity is None and host.used is None and not host.failed
    assert [n.name for n in topo.unplaced] == ["a-2"]
    assert topo.unplaced[0].cluster == "c1"[:8]
    shape = topo.as_dict()
    assert shape["total_nodes"] == 2 and shape["admin"] is False
    assert shape["zones"][0]["hosts"][0]["nodes"][0]["name"] == "a-1"


def test_counts_in_place_of_nodes_give_the_same_numbers_per_host() -> None:
    """The summarised view (counts per host and status, as SQL gives them) has the numbers the
    full view computes from the nodes: per host, unplaced, in total."""
    from collections import Counter

    from shoal.model.enums import NodeStatus
    from shoal.store.topology import HostCount

    listed = [
        node("web-1", "h1"),
        node("web-2", "h1", status="ERROR"),
        node("web-3", "h2", "az2"),
        node("db-1", "h3", "az2", status="CREATING"),
        node("db-2", None, None, status="INIT"),
        node("db-3", None, None, status="INIT"),
    ]
    hosts = [facts("h1", "az1"), facts("h2", "az2"), facts("idle", "az1")]
    full = build(admin=True, hosts=hosts, nodes=listed, cluster_names={})
    tally = Counter((n["host"], n["zone"], NodeStatus(n["status"])) for n in listed)
    counts = [HostCount(h, z, s, k) for (h, z, s), k in tally.items()]
    short = build(admin=True, hosts=hosts, nodes=None, cluster_names={}, counts=counts, drawn_max=5)

    def per_host(shape: dict[str, Any]) -> dict[str, Any]:
        return {
            h["name"]: (z["name"], h["node_count"], h["status_counts"])
            for z in shape["zones"]
            for h in z["hosts"]
        }

    a, b = full.as_dict(), short.as_dict()
    assert per_host(a) == per_host(b)
    assert per_host(a)["h1"] == ("az1", 2, {"ACTIVE": 1, "ERROR": 1})
    assert per_host(a)["idle"] == ("az1", 0, {})
    assert a["unplaced_counts"] == b["unplaced_counts"] == {"INIT": 2}
    assert a["total_nodes"] == b["total_nodes"] == 6
    assert (a["summarised"], b["summarised"]) == (False, True)
    assert b["unplaced"] == [] and all(not h["nodes"] for z in b["zones"] for h in z["hosts"])
