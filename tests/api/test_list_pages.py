"""Every native list answers at most a page (issue 23): clusters and actions page by keyset
marker like nodes, and a page size over a list's maximum is a 400 naming the maximum."""

from __future__ import annotations

from typing import Any

import pytest

from shoal.api import pages
from tests.api.conftest import Api


def doc(name: str) -> str:
    return (
        f"name: {name}\nnode_groups:\n  - name: web\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 1\n"
    )


async def walk(api: Api, path: str, key: str, **params: Any) -> tuple[list[str], int]:
    """Every item's id of the list, page by page, and how many pages it took."""
    seen: list[str] = []
    marker: str | None = None
    count = 0
    while True:
        query = {**params, **({"marker": marker} if marker else {})}
        r = await api.call("GET", path, params=query)
        assert r.status_code == 200, r.text
        body = r.json()
        assert len(body[key]) <= params["limit"]
        seen += [i["id"] for i in body[key]]
        count += 1
        marker = body.get("next_marker")
        if marker is None:
            return seen, count


async def test_clusters_and_actions_page_by_marker(api: Api) -> None:
    for name in ("a", "b", "c"):
        await api.up(doc(name))
    clusters, count = await walk(api, "/v1/clusters", "clusters", limit=2)
    assert count == 2 and len(set(clusters)) == 3
    actions, count = await walk(api, "/v1/actions", "actions", limit=2, all="true")
    everything = (await api.call("GET", "/v1/actions", params={"all": "true"})).json()
    assert actions == [a["id"] for a in everything["actions"]]
    assert len(actions) == 6 and count == 3  # a create and its one node action, per cluster


async def test_lists_without_a_limit_answer_the_default_page(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        await api.up(doc(name))
    monkeypatch.setattr(pages, "MAX_PAGE", 1)
    body = (await api.call("GET", "/v1/clusters")).json()
    assert len(body["clusters"]) == 1 and "next_marker" in body


async def test_a_page_over_a_list_maximum_is_a_400_naming_it(api: Api) -> None:
    for path, limit in [
        ("/v1/clusters", pages.MAX_PAGE),
        ("/v1/actions", pages.MAX_PAGE),
        ("/v1/nodes", pages.MAX_PAGE),
        ("/v1/receivers", pages.MAX_PAGE),
        ("/v1/events", pages.MAX_EVENT_PAGE),
    ]:
        r = await api.call("GET", path, params={"limit": limit + 1})
        assert r.status_code == 400, (path, r.text)
        (detail,) = r.json()["error"]["details"]
        assert detail["path"] == "query:limit" and str(limit) in detail["message"], path
    r = await api.call("GET", "/v1/clusters", params={"marker": "nope"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"][0]["path"] == "query:marker"
