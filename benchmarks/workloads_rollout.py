"""The `sim-rollout` scenario of benchmarks/workloads.py (issue 22, item 4): a real engine
(manager, workload keeper, rollouts) over a SQLite store and the sim provider, on the system
clock. 100 replicas of one workload on 25 servers are up and ready; an image change rolls them
in batches of `max_unavailable` (10), each batch after the previous reads ready: `seconds` is
the document's update -> every replica on the new revision, `batches` how many. Then a second
image change, and once half of its batches are done the sim runtime starts refusing that image
(a registry losing it): the next batch fails and every replica rolls back to the previous
template in batches: `rollback_s` is the refusal -> rolled back, `failed_after_batches` the
batches that had passed, `rollback_batches` the rollback's, `rolled_back` whether every replica
runs the previous revision again. CPU is this process's (the engine runs in it).

Then `max_surge` (issue 22, item 2): a third image with `max_surge: 10` and room for one more
replica per server (`max_per_node: 5`): ten surge replicas are placed by the second-level solver
beside the hundred, and each batch replaces `max_unavailable` + the ready surge replicas:
`surge_seconds`, `surge_batches`, `surge_started` (surge replicas the events name),
`surge_peak_replicas` (the most rows seen at once, at most 110) and `surge_min_ready` (the
fewest ready replicas seen while it rolled, polled every 50 ms: at least 90)."""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shoal.engine import Engine
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.store.workload_rollouts import RolloutRow

ADMIN = Principal("admin", True)
DEADLINE_S = 600.0
REPLICAS = 100
SERVERS = 25
MAX_UNAVAILABLE = 10

DOC = f"""
name: roll
node_groups:
  - name: worker
    profile: {{type: server, flavor: m1.medium, image: cirros}}
    count: {SERVERS}
workloads:
  api:
    replicas: {REPLICAS}
    max: {REPLICAS}
    max_per_node: PER_NODE
    containers: [{{name: api, image: IMAGE, resources: {{cpu: 0.1, memory_mb: 64}}}}]
    update: {{max_unavailable: {MAX_UNAVAILABLE}, max_surge: SURGE}}
"""
MAX_SURGE = 10


def _doc(image: str, surge: int = 0) -> str:
    per_node = 4 if surge == 0 else 5
    text = DOC.replace("IMAGE", image).replace("SURGE", str(surge))
    return text.replace("PER_NODE", str(per_node))


@dataclass(frozen=True, slots=True)
class RolloutRun:
    replicas: int
    seconds: float
    cpu_s: float
    batches: int
    rollback_s: float
    rollback_cpu_s: float
    rollback_batches: int
    failed_after_batches: int
    rolled_back: bool
    reason: str | None
    surge_seconds: float = 0.0
    surge_cpu_s: float = 0.0
    surge_batches: int = 0
    surge_started: int = 0
    surge_peak_replicas: int = 0
    surge_min_ready: int = 0


def _rollout(db: Database, cid: str) -> RolloutRow | None:
    with db.reading() as conn:
        found = rollout_repo.of_cluster(conn, cid)
    return found[0] if found else None


async def _until(what: object, *args: object) -> None:
    deadline = time.perf_counter() + DEADLINE_S
    while not what(*args):  # type: ignore[operator]
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{what} never held")
        await asyncio.sleep(0.05)


def _up(db: Database, cid: str) -> bool:
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, cid)
        rows = replica_repo.load(conn, [cid])[cid]
    ready = sum(1 for r in rows.values() if r.ready)
    return c is not None and c.lock_action_id is None and ready == REPLICAS


def _in(db: Database, cid: str, phase: WorkloadPhase, image: str) -> bool:
    r = _rollout(db, cid)
    return r is not None and r.phase is phase and r.target.containers[0].image == image


def _halfway(db: Database, cid: str) -> bool:
    r = _rollout(db, cid)
    return r is not None and r.target.containers[0].image == "app:3" and r.batches >= 5


def _passed(db: Database, cid: str) -> int:
    """The batches of the failed rollout that had completed (from its events)."""
    with db.reading() as conn:
        texts = [
            e.message for e in event_repo.list_events(conn, None, cluster_id=cid, limit=100_000)
        ]
    failed = next(i for i, t in enumerate(texts) if "failed" in t)
    start = max(i for i, t in enumerate(texts[:failed]) if "rolling update from" in t)
    return sum(1 for t in texts[start:failed] if ": rolling batch " in t)


async def run() -> RolloutRun:
    inventory = synthetic_inventory(50, 5, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'shoal.db'}")
        db.migrate()
        provider = SimProvider(inventory)
        engine = Engine(db, provider, poll_s=0.01, manage_tick_s=0.2, reconcile_s=5.0)
        service = ClusterService(db, lambda: inventory, engine.clock, engine.wake)
        await engine.start()
        try:
            sub = await asyncio.to_thread(service.create, ADMIN, _doc("app:1"))
            cid = sub.cluster.id
            await _until(_up, db, cid)

            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.to_thread(service.update, ADMIN, "roll", _doc("app:2"))
            await _until(_in, db, cid, WorkloadPhase.COMPLETE, "app:2")
            seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
            done = _rollout(db, cid)
            assert done is not None
            await _until(_up, db, cid)

            await asyncio.to_thread(service.update, ADMIN, "roll", _doc("app:3"))
            await _until(_halfway, db, cid)
            provider.replicas.refuse("app:3")
            cpu, wall = time.process_time(), time.perf_counter()
            await _until(_in, db, cid, WorkloadPhase.ROLLED_BACK, "app:3")
            back_s, back_cpu = time.perf_counter() - wall, time.process_time() - cpu
            back = _rollout(db, cid)
            assert back is not None
            failed_after = _passed(db, cid)
            with db.reading() as conn:
                rows = replica_repo.load(conn, [cid])[cid]
            good = done.target.revision
            rolled_back = len(rows) == REPLICAS and all(
                r.revision == good and r.ready for r in rows.values()
            )
            await _until(_up, db, cid)
            surge = await _surge(db, service, cid)
        finally:
            await engine.stop()
            db.dispose()
    return RolloutRun(
        REPLICAS,
        seconds,
        cpu_s,
        done.batches,
        back_s,
        back_cpu,
        back.batches,
        failed_after,
        rolled_back,
        back.reason,
        *surge,
    )


async def _surge(
    db: Database, service: ClusterService, cid: str
) -> tuple[float, float, int, int, int, int]:
    """The `max_surge` rollout: seconds, CPU, batches, surge replicas started, the most rows
    and the fewest ready replicas seen while it rolled."""
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.to_thread(service.update, ADMIN, "roll", _doc("app:4", MAX_SURGE))
    peak, low = 0, REPLICAS
    deadline = wall + DEADLINE_S
    while not (_in(db, cid, WorkloadPhase.COMPLETE, "app:4") and _count(db, cid)[0] == REPLICAS):
        if time.perf_counter() > deadline:
            raise TimeoutError("the surge rollout never completed")
        rows, ready = _count(db, cid)
        peak, low = max(peak, rows), min(low, ready)
        await asyncio.sleep(0.05)
    seconds, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    done = _rollout(db, cid)
    assert done is not None
    with db.reading() as conn:
        texts = [
            e.message for e in event_repo.list_events(conn, None, cluster_id=cid, limit=100_000)
        ]
    started = sum(1 for t in texts if "surge replica" in t and "started on" in t)
    return seconds, cpu_s, done.batches, started, peak, low


def _count(db: Database, cid: str) -> tuple[int, int]:
    """Replica rows (surge ones included) and how many read ready."""
    with db.reading() as conn:
        rows = replica_repo.load(conn, [cid])[cid]
    return len(rows), sum(1 for r in rows.values() if r.ready)
