"""Scale on paper (issue 23): 10 engines over 1,000,000 nodes, projected from the real code.

This machine cannot hold a million nodes, so the real engine runs smaller clusters (1,000 and
10,000 nodes by default) on PostgreSQL, in-process, on the `sim` provider with no latency and
no sleeps, with a query counter on the database (SQLAlchemy's `before_cursor_execute`). Each
statement is put down to the phase whose code issued it:
- `create`: the create request itself (validation, admission, the cluster action);
- `claim`: engines claiming actions (node and cluster actions);
- `complete`: engines writing node actions' results (action, node row, events);
- `plan`: everything else during the create (placement, node rows, the parent's finish,
  heartbeats, polls of idle loops);
- `manage`: one pass of active management (health, drift), counted over several ticks.
Then a pgbench-like loop measures what this PostgreSQL sustains here (point reads and single-
row updates of `actions` by key, from several threads), and the projection divides: how many
seconds of the database a 1,000,000-node create costs, and at how many nodes 10 engines' manage
ticks alone would use all of it.

JSON lines: `scenario: sim-count` per size (`nodes`, `queries_per_node` by phase, `rows_per_node`
for batched statements, `manage_queries_per_tick`, `seconds`), `scenario: pg-capacity`
(`queries_per_s`, `threads`), and `scenario: sim-projection` (`nodes`: 1,000,000, `engines`:
10, the per-node counts taken from the largest size, `create_db_s` at capacity, the manage
load in queries/s and `manage_limit_nodes`, and `growth`: the per-node counts of the largest
size over the smallest, near 1 when the cost per node stays flat).

Run: `python benchmarks/scale_sim.py [--sizes 1000,10000] [--engines 10] [--project 1000000]`.
Needs PostgreSQL at 127.0.0.1:5432 (trust auth); makes its own database and drops it. The
machine is shared: counts are exact, the capacity is a floor (note `uptime`'s load with it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import functools
import json
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).parent))
from _servers import PG_ADMIN
from scale import document  # the same cluster shape the scale benchmark creates

PHASE: contextvars.ContextVar[str] = contextvars.ContextVar("phase", default="plan")
T = TypeVar("T")


class Counts:
    """Statements, and rows they returned or changed (`cursor.rowcount`; an executemany's
    parameter sets when the driver reports none), per phase, from every thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.queries: Counter[str] = Counter()
        self.rows: Counter[str] = Counter()
        self.on = False

    def __call__(
        self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        if not self.on:
            return
        phase = PHASE.get()
        n = cursor.rowcount if cursor.rowcount is not None and cursor.rowcount >= 0 else 0
        if many and params and n <= 0:
            n = len(params)
        with self.lock:
            self.queries[phase] += 1
            self.rows[phase] += n

    def reset(self) -> None:
        with self.lock:
            self.queries.clear()
            self.rows.clear()


def in_phase(fn: Callable[..., T], phase: str) -> Callable[..., T]:
    """`fn` with its statements counted under `phase` (it runs in a worker thread, with a copy
    of the caller's context, so setting the variable there touches nothing else)."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> T:
        token = PHASE.set(phase)
        try:
            return fn(*args, **kwargs)
        finally:
            PHASE.reset(token)

    return wrapped


async def count(nodes: int, db_url: str, ticks: int) -> dict[str, Any]:
    from shoal.model.enums import ActionStatus
    from shoal.runtime import Runtime
    from shoal.settings import Settings
    from shoal.store import actions as action_repo
    from shoal.store.records import Principal

    home = tempfile.mkdtemp(prefix="shoal-sim-")
    settings = Settings(
        home=home,
        provider="sim",
        provider_options={"hosts": max(10, nodes // 8), "zones": 3, "state_path": "memory"},
        database_url=db_url,
        engine_concurrency=min(nodes, 5000),
        max_cluster_nodes=max(10_000, nodes),
        manage_tick_s=0.5,
    )
    rt = await Runtime.open(settings)
    counts = Counts()
    event.listen(rt.db.engine, "after_cursor_execute", counts)
    engine = rt.engine
    engine._claim = in_phase(engine._claim, "claim")  # type: ignore[method-assign]
    engine._write = in_phase(engine._write, "complete")  # type: ignore[method-assign]
    manager = engine.manager
    assert manager is not None
    manager._load = in_phase(manager._load, "manage")  # type: ignore[method-assign]
    manager._write = in_phase(manager._write, "manage")  # type: ignore[method-assign]
    manage_passes = 0
    load = manager._load

    def counted_load() -> Any:
        nonlocal manage_passes
        manage_passes += 1
        return load()

    manager._load = counted_load  # type: ignore[method-assign]
    await engine.start()
    admin = Principal("admin", True)
    name = f"sim{nodes}"
    try:
        counts.on = True
        t0 = time.perf_counter()
        sub = await asyncio.to_thread(
            in_phase(rt.service.create, "create"), admin, document(name, nodes)
        )
        while True:
            with rt.db.reading() as conn:
                a = action_repo.get_action(conn, sub.action.id)
            assert a is not None
            if a.status.is_terminal:
                break
            await asyncio.sleep(0.2)
        seconds = time.perf_counter() - t0
        create = dict(counts.queries)
        create_rows = dict(counts.rows)
        # Management at steady state: whole passes only (the first may have begun mid-create).
        counts.reset()
        first = manage_passes
        await asyncio.sleep(0.1)
        while manage_passes < first + 1:
            await asyncio.sleep(0.05)
        counts.reset()
        start = manage_passes
        while manage_passes < start + ticks:
            await asyncio.sleep(0.05)
        passes = manage_passes - start
        manage = counts.queries["manage"]
        manage_rows = counts.rows["manage"]
        counts.on = False
    finally:
        await rt.close()
        shutil.rmtree(home, ignore_errors=True)
    return {
        "scenario": "sim-count",
        "nodes": nodes,
        "status": str(a.status),
        "succeeded": a.status is ActionStatus.SUCCEEDED,
        "seconds": round(seconds, 3),
        "queries": create,
        "queries_per_node": {k: round(v / nodes, 4) for k, v in sorted(create.items())},
        "rows_per_node": {k: round(v / nodes, 4) for k, v in sorted(create_rows.items())},
        "manage_queries_per_tick": round(manage / max(1, passes), 2),
        "manage_rows_per_node_tick": round(manage_rows / max(1, passes) / nodes, 4),
        "manage_passes": passes,
    }


def capacity(db_url: str, threads: int, seconds: float) -> dict[str, Any]:
    """A pgbench-like loop: point reads and single-row updates by key on a table shaped like
    `actions`' hot columns, from `threads` connections, for `seconds`."""
    url = db_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_rows (id text PRIMARY KEY, status text, "
            "owner text, lease double precision)"
        )
        conn.execute("TRUNCATE bench_rows")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO bench_rows VALUES (%s, 'READY', NULL, 0)",
                [(f"r{i}",) for i in range(10_000)],
            )
    done = [0] * threads
    stop = time.perf_counter() + seconds

    def work(k: int) -> None:
        with psycopg.connect(url, autocommit=True) as c:
            i = k
            while time.perf_counter() < stop:
                key = f"r{(i * 7919) % 10_000}"
                c.execute("SELECT status, owner FROM bench_rows WHERE id = %s", (key,)).fetchone()
                c.execute("UPDATE bench_rows SET lease = lease + 1 WHERE id = %s", (key,))
                done[k] += 2
                i += threads

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    began = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    took = time.perf_counter() - began
    # Rows: batched reads of 1,000 keys a statement (how the engine reads nodes and actions).
    keys = [f"r{i}" for i in range(1000)]
    rows = 0
    with psycopg.connect(url, autocommit=True) as c:
        end = time.perf_counter() + seconds / 2
        began_rows = time.perf_counter()
        while time.perf_counter() < end:
            rows += len(
                c.execute("SELECT * FROM bench_rows WHERE id = ANY(%s)", (keys,)).fetchall()
            )
        rows_took = time.perf_counter() - began_rows
    return {
        "scenario": "pg-capacity",
        "threads": threads,
        "seconds": round(took, 2),
        "queries_per_s": round(sum(done) / took, 1),
        "rows_per_s": round(rows / rows_took, 1),
    }


def projection(
    counted: list[dict[str, Any]], cap: dict[str, Any], engines: int, nodes: int, tick_s: float
) -> dict[str, Any]:
    big, small = counted[-1], counted[0]
    per_node = big["queries_per_node"]
    rows_node = big["rows_per_node"]
    qps, rps = float(cap["queries_per_s"]), float(cap["rows_per_s"])
    queries = sum(per_node.values()) * nodes
    rows = sum(rows_node.values()) * nodes
    # The database's time for the create: its round trips at the measured rate, plus the rows
    # its statements carry at the batched rate (a floor: writes cost more than reads).
    create_db_s = queries / qps + rows / rps
    # Management: each engine ticks its share every tick_s; a tick's statements are a few
    # (batched), its rows grow with the nodes.
    manage_qps = big["manage_queries_per_tick"] * engines / tick_s
    manage_rps = big["manage_rows_per_node_tick"] * nodes / tick_s
    growth = {
        k: round(v / small["queries_per_node"][k], 3)
        for k, v in per_node.items()
        if small["queries_per_node"].get(k)
    }
    per_node_rows = big["manage_rows_per_node_tick"]
    return {
        "scenario": "sim-projection",
        "nodes": nodes,
        "engines": engines,
        "from_nodes": big["nodes"],
        "queries_per_node": per_node,
        "rows_per_node": rows_node,
        "create_queries": round(queries),
        "create_rows": round(rows),
        "create_db_s": round(create_db_s, 1),
        "manage_tick_s": tick_s,
        "manage_qps": round(manage_qps, 1),
        "manage_rows_per_s": round(manage_rps, 1),
        "manage_share_of_capacity": round(manage_qps / qps + manage_rps / rps, 3),
        "manage_limit_nodes": round(rps * tick_s / per_node_rows) if per_node_rows else None,
        "capacity": {"queries_per_s": qps, "rows_per_s": rps},
        "growth_queries_per_node": growth,
        "note": "one database: engines divide the work, not its capacity; create_db_s is the "
        "floor the database sets on the create whatever the number of engines, and "
        "manage_limit_nodes where management's reads alone would fill it",
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--engines", type=int, default=10)
    ap.add_argument("--project", type=int, default=1_000_000)
    ap.add_argument("--ticks", type=int, default=3, help="manage passes counted per size")
    ap.add_argument("--threads", type=int, default=8, help="connections of the capacity loop")
    ap.add_argument("--capacity-s", type=float, default=5.0)
    args = ap.parse_args()
    from shoal.settings import Settings

    sizes = [int(s) for s in args.sizes.split(",")]
    counted: list[dict[str, Any]] = []
    for n in sizes:
        dbname = f"shoal_sim_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dbname}"')
        url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{dbname}"
        try:
            line = asyncio.run(count(n, url, args.ticks))
            print(json.dumps(line), flush=True)
            counted.append(line)
            if n == sizes[-1]:
                cap = capacity(url, args.threads, args.capacity_s)
                print(json.dumps(cap), flush=True)
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    tick_s = Settings().manage_tick_s  # the default; the counting runs tick faster
    print(json.dumps(projection(counted, cap, args.engines, args.project, tick_s)), flush=True)


if __name__ == "__main__":
    main()
