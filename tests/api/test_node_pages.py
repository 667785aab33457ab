"""Node lists paged in SQL (issue 23): `GET /v1/nodes?limit=&marker=`, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api

DOC = (
    "name: paged\nnode_groups:\n  - name: web\n"
    "    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 7\n"
)


async def test_pages_walk_every_node_once_in_list_order(api: Api) -> None:
    await api.up(DOC)
    everything = (await api.call("GET", "/v1/nodes", params={"cluster": "paged"})).json()["nodes"]
    assert len(everything) == 7
    seen: list[dict[str, Any]] = []
    params: dict[str, Any] = {"cluster": "paged", "limit": 3}
    pages = 0
    while True:
        r = await api.call("GET", "/v1/nodes", params=params)
        assert r.status_code == 200, r.text
        body = r.json()
        assert len(body["nodes"]) <= 3
        seen += body["nodes"]
        pages += 1
        if "next_marker" not in body:
            break
        params["marker"] = body["next_marker"]
    assert pages == 3
    assert sorted(n["id"] for n in seen) == sorted(n["id"] for n in everything)
    assert len({n["id"] for n in seen}) == 7


async def test_a_page_over_the_maximum_is_a_400_naming_it(api: Api) -> None:
    r = await api.call("GET", "/v1/nodes", params={"limit": 1001})
    assert r.status_code == 400, r.text
    (detail,) = r.json()["error"]["details"]
    assert detail["path"] == "query:limit" and "1000" in detail["message"]


async def test_a_marker_of_no_node_is_a_400_naming_it(api: Api) -> None:
    await api.up(DOC)
    r = await api.call("GET", "/v1/nodes", params={"cluster": "paged", "marker": "nope"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"][0]["path"] == "query:marker"
