"""Two scale requests at one cluster at the same moment: one is accepted, the other gets 409."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.e2e.conftest import StartServer
from tests.e2e.flows import TINY, get_cluster, group_nodes
from tests.support.server import ServerProcess, assert_error, wait_action, wait_ok

DOC = {
    "name": "racy",
    "node_groups": [{"name": "web", "profile": TINY, "count": 1, "min": 0, "max": 10}],
}


async def fire_together(server: ServerProcess, cid: str) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with httpx.AsyncClient(
        base_url=server.url, headers=headers, timeout=30.0, trust_env=False
    ) as client:
        url = f"/v1/clusters/{cid}/actions"
        return list(
            await asyncio.gather(
                client.post(url, json={"scale_out": {"count": 1, "nodegroup": "web"}}),
                client.post(url, json={"scale_out": {"count": 2, "nodegroup": "web"}}),
            )
        )


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_concurrent_scale_one_wins(
    store: str, start_server: StartServer, request: pytest.FixtureRequest
) -> None:
    database_url = request.getfixturevalue("pg_url") if store == "postgresql" else None
    server = start_server(
        provider="sim", provider_options={"create_latency_s": 1.0}, database_url=database_url
    )
    with server.client() as client:
        r = client.post("/v1/clusters", json=DOC)
        wait_ok(client, r)
        cid = r.json()["cluster"]["id"]

        answers = asyncio.run(fire_together(server, cid))
        assert sorted(a.status_code for a in answers) == [202, 409], [a.text for a in answers]
        won = next(a for a in answers if a.status_code == 202)
        lost = next(a for a in answers if a.status_code == 409)
        error = assert_error(lost, 409, "conflict")
        assert "busy" in error["message"], error
        asked = won.request.read()
        added = 1 if b'"count":1' in asked.replace(b" ", b"") else 2

        body = wait_action(client, won.headers["Location"])
        assert body["action"]["status"] == "SUCCEEDED", body
        c = get_cluster(client, cid)
        assert c["status"] == "ACTIVE", c
        assert len(group_nodes(c, "web")) == 1 + added
        top = client.get("/v1/actions", params={"cluster": cid}).json()["actions"]
        assert [a["action"] for a in top] == ["CLUSTER_CREATE", "CLUSTER_SCALE_OUT"], top
