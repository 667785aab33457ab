"""Limits and quotas over HTTP (issue 9, point 1), on SQLite and PostgreSQL: a count of 10^9
anywhere is a 4xx in the error shape with a pointer; quotas are read and set at
`/v1/projects/{id}/quotas` and exceeding one is 403 `quota_exceeded`; the Senlin façade's
`desired_capacity: 10^9` is refused through the same service checks."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.conftest import Api

DOC = """
name: %s
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: %d
"""


def error(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body: dict[str, Any] = r.json()["error"]
    assert set(body) == {"code", "title", "message", "details"}
    return body


async def test_a_billion_nodes_is_a_4xx_with_a_pointer(api: Api) -> None:
    e = error(await api.call("POST", "/v1/clusters", content=DOC % ("shop", 10**9)), 422)
    assert e["details"][0]["path"] == "/node_groups/0/count"
    await api.up(DOC % ("shop", 1))
    r = await api.call("POST", "/v1/clusters/shop/actions", json={"scale_out": {"count": 10**9}})
    assert error(r, 422)["details"][0]["path"] == "/count"
    for huge in (10**30, 10**400):  # past any float and int64: still refused at the door
        r = await api.call("POST", "/v1/clusters/shop/actions", json={"scale_out": {"count": huge}})
        assert error(r, 422)["details"][0]["path"] == "/count"
    r = await api.call(
        "POST",
        "/v1/clusters/shop/actions",
        json={"resize": {"adjustment_type": "CHANGE_IN_PERCENTAGE", "number": 1e12}},
    )
    assert error(r, 422)["details"][0]["path"] == "/number"
    r = await api.call(
        "POST",
        "/v1/receivers",
        json={"name": "g", "cluster": "shop", "action": "scale_out", "params": {"count": 10**9}},
    )
    assert error(r, 422)["details"][0]["path"] == "/params/count"


async def test_quotas_are_read_set_and_enforced(api: Api) -> None:
    r = await api.call("POST", "/v1/projects", json={"name": "acme"})
    assert r.status_code == 201, r.text
    acme, acme_token = r.json()["project"]["id"], r.json()["token"]
    as_acme = {"Authorization": f"Bearer {acme_token}"}

    r = await api.call("PUT", f"/v1/projects/{acme}/quotas", json={"quotas": {"nodes": 2}})
    assert r.status_code == 200, r.text
    assert r.json()["quotas"]["nodes"] == {"limit": 2, "in_use": 0, "default": False}
    r = await api.http.put(f"/v1/projects/{acme}/quotas", json={"nodes": 9}, headers=as_acme)
    error(r, 403)
    r = await api.http.get(f"/v1/projects/{acme}/quotas", headers=as_acme)
    assert r.status_code == 200 and r.json()["quotas"]["nodes"]["limit"] == 2
    r = await api.http.get("/v1/projects/admin/quotas", headers=as_acme)
    error(r, 404)  # another project's quotas are not even named
    r = await api.call("PUT", f"/v1/projects/{acme}/quotas", json={"quotas": {"gpus": 1}})
    assert error(r, 422)["details"][0]["path"] == "/quotas/gpus"

    r = await api.http.post("/v1/clusters", content=DOC % ("big", 3), headers=as_acme)
    e = error(r, 403)
    assert e["code"] == "quota_exceeded"
    assert e["details"][0] | {"path": ""} == {
        "path": "",
        "message": "nodes: limit 2, in use 0, requested 3",
        "resource": "nodes",
        "limit": 2,
        "in_use": 0,
        "requested": 3,
    }
    r = await api.http.post("/v1/clusters", content=DOC % ("ok", 2), headers=as_acme)
    assert r.status_code == 202, r.text


async def test_the_senlin_facade_refuses_a_billion_desired_capacity(api: Api) -> None:
    base = "/clustering/v1"
    headers = {"X-Auth-Token": api.token}
    properties = {"flavor": "m1.tiny", "image": "cirros"}
    spec = {"type": "os.nova.server", "version": "1.0", "properties": properties}
    r = await api.http.post(
        f"{base}/profiles", json={"profile": {"name": "p", "spec": spec}}, headers=headers
    )
    assert r.status_code == 201, r.text
    profile = r.json()["profile"]["id"]
    body = {"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 10**9}}
    r = await api.http.post(f"{base}/clusters", json=body, headers=headers)
    assert 400 <= r.status_code < 500, r.text
    body = {"cluster": {"name": "c", "profile_id": profile, "desired_capacity": 1}}
    r = await api.http.post(f"{base}/clusters", json=body, headers=headers)
    assert r.status_code == 202, r.text
    action = r.headers["Location"].rsplit("/", 1)[-1]
    await api.wait(action)
    r = await api.http.post(
        f"{base}/clusters/c/actions",
        json={"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 10**9}},
        headers=headers,
    )
    assert 400 <= r.status_code < 500, r.text
