"""The deployments API on SQLite and PostgreSQL, with the test playing the node's agents: the
metadata a server polls (Heat's shape, secrets only there), the per-run signal URL with its own
secret, bounded signal bodies, and what users see (`/deployments`, a run's log, redacted)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from shoal.model.cluster import MemberRef
from shoal.model.software import (
    ConfigInput,
    ConfigOutput,
    Deployment,
    HookGroup,
    OutputInput,
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.providers.sim.provider import SimProvider
from shoal.store.records import ClusterRecord
from tests.api.conftest import Api
from tests.support.polling import until

SECRET = "pa55-w0rd-never-shown"
DOC = """
name: ctl
node_groups:
  - name: db
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
"""
SOFTWARE = SoftwareSpec(
    configs=(
        SoftwareConfig(
            "db-config",
            HookGroup.SCRIPT,
            "#!/bin/sh\necho ok",
            inputs=(ConfigInput("password"),),
            outputs=(ConfigOutput("dsn"),),
        ),
        SoftwareConfig("app-config", HookGroup.SCRIPT, "#!/bin/sh\necho app"),
    ),
    deployments=(
        Deployment("db-setup", "db-config", MemberRef("db"), {"password": SecretInput("pw")}),
        Deployment(
            "app-setup", "app-config", MemberRef("app"), {"dsn": OutputInput("db-setup", "dsn")}
        ),
    ),
    secrets={"pw": SECRET},
)


def as_agents(api: Api) -> None:
    """No simulated runs: deployments wait for signals, as on a cloud with agents."""
    provider = api.runtime.provider
    assert isinstance(provider, SimProvider)
    provider.deployments = None

    def of(_c: ClusterRecord) -> SoftwareSpec:
        return SOFTWARE

    api.runtime.engine.deployer.software_of = of
    api.runtime.deployments.software_of = of


async def deployments(api: Api, cluster: str) -> list[dict[str, Any]]:
    r = await api.call("GET", f"/v1/clusters/{cluster}/deployments")
    assert r.status_code == 200, r.text
    found: list[dict[str, Any]] = r.json()["deployments"]
    return found


async def until_status(api: Api, cluster: str, name: str, status: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    async def reached() -> dict[str, Any] | None:
        nonlocal found
        found = [d for d in await deployments(api, cluster) if d["deployment"] == name]
        return found[0] if found and found[0]["status"] == status else None

    return await until(reached, lambda: f"{name} {status} (seen {found})")


def _input(entry: dict[str, Any], name: str) -> Any:
    return next(i["value"] for i in entry["inputs"] if i["name"] == name)


async def test_agents_read_metadata_and_signal(api: Api) -> None:
    as_agents(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    node_id = run["node_id"]
    secret = await asyncio.to_thread(api.runtime.deployments.server_secret, node_id)
    path = f"/v1/software/servers/{node_id}/metadata"

    # No token, or a wrong one: 404, like a server that does not exist.
    assert (await api.http.get(path)).status_code == 404
    assert (await api.http.get(path, params={"token": "x" + secret[1:]})).status_code == 404

    r = await api.http.get(path, params={"token": secret})
    assert r.status_code == 200, r.text
    meta = r.json()
    [entry] = meta["deployments"]
    assert entry["name"] == "db-setup" and entry["group"] == "script"
    assert entry["id"] == run["action_id"]
    assert _input(entry, "password") == SECRET  # the one place a secret is served
    assert _input(entry, "deploy_action") == "CREATE"
    assert meta["os-collect-config"]["request"]["metadata_url"].endswith(f"token={secret}")
    signal_url = urlsplit(_input(entry, "deploy_signal_id"))
    signal_path, query = signal_url.path, signal_url.query

    # The signal needs the run's own secret; the server's does not do.
    bad = await api.http.post(signal_path, params={"token": secret}, json={})
    assert bad.status_code == 404
    too_big = await api.http.post(
        f"{signal_path}?{query}", content=b"{" + b" " * (1_048_577) + b"}"
    )
    assert too_big.status_code == 413, too_big.text
    wrong = await api.http.post(f"{signal_path}?{query}", json={"deploy_status_code": "x"})
    assert wrong.status_code == 422, wrong.text
    assert wrong.json()["error"]["details"], wrong.text

    body = {
        "deploy_stdout": f"configured with {SECRET}\n",
        "deploy_stderr": "",
        "deploy_status_code": 0,
        "dsn": "postgres://db-1/app",
    }
    ok = await api.http.post(f"{signal_path}?{query}", json=body)
    assert ok.status_code == 200, ok.text
    again = await api.http.put(f"{signal_path}?{query}", json=body)
    assert again.status_code == 200 and again.json()["status"] == "COMPLETE"

    done = await until_status(api, "ctl", "db-setup", "COMPLETE")
    assert done["status_code"] == 0 and done["attempts"] == 1
    r = await api.call("GET", f"/v1/nodes/{node_id}/deployments/db-setup")
    assert r.status_code == 200, r.text
    log = r.json()["deployment"]
    assert SECRET not in r.text
    assert log["inputs"]["password"] == "******"
    assert log["stdout"] == "configured with ******\n"
    # the node's deployments, for its page in the dashboard (issue 36)
    r = await api.call("GET", f"/v1/nodes/{node_id}/deployments")
    assert r.status_code == 200, r.text
    on_node = r.json()
    assert on_node["node_id"] == node_id and on_node["node"] == log["node"]
    assert [(d["deployment"], d["status"]) for d in on_node["deployments"]] == [
        ("db-setup", "COMPLETE")
    ]
    assert SECRET not in r.text
    # Heat's output_values: the declared outputs and the three every deployment has.
    assert log["outputs"] == {
        "dsn": "postgres://db-1/app",
        "deploy_stdout": "configured with ******\n",
        "deploy_stderr": "",
        "deploy_status_code": 0,
    }

    # The output reached the next deployment, on the other group's node, through its metadata.
    app = await until_status(api, "ctl", "app-setup", "IN_PROGRESS")
    app_secret = await asyncio.to_thread(api.runtime.deployments.server_secret, app["node_id"])
    r = await api.http.get(
        f"/v1/software/servers/{app['node_id']}/metadata", params={"token": app_secret}
    )
    [entry] = r.json()["deployments"]
    assert _input(entry, "dsn") == "postgres://db-1/app"
    signal = urlsplit(_input(entry, "deploy_signal_id"))
    failed = await api.http.post(
        f"{signal.path}?{signal.query}",
        json={"deploy_stdout": "", "deploy_stderr": "port in use", "deploy_status_code": 3},
    )
    assert failed.status_code == 200 and failed.json()["status"] == "FAILED"
    end = await until_status(api, "ctl", "app-setup", "FAILED")
    assert end["status_code"] == 3

    async def node_reason() -> str:
        r = await api.call("GET", "/v1/nodes", params={"cluster": "ctl"})
        for n in r.json()["nodes"]:
            if n["name"] == "app-1" and n["status"] == "WARNING":
                return str(n["status_reason"])
        return ""

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while not (reason := await node_reason()):
        assert loop.time() < deadline, await api.nodes("ctl")
        await asyncio.sleep(0.02)
    assert "app-setup" in reason and "port in use" in reason and "exit 3" in reason


async def test_users_see_only_their_clusters(api: Api) -> None:
    as_agents(api)
    r = await api.call("GET", "/v1/clusters/nope/deployments")
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
    r = await api.http.get("/v1/clusters/ctl/deployments")
    assert r.status_code == 401
    r = await api.call("GET", "/v1/nodes/nope/deployments")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


async def test_deployments_page_in_sql_with_counts_and_a_maximum(api: Api) -> None:
    """Issue 23: a page of at most `limit` rows after `marker`, counts of all by status, a
    status filter, and a page size over the maximum is a 400 naming it."""
    api.runtime.engine.deployer.software_of = lambda _c: SOFTWARE  # simulated runs
    api.runtime.deployments.software_of = lambda _c: SOFTWARE
    await api.up(DOC)
    path = "/v1/clusters/ctl/deployments"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60.0
    while True:
        r = await api.call("GET", path, params={"limit": 1})
        assert r.status_code == 200, r.text
        first = r.json()
        if first["counts"] == {"COMPLETE": 2}:
            break
        assert loop.time() < deadline, first
        await asyncio.sleep(0.05)
    assert len(first["deployments"]) == 1 and first["next_marker"]
    r = await api.call("GET", path, params={"limit": 1, "marker": first["next_marker"]})
    second = r.json()
    assert len(second["deployments"]) == 1 and "next_marker" not in second
    names = {d["deployment"] for d in first["deployments"] + second["deployments"]}
    assert names == {"db-setup", "app-setup"}
    r = await api.call("GET", path, params={"status": "FAILED"})
    assert r.status_code == 200 and r.json()["deployments"] == []
    r = await api.call("GET", path, params={"limit": 1001})
    assert r.status_code == 400
    [problem] = r.json()["error"]["details"]
    assert problem["path"] == "query:limit" and "1000" in problem["message"]
    r = await api.call("GET", path, params={"marker": "no-such-row"})
    assert r.status_code == 400
    assert r.json()["error"]["details"][0]["path"] == "query:marker"
