"""Software deployments benchmark: from an API request to every deployment COMPLETE, on `sim`.

Scenarios (each in its own process, real HTTP on loopback, embedded SQLite store):
- `1k-x3-zero-time`: 1,000 nodes, 3 chained deployments on every node (each waits for the
  previous one on all 1,000 nodes), deployments taking no simulated time;
- `1k-x3-2s`: the same with 2 s of simulated time per deployment (floor 3 x 2 s).
The clock starts at `POST /v1/clusters` and stops when `GET /v1/clusters/bench/deployments`
counts all 3,000 COMPLETE (its `counts`, with a one-row page: before issue 23 each look read
every row, a cost of the watching that grew with the nodes). Each prints one JSON line:
scenario, nodes, deployments, seconds, nodes_seconds (request -> cluster ACTIVE),
overhead_ms_per_deployment (wall time beyond the simulated deployment time, per deployment,
node creation included), deploy_overhead_ms (the
same counted from the cluster being ACTIVE, i.e. the deployer's own cost), peak_rss_mb, and
the process's CPU (all threads: the server, the engine and this client) per deployment,
`cpu_ms_per_deployment` and from ACTIVE on `deploy_cpu_ms`: on a loaded machine wall time
mostly measures the load, CPU time much less so.
Target: overhead under 2 ms per deployment.
- `local-host-lost`: `local` with Heat's real agents (polling every 1 s), 2 app servers and a
  load balancer fed their endpoints; the host of one app server fails, and the clock runs until
  its replacement answers `/health`, its deployment ran there and the balancer re-rendered
  (UPDATE): `seconds`, with `serving_seconds` (until the replacement answered) and
  `first_seconds` (the first deployment of the whole cluster, a measure of start-up plus the
  deployments' own time). Target: under 2 x the manager's interval + start-up + deployments.

The software is given to the engine as a `SoftwareSpec` (the deployer's `software_of` hook),
not read from the document, so this measures the engine and API, not the document reader.
Run: `python benchmarks/deployments.py [--quick]` (quick runs only the zero-time scenario).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import os
import queue
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
        max_cluster_nodes=max(10_000, nodes),
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
        cpu0 = time.process_time()  # this process's CPU, every thread: the load matters less
        r = await c.post("/v1/clusters", content=_doc(nodes))
        assert r.status_code == 202, r.text
        location = r.headers["Location"]
        while True:
            try:
                action = (await c.get(location)).json()["action"]
            except httpx.TransportError:
                # The server dropped an idle keep-alive connection while its loop was busy
                # (a 20,000-node create): ask again on a new one.
                await asyncio.sleep(0.05)
                continue
            if action["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
                break
            await asyncio.sleep(0.05)
        nodes_s = time.perf_counter() - t0
        nodes_cpu = time.process_time() - cpu0
        deadline = t0 + max(600.0, nodes * 0.12)  # 20,000 nodes on a loaded machine
        while time.perf_counter() < deadline:
            # One row and the counts of all (issue 23): watching costs the same at any size.
            try:
                got = await c.get("/v1/clusters/bench/deployments", params={"limit": 1})
            except httpx.TransportError:
                continue
            complete = int(got.json()["counts"].get("COMPLETE", 0))
            if complete == total:
                break
            await asyncio.sleep(0.25)
        seconds = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
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
        "cpu_ms_per_deployment": round(cpu / total * 1000, 3),
        "deploy_cpu_ms": round((cpu - nodes_cpu) / total * 1000, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


LOCAL_DOC = """
name: ctl
node_groups:
  - name: app
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
groupings:
  - {name: apart, members: [app], rule: anti-affinity}
instances:
  - name: lb
    profile: {type: server, flavor: m1.tiny, image: cirros}
    depends_on: [app]
software:
  configs:
    app:
      group: script
      inputs: [bind]
      outputs: [endpoint]
      config: |
        #!/bin/sh
        echo "app on $bind" > "$SHOAL_NODE_WORKDIR/app.txt"
        printf 'http://%s/' "$bind" > "$heat_outputs_path.endpoint"
    lb:
      group: script
      inputs: [{name: endpoints, type: CommaDelimitedList}]
      config: |
        #!/bin/sh
        echo "$endpoints" > "$SHOAL_NODE_WORKDIR/backends.txt"
  deployments:
    app: {config: app, target: app, inputs: {bind: {node: address}}}
    lb:
      config: lb
      target: lb
      inputs: {endpoints: {output: app.endpoint, from: all}}
"""


async def _local(name: str, agent_poll_s: float, tick_s: float) -> dict[str, Any]:
    """Heat's real agents on `local`: the host of one app server is lost; timed until its
    replacement answers, its deployment ran there and the balancer re-rendered (UPDATE)."""
    import httpx
    import uvicorn

    from shoal.api.app import create_app
    from shoal.runtime import Runtime
    from shoal.settings import Settings

    home = tempfile.mkdtemp(prefix="shoal-bench-")
    port = _free_port()
    settings = Settings(
        home=home,
        provider="local",
        provider_options={"port": _free_port(), "agent_poll_s": agent_poll_s},
        manage_tick_s=tick_s,
        reconcile_interval_s=1.0,
        poll_s=0.02,
        agent_url=f"http://127.0.0.1:{port}",
    )
    rt = await Runtime.open(settings)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(rt, run_engine=True), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    headers = {"Authorization": f"Bearer {rt.admin_token()}"}
    out: dict[str, Any] = {"scenario": name, "nodes": 3, "agent_poll_s": agent_poll_s}
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60, trust_env=False
    ) as c:

        async def state() -> tuple[dict[str, Any], dict[tuple[str, str], Any]]:
            ns = (await c.get("/v1/nodes", params={"cluster": "ctl"})).json()["nodes"]
            ds = (await c.get("/v1/clusters/ctl/deployments")).json()["deployments"]
            return {n["name"]: n for n in ns}, {(d["deployment"], d["node"]): d for d in ds}

        t0 = time.perf_counter()
        r = await c.post("/v1/clusters", content=LOCAL_DOC)
        assert r.status_code == 202, r.text
        while True:
            nodes, deps = await state()
            if len(deps) == 3 and all(d["status"] == "COMPLETE" for d in deps.values()):
                break
            assert time.perf_counter() - t0 < 300, deps
            await asyncio.sleep(0.1)
        out["first_seconds"] = round(time.perf_counter() - t0, 3)
        old = nodes["app-2"]
        t1 = time.perf_counter()
        assert (await c.post(f"/v1/hosts/{old['host']}/fail")).status_code == 200
        serving_at = None
        while True:
            nodes, deps = await state()
            app2 = nodes.get("app-2") or {}
            moved = app2.get("host") not in (None, old["host"]) and app2.get("address")
            if moved and serving_at is None:
                try:
                    h = await c.get(f"http://{app2['address']}/health", timeout=1)
                    serving_at = time.perf_counter() if h.status_code == 200 else None
                except httpx.HTTPError:
                    pass
            lb = deps.get(("lb", "lb")) or {}
            app = deps.get(("app", "app-2")) or {}
            if (
                moved
                and serving_at is not None
                and app.get("node_id") == app2.get("id")
                and app.get("status") == "COMPLETE"
                and lb.get("action") == "UPDATE"
                and lb.get("status") == "COMPLETE"
            ):
                break
            assert time.perf_counter() - t1 < 300, (nodes, deps)
            await asyncio.sleep(0.1)
        out["seconds"] = round(time.perf_counter() - t1, 3)
        out["serving_seconds"] = round((serving_at or t1) - t1, 3)
        out["deployments"] = 3
        await c.post(f"/v1/hosts/{old['host']}/recover")
        await c.delete("/v1/clusters/ctl")
    server.should_exit = True
    await serving
    await rt.close()
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def _child(args: tuple[Any, ...], q: Any) -> None:
    if args[0].startswith("local"):
        q.put(asyncio.run(_local(*args)))
    else:
        q.put(asyncio.run(_scenario(*args)))


def run(*args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(args, q))
    p.start()
    while True:  # a child that crashed puts nothing: do not wait for it forever
        try:
            out: dict[str, Any] = q.get(timeout=5)
            break
        except queue.Empty:
            if not p.is_alive():
                raise RuntimeError(f"scenario {args[0]} exited with {p.exitcode}") from None
    p.join()
    return out


def main() -> None:
    os.environ.pop("SHOAL_HOME", None)
    scenarios: list[tuple[Any, ...]] = [("1k-x3-zero-time", 1000, 0.0)]
    if "--quick" not in sys.argv:
        scenarios.append(("1k-x3-2s", 1000, 2.0))
        scenarios.append(("local-host-lost", 1.0, 0.2))
    for s in scenarios:
        print(json.dumps(run(*s)), flush=True)


if __name__ == "__main__":
    main()
