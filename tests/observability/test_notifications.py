"""Notifications on the bus (issue 27): a real consumer on the machine's RabbitMQ receives
Senlin-shaped `cluster.create.start`/`.end` (and node, scaling) notifications, none of which
carries a secret; a bus that is gone drops notifications (counted) and never fails an action."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import kombu
import pytest

from shoal.api.app import create_app
from shoal.clock import ManualClock
from shoal.runtime import Runtime
from shoal.settings import Settings
from shoal.telemetry.metrics import NOTIFICATIONS
from shoal.telemetry.notify import BusNotifier
from tests.api.conftest import Api

BUS = "rabbit://guest:guest@127.0.0.1:5672/"
AMQP = "amqp://guest:guest@127.0.0.1:5672//"  # the same bus, as kombu names it
HIDDEN = "hidden-Pa55-4f1c9e"
DOC = f"""
name: noted
parameters:
  pw: {{type: string, hidden: true, default: "{HIDDEN}"}}
node_groups:
  - name: web
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: 2
    max: 10
    scaling: {{number: 1}}
software:
  configs:
    cfg: {{group: script, config: "#!/bin/sh\\necho ok", inputs: [{{name: pw}}]}}
  deployments:
    on_web: {{config: cfg, target: web, inputs: {{pw: {{secret: pw}}}}}}
"""


async def _api(home: Path, url: str, topic: str) -> AsyncIterator[Api]:
    settings = Settings(
        home=home,
        provider="sim",
        provider_options={"state_path": "memory"},
        manage=False,
        retry_backoff_s=0.0,
        notifications_url=url,
        notifications_topic=topic,
        notifications_buffer=50,
    )
    clock = ManualClock()
    runtime = await Runtime.open(settings, clock=clock)
    try:
        assert runtime.new_admin_token is not None
        await runtime.engine.start()
        transport = httpx.ASGITransport(app=create_app(runtime))
        async with httpx.AsyncClient(transport=transport, base_url="http://shoal") as http:
            yield Api(http, runtime, clock, runtime.new_admin_token)
    finally:
        await runtime.close()


@pytest.fixture
def topic() -> Iterator[str]:
    name = f"shoal-test-{uuid.uuid4().hex[:8]}"
    yield name
    with kombu.Connection(AMQP) as conn:
        for priority in ("info", "error"):
            kombu.Queue(f"{name}.{priority}", channel=conn.default_channel).delete()


def _drain(topic: str, until: set[str], timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Every notification on `topic`'s queues, until the event types `until` all arrived."""
    got: list[dict[str, Any]] = []
    exchange = kombu.Exchange("openstack", type="topic", durable=False)
    with kombu.Connection(AMQP) as conn:
        queues = [
            kombu.Queue(f"{topic}.{p}", exchange, routing_key=f"{topic}.{p}", durable=False)
            for p in ("info", "error")
        ]

        def keep(body: Any, message: kombu.Message) -> None:
            envelope = json.loads(body) if isinstance(body, str | bytes) else body
            got.append(json.loads(envelope["oslo.message"]))
            message.ack()

        with conn.Consumer(queues, callbacks=[keep], accept=["json"]):
            deadline = time.monotonic() + timeout_s
            while not until <= {m["event_type"] for m in got}:
                assert time.monotonic() < deadline, sorted(m["event_type"] for m in got)
                with contextlib.suppress(TimeoutError):
                    conn.drain_events(timeout=1)
            for _ in range(3):  # what is already queued behind them
                try:
                    conn.drain_events(timeout=0.5)
                except TimeoutError:
                    break
    return got


async def deployed(api: Api, count: int) -> None:
    """Until `count` deployments of the cluster completed (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        r = await api.call("GET", "/v1/clusters/noted/deployments")
        assert r.status_code == 200, r.text
        rows = r.json()["deployments"]
        if sum(1 for d in rows if d["status"] == "COMPLETE") >= count:
            return
        assert time.monotonic() < deadline, rows
        await asyncio.sleep(0.1)


async def test_a_consumer_receives_senlins_notifications_without_secrets(
    tmp_path: Path, topic: str
) -> None:
    async for api in _api(tmp_path / "home", BUS, topic):
        await api.up(DOC)
        r = await api.call(
            "POST", "/v1/receivers", json={"name": "out", "cluster": "noted", "action": "scale_out"}
        )
        assert r.status_code == 201, r.text
        hook = r.json()["receiver"]["webhook_url"]
        token = hook.split("token=")[1]
        r = await api.http.post(hook)
        assert r.status_code == 202, r.text
        assert (await api.wait(r.json()["action"]["id"]))["status"] == "SUCCEEDED"
        await deployed(api, 3)
    want = {
        "cluster.create.start",
        "cluster.create.end",
        "node.create.end",
        "cluster.scale_out.end",
        "deployment.create.end",
    }
    got = await asyncio.to_thread(_drain, topic, want)
    start = next(m for m in got if m["event_type"] == "cluster.create.start")
    assert start["publisher_id"].startswith("shoal-engine:")
    assert start["priority"] == "INFO"
    body = start["payload"]
    assert body["senlin_object.name"] == "ClusterActionPayload"
    data = body["senlin_object.data"]
    cluster = data["cluster"]["senlin_object.data"]
    action = data["action"]["senlin_object.data"]
    assert cluster["name"] == "noted" and action["action"] == "CLUSTER_CREATE"
    assert set(cluster) >= {"id", "name", "status", "project", "created_at", "dependents"}
    assert set(action) >= {"id", "target", "action", "status", "inputs", "outputs", "project"}
    end = next(m for m in got if m["event_type"] == "cluster.create.end")
    assert end["payload"]["senlin_object.data"]["action"]["senlin_object.data"]["status"] == (
        "SUCCEEDED"
    )
    wire = json.dumps(got)
    assert HIDDEN not in wire and token not in wire


async def test_a_lost_bus_never_fails_an_action(tmp_path: Path) -> None:
    before = (
        NOTIFICATIONS.labels("dropped")._value.get() + NOTIFICATIONS.labels("failed")._value.get()
    )
    # Nothing listens on port 9: every send fails, the buffer (50) overflows and drops.
    async for api in _api(tmp_path / "home", "rabbit://guest:guest@127.0.0.1:9/", "lost"):
        # The publisher is a process of its own: on a loaded machine it may still be starting
        # when the create ends (and be stopped before it tried a send); wait until it runs.
        notifier = api.runtime.engine.notifier
        assert isinstance(notifier, BusNotifier)
        assert await asyncio.to_thread(notifier.wait_ready, 120.0), "the publisher never started"
        await api.up(DOC.replace("count: 2", "count: 40").replace("max: 10", "max: 40"))

    def lost() -> float:
        return float(
            NOTIFICATIONS.labels("dropped")._value.get()
            + NOTIFICATIONS.labels("failed")._value.get()
        )

    # The publisher's failures reach the metric through a counting thread (once a second, and
    # once more when it stops), which a loaded machine may run late: wait for it, bounded.
    deadline = time.monotonic() + 60.0
    while lost() <= before and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert lost() > before
