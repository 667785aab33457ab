"""Liveness and readiness probes of workloads' replicas (issue 22, item 3) on `sim`, driven by a
ManualClock on SQLite and PostgreSQL: a replica with a readiness probe is not ready until its
first probe passes after the initial delay; a failing readiness probe makes it not ready at its
first failure, and ready again on a pass; failing liveness probes restart it (counted, an event)."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workloads import ProbeKind
from shoal.providers.sim.provider import SimProvider
from shoal.store import events as event_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN
from tests.engine.test_workload_keeper import _rig, _rows
from tests.support.polling import until

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
        readiness: {http: /, port: 8080, period_s: 2, initial_delay_s: 5, failure_threshold: 2}
        liveness: {tcp: 8080, period_s: 3, failure_threshold: 3}
"""


async def test_probes_gate_readiness_and_restart_on_liveness(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(4, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 2, clock=clock)
        started = min(r.started_at or 0 for r in _rows(db, cid).values())
        await until(lambda: all(r.ready for r in _rows(db, cid).values()), clock=clock)
        # Not before the initial delay (the first readiness probe is due 5 s after the start).
        assert clock.now() >= started + 5.0

        key = replica_key(cid, "api-1")
        provider.replicas.fail_probes(key, kind=ProbeKind.HTTP)
        failed_at = clock.now()
        await until(lambda: not _rows(db, cid)["api-1"].ready, clock=clock)
        # Not ready at its first failure (issue 36: ready means it passed within its period),
        # not after `failure_threshold` of them.
        probed = _rows(db, cid)["api-1"].probes
        assert probed is not None
        assert [(c.failures, c.ok) for c in probed.checks if not c.liveness] == [(1, False)]
        assert clock.now() >= failed_at
        assert _rows(db, cid)["api-2"].ready
        assert _rows(db, cid)["api-1"].restarts == 0  # readiness never restarts
        provider.replicas.fail_probes(key, failing=False, kind=ProbeKind.HTTP)
        await until(lambda: _rows(db, cid)["api-1"].ready, clock=clock)

        provider.replicas.fail_probes(key, kind=ProbeKind.TCP)
        await until(lambda: _rows(db, cid)["api-1"].restarts == 1, clock=clock)
        provider.replicas.fail_probes(key, failing=False, kind=ProbeKind.TCP)
        await until(lambda: _rows(db, cid)["api-1"].ready, clock=clock)
        with db.reading() as conn:
            texts = [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]
        assert any("api-1's container api failed its liveness probe 3 times" in t for t in texts)
    finally:
        await rig.engine.stop()
