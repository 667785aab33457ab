"""Rolling updates of a workload on `sim` (issue 22, item 4), driven by a ManualClock on SQLite
and PostgreSQL: an image change replaces the replicas in batches of `max_unavailable`, each
batch after the previous one reads ready; an image the runtime refuses fails its batch and the
replicas roll back to the previous template (and stay there); an engine stopped mid-rollout
resumes it from the persisted state instead of starting over."""

from __future__ import annotations

import asyncio
import re

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.model.workload_rollouts import WorkloadPhase
from shoal.providers.sim.provider import SimProvider
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 4
workloads:
  api:
    replicas: 4
    containers: [{name: api, image: IMAGE, ports: [8080], resources: {cpu: 0.25}}]
    update: {max_unavailable: UNAVAILABLE, max_surge: 0}
"""


def _doc(image: str, unavailable: int) -> str:
    return DOC.replace("IMAGE", image).replace("UNAVAILABLE", str(unavailable))


def _rig(db: Database, provider: SimProvider, clock: ManualClock) -> Rig:
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1.0
    return rig


def _rows(db: Database, cid: str) -> dict[str, ReplicaRow]:
    with db.reading() as conn:
        return replica_repo.load(conn, [cid])[cid]


def _rollout(db: Database, cid: str) -> RolloutRow | None:
    with db.reading() as conn:
        found = rollout_repo.of_cluster(conn, cid)
    return found[0] if found else None


def _events(db: Database, cid: str) -> list[str]:
    with db.reading() as conn:
        return [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]


def _settled(db: Database, cid: str) -> bool:
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, cid)
    return c is not None and c.lock_action_id is None


def _phase(db: Database, cid: str, phase: WorkloadPhase, revision: str | None = None) -> bool:
    r = _rollout(db, cid)
    return (
        r is not None and r.phase is phase and (revision is None or r.target.revision != revision)
    )


async def test_rolls_in_batches_and_rolls_back_a_refused_image(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, _doc("img:1", 2))
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 4 and _settled(db, cid), clock=clock)
        await until(lambda: all(r.ready for r in _rows(db, cid).values()), clock=clock)
        first = _rollout(db, cid)
        assert first is not None and first.phase is WorkloadPhase.COMPLETE
        r1 = first.target.revision
        assert first.target.containers[0].image == "img:1"
        assert {r.revision for r in _rows(db, cid).values()} == {r1}
        nodes = {x: r.node for x, r in _rows(db, cid).items()}

        # An image change: two batches of two, every replica on its own server again.
        await asyncio.to_thread(rig.service.update, ADMIN, "svc", _doc("img:2", 2))
        await until(lambda: _phase(db, cid, WorkloadPhase.COMPLETE, r1), clock=clock)
        done = _rollout(db, cid)
        assert done is not None and done.batches == 2 and done.previous is not None
        r2 = done.target.revision
        assert r2 != r1 and done.previous.revision == r1
        rows = _rows(db, cid)
        assert {r.revision for r in rows.values()} == {r2}
        assert all(r.ready for r in rows.values())
        assert {x: r.node for x, r in rows.items()} == nodes
        for x in rows:
            assert provider.replicas.revision_of(replica_key(cid, x)) == r2
        batches = [
            m.split(": ")[-1].split(", ")
            for m in _events(db, cid)
            if re.search(rf"rolling batch \d to revision {r2}", m)
        ]
        assert len(batches) == 2 and all(len(b) == 2 for b in batches)
        assert sorted(x for b in batches for x in b) == sorted(rows)

        # An image the runtime refuses: the first batch fails, every replica back on img:2.
        provider.replicas.refuse("img:bad")
        await until(lambda: _settled(db, cid), clock=clock)
        await asyncio.to_thread(rig.service.update, ADMIN, "svc", _doc("img:bad", 2))
        await until(lambda: _phase(db, cid, WorkloadPhase.ROLLED_BACK), clock=clock)
        back = _rollout(db, cid)
        assert back is not None and back.previous is not None
        assert back.previous.revision == r2 and back.reason is not None
        assert "img:bad" in back.reason
        rows = _rows(db, cid)
        assert {r.revision for r in rows.values()} == {r2}
        assert all(r.ready for r in rows.values())
        for x in rows:
            assert provider.replicas.revision_of(replica_key(cid, x)) == r2
        texts = _events(db, cid)
        assert any("failed" in t and "rolling back to " + r2 in t for t in texts)
        assert any(f"rolling update to revision {r2} rolled back" in t for t in texts)

        # It stays rolled back: a killed container restarts with the previous template.
        starts = provider.replicas.starts
        provider.replicas.kill(replica_key(cid, "api-1"))
        await until(
            lambda: provider.replicas.starts > starts and _rows(db, cid)["api-1"].ready, clock=clock
        )
        assert provider.replicas.revision_of(replica_key(cid, "api-1")) == r2
        still = _rollout(db, cid)
        assert still is not None and still.phase is WorkloadPhase.ROLLED_BACK
    finally:
        await rig.engine.stop()


async def test_an_engine_restart_resumes_a_rollout(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, _doc("img:1", 1))
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 4 and _settled(db, cid), clock=clock)
        await until(lambda: all(r.ready for r in _rows(db, cid).values()), clock=clock)
        starts = provider.replicas.starts
        await asyncio.to_thread(rig.service.update, ADMIN, "svc", _doc("img:2", 1))

        def mid() -> bool:
            r = _rollout(db, cid)
            return r is not None and r.phase is WorkloadPhase.ROLLING and r.batches >= 1

        await until(mid, clock=clock, step_s=0.2)
    finally:
        await rig.engine.stop()
    stopped = _rollout(db, cid)
    assert stopped is not None and stopped.phase is WorkloadPhase.ROLLING
    assert 1 <= stopped.batches < 4

    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        await until(lambda: _phase(db, cid, WorkloadPhase.COMPLETE), clock=clock)
        done = _rollout(db, cid)
        assert done is not None and done.batches == 4
        # Each replica replaced exactly once over both engines: nothing started over.
        assert provider.replicas.starts == starts + 4
        assert {r.revision for r in _rows(db, cid).values()} == {done.target.revision}
    finally:
        await rig.engine.stop()
