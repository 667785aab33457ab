"""Software deployments benchmark: from an API request to every deployment COMPLETE, on `sim`.

Scenarios (each in its own process, real HTTP on loopback, embedded SQLite store):
- `1k-x3-zero-time`: 1,000 nodes, 3 chained deployments on every node (each waits for the
  previous one on all 1,000 nodes), deployments taking no simulated time;
- `1k-x3-2s`: the same with 2 s of simulated time per deployment (floor 3 x 2 s).
The clock starts at `POST /v1/clusters` and stops when `GET /v1/clusters/bench/deployments`
shows all 3,000 COMPLETE. Each prints one JSON line: scenario, nodes, deployments, seconds,
nodes_seconds (request -> cluster ACTIVE), overhead_ms_per_deployment (wall time beyond the
simulated deployment time, per deployment, node creation included), deploy_overhead_ms (the
same counted from the cluster being ACTIVE, i.e. the deployer's own cost), peak_rss_mb.
Target: overhead under 2 ms per deployment.

The software is given to the engine as a `SoftwareSpec` (the deployer's `software_of` hook),
not read from the document, so this measures the engine and API, not the document reader.
Run: `python benchmarks/deployments.py [--quick]` (quick runs only the zero-time scenario).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import resource
import socket
import sys
import tempfile
import time
from typing import Any

CHAIN = 3


def _doc(nodes: int) -> str:
    return (
        "name: bench\nnode_groups:\n  - name: app\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n"
        f"    count: {nodes}\n"
    )


def _software() -> Any:
    from shoal.model.cluster import MemberRef
    from shoal.model.software import (
        ConfigOutput,
        Deployment,
        HookGroup,
        OutputInput,
        SoftwareConfig,
        SoftwareSpec,
    )

    configs = tuple(
        SoftwareConfig(f"step{i}", HookGroup.SCRIPT, f"echo {i}", outputs=(ConfigOutput("out"),))
        for i in range(1, CHAIN + 1)
    )
    deployments = tuple(
        Deployment(
            f"step{i}",
            f"step{i}",
            MemberRef("app"),
            inputs={} if i == 1 else {"previous": OutputInput(f"step{i - 1}", "out")},
        )
        for i in range(1, CHAIN + 1)
    )
    return SoftwareSpec(configs=configs, deployments=deployments)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _scenario(name: str, nodes: int, deploy_s: float) -> dict[str, Any]:
    import httpx
    import uvicorn

    from shoal.api.app import create_app
    from shoal.runtime import Runtime
    from shoal.settings import Settings

    software = _software()
    home = tempfile.mkdtemp(prefix="shoal-bench-")
    settings = Settings(
        home=home,
        provider="sim",
        provider_options={
            "hosts": max(10, nodes // 8),
            "zones": 3,
            "state_path": "memory",
            "deploy_s": deploy_s,
        },
        engine_concurrency=nodes,
        poll_s=0.02,
    )
    rt = await Runtime.open(settings)
    rt.engine.deployer.software_of = lambda _c: software
    rt.deployments.software_of = lambda _c: software
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
    total = nodes * CHAIN
    complete = 0
    nodes_s = None
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=120
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
        nodes_s = time.perf_counter() - t0
        deadline = t0 + 600
        while time.perf_counter() < deadline:
            found = (await c.get("/v1/clusters/bench/deployments")).json()["deployments"]
            complete = sum(1 for d in found if d["status"] == "COMPLETE")
            if complete == total:
                break
            await asyncio.sleep(0.1)
        seconds = time.perf_counter() - t0
    server.should_exit = True
    await serving
    await rt.close()
    floor = CHAIN * deploy_s
    return {
        "scenario": name,
        "nodes": nodes,
        "deployments": total,
        "complete": complete,
        "deploy_s": deploy_s,
        "seconds": round(seconds, 3),
        "nodes_seconds": round(nodes_s, 3),
        "overhead_ms_per_deployment": round((seconds - floor) / total * 1000, 3),
        "deploy_overhead_ms": round((seconds - nodes_s - floor) / total * 1000, 3),
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
    scenarios: list[tuple[Any, ...]] = [("1k-x3-zero-time", 1000, 0.0)]
    if "--quick" not in sys.argv:
        scenarios.append(("1k-x3-2s", 1000, 2.0))
    for s in scenarios:
        print(json.dumps(run(*s)), flush=True)


if __name__ == "__main__":
    main()
