"""Recovery benchmark: from a failure to its repair, with the engine's manager doing the work.

Scenarios (each in its own process, embedded: store, provider and engine in-process, no HTTP):
- `local-1s`: the `local` provider (real node processes on loopback), real clock, manager tick
  0.2 s, reconcile every 1 s; a 6-node cluster with an http health check every 1 s (failures 2,
  grace 3 s, recovery rebuild). One node's process is killed at a time (5 kills by default);
  each is timed from the kill to its node answering `GET /health` again on its address.
  Target: every recovery under 2 x interval + the start-up time of one node, which is measured
  too (`startup_s`: a 1-node cluster from request to ACTIVE). The reconciler, also every 1 s,
  usually sees the dead process first and recreates the node (`repairs` says which did it).
- `local-1s-health-only`: the same with drift repair slowed to every 60 s, so the health check
  must notice (2 failed checks) and its `rebuild` must repair.
- `sim-100-of-5000`: 5,000 nodes on `sim` (no latency, state in memory), real clock, reconcile
  every 1 s; whole hosts fail at once until ~100 nodes are lost; each is timed from the failure
  to its replacement's node row turning ACTIVE (the time of its ACTIVE event, written in the
  same transaction). `planned_s`, `settled_s`: when the recovery was planned, and done.
Each prints one JSON line: scenario, failures, check_interval_s, median_recovery_s,
max_recovery_s, rule_violations (hard violations of the final node -> host map, checked by
`verify_placement` against the declared cluster), and more.
Run: `python benchmarks/recovery.py [--only SCENARIO] [--kills 5]
[--sim-nodes 5000] [--sim-lost 100]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

LOCAL_DOC = """
name: web
node_groups:
  - name: web
    profile: {{type: server, flavor: m1.tiny, image: cirros}}
    count: {count}
    health:
      check: http
      path: /health
      interval_s: {interval}
      failures: 2
      grace_s: 3
      recovery: rebuild
groupings:
  - {{name: zones, members: [web], rule: spread, scope: zone}}
  - {{name: apart, members: [web], rule: anti-affinity, max_per_domain: 2}}
"""

STARTUP_DOC = """
name: startup
node_groups:
  - name: one
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 1
"""


def _sim_doc(nodes: int, interval: float) -> str:
    groups = max(1, nodes // 500)
    per = nodes // groups
    names = [f"g{g + 1}" for g in range(groups)]
    lines = [
        "name: big",
        f"health: {{check: provider, interval_s: {interval}, failures: 2, grace_s: 5,",
        "         recovery: replace}",
        "node_groups:",
    ]
    for g, name in enumerate(names):
        count = per if g < groups - 1 else nodes - per * (groups - 1)
        lines += [
            f"  - name: {name}",
            "    profile: {type: server, flavor: m1.tiny, image: cirros}",
            f"    count: {count}",
        ]
    members = ", ".join(names)
    lines += [
        "groupings:",
        f"  - {{name: zones, members: [{members}], rule: spread, scope: zone}}",
        f"  - {{name: apart, members: [{members}], rule: anti-affinity, max_per_domain: 8}}",
    ]
    return "\n".join(lines) + "\n"


# -- shared ------------------------------------------------------------------------------------


def _admin(rt: Any) -> Any:
    from shoal.store import auth
    from shoal.store.records import Principal

    with rt.db.reading() as conn:
        project = auth.project_id_by_name(conn, auth.ADMIN_PROJECT)
    assert project is not None
    return Principal(project, True)


def _read(rt: Any, cid: str) -> tuple[Any, list[Any]]:
    from shoal.store import clusters as cluster_repo
    from shoal.store import nodes as node_repo

    with rt.db.reading() as conn:
        return cluster_repo.get_cluster(conn, cid), node_repo.list_nodes(conn, cid)


def _settled(rt: Any, cid: str, count: int) -> bool:
    from shoal.model.enums import NodeStatus

    cluster, nodes = _read(rt, cid)
    return (
        cluster is not None
        and cluster.lock_action_id is None
        and len(nodes) == count
        and all(n.status is NodeStatus.ACTIVE for n in nodes)
    )


async def _until(check: Any, limit: float, poll: float = 0.02) -> float:
    """Wait (really) until `check()` holds; the time it took. TimeoutError after `limit`."""
    t0 = time.perf_counter()
    while not await asyncio.to_thread(check):
        if time.perf_counter() - t0 > limit:
            raise TimeoutError(f"not done after {limit} s")
        await asyncio.sleep(poll)
    return time.perf_counter() - t0


async def _create(rt: Any, doc: str, count: int, limit: float) -> tuple[str, float]:
    t0 = time.perf_counter()
    sub = await asyncio.to_thread(rt.service.create, _admin(rt), doc)
    cid = sub.cluster.id
    await _until(lambda: _settled(rt, cid, count), limit)
    return cid, time.perf_counter() - t0


async def _violations(rt: Any, cid: str) -> list[str]:
    from shoal.documents import cluster_from_tree
    from shoal.placement.verify import verify_placement

    inventory = await rt.provider.inventory()
    cluster, nodes = _read(rt, cid)
    spec = cluster_from_tree(cluster.document, inventory)
    hosts = {n.name: n.host for n in nodes if n.host is not None}
    return list(verify_placement(spec, inventory, hosts).hard_violations)


def _repairs(rt: Any, cid: str) -> dict[str, int]:
    """How the manager repaired things: counts of `how` over every CLUSTER_RECOVER action."""
    from shoal.model.enums import ActionKind
    from shoal.store import actions as action_repo

    with rt.db.reading() as conn:
        found = action_repo.list_actions(conn, None, cluster_id=cid, top_level=True)
    hows = Counter(
        r["how"]
        for a in found
        if a.kind is ActionKind.CLUSTER_RECOVER
        for r in a.inputs.get("repairs", [])
    )
    return dict(hows)


def _last_event_id(rt: Any) -> int:
    from sqlalchemy import func, select

    from shoal.store.tables import events

    with rt.db.reading() as conn:
        return int(conn.execute(select(func.max(events.c.id))).scalar() or 0)


def _events_after(rt: Any, cid: str, cursor: int) -> list[Any]:
    from shoal.store.events import list_events

    with rt.db.reading() as conn:
        return list_events(conn, None, cluster_id=cid, after_id=cursor, limit=10_000)


def _summary(times: list[float]) -> dict[str, float | None]:
    if not times:
        return {"median_recovery_s": None, "max_recovery_s": None}
    return {
        "median_recovery_s": round(statistics.median(times), 3),
        "max_recovery_s": round(max(times), 3),
    }


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# -- local-1s ----------------------------------------------------------------------------------


async def _local(
    name: str, kills: int, interval: float, count: int, reconcile_s: float
) -> dict[str, Any]:
    import httpx

    from shoal.model.enums import Health, NodeStatus
    from shoal.providers.local.provider import LocalProvider
    from shoal.runtime import Runtime
    from shoal.settings import Settings

    home = tempfile.mkdtemp(prefix="shoal-recovery-")
    os.environ["SHOAL_HOME"] = home
    settings = Settings(
        home=Path(home),
        provider="local",
        manage_tick_s=0.2,
        reconcile_interval_s=reconcile_s,
        poll_s=0.02,
        retry_backoff_s=0.2,
    )
    rt = await Runtime.open(settings)
    provider = rt.provider
    assert isinstance(provider, LocalProvider)
    await rt.engine.start()
    times: list[float] = []
    out: dict[str, Any] = {}
    try:
        _, startup = await _create(rt, STARTUP_DOC, 1, 60)
        doc = LOCAL_DOC.format(count=count, interval=interval)
        cid, created = await _create(rt, doc, count, 120)
        # Every node judged healthy once (past its grace period) before the first kill.
        await _until(
            lambda: all(n.health == Health.HEALTHY for n in _read(rt, cid)[1]), 30 + 3 * interval
        )
        async with httpx.AsyncClient(timeout=0.5) as client:

            async def answers(address: str | None) -> bool:
                if not address:
                    return False
                try:
                    r = await client.get(f"http://{address}/health")
                except httpx.HTTPError:
                    return False
                return r.status_code == 200

            for k in range(kills):
                victim = sorted(_read(rt, cid)[1], key=lambda n: n.name)[k % count]
                assert await answers(victim.address), f"{victim.name} is not up before the kill"
                t_kill = time.perf_counter()
                await provider.kill_node_process(victim.provider_id)
                seen_down = False
                while True:
                    _, nodes = await asyncio.to_thread(_read, rt, cid)
                    node = next(n for n in nodes if n.name == victim.name)
                    up = node.status is NodeStatus.ACTIVE and await answers(node.address)
                    if up and seen_down:
                        break
                    seen_down |= not up
                    if time.perf_counter() - t_kill > 60:
                        raise TimeoutError(f"{victim.name} not back after 60 s")
                    await asyncio.sleep(0.01)
                times.append(time.perf_counter() - t_kill)
                await _until(lambda: _settled(rt, cid, count), 60)
        target = 2 * interval + startup
        out = {
            "nodes": count,
            "create_s": round(created, 3),
            "startup_s": round(startup, 3),
            "target_s": round(target, 3),
            "within_target": all(t < target for t in times),
            "recoveries_s": [round(t, 3) for t in times],
            "repairs": _repairs(rt, cid),
            "rule_violations": await _violations(rt, cid),
        }
    finally:
        await rt.engine.stop()
        await provider.purge()  # the node processes outlive the provider otherwise
        await rt.close()
        shutil.rmtree(home, ignore_errors=True)
    return {
        "scenario": name,
        "failures": len(times),
        "check_interval_s": interval,
        "reconcile_interval_s": reconcile_s,
        **_summary(times),
        **out,
        "peak_rss_mb": _rss_mb(),
    }


# -- sim-100-of-5000 ---------------------------------------------------------------------------


async def _sim(nodes: int, lost_target: int, hosts: int, zones: int) -> dict[str, Any]:
    from shoal.providers.sim.provider import SimProvider
    from shoal.runtime import Runtime
    from shoal.settings import Settings

    home = tempfile.mkdtemp(prefix="shoal-recovery-")
    os.environ["SHOAL_HOME"] = home
    interval = 1.0
    settings = Settings(
        home=Path(home),
        provider="sim",
        provider_options={"hosts": hosts, "zones": zones, "state_path": "memory"},
        manage_tick_s=0.2,
        reconcile_interval_s=interval,
        poll_s=0.02,
        retry_backoff_s=0.2,
    )
    rt = await Runtime.open(settings)
    provider = rt.provider
    assert isinstance(provider, SimProvider)
    await rt.engine.start()
    try:
        cid, created = await _create(rt, _sim_doc(nodes, interval), nodes, 300)
        _, before = _read(rt, cid)
        per_host: dict[str, list[str]] = {}
        for n in before:
            per_host.setdefault(n.host, []).append(n.name)
        order = sorted(per_host)
        random.Random(100).shuffle(order)
        failed: list[str] = []
        lost: set[str] = set()
        for h in order:
            if len(lost) >= lost_target:
                break
            failed.append(h)
            lost.update(per_host[h])
        old_ids = {n.id for n in before}
        cursor = await asyncio.to_thread(_last_event_id, rt)
        t_fail = time.time()  # the engine's clock is the system clock: events carry its time
        for h in failed:
            await provider.fail_host(h)
        down = set(failed)
        back: dict[str, float] = {}
        marks: dict[str, float] = {}

        def scan(found: list[Any]) -> None:
            for ev in found:
                if ev.obj_type == "CLUSTER" and ev.status == "RECOVERING" and "plan" in ev.message:
                    marks.setdefault("planned_s", round(ev.ts - t_fail, 3))
                elif ev.obj_type == "CLUSTER" and ev.status == "ACTIVE":
                    marks.setdefault("settled_s", round(ev.ts - t_fail, 3))
                elif (
                    ev.obj_type == "NODE"
                    and ev.status == "ACTIVE"
                    and ev.obj_name in lost
                    and ev.node_id not in old_ids
                ):
                    back.setdefault(ev.obj_name, ev.ts - t_fail)

        while len(back) < len(lost):
            if time.time() - t_fail > 300:
                raise TimeoutError(f"{len(lost) - len(back)} nodes not back after 300 s")
            await asyncio.sleep(0.1)
            found = await asyncio.to_thread(_events_after, rt, cid, cursor)
            cursor = found[-1].id if found else cursor
            scan(found)
        await _until(lambda: _settled(rt, cid, nodes), 120)
        scan(await asyncio.to_thread(_events_after, rt, cid, cursor))
        _, after = _read(rt, cid)
        assert all(n.host not in down for n in after), "a node is on a failed host"
        times = sorted(back.values())
        out = {
            "nodes": nodes,
            "hosts": hosts,
            "hosts_failed": len(failed),
            "create_s": round(created, 3),
            "p90_recovery_s": round(times[int(0.9 * (len(times) - 1))], 3),
            **marks,
            "repairs": _repairs(rt, cid),
            "rule_violations": await _violations(rt, cid),
        }
    finally:
        await rt.close()
        shutil.rmtree(home, ignore_errors=True)
    return {
        "scenario": "sim-100-of-5000" if (nodes, lost_target) == (5000, 100) else "sim",
        "failures": len(lost),
        "check_interval_s": interval,
        "reconcile_interval_s": interval,
        **_summary(times),
        **out,
        "peak_rss_mb": _rss_mb(),
    }


# -- running -----------------------------------------------------------------------------------


def _child(kind: str, args: tuple[Any, ...], q: Any) -> None:
    try:
        coro = _local(*args) if kind == "local" else _sim(*args)
        q.put(asyncio.run(coro))
    except Exception as e:  # reported as a line, so one scenario's failure does not hide others
        q.put({"scenario": kind, "error": repr(e)})


def run(kind: str, *args: Any) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(kind, args, q))
    p.start()
    out: dict[str, Any] = q.get()
    p.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=("local-1s", "local-1s-health-only", "sim-100-of-5000"))
    ap.add_argument("--kills", type=int, default=5, help="local-1s: processes killed in turn")
    ap.add_argument("--interval", type=float, default=1.0, help="local-1s: check interval (s)")
    ap.add_argument("--sim-nodes", type=int, default=5000)
    ap.add_argument("--sim-lost", type=int, default=100, help="sim: nodes to lose (about)")
    ap.add_argument("--sim-hosts", type=int, default=1000)
    ap.add_argument("--sim-zones", type=int, default=4)
    a = ap.parse_args()
    if a.only in (None, "local-1s"):
        print(json.dumps(run("local", "local-1s", a.kills, a.interval, 6, 1.0)), flush=True)
    if a.only in (None, "local-1s-health-only"):
        # Drift repair slowed to 60 s, so the http health check (and its rebuild) does the work.
        line = run("local", "local-1s-health-only", a.kills, a.interval, 6, 60.0)
        print(json.dumps(line), flush=True)
    if a.only in (None, "sim-100-of-5000"):
        sim = (a.sim_nodes, a.sim_lost, a.sim_hosts, a.sim_zones)
        print(json.dumps(run("sim", *sim)), flush=True)


if __name__ == "__main__":
    main()
