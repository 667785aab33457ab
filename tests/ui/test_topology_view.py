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
