"""The dashboard's server side, in process over a real store (SQLite and PostgreSQL): its page
and assets with a policy against outside requests, the topology scoped to the caller, and the
plan preview that answers as `POST /v1/clusters` would, writing nothing."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from shoal.store.database import Database
from tests.api.conftest import Api, served
from tests.ui.docs import BROKEN, DEMO, TOO_SPREAD, one_group, text

REPO = Path(__file__).resolve().parents[2]
TOPOLOGY = "/ui/api/topology"
ASSET_REF = re.compile(r'(?:src|href)="(/ui/static/[^"]+)"')


def error_of(body: dict[str, object]) -> dict[str, object]:
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict)
    assert set(error) == {"code", "title", "message", "details"}, error
    return error


async def test_page_and_assets_are_served_with_no_outside_requests(api: Api) -> None:
    page = await api.http.get("/ui")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "connect-src 'self'" in csp
    refs = ASSET_REF.findall(page.text)
    assert len(refs) >= 5, refs
    for ref in refs:
        r = await api.http.get(ref)
        assert r.status_code == 200, ref
        assert "content-security-policy" in r.headers
    # Nothing shipped names another origin: no CDN, no web font, no analytics.
    static = resources.files("shoal.api.ui").joinpath("static")
    for item in static.iterdir():
        assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/", item.read_text()), item.name
    assert (await api.http.get("/ui/")).headers["location"] == "/ui"


async def test_unknown_assets_are_404_in_the_error_shape(api: Api) -> None:
    for path in ("/ui/static/nope.js", "/ui/static/core.exe", "/ui/static/..%2Fpages.py"):
        r = await api.http.get(path)
        assert r.status_code == 404, path
        error_of(r.json())


async def test_ui_routes_stay_out_of_the_openapi_schema(api: Api) -> None:
    paths = (await api.http.get("/openapi.json")).json()["paths"]
    assert "/v1/clusters" in paths
    assert not [p for p in paths if p.startswith("/ui")]


async def test_topology_needs_a_token(api: Api) -> None:
    r = await api.http.get("/ui/api/topology")
    assert r.status_code == 401
    assert error_of(r.json())["code"] == "unauthorized"
    r = await api.http.post("/ui/api/plan", content=text(DEMO))
    assert r.status_code == 401


async def test_admin_topology_shows_every_host_with_capacity_used(api: Api) -> None:
    cluster = await api.up(text(DEMO))
    nodes = await api.nodes(cluster["id"])
    r = await api.call("GET", "/ui/api/topology")
    assert r.status_code == 200, r.text
    topo = r.json()
    assert topo["admin"] is True
    assert [z["name"] for z in topo["zones"]] == ["az1", "az2"]
    hosts = {h["name"]: h for z in topo["zones"] for h in z["hosts"]}
    assert len(hosts) == 6 and all(not h["failed"] for h in hosts.values())
    drawn = {(n["name"], h["name"]) for h in hosts.values() for n in h["nodes"]}
    assert drawn == {(n["name"], n["host"]) for n in nodes}
    assert topo["total_nodes"] == 5
    for h in hosts.values():
        # m1.tiny is 1 vCPU and 512 MB; nothing else runs here.
        assert h["used"]["vcpus"] == len(h["nodes"])
        assert h["used"]["ram_mb"] == 512 * len(h["nodes"])
        assert h["capacity"]["vcpus"] == 16
    cache_hosts = {n["host"] for n in nodes if n["group"] == "cache"}
    web_hosts = [n["host"] for n in nodes if n["group"] == "web"]
    assert len(cache_hosts) == 1 and len(set(web_hosts)) == 3


async def test_a_tenant_sees_only_its_own_nodes_and_no_host_capacity(api: Api) -> None:
    await api.up(text(DEMO))
    r = await api.call("POST", "/v1/projects", json={"name": "team-a"})
    assert r.status_code == 201, r.text
    tenant = Api(api.http, api.runtime, api.clock, r.json()["token"])
    mine = await tenant.up(text(one_group("mine", 2)))
    topo = (await tenant.call("GET", "/ui/api/topology")).json()
    assert topo["admin"] is False
    hosts = [h for z in topo["zones"] for h in z["hosts"]]
    assert {n["cluster"] for h in hosts for n in h["nodes"]} == {"mine"}
    assert topo["total_nodes"] == 2
    assert all(h["capacity"] is None and h["used"] is None for h in hosts)
    assert len(hosts) <= 2  # only the hosts its nodes are on
    # Another project's cluster is not found, as in /v1.
    others = (await api.call("GET", "/v1/clusters")).json()["clusters"]
    demo = next(c for c in others if c["name"] == "ui-demo")
    r = await tenant.call("GET", "/ui/api/topology", params={"cluster": demo["id"]})
    assert r.status_code == 404
    assert error_of(r.json())["code"] == "not_found"
    one = (await tenant.call("GET", "/ui/api/topology", params={"cluster": mine["id"]})).json()
    assert one["total_nodes"] == 2


async def test_above_the_drawn_maximum_the_topology_counts_in_sql_the_same_numbers(
    api: Api, db: Database, tmp_path: Path
) -> None:
    """Issue 23: above `topology_max_drawn` nodes the topology loads no node and counts per
    host and status in SQL; its numbers are those of the full view, for an admin, one cluster
    and a tenant. Above `topology_max_hosts` hosts as well, each zone is its hosts' totals."""
    demo = await api.up(text(DEMO))
    r = await api.call("POST", "/v1/projects", json={"name": "team-a"})
    tenant = Api(api.http, api.runtime, api.clock, r.json()["token"])
    await tenant.up(text(one_group("mine", 3)))

    def numbers(shape: dict[str, object]) -> tuple[object, ...]:
        zones = shape["zones"]
        assert isinstance(zones, list)
        hosts = {
            h["name"]: (z["name"], h["node_count"], h["status_counts"])
            for z in zones
            for h in z["hosts"]
        }
        return hosts, shape["unplaced_counts"], shape["total_nodes"]

    asks = [(api, {}), (api, {"cluster": demo["id"]}), (tenant, {})]

    async def topologies(**limits: int) -> list[dict[str, Any]]:
        """The three views from a server over the same store with these limits."""
        async with served(db, tmp_path / f"views-{len(limits)}", api.token, **limits) as other:
            return [
                (await replace(who, http=other.http).call("GET", TOPOLOGY, params=q)).json()
                for who, q in asks
            ]

    full = await topologies()
    short = await topologies(topology_max_drawn=2)
    assert [numbers(s) for s in short] == [numbers(f) for f in full]
    assert [f["total_nodes"] for f in full] == [8, 5, 3]
    assert [f["summarised"] for f in full] == [False] * 3
    assert [s["summarised"] for s in short] == [True] * 3
    assert all(not h["nodes"] for s in short for z in s["zones"] for h in z["hosts"])

    def per_zone(shape: dict[str, Any]) -> dict[str, tuple[object, ...]]:
        out = {}
        for z in shape["zones"]:
            hosts = z["hosts"]
            counts: Counter[str] = Counter()
            for h in hosts:
                counts.update(h["status_counts"])
            vcpus = [h["capacity"]["vcpus"] for h in hosts if h["capacity"]]
            used = [h["used"]["vcpus"] for h in hosts if h["used"]]
            out[z["name"]] = (
                len(hosts),
                sum(h["failed"] for h in hosts),
                sum(vcpus) if vcpus else None,
                sum(used) if used else None,
                sum(counts.values()),
                dict(sorted(counts.items())),
            )
        return out

    zoned = await topologies(topology_max_drawn=2, topology_max_hosts=1)
    assert [z["hosts_summarised"] for z in zoned] == [True] * 3
    assert all(not z["hosts"] for shape in zoned for z in shape["zones"])
    got = [
        {
            z["name"]: (
                (s := z["summary"])["host_count"],
                s["failed_hosts"],
                s["capacity"] and s["capacity"]["vcpus"],
                s["used"] and s["used"]["vcpus"],
                s["node_count"],
                s["status_counts"],
            )
            for z in shape["zones"]
        }
        for shape in zoned
    ]
    assert got == [per_zone(s) for s in short]
    assert [(z["total_nodes"], z["unplaced_counts"]) for z in zoned] == [
        (s["total_nodes"], s["unplaced_counts"]) for s in short
    ]
    assert [s["hosts_summarised"] for s in short] == [False] * 3


async def test_plan_of_a_new_document_places_it_and_writes_nothing(api: Api) -> None:
    r = await api.call("POST", "/ui/api/plan", content=text(DEMO))
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    assert plan["mode"] == "create" and plan["cluster"] == "ui-demo"
    assert plan["format"] == "native" and plan["cluster_id"] is None
    placed = {p["node"]: p for p in plan["placement"]}
    assert set(placed) == {"web-1", "web-2", "web-3", "cache-1", "cache-2"}
    assert len({placed[f"web-{i}"]["host"] for i in (1, 2, 3)}) == 3
    assert placed["cache-1"]["host"] == placed["cache-2"]["host"]
    assert {c["grouping"]: c["satisfied"] for c in plan["checks"]} == {
        "web-apart": True,
        "cache-pair": True,
    }
    assert (await api.call("GET", "/v1/clusters")).json()["clusters"] == []


async def test_plan_of_an_unplaceable_document_gives_the_solvers_reasons(api: Api) -> None:
    r = await api.call("POST", "/ui/api/plan", content=text(TOO_SPREAD))
    assert r.status_code == 409
    error = error_of(r.json())
    assert error["code"] == "unplaceable"
    assert isinstance(error["details"], list) and error["details"]
    # The same answer the apply itself gives.
    applied = await api.call("POST", "/v1/clusters", content=text(TOO_SPREAD))
    assert applied.status_code == 409
    assert error_of(applied.json())["details"] == error["details"]


async def test_plan_of_a_broken_document_names_every_problem(api: Api) -> None:
    r = await api.call("POST", "/ui/api/plan", content=text(BROKEN))
    assert r.status_code == 422
    error = error_of(r.json())
    assert error["code"] == "invalid_document"
    details = error["details"]
    assert isinstance(details, list)
    paths = {d["path"] for d in details}
    assert "/node_groups/0/count" in paths
    assert any(p.startswith("/node_groups/0/profile") for p in paths), paths
    r = await api.call("POST", "/ui/api/plan", content=b"{not json")
    assert r.status_code == 422


async def test_plan_of_an_existing_clusters_document_previews_the_change(api: Api) -> None:
    cluster = await api.up(text(DEMO))
    bigger = dict(DEMO, node_groups=[dict(DEMO["node_groups"][0], count=4), DEMO["node_groups"][1]])
    r = await api.call("POST", "/ui/api/plan", content=text(bigger))
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    assert plan["mode"] == "update" and plan["cluster_id"] == cluster["id"]
    assert [c["node"] for c in plan["changes"]["create"]] == ["web-4"]
    assert plan["changes"]["delete"] == []
    # A tenant's document with the same name is a new cluster of its own, never a change to
    # another project's.
    r = await api.call("POST", "/v1/projects", json={"name": "team-b"})
    tenant = Api(api.http, api.runtime, api.clock, r.json()["token"])
    theirs = (await tenant.call("POST", "/ui/api/plan", content=text(DEMO))).json()["plan"]
    assert theirs["mode"] == "create" and theirs["cluster_id"] is None


async def test_keystone_sign_in_is_not_offered_with_shoal_tokens(api: Api) -> None:
    assert (await api.http.get("/ui/api/auth")).json() == {"mode": "shoal"}
    creds = {"username": "u", "password": "p", "project": "x"}
    r = await api.http.post("/ui/api/login", json=creds)
    assert r.status_code == 404
    error_of(r.json())
    r = await api.http.post("/ui/api/login", json={"username": "", "password": "p"})
    assert r.status_code == 422
    paths = {d["path"] for d in error_of(r.json())["details"]}  # a pointer per problem
    assert {"/username", "/project"} <= paths, paths


async def test_plan_reads_the_seed_vcluster_format_too(api: Api) -> None:
    seed = (REPO / "examples" / "vcluster-seed.json").read_bytes()
    r = await api.call("POST", "/ui/api/plan", content=seed)
    assert r.status_code == 200, r.text
    plan = r.json()["plan"]
    assert plan["format"] == "vcluster" and plan["mode"] == "create"
    assert plan["placement"] and all(p["host"] and p["zone"] for p in plan["placement"])
