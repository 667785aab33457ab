"""Receivers over HTTP: webhooks that scale node groups by their policies, with cooldowns,
secrets, deletion policies and bounds — on SQLite and PostgreSQL, the engine running."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

WEB = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    max: %(max)d
    zones: [az1, az2]
    scaling: {number: 2, cooldown_s: 30%(strict)s}
"""


def web(max_size: int = 10, strict: bool = False) -> str:
    return WEB % {"max": max_size, "strict": ", strict: true" if strict else ""}


async def receiver(api: Api, action: str = "scale_out", **extra: Any) -> dict[str, Any]:
    body = {"name": f"{action}-hook", "cluster": "shop", "action": action, **extra}
    r = await api.call("POST", "/v1/receivers", json=body)
    assert r.status_code == 201, r.text
    found: dict[str, Any] = r.json()["receiver"]
    return found


async def trigger(api: Api, url: str, expect: int = 202) -> dict[str, Any]:
    """POST the webhook (no bearer token); with 202, wait for the action to succeed."""
    r = await api.http.post(url)
    assert r.status_code == expect, r.text
    body: dict[str, Any] = r.json()
    if expect == 202:
        assert r.headers["Location"] == f"/v1/actions/{body['action']['id']}"
        assert (await api.wait(body["action"]["id"]))["status"] == "SUCCEEDED"
    return body


async def names(api: Api) -> set[str]:
    return {n["name"] for n in await api.nodes("shop")}


async def test_a_webhook_scales_out_by_the_policy_step_then_cools_down(api: Api) -> None:
    await api.up(web())
    hook = await receiver(api)
    assert hook["webhook_url"].startswith(f"/v1/webhooks/{hook['id']}/trigger?token=")

    body = await trigger(api, hook["webhook_url"])
    assert body["action"]["action"] == "CLUSTER_SCALE_OUT"
    assert body["action"]["inputs"]["count"] == 4
    assert await names(api) == {"web-1", "web-2", "web-3", "web-4"}
    before = await api.actions("shop")

    api.clock.advance(10)
    refused = await trigger(api, hook["webhook_url"], expect=409)
    assert refused["error"]["code"] == "cooldown"
    assert "ends at" in refused["error"]["message"]
    assert await api.actions("shop") == before, "a refused trigger records no action"

    api.clock.advance(21)  # 31 s after the first trigger: the cooldown is over
    await trigger(api, hook["webhook_url"])
    assert len(await names(api)) == 6


async def test_cooldown_answers_retry_after(api: Api) -> None:
    await api.up(web())
    hook = await receiver(api)
    await trigger(api, hook["webhook_url"])
    api.clock.advance(12)
    r = await api.http.post(hook["webhook_url"])
    assert r.status_code == 409
    assert r.headers["Retry-After"] == "18"


async def test_a_wrong_token_or_id_is_not_found_and_changes_nothing(api: Api) -> None:
    await api.up(web())
    hook = await receiver(api)
    before = await api.actions("shop")
    base = f"/v1/webhooks/{hook['id']}/trigger"
    for url in (
        f"{base}?token=wrong",
        base,
        f"{base}?token=",
        f"/v1/webhooks/nope/trigger?token={hook['webhook_url'].split('token=')[1]}",
    ):
        r = await api.http.post(url, headers=api.auth)
        assert r.status_code == 404, (url, r.text)
        assert r.json()["error"]["code"] == "not_found"
    assert await api.actions("shop") == before
    listed = (await api.call("GET", f"/v1/receivers/{hook['id']}")).json()["receiver"]
    assert listed["triggered_at"] is None


SHRINKING = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: %(count)d
    zones: %(zones)s
    deletion: {victims: %(victims)s, balance_zones: true}
groupings:
  - {name: even, members: [web], rule: spread, scope: zone}
"""


@pytest.mark.parametrize(
    ("victims", "left"),
    [("oldest_first", {"web-3", "web-5"}), ("youngest_first", {"web-1", "web-4"})],
)
async def test_scale_in_takes_victims_by_the_deletion_policy(
    api: Api, victims: str, left: set[str]
) -> None:
    await api.up(SHRINKING % {"count": 3, "zones": "[az1]", "victims": victims})
    api.clock.advance(100)
    wider = SHRINKING % {"count": 5, "zones": "[az1, az2]", "victims": victims}
    r = await api.call("PUT", "/v1/clusters/shop", content=wider)
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    zones = {n["name"]: n["zone"] for n in await api.nodes("shop")}
    # Three old replicas in az1; the spread rule put the two young ones in az2.
    assert zones == {"web-1": "az1", "web-2": "az1", "web-3": "az1", "web-4": "az2", "web-5": "az2"}

    api.clock.advance(100)
    hook = await receiver(api, "scale_in", params={"count": 3})
    body = await trigger(api, hook["webhook_url"])
    assert set(body["action"]["inputs"]["victims"]) == {f"web-{i}" for i in range(1, 6)} - left
    assert await names(api) == left


async def test_clamped_at_max_scales_to_max_then_has_nothing_to_do(api: Api) -> None:
    await api.up(web(max_size=3))
    hook = await receiver(api)
    await trigger(api, hook["webhook_url"])
    assert len(await names(api)) == 3, "2 + 2 clamped to the max of 3"
    api.clock.advance(60)
    refused = await trigger(api, hook["webhook_url"], expect=409)
    assert "already at its max of 3" in refused["error"]["message"]


async def test_strict_refuses_to_pass_max(api: Api) -> None:
    await api.up(web(max_size=3, strict=True))
    hook = await receiver(api)
    before = await api.actions("shop")
    refused = await trigger(api, hook["webhook_url"], expect=409)
    assert "outside the node group's bounds 0..3" in refused["error"]["message"]
    assert await api.actions("shop") == before
    # A refused trigger does not start a cooldown: a smaller step fits at once.
    r = await api.call("DELETE", f"/v1/receivers/{hook['id']}")
    assert r.status_code == 204
    one = await receiver(api, params={"count": 1})
    await trigger(api, one["webhook_url"])
    assert len(await names(api)) == 3


async def test_scale_in_stops_at_min(api: Api) -> None:
    await api.up(web().replace("count: 2", "count: 2\n    min: 2"))
    hook = await receiver(api, "scale_in")
    refused = await trigger(api, hook["webhook_url"], expect=409)
    assert "already at its min of 2" in refused["error"]["message"]


async def test_cooldowns_are_per_node_group(api: Api) -> None:
    doc = web() + (
        "  - name: api\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n"
        "    count: 1\n"
        "    scaling: {cooldown_s: 30}\n"
    )
    await api.up(doc)
    web_hook = await receiver(api, nodegroup="web")
    api_hook = await receiver(api, nodegroup="api", name="api-out")
    await trigger(api, web_hook["webhook_url"])
    await trigger(api, api_hook["webhook_url"])
    counts = {n["name"] for n in await api.nodes("shop")}
    assert {"web-4", "api-2"} <= counts


async def test_receivers_are_managed_with_a_token_and_hide_their_secret(api: Api) -> None:
    await api.up(web())
    hook = await receiver(api)
    secret = hook["webhook_url"].split("token=")[1]

    listed = (await api.call("GET", "/v1/receivers")).json()["receivers"]
    assert [r["name"] for r in listed] == ["scale_out-hook"]
    shown = (await api.call("GET", "/v1/receivers/scale_out-hook")).json()["receiver"]
    assert shown["id"] == hook["id"] and shown["nodegroup"] == "web"
    assert "webhook_url" not in shown and secret not in str(listed)

    assert (await api.http.get("/v1/receivers")).status_code == 401
    again = {"name": "scale_out-hook", "cluster": "shop", "action": "scale_out"}
    assert (await api.call("POST", "/v1/receivers", json=again)).status_code == 409

    assert (await api.call("DELETE", "/v1/receivers/scale_out-hook")).status_code == 204
    assert (await api.call("GET", f"/v1/receivers/{hook['id']}")).status_code == 404
    await trigger(api, hook["webhook_url"], expect=404)


async def test_a_bad_receiver_is_refused_with_every_problem(api: Api) -> None:
    await api.up(web())
    body = {
        "name": "bad name",
        "cluster": "shop",
        "action": "explode",
        "params": {"count": 0, "colour": "red"},
    }
    r = await api.call("POST", "/v1/receivers", json=body)
    assert r.status_code == 422
    paths = {d["path"] for d in r.json()["error"]["details"]}
    assert paths == {"/name", "/action", "/params/count", "/params/colour"}
    missing = {"name": "x", "cluster": "shop", "action": "scale_out", "nodegroup": "db"}
    assert (await api.call("POST", "/v1/receivers", json=missing)).status_code == 404
    nowhere = {"name": "x", "cluster": "nowhere", "action": "scale_out"}
    assert (await api.call("POST", "/v1/receivers", json=nowhere)).status_code == 404


async def test_another_project_neither_sees_nor_uses_the_cluster(api: Api) -> None:
    await api.up(web())
    r = await api.call("POST", "/v1/projects", json={"name": "tenant"})
    other = {"Authorization": f"Bearer {r.json()['token']}"}
    hook = await receiver(api)
    assert (await api.http.get("/v1/receivers", headers=other)).json()["receivers"] == []
    assert (await api.http.get(f"/v1/receivers/{hook['id']}", headers=other)).status_code == 404
    body = {"name": "mine", "cluster": "shop", "action": "scale_out"}
    assert (await api.http.post("/v1/receivers", json=body, headers=other)).status_code == 404


async def test_a_recover_webhook_reaches_the_cluster_service(api: Api) -> None:
    await api.up(web())
    hook = await receiver(api, "recover")
    refused = await trigger(api, hook["webhook_url"], expect=409)
    assert "needs recovering" in refused["error"]["message"]
