"""Orchestration benchmark: from an API request to every node ACTIVE, on the `sim` provider.

Scenarios (each in its own process, real HTTP on loopback, embedded SQLite store):
- `1k-zero-latency`: 1,000 nodes, no simulated latency. Target: under 5 s.
- `1k-2s-boot`: 1,000 nodes, 2 s simulated boot each, engine concurrency 250: wall time should
  be close to 2 s x ceil(1000 / 250) = 8 s (the engine must not be the bottleneck).
- `5k-in-flight-10s-boot`: 5,000 nodes booting for 10 s each, all in flight at once: one engine
  keeping thousands of slow provider calls going (floor 10 s).
- `10k-zero-latency`: 10,000 nodes. Target: under 60 s.
Each prints one JSON line: scenario, nodes, latency_s, seconds, overhead_ms_per_node
(wall time beyond the simulated latency's floor, per node), peak_rss_mb.
Run: `python benchmarks/orchestration.py [--quick]` (quick skips 10k).
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing as mp
import os
import resource
import socket
import sys
import tempfile
import time
from typing import Any


def _doc(nodes: int) -> str:
    groups = max(1, nodes // 500)
    per = nodes // groups
    lines = ["name: bench", "node_groups:"]
    for g in range(groups):
        count = per if g < groups - 1 else nodes - per * (groups - 1)
        lines += [
            f"  - name: g{g + 1}",
            "    profile: {type: server, flavor: m1.tiny, image: cirros}",
            f"    count: {count}",
        ]
    lines += ["groupings:", "  - {name: spread, members: [g1], rule: spread, scope: zone}"]
    return "\n".join(lines) + "\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _scenario(name: str, nodes: int, latency: float, concurrency: int) -> dict[str, Any]:
    import httpx
    import uvicorn

    from shoal.api.app import create_app
    from shoal.runtime import Runtime
    from shoal.settings import Settings

    home = tempfile.mkdtemp(prefix="shoal-bench-")
    settings = Settings(
        home=home,
        provider="sim",
        provider_options={
            "hosts": max(10, nodes // 8),
            "zones": 3,
            "create_latency_s": latency,
            "state_path": "memory",
        },
        engine_concurrency=concurrency,
        poll_s=0.02,
    )
    rt = await Runtime.open(settings)
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
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60
    ) as c:
        t0 = time.perf_counter()
        r = await c.post("/v1/clusters", content=_doc(nodes))
        assert r.status_code == 202, r.text
        location = r.headers["Location"]
        while True:
            action = (await c.get(location)).json()["action"]
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                break
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - t0
        cluster = (await c.get("/v1/clusters/bench")).json()["cluster"]
    active = int(cluster["node_counts"]["by_status"].get("ACTIVE", 0))
    server.should_exit = True
    await serving
    await rt.close()
    floor = latency * math.ceil(nodes / concurrency)
    return {
        "scenario": name,
        "nodes": nodes,
        "active": active,
        "status": action["status"],
        "latency_s": latency,
        "concurrency": concurrency,
        "seconds": round(seconds, 3),
        "floor_s": round(floor, 3),
        "overhead_ms_per_node": round((seconds - floor) / nodes * 1000, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _child(args: tuple[Any, ...], q: Any) -> None:
    q.put(asyncio.run(_scenario(*args)))


def run(*args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(args, q))
    p.start()
    out: dict[str, Any] = q.get()
    p.join()
    return out


def main() -> None:
    os.environ.pop("SHOAL_HOME", None)
    scenarios: list[tuple[Any, ...]] = [
        ("1k-zero-latency", 1000, 0.0, 1000),
        ("1k-2s-boot", 1000, 2.0, 250),
        ("5k-in-flight-10s-boot", 5000, 10.0, 5000),
    ]
    if "--quick" not in sys.argv:
        scenarios.append(("10k-zero-latency", 10_000, 0.0, 1000))
    for s in scenarios:
        print(json.dumps(run(*s)), flush=True)


if __name__ == "__main__":
    main()
