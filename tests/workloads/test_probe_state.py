"""Probe counts persisted on the replica rows (issue 22's gaps, item 3), on `sim` with a
ManualClock on SQLite and PostgreSQL: probes that keep passing write nothing; two liveness
failures of three are on the row; an engine stopped and a new one started on the same store
restarts the replica after the third failure (one more probe), not after three more; the
restart starts the counts over."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from shoal.clock import ManualClock
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workloads import ProbeKind
from shoal.providers.sim.provider import SimProvider
from shoal.store.database import Database
from shoal.store.tables import workload_replicas
from shoal.store.workloads import ProbeCount
from tests.engine.support import ADMIN
from tests.support.polling import until
from tests.workloads.support import rig_for, rows, settled

DOC = """
name: probed
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
workloads:
  api:
    replicas: 2
    containers:
      - name: api
        image: img
        ports: [8080]
        readiness: {http: /, port: 8080, period_s: 2}
        liveness: {tcp: 8080, period_s: 60, failure_threshold: 3, initial_delay_s: 45}
"""


def _written(db: Database, cid: str) -> dict[str, float]:
    t = workload_replicas.c
    with db.reading() as conn:
        found = conn.execute(select(t.replica, t.updated_at).where(t.cluster_id == cid))
        return {str(r[0]): float(r[1]) for r in found}


def _liveness(db: Database, cid: str, replica: str) -> ProbeCount | None:
    state = rows(db, cid)[replica].probes
    if state is None:
        return None
    return next((c for c in state.checks if c.liveness), None)


async def test_probe_counts_survive_an_engine_restart(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(4, 2), clock_sleep=clock.sleep)
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        await until(
            lambda: (
                settled(db, cid)
                and len(rows(db, cid)) == 2
                and all(r.ready for r in rows(db, cid).values())
            ),
            clock=clock,
        )
        # Both probes of both replicas passed once: on the rows, tied to their start.
        await until(
            lambda: all(
                r.probes is not None and all(c.last is not None for c in r.probes.checks)
                for r in rows(db, cid).values()
            ),
            clock=clock,
        )
        for r in rows(db, cid).values():
            assert r.probes is not None and r.probes.started_at == r.started_at
            assert {(c.liveness, c.failures, c.ok, c.last) for c in r.probes.checks} == {
                (True, 0, False, True),
                (False, 0, True, True),
            }

        # Passing probes every 2 s (readiness) for a while: no row is written again.
        before = _written(db, cid)
        probes = provider.replicas.probes
        await until(lambda: provider.replicas.probes >= probes + 2 * 5, clock=clock)
        assert _written(db, cid) == before

        # Two liveness failures of three, on the row.
        key = replica_key(cid, "api-1")
        provider.replicas.fail_probes(key, kind=ProbeKind.TCP)

        def failures() -> int:
            c = _liveness(db, cid, "api-1")
            return -1 if c is None else c.failures

        await until(lambda: failures() == 2, clock=clock, step_s=2.0)
        c = _liveness(db, cid, "api-1")
        assert c is not None and c.last is False
        assert rows(db, cid)["api-1"].restarts == 0
    finally:
        await rig.engine.stop()

    # A new engine on the same store: the third failure (its first probe) restarts it, well
    # before the two more periods a count started over would need.
    rig = rig_for(db, provider, clock)
    await rig.engine.start()
    try:
        probed = provider.replicas.probed[(key, ProbeKind.TCP)]
        await until(lambda: rows(db, cid)["api-1"].restarts == 1, clock=clock, step_s=1.0)
        # (its restarted container's first probe is 45 s away: none of these is one of it)
        assert provider.replicas.probed[(key, ProbeKind.TCP)] - probed < 3
        # The restart starts the counts over (a fresh start, passing probes again).
        provider.replicas.fail_probes(key, failing=False, kind=ProbeKind.TCP)
        await until(
            lambda: (
                (row := rows(db, cid)["api-1"]).ready
                and row.probes is not None
                and row.probes.started_at == row.started_at
                and failures() == 0
            ),
            clock=clock,
        )
        assert rows(db, cid)["api-2"].restarts == 0
    finally:
        await rig.engine.stop()
