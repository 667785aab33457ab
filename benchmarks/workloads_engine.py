"""The engine part of benchmarks/workloads.py (issue 22): real engine runs on `sim`.

A real Engine (its manager and workload keeper) over a SQLite store and the sim provider, on
the system clock: `shoal up` of the cluster (servers and workloads) through the service, then
the time until every replica's row reads ready (`ready_s`: request -> all ready, the servers'
creation included); then hosts are failed until 10 % of the servers are lost, and the time
until every replica is ready on a live server again (`ready_s`: failure -> all ready
elsewhere). CPU is this process's (the engine runs in it)."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, select

from shoal.documents.export import to_document
from shoal.engine import Engine
from shoal.model.cluster import ClusterSpec
from shoal.model.inventory import Inventory
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.store.tables import workload_replicas

ADMIN = Principal("admin", True)
DEADLINE_S = 1800.0


@dataclass(frozen=True, slots=True)
class EngineRun:
    create_ready_s: float
    create_cpu_s: float
    nodes_lost: int
    loss_ready_s: float
    loss_cpu_s: float
    replicas: int


def _ready(db: Database, cluster_id: str, lost: set[str]) -> int:
    t = workload_replicas.c
    q = select(func.count()).where(t.cluster_id == cluster_id, t.ready.is_(True))
    if lost:
        q = q.where(t.node.not_in(sorted(lost)))
    with db.reading() as conn:
        return int(conn.execute(q).scalar_one())


async def _until(db: Database, cluster_id: str, want: int, lost: set[str]) -> None:
    deadline = time.perf_counter() + DEADLINE_S
    while _ready(db, cluster_id, lost) < want:
        if time.perf_counter() > deadline:
            raise TimeoutError(f"{_ready(db, cluster_id, lost)} of {want} replicas ready")
        await asyncio.sleep(0.1)


async def run(spec: ClusterSpec, inventory: Inventory, replicas: int) -> EngineRun:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'shoal.db'}")
        db.migrate()
        provider = SimProvider(inventory)
        engine = Engine(db, provider, poll_s=0.01, manage_tick_s=0.2, reconcile_s=5.0)
        service = ClusterService(db, lambda: inventory, engine.clock, engine.wake)
        await engine.start()
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            # (as a document: the service reads every create from one; JSON is YAML)
            body = json.dumps(to_document(spec))
            sub = await asyncio.to_thread(service.create, ADMIN, body)
            cid = sub.cluster.id
            await _until(db, cid, replicas, set())
            create_ready, create_cpu = time.perf_counter() - wall, time.process_time() - cpu

            with db.reading() as conn:
                nodes = node_repo.list_nodes(conn, cid)
            by_host: dict[str, list[str]] = {}
            for n in nodes:
                by_host.setdefault(n.host or "", []).append(n.name)
            lost: set[str] = set()
            hosts: list[str] = []
            for host, names in sorted(by_host.items()):
                if len(lost) >= len(nodes) // 10:
                    break
                hosts.append(host)
                lost.update(names)
            cpu, wall = time.process_time(), time.perf_counter()
            for h in hosts:
                await provider.fail_host(h)
            await _until(db, cid, replicas, lost)
            loss_ready, loss_cpu = time.perf_counter() - wall, time.process_time() - cpu
        finally:
            await engine.stop()
            db.dispose()
    return EngineRun(create_ready, create_cpu, len(lost), loss_ready, loss_cpu, replicas)
