"""Agents' credentials and signals under attack (issue 29), on SQLite and PostgreSQL, with the
test playing a hostile node: URLs never follow the request's Host, a deleted node's metadata
and signal URLs answer 404 at once, signal bodies too deep or numbers too big are a 4xx that
leaves the run as it was, and secrets of any length are scrubbed from stdout and outputs."""

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
    SecretInput,
    SoftwareConfig,
    SoftwareSpec,
)
from shoal.store.records import ClusterRecord
from tests.api.conftest import Api
from tests.api.test_deployments import DOC, as_agents, until_status

SHORT = "q7z"
"""A three-character secret: scrubbed too."""

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
        Deployment("app-setup", "app-config", MemberRef("app"), {}),
    ),
    secrets={"pw": SHORT},
)


def short_secret(api: Api) -> None:
    as_agents(api)

    def of(_c: ClusterRecord) -> SoftwareSpec:
        return SOFTWARE

    api.runtime.engine.deployer.software_of = of
    api.runtime.deployments.software_of = of


async def metadata(api: Api, node_id: str, **headers: str) -> Any:
    secret = await asyncio.to_thread(api.runtime.deployments.server_secret, node_id)
    return await api.http.get(
        f"/v1/software/servers/{node_id}/metadata", params={"token": secret}, headers=headers
    )


def _input(entry: dict[str, Any], name: str) -> Any:
    return next(i["value"] for i in entry["inputs"] if i["name"] == name)


async def test_urls_come_from_configuration_not_the_host_header(api: Api) -> None:
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    r = await metadata(api, run["node_id"], host="evil.example:666")
    assert r.status_code == 200, r.text
    assert "evil.example" not in r.text
    [entry] = r.json()["deployments"]
    configured = api.runtime.engine.deployer.agent_url or (
        f"http://{api.runtime.settings.bind}:{api.runtime.settings.port}"
    )
    assert _input(entry, "deploy_signal_id").startswith(configured)
    assert r.json()["os-collect-config"]["request"]["metadata_url"].startswith(configured)


async def test_bad_signals_are_refused_and_the_run_stays(api: Api) -> None:
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    [entry] = (await metadata(api, run["node_id"])).json()["deployments"]
    url = urlsplit(_input(entry, "deploy_signal_id"))
    where = f"{url.path}?{url.query}"

    deep = b"[" * 500_000 + b"]" * 500_000
    r = await api.http.post(where, content=deep)
    assert r.status_code == 422, r.text
    nested: Any = "x"
    for _ in range(100):
        nested = [nested]
    r = await api.http.post(where, json={"deploy_status_code": 0, "dsn": nested})
    assert r.status_code == 422 and r.json()["error"]["details"][0]["path"] == "/dsn", r.text
    for code in (10**29, -(10**29), "1" * 5000):
        r = await api.http.post(where, json={"deploy_status_code": code})
        assert r.status_code == 422, r.text
        assert r.json()["error"]["details"][0]["path"] == "/deploy_status_code", r.text
    r = await api.http.post(where, content=b'{"deploy_status_code": 0, "dsn": 1e999}')
    assert r.status_code == 422, r.text
    assert (await until_status(api, "ctl", "db-setup", "IN_PROGRESS"))["attempts"] == 1

    # A secret echoed into stdout or a declared output is stored scrubbed, however short.
    body = {
        "deploy_stdout": f"password is {SHORT}!\n",
        "deploy_stderr": f"{SHORT}",
        "deploy_status_code": 0,
        "dsn": {"url": f"postgres://app:{SHORT}@db/app", "parts": [SHORT]},
    }
    r = await api.http.post(where, json=body)
    assert r.status_code == 200, r.text
    await until_status(api, "ctl", "db-setup", "COMPLETE")
    r = await api.call("GET", f"/v1/nodes/{run['node_id']}/deployments/db-setup")
    assert r.status_code == 200 and SHORT not in r.text, r.text
    log = r.json()["deployment"]
    assert log["stdout"] == "password is ******!\n"
    assert log["outputs"]["dsn"] == {"url": "postgres://app:******@db/app", "parts": ["******"]}


async def test_a_deleted_nodes_urls_answer_404(api: Api) -> None:
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    r = await metadata(api, run["node_id"])
    assert r.status_code == 200
    [entry] = r.json()["deployments"]
    url = urlsplit(_input(entry, "deploy_signal_id"))

    r = await api.call("DELETE", "/v1/clusters/ctl")
    assert r.status_code == 202, r.text
    await api.wait(r.json()["action"]["id"])
    r = await metadata(api, run["node_id"])
    assert r.status_code == 404 and SHORT not in r.text, r.text
    r = await api.http.post(f"{url.path}?{url.query}", json={"deploy_status_code": 0})
    assert r.status_code == 404, r.text


async def test_racing_signals_end_the_run_once(api: Api) -> None:
    """Agents retry, and a hostile node can race its own run's URL with different exit codes:
    every answer names the one stored result, and the run ends with one SIGNALLED event."""
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    [entry] = (await metadata(api, run["node_id"])).json()["deployments"]
    url = urlsplit(_input(entry, "deploy_signal_id"))
    where = f"{url.path}?{url.query}"

    answers = await asyncio.gather(
        *(
            api.http.post(where, json={"deploy_status_code": i % 2, "deploy_stdout": f"r{i}"})
            for i in range(40)
        )
    )
    assert {r.status_code for r in answers} == {200}, [r.text for r in answers]
    ended = await until_status(api, "ctl", "db-setup", answers[0].json()["status"])
    assert {r.json()["status"] for r in answers} == {ended["status"]}
    assert (ended["status"] == "COMPLETE") == (ended["status_code"] == 0), ended
    r = await api.call("GET", "/v1/events", params={"cluster": "ctl", "limit": 10_000})
    signalled = [e for e in r.json()["events"] if e["status"] == "SIGNALLED"]
    assert len(signalled) == 1, signalled


async def test_a_signal_with_nul_or_lone_surrogates_is_kept_not_refused(api: Api) -> None:
    """A script may print a NUL byte: the run's result is kept with U+FFFD in its place (a
    refused signal would leave the run waiting for its timeout); a bad output under such a
    name is still a 422 naming it, and a NUL in the URL is still refused."""
    short_secret(api)
    await api.up(DOC)
    run = await until_status(api, "ctl", "db-setup", "IN_PROGRESS")
    [entry] = (await metadata(api, run["node_id"])).json()["deployments"]
    url = urlsplit(_input(entry, "deploy_signal_id"))
    where = f"{url.path}?{url.query}"

    r = await api.http.post(f"{url.path}%00?{url.query}", json={"deploy_status_code": 0})
    assert r.status_code == 400, r.text
    r = await api.http.post(where, content=b'{"deploy_status_code": 0, "\\ud800x": 1e999}')
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"][0]["path"] == "/\ufffdx", r.text
    body = b'{"deploy_status_code": 0, "deploy_stdout": "a\\u0000b\\ud800c", "dsn": "d\\u0000"}'
    r = await api.http.post(where, content=body)
    assert r.status_code == 200, r.text
    await until_status(api, "ctl", "db-setup", "COMPLETE")
    r = await api.call("GET", f"/v1/nodes/{run['node_id']}/deployments/db-setup")
    log = r.json()["deployment"]
    assert log["stdout"] == "a\ufffdb\ufffdc"
    assert log["outputs"]["dsn"] == "d\ufffd"
