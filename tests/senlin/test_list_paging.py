"""Action and event lists page in SQL: every page of a walk by `marker` and `limit` is the next
slice of the whole list, in the order `sort` asks for, with filters applied before paging.
(Event ids are numbers and Senlin's marker is a UUID, so events page by `limit` only.)"""

from __future__ import annotations

from typing import Any

import pytest

from shoal.api.senlin import routes_work as senlin_routes_work
from shoal.service.senlin import reads as senlin_reads
from tests.senlin.conftest import Senlin
from tests.senlin.test_errors import senlin_error
from tests.senlin.test_policies import policy, spec


async def _walk(senlin: Senlin, path: str, key: str, query: str) -> list[dict[str, Any]]:
    """Every item of `path`, two at a time by marker."""
    out: list[dict[str, Any]] = []
    marker = ""
    while True:
        page = (await senlin.ok("GET", f"{path}?{query}&limit=2{marker}"))[key]
        assert len(page) <= 2
        out += page
        if len(page) < 2:
            return out
        marker = f"&marker={page[-1]['id']}"


async def test_pages_walk_the_whole_list_in_order(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=3)
    await senlin.accepted("POST", "/clusters/web/actions", json={"scale_in": {"count": 1}})
    for sort in ("created_at", "action:desc,created_at", "status,target:desc"):
        query = f"cluster_id={c['id']}&sort={sort}"
        whole = (await senlin.ok("GET", f"/actions?{query}"))["actions"]
        assert len(whole) >= 6
        assert [a["id"] for a in await _walk(senlin, "/actions", "actions", query)] == [
            a["id"] for a in whole
        ]
    desc = (await senlin.ok("GET", f"/actions?cluster_id={c['id']}&sort=action:desc"))["actions"]
    names = [a["action"] for a in desc]
    assert names == sorted(names, reverse=True)
    creates = (await senlin.ok("GET", "/actions?action=NODE_CREATE&limit=2"))["actions"]
    assert [a["action"] for a in creates] == ["NODE_CREATE"] * 2

    query = f"cluster_id={c['id']}&sort=otype,timestamp:desc"
    events = (await senlin.ok("GET", f"/events?{query}"))["events"]
    first = (await senlin.ok("GET", f"/events?{query}&limit=3"))["events"]
    assert first == events[:3]
    otypes = [e["otype"] for e in events]
    assert otypes == sorted(otypes) and len(set(otypes)) > 1
    node_events = (await senlin.ok("GET", "/events?otype=NODE&action=NODE_CREATE"))["events"]
    assert node_events and {(e["otype"], e["action"]) for e in node_events} == {
        ("NODE", "NODE_CREATE")
    }
    r = await senlin.call("GET", "/actions?marker=00000000-0000-0000-0000-000000000000")
    assert senlin_error(r, 400)["message"] == (
        "The marker '00000000-0000-0000-0000-000000000000' could not be found."
    )


async def test_policies_page_in_sql(senlin_db: Senlin) -> None:
    senlin = senlin_db
    ids = {}
    for name in ("b", "a", "d", "c", "e"):
        ids[name] = await policy(senlin, name, spec("deletion", criteria="OLDEST_FIRST"))
    await policy(senlin, "z", spec("zone_placement", zones=[{"name": "az1"}]))
    query = "type=senlin.policy.deletion-1.0&sort=name:desc"
    walked = await _walk(senlin, "/policies", "policies", query)
    assert [p["name"] for p in walked] == ["e", "d", "c", "b", "a"]
    assert [p["id"] for p in walked] == [ids[n] for n in "edcba"]


async def test_a_node_is_found_by_name_or_short_id_in_sql(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=2)
    first = c["nodes"][0]
    shown = (await senlin.ok("GET", f"/nodes/{first[:8]}"))["node"]
    assert shown["id"] == first
    assert (await senlin.ok("GET", f"/nodes/{shown['name']}"))["node"]["id"] == first
    for odd in ("%", "_", "nope"):
        senlin_error(await senlin.call("GET", f"/nodes/{odd}"), 404)


async def test_nodes_page_in_sql(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=5)
    for sort in ("init_at", "name:desc", "index:desc,name"):
        query = f"cluster_id=web&sort={sort}"
        whole = (await senlin.ok("GET", f"/nodes?{query}"))["nodes"]
        assert sorted(n["id"] for n in whole) == sorted(c["nodes"])
        assert [n["id"] for n in await _walk(senlin, "/nodes", "nodes", query)] == [
            n["id"] for n in whole
        ]
    by_name = (await senlin.ok("GET", "/nodes?sort=name:desc"))["nodes"]
    assert [n["name"] for n in by_name] == sorted((n["name"] for n in by_name), reverse=True)
    active = (await senlin.ok("GET", "/nodes?status=ACTIVE&limit=2"))["nodes"]
    assert len(active) == 2 and {n["status"] for n in active} == {"ACTIVE"}
    assert (await senlin.ok("GET", "/nodes?status=ERROR"))["nodes"] == []


async def test_receivers_page_in_sql(senlin_db: Senlin) -> None:
    senlin = senlin_db
    c = await senlin.cluster(size=1)
    made = {}
    for name, action in (
        ("b", "CLUSTER_SCALE_OUT"),
        ("a", "CLUSTER_RESIZE"),
        ("c", "CLUSTER_SCALE_IN"),
    ):
        body = {"name": name, "type": "webhook", "cluster_id": c["id"], "action": action}
        made[name] = (await senlin.ok("POST", "/receivers", 201, json={"receiver": body}))[
            "receiver"
        ]["id"]
    walked = await _walk(senlin, "/receivers", "receivers", "sort=name:desc")
    assert [r["id"] for r in walked] == [made[n] for n in "cba"]
    resize = (await senlin.ok("GET", "/receivers?action=CLUSTER_RESIZE"))["receivers"]
    assert [r["id"] for r in resize] == [made["a"]]
    by_action = (await senlin.ok("GET", "/receivers?sort=action"))["receivers"]
    assert [r["action"] for r in by_action] == sorted(r["action"] for r in by_action)


async def test_clusters_page_in_sql_by_their_senlin_names(senlin_db: Senlin) -> None:
    senlin = senlin_db
    profile = await senlin.profile("p")
    made = []
    for name in ("b", "a", "b", "c"):
        body = {"cluster": {"name": name, "profile_id": profile, "desired_capacity": 0}}
        answer, _ = await senlin.accepted("POST", "/clusters", json=body)
        made.append(answer["cluster"]["id"])
    walked = await _walk(senlin, "/clusters", "clusters", "sort=name,created_at")
    assert [c["name"] for c in walked] == ["a", "b", "b", "c"]
    assert [c["id"] for c in walked] == [made[1], made[0], made[2], made[3]]
    named = (await senlin.ok("GET", "/clusters?name=b"))["clusters"]
    assert sorted(c["id"] for c in named) == sorted([made[0], made[2]])
    assert (await senlin.ok("GET", "/clusters?status=ERROR"))["clusters"] == []


async def test_a_node_list_without_limit_stops_at_the_page_maximum_and_links_on(
    senlin_db: Senlin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every list has a maximum page size (issue 23): a node list asked without `limit` is cut
    there, and `nodes_links` gives the next page as OpenStack lists do (openstacksdk follows
    it); a whole list has no links, as Senlin's never had. The maximum is lowered here so a
    small cluster crosses it."""
    senlin = senlin_db
    c = await senlin.cluster(size=3)
    whole = await senlin.ok("GET", "/nodes?cluster_id=web")
    assert set(whole) == {"nodes"} and len(whole["nodes"]) == 3
    monkeypatch.setattr(senlin_reads, "MAX_LIMIT", 2)
    monkeypatch.setattr(senlin_routes_work, "MAX_LIMIT", 2)
    first = await senlin.ok("GET", "/nodes?cluster_id=web")
    assert [n["id"] for n in first["nodes"]] == [n["id"] for n in whole["nodes"][:2]]
    [link] = first["nodes_links"]
    assert link["rel"] == "next"
    query = link["href"].split("?", 1)[1]
    rest = await senlin.ok("GET", f"/nodes?{query}")
    assert set(rest) == {"nodes"}
    assert [n["id"] for n in first["nodes"] + rest["nodes"]] == [n["id"] for n in whole["nodes"]]
    assert sorted(n["id"] for n in whole["nodes"]) == sorted(c["nodes"])
