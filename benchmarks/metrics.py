"""Observability benchmark (issue 27): what /metrics and the bus cost, on the `sim` provider.

Scenarios (each in its own process, real HTTP on loopback, embedded SQLite store):
- `scrape-1k`, `scrape-10k`: a cluster of 1,000 / 10,000 sim nodes is created, then `GET
  /metrics` is timed: `seconds` for the first (uncached, database-reading) scrape, `bytes` of
  its body, `cached_seconds` for one within the cache's 2 s, `series` the sample lines.
- `overhead`: the orchestration benchmark's `1k-zero-latency` (benchmarks/orchestration.py),
  `rounds` times each with metrics recorded and /metrics scraped every second ("on") and with
  recording off and no scrapes ("off"), alternating in the same run; `ratio` = median on /
  median off (1.0: free).
- `notifications`: the same 1,000-node create with notifications to the machine's RabbitMQ
  (127.0.0.1:5672) vs off; `ratio` of create times (bus on / off), `per_second` notifications
  the publisher sent while the create ran, `sent`, `dropped`.
Each prints one JSON line with `scenario`. Run: `python benchmarks/metrics.py [--quick]`
(quick: scrape-1k, overhead with 2 rounds, notifications; no 10k).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from orchestration import _doc, _free_port

BUS = "rabbit://guest:guest@127.0.0.1:5672/"


async def _serve(
    nodes: int, *, record: bool, scrape_every_s: float = 0.0, bus: str | None = None
) -> dict[str, Any]:
    import httpx
    import uvicorn

    from shoal.api.app import create_app
    from shoal.runtime import Runtime
    from shoal.settings import Settings
    from shoal.telemetry import metrics
    from shoal.telemetry.notify import BusNotifier

    metrics.enabled = record
    topic = f"shoal-bench-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        home=tempfile.mkdtemp(prefix="shoal-bench-"),
        provider="sim",
        provider_options={"hosts": max(10, nodes // 8), "zones": 3, "state_path": "memory"},
        engine_concurrency=1000,
        poll_s=0.02,
        notifications_url=bus,
        notifications_topic=topic,
        notifications_buffer=100_000,
    )
    rt = await Runtime.open(settings)
    if isinstance(rt.engine.notifier, BusNotifier):  # its start-up is not the create's cost
        assert await asyncio.to_thread(rt.engine.notifier.wait_ready, 60)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(rt, run_engine=True), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    headers = {"Authorization": f"Bearer {rt.admin_token()}"}
    out: dict[str, Any] = {"nodes": nodes}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=300
    ) as c:
        scrapes = 0

        async def scraper() -> None:
            nonlocal scrapes
            while True:
                await asyncio.sleep(scrape_every_s)
                assert (await c.get("/metrics")).status_code == 200
                scrapes += 1

        scraping = asyncio.create_task(scraper()) if scrape_every_s else None
        notifier = rt.engine.notifier
        sent_before = notifier.sent if isinstance(notifier, BusNotifier) else 0
        t0 = time.perf_counter()
        r = await c.post("/v1/clusters", content=_doc(nodes))
        assert r.status_code == 202, r.text
        while True:
            action = (await c.get(r.headers["Location"])).json()["action"]
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                break
            await asyncio.sleep(0.05)
        out["create_seconds"] = round(time.perf_counter() - t0, 3)
        sent_now = notifier.sent if isinstance(notifier, BusNotifier) else 0
        out["sent_during_create"] = sent_now - sent_before
        out["status"] = action["status"]
        if scraping is not None:
            scraping.cancel()
            out["scrapes"] = scrapes
        await asyncio.sleep(2.5)  # past the scrape cache
        t1 = time.perf_counter()
        body = (await c.get("/metrics")).content
        out["seconds"] = round(time.perf_counter() - t1, 4)
        t2 = time.perf_counter()
        await c.get("/metrics")
        out["cached_seconds"] = round(time.perf_counter() - t2, 4)
        out["bytes"] = len(body)
        out["series"] = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
    server.should_exit = True
    await serving
    await rt.close()  # sends what is still buffered
    out["sent"] = _sent()
    out["dropped"] = _count("dropped")
    if bus is not None:
        _drop_queues(topic)
    return out


def _count(outcome: str) -> int:
    from shoal.telemetry.metrics import NOTIFICATIONS

    return int(NOTIFICATIONS.labels(outcome)._value.get())


def _sent() -> int:
    return _count("sent")


def _drop_queues(topic: str) -> None:
    import kombu

    with kombu.Connection("amqp://guest:guest@127.0.0.1:5672//") as conn:
        for priority in ("info", "error"):
            kombu.Queue(f"{topic}.{priority}", channel=conn.default_channel).delete()


def _child(kwargs: dict[str, Any], q: Any) -> None:
    nodes = kwargs.pop("nodes")
    q.put(asyncio.run(_serve(nodes, **kwargs)))


def run(**kwargs: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(kwargs, q))
    p.start()
    out: dict[str, Any] = q.get()
    p.join()
    return out


def main() -> None:
    os.environ.pop("SHOAL_HOME", None)
    quick = "--quick" in sys.argv
    for name, nodes in [("scrape-1k", 1000)] + ([] if quick else [("scrape-10k", 10_000)]):
        r = run(nodes=nodes, record=True)
        keep = ("nodes", "seconds", "bytes", "cached_seconds", "series", "create_seconds")
        print(json.dumps({"scenario": name, **{k: r[k] for k in keep}}), flush=True)
    rounds = 2 if quick else 5
    on: list[float] = []
    off: list[float] = []
    for _ in range(rounds):
        on.append(run(nodes=1000, record=True, scrape_every_s=1.0)["create_seconds"])
        off.append(run(nodes=1000, record=False)["create_seconds"])
    print(
        json.dumps(
            {
                "scenario": "overhead",
                "base": "1k-zero-latency",
                "rounds": rounds,
                "on_seconds": on,
                "off_seconds": off,
                "ratio": round(statistics.median(on) / statistics.median(off), 3),
            }
        ),
        flush=True,
    )
    bus_on: list[dict[str, Any]] = []
    bus_off: list[float] = []
    for _ in range(rounds):
        bus_on.append(run(nodes=1000, record=True, bus=BUS))
        bus_off.append(run(nodes=1000, record=True)["create_seconds"])
    on_s = [r["create_seconds"] for r in bus_on]
    median = sorted(bus_on, key=lambda r: r["create_seconds"])[len(bus_on) // 2]
    print(
        json.dumps(
            {
                "scenario": "notifications",
                "nodes": 1000,
                "rounds": rounds,
                "on_seconds": on_s,
                "off_seconds": bus_off,
                "ratio": round(statistics.median(on_s) / statistics.median(bus_off), 3),
                "sent_during_create": median["sent_during_create"],
                "per_second": round(median["sent_during_create"] / median["create_seconds"], 1),
                "sent": median["sent"],
                "dropped": median["dropped"],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
