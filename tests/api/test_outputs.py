"""A cluster's outputs served from the live cluster (`GET /v1/clusters/{name}`), on SQLite and
PostgreSQL with the sim provider: values follow scaling and deployments, pending says why."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from shoal.engine.software.inputs import REDACTED
from shoal.providers.sim.provider import SimProvider
from tests.api.conftest import Api
from tests.support.polling import until

DOC = """
name: shop
instances:
  - name: db
    profile: {type: server, flavor: m1.tiny, image: cirros}
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
software:
  configs:
    cfg: {group: script, config: "#!/bin/sh\\necho ok", outputs: [{name: dsn}]}
  deployments:
    on_db: {config: cfg, target: db}
    on_web: {config: cfg, target: web}
outputs:
  web_addresses:
    description: every web server
    value: {members: web, fact: address}
  web_list: {value: {join: [{members: web, fact: name}], with: ","}}
  db_url:
    value: {template: "postgres://HOST/shop", params: {HOST: {member: db}}}
  dsn: {value: {output: on_db.dsn}}
  dsns: {value: {output: on_web.dsn, from: all}}
  stdout: {value: {output: on_db.deploy_stdout}}
"""


async def outputs(api: Api, cluster: str = "shop") -> dict[str, dict[str, Any]]:
    r = await api.call("GET", f"/v1/clusters/{cluster}")
    assert r.status_code == 200, r.text
    return {o["name"]: o for o in r.json()["cluster"]["outputs"]}


async def until_ready(api: Api, names: list[str]) -> dict[str, dict[str, Any]]:
    """The outputs once every one named is ready (bounded, so a bug fails instead of hanging)."""
    found: dict[str, dict[str, Any]] = {}

    async def ready() -> dict[str, dict[str, Any]] | None:
        nonlocal found
        found = await outputs(api)
        return found if all(found[n]["status"] == "ready" for n in names) else None

    return await until(ready, lambda: f"outputs {names} ready: {json.dumps(found)}")


async def test_outputs_follow_the_cluster_as_it_scales(api: Api) -> None:
    await api.up(DOC)
    nodes = {n["name"]: n for n in await api.nodes("shop")}
    found = await until_ready(api, ["web_addresses", "dsn", "dsns", "stdout"])
    web = [nodes["web-1"]["address"], nodes["web-2"]["address"]]
    assert found["web_addresses"] == {
        "name": "web_addresses",
        "description": "every web server",
        "status": "ready",
        "value": web,
        "reason": None,
    }
    assert found["web_list"]["value"] == "web-1,web-2"
    assert found["db_url"]["value"] == f"postgres://{nodes['db']['address']}/shop"
    assert found["dsn"]["value"] == "on_db.dsn@db"
    assert found["dsns"]["value"] == ["on_web.dsn@web-1", "on_web.dsn@web-2"]
    assert found["stdout"]["value"] == "CREATE on_db on db"

    r = await api.call(
        "POST", "/v1/clusters/shop/actions", json={"scale_out": {"count": 1, "nodegroup": "web"}}
    )
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    nodes = {n["name"]: n for n in await api.nodes("shop")}
    found = await until_ready(api, ["web_addresses", "dsns"])
    assert found["web_addresses"]["value"] == [*web, nodes["web-3"]["address"]]
    assert found["web_list"]["value"] == "web-1,web-2,web-3"
    assert found["dsns"]["value"] == [f"on_web.dsn@web-{i}" for i in (1, 2, 3)]

    r = await api.call(
        "POST", "/v1/clusters/shop/actions", json={"scale_in": {"count": 2, "nodegroup": "web"}}
    )
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    left = sorted(n["name"] for n in await api.nodes("shop") if n["group"] == "web")
    found = await outputs(api)
    assert len(left) == 1
    assert found["web_list"]["value"] == left[0]
    assert found["web_addresses"]["value"] == [
        n["address"] for n in await api.nodes("shop") if n["name"] == left[0]
    ]


async def test_a_value_not_known_yet_is_pending_with_why(api: Api) -> None:
    # no simulated runs: deployments wait for agents that never signal here
    provider = api.runtime.provider
    assert isinstance(provider, SimProvider)
    provider.deployments = None
    await api.up(DOC)
    found = await outputs(api)
    assert found["web_addresses"]["status"] == "ready"
    assert found["dsn"]["status"] == "pending"
    assert found["dsn"]["value"] is None
    assert found["dsn"]["reason"].startswith("deployment on_db is not complete on db (")


async def test_a_cluster_without_outputs_serves_none_and_lists_leave_them_out(api: Api) -> None:
    await api.up(
        "name: bare\nnode_groups: [{name: g, profile: {type: server, flavor: m1.tiny, "
        "image: cirros}, count: 1}]\n"
    )
    r = await api.call("GET", "/v1/clusters/bare")
    assert r.json()["cluster"]["outputs"] == []
    r = await api.call("GET", "/v1/clusters")
    assert all("outputs" not in c for c in r.json()["clusters"])


async def test_a_bad_outputs_section_is_a_422_naming_each_place(api: Api) -> None:
    bad = DOC + "  nope: {value: {members: nope}}\n  hidden: {value: {secret: x}}\n"
    r = await api.call("POST", "/v1/clusters", content=bad)
    assert r.status_code == 422, r.text
    paths = [p["path"] for p in r.json()["error"]["details"]]
    assert "/outputs/nope/value/members" in paths
    assert "/outputs/hidden/value/secret" in paths


async def test_a_secret_a_node_echoes_into_an_output_is_scrubbed(api: Api) -> None:
    doc = """
name: sec
parameters:
  pw: {type: string, hidden: true, default: "dsn@db"}
instances:
  - name: db
    profile: {type: server, flavor: m1.tiny, image: cirros}
software:
  configs:
    cfg: {group: script, config: "#!/bin/sh\\necho ok", inputs: [{name: pw}], outputs: [dsn]}
  deployments:
    on_db: {config: cfg, target: db, inputs: {pw: {secret: pw}}}
outputs:
  dsn: {value: {output: on_db.dsn}}
"""
    await api.up(doc)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while (found := await outputs(api, "sec"))["dsn"]["status"] != "ready":
        assert loop.time() < deadline, json.dumps(found)
        await asyncio.sleep(0.02)
    # the simulated agent answers on_db.dsn@db, which holds the secret's value
    assert found["dsn"]["value"] == f"on_db.{REDACTED}"
    assert "dsn@db" not in (await api.call("GET", "/v1/clusters/sec")).text


async def test_a_replaced_server_changes_the_output_on_the_next_read(api: Api) -> None:
    await api.up(DOC)
    found = await until_ready(api, ["db_url"])
    db = next(n for n in await api.nodes("shop") if n["name"] == "db")
    assert found["db_url"]["value"] == f"postgres://{db['address']}/shop"
    r = await api.call("POST", f"/v1/hosts/{db['host']}/fail")
    assert r.status_code == 200, r.text
    r = await api.call(
        "POST", "/v1/clusters/shop/actions", json={"recover": {"nodes": ["db"], "how": "replace"}}
    )
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
    moved = next(n for n in await api.nodes("shop") if n["name"] == "db")
    assert moved["host"] != db["host"] and moved["address"] != db["address"]
    found = await outputs(api)
    assert found["db_url"]["value"] == f"postgres://{moved['address']}/shop"
