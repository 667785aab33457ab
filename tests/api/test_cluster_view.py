"""A cluster's view counts its nodes instead of embedding them (issue 23), and every node list
answers at most a page: `?nodes=N` embeds a bounded first page, `GET /v1/nodes` without a
limit answers the default page with a marker, never everything."""

from __future__ import annotations

from typing import Any

import pytest

from shoal.api import pages
from tests.api.conftest import Api

DOC = (
    "name: counted\nnode_groups:\n"
    "  - name: web\n    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 5\n"
    "  - name: db\n    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 2\n"
)


async def test_the_view_counts_nodes_by_status_and_embeds_none(api: Api) -> None:
    await api.up(DOC)
    r = await api.call("GET", "/v1/clusters/counted")
    assert r.status_code == 200, r.text
    c = r.json()["cluster"]
    assert "nodes" not in c
    assert c["node_counts"] == {"total": 7, "by_status": {"ACTIVE": 7}}
    assert {g["name"]: g["nodes"] for g in c["node_groups"]} == {"web": 5, "db": 2}


async def test_asked_nodes_are_a_bounded_first_page_that_the_node_list_continues(
    api: Api,
) -> None:
    await api.up(DOC)
    r = await api.call("GET", "/v1/clusters/counted", params={"nodes": 3})
    assert r.status_code == 200, r.text
    c = r.json()["cluster"]
    seen: list[dict[str, Any]] = list(c["nodes"])
    assert len(seen) == 3
    params: dict[str, Any] = {"cluster": "counted", "marker": c["nodes_next_marker"]}
    while True:
        body = (await api.call("GET", "/v1/nodes", params=params)).json()
        seen += body["nodes"]
        if "next_marker" not in body:
            break
        params["marker"] = body["next_marker"]
    assert len({n["id"] for n in seen}) == len(seen) == 7
    r = await api.call("GET", "/v1/clusters/counted", params={"nodes": pages.MAX_PAGE + 1})
    assert r.status_code == 400, r.text
    (detail,) = r.json()["error"]["details"]
    assert detail["path"] == "query:nodes" and str(pages.MAX_PAGE) in detail["message"]


async def test_a_node_list_without_a_limit_is_the_default_page(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await api.up(DOC)
    monkeypatch.setattr(pages, "MAX_PAGE", 4)  # a page smaller than the cluster
    body = (await api.call("GET", "/v1/nodes", params={"cluster": "counted"})).json()
    assert len(body["nodes"]) == 4 and "next_marker" in body
