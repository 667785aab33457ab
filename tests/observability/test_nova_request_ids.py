"""A request id followed from Shoal's API into Nova (issue 27), on the real Nova harness.

A cluster created with `X-Openstack-Request-Id: req-…` is created in Nova by the engine with
that id as `X-OpenStack-Request-ID`, and Nova's API pipeline (oslo.middleware's request_id)
accepts it as the request's global request id — the one Nova's Keystone context carries, logs
and forwards to Cinder, Neutron and Glance. The harness keeps Nova's own log lines in memory
and its noauth context does not copy the id, so `tests/nova/cloud.py` writes what the pipeline
accepted to the harness's log; the test reads it there. (Not proven here: a real Nova log line.)
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from shoal.api.app import create_app
from shoal.clock import SystemClock
from shoal.runtime import Runtime
from shoal.settings import Settings
from tests.api.conftest import Api
from tests.nova.conftest import Peer, nova
from tests.support.server import eventually

__all__ = ["nova"]  # the fixture, imported for pytest
GIVEN = "req-5e1f0c2a-9b3d-4e7f-a1c2-d3e4f5a6b7c8"
DOC = """
name: followed
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
"""


@pytest.fixture
async def api(nova: Peer, tmp_path: Path) -> AsyncIterator[Api]:
    settings = Settings(
        home=tmp_path / "home",
        provider="openstack",
        provider_options={
            "auth_type": "none",
            "compute_endpoint": nova.url,
            "network": "none",
            "poll_interval_s": 0.2,
            "boot_timeout_s": 120,
        },
        manage=False,
        retry_backoff_s=0.0,
    )
    runtime = await Runtime.open(settings, clock=SystemClock())
    try:
        assert runtime.new_admin_token is not None
        await runtime.engine.start()
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
            yield Api(http, runtime, runtime.clock, runtime.new_admin_token)  # type: ignore[arg-type]
    finally:
        await runtime.close()


async def test_nova_takes_the_request_id_as_its_global_request_id(api: Api, nova: Peer) -> None:
    r = await api.http.post(
        "/v1/clusters", content=DOC, headers={**api.auth, "X-Openstack-Request-Id": GIVEN}
    )
    assert r.status_code == 202, r.text
    action = await api.wait(r.json()["action"]["id"])
    assert action["status"] == "SUCCEEDED", action
    assert action["request_id"] == GIVEN

    def creates() -> list[str]:
        text = nova.log.read_text(errors="replace")
        return re.findall(rf"global_request_id={GIVEN} request_id=(req-\S+) POST /servers\b", text)

    found = eventually(lambda: len(creates()) >= 2 and creates(), timeout_s=30)
    # Nova's own request ids differ per call; the global one is the API request's.
    assert len(set(found)) == len(found)
    r = await api.call("DELETE", "/v1/clusters/followed")
    assert r.status_code == 202, r.text
    assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
