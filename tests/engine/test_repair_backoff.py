"""A repair that does not change what it found is backed off, then reported, never re-run every
tick: six anti-affine nodes on six hosts, one host lost, so replacing its node can never work.
Time is a ManualClock; the count of recover actions over many ticks is the test, on both
databases, across an engine restart, and until the host comes back."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import synthetic_inventory
from shoal.model.enums import ActionKind, ClusterStatus, NodeStatus
from shoal.providers.sim.provider import SimProvider
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

DOC = """
name: web
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 6
groupings:
  - {name: apart, members: [web], rule: anti-affinity, max_per_domain: 1}
"""


def _rig(db: Database, provider: SimProvider, clock: ManualClock) -> Rig:
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1.0
    return rig


def _recoveries(rig: Rig, cid: str) -> int:
    with rig.db.reading() as conn:
        found = action_repo.list_actions(conn, None, cluster_id=cid, top_level=True)
    return sum(a.kind is ActionKind.CLUSTER_RECOVER for a in found)


def _cluster(rig: Rig, cid: str) -> cluster_repo.ClusterRecord:
    with rig.db.reading() as conn:
        found = cluster_repo.get_cluster(conn, cid)
    assert found is not None
    return found


async def _ticks(rig: Rig, clock: ManualClock, cid: str, seconds: float, step: float) -> None:
    """Advance the engine's clock, letting each recover action end before the next step."""
    for _ in range(int(seconds / step)):
        clock.advance(step)
        await asyncio.sleep(0.02)
        await until(
            lambda: _cluster(rig, cid).lock_action_id is None,
            "the recover action to end",
            clock=clock,
            step_s=0.1,
            every_s=0.01,
        )


async def test_a_repair_that_changes_nothing_is_backed_off_then_reported(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        cid = sub.cluster.id
        await _ticks(rig, clock, cid, 1, 1.0)
        with db.reading() as conn:
            victim = node_repo.list_nodes(conn, cid)[0]
        assert victim.host is not None
        await provider.fail_host(victim.host)  # no other host may take its node
        await _ticks(rig, clock, cid, 800, 10.0)  # 80 reconciles, 13 minutes
        assert _recoveries(rig, cid) == 5  # repair_attempts
        reported = _cluster(rig, cid)
        assert reported.status is ClusterStatus.WARNING
        assert victim.name in reported.status_reason
        assert "repairs gave up" in reported.status_reason
        with db.reading() as conn:
            texts = [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]
        assert sum("not repairing it again" in t for t in texts) == 1
    finally:
        await rig.engine.stop()

    # A restart (a new engine, a new manager) does not start the loop over.
    tried = _recoveries(rig, cid)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        await _ticks(rig, clock, cid, 300, 10.0)
        assert _recoveries(rig, cid) == tried
        assert _cluster(rig, cid).status is ClusterStatus.WARNING

        # The host comes back: a new finding (its server is broken), a repair that works.
        await provider.recover_host(victim.host)

        async def active() -> bool:
            if _cluster(rig, cid).status is ClusterStatus.ACTIVE:
                return True
            await _ticks(rig, clock, cid, 5, 5.0)
            return False

        await until(active, lambda: f"the cluster ACTIVE: {_cluster(rig, cid)}", every_s=0)
        with db.reading() as conn:
            assert all(n.status is NodeStatus.ACTIVE for n in node_repo.list_nodes(conn, cid))
        assert _recoveries(rig, cid) > tried
    finally:
        await rig.engine.stop()
