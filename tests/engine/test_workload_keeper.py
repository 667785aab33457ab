"""Workloads kept running on `sim` (issue 22, item 3), driven by a ManualClock on SQLite and
PostgreSQL: after a create every replica is started and recorded ready on its placed server; a
killed container's first exit is restarted at once, the next ones after the back-off (10 s,
doubling; at once again once it ran 10 minutes);
a lost host's replica is rescheduled onto
a live server under the anti-affinity rule (before the server itself is replaced); scale-in
stops and forgets replicas; an engine restart keeps the rows as they are."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.engine.workloads import replica_key
from shoal.model.catalogs import synthetic_inventory
from shoal.providers.sim.provider import SimProvider
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import nodes as node_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.workloads import ReplicaRow
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 4
groupings:
  - {name: apart, members: [ctl], rule: anti-affinity, max_per_domain: 1}
workloads:
  api:
    replicas: REPLICAS
    containers: [{name: api, image: img, ports: [8080], resources: {cpu: 0.5}}]
    rules: [{rule: anti-affinity, scope: host}]
"""


def _rig(db: Database, provider: SimProvider, clock: ManualClock) -> Rig:
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1.0
    return rig


def _rows(db: Database, cid: str) -> dict[str, ReplicaRow]:
    with db.reading() as conn:
        return replica_repo.load(conn, [cid])[cid]


async def test_replicas_start_restart_and_move_off_a_lost_host(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC.replace("REPLICAS", "3"))
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 3, clock=clock)
        await until(lambda: all(r.ready for r in _rows(db, cid).values()), clock=clock)
        with db.reading() as conn:
            nodes = {n.name: n for n in node_repo.list_nodes(conn, cid)}
        rows = _rows(db, cid)
        assert sorted(rows) == ["api-1", "api-2", "api-3"]
        assert len({nodes[r.node].host for r in rows.values()}) == 3  # anti-affine by host
        assert provider.replicas.starts == 3

        # kill -9 of a container: its first exit is restarted at once (Kubernetes' rule), the
        # restart counted; an exit again soon after waits 10 s, then 20 s (the row's
        # `not_before` and the event say what the keeper decided, on the engine's clock; it
        # may notice a few steps late on a loaded machine).
        killed = clock.now()
        provider.replicas.kill(replica_key(cid, "api-2"))
        await until(lambda: _rows(db, cid)["api-2"].restarts == 1, clock=clock)
        await until(lambda: _rows(db, cid)["api-2"].ready, clock=clock)
        first = _rows(db, cid)["api-2"]
        assert first.started_at is not None and first.started_at >= killed
        assert first.not_before is None
        assert provider.replicas.starts == 4
        with db.reading() as conn:
            texts = [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]
        assert any("api-2's container exited; restart 1 at once" in t for t in texts)
        for restarts, wait in ((2, 10.0), (3, 20.0)):
            killed = clock.now()
            provider.replicas.kill(replica_key(cid, "api-2"))
            await until(lambda r=restarts: _rows(db, cid)["api-2"].restarts == r, clock=clock)
            waiting = _rows(db, cid)["api-2"]
            assert waiting.not_before is not None and waiting.not_before >= killed + wait
            await until(lambda: _rows(db, cid)["api-2"].ready, clock=clock)
            assert (_rows(db, cid)["api-2"].started_at or 0) >= waiting.not_before
        with db.reading() as conn:
            texts = [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]
        assert any("api-2's container exited; restart 2 in 10 s" in t for t in texts)
        assert any("api-2's container exited; restart 3 in 20 s" in t for t in texts)
        # After 10 minutes running since its last start, an exit is restarted at once again
        # (Kubernetes' rule); the restart count goes on.
        clock.advance(600.0)
        await asyncio.sleep(0.05)
        killed = clock.now()
        provider.replicas.kill(replica_key(cid, "api-2"))
        await until(lambda: _rows(db, cid)["api-2"].restarts == 4, clock=clock)
        await until(lambda: _rows(db, cid)["api-2"].ready, clock=clock)
        assert (_rows(db, cid)["api-2"].started_at or 0) < killed + 10.0
        with db.reading() as conn:
            texts = [e.message for e in event_repo.list_events(conn, None, cluster_id=cid)]
        assert any("api-2's container exited; restart 4 at once" in t for t in texts)
        assert provider.replicas.starts == 7

        # A host fails: its replica moves to the one server left on a host with none.
        before = _rows(db, cid)
        victim = before["api-1"]
        lost_host = nodes[victim.node].host
        assert lost_host is not None
        spare = next(n for n in nodes if n not in {r.node for r in before.values()})
        await provider.fail_host(lost_host)
        moved_at = clock.now()
        await until(lambda: _rows(db, cid)["api-1"].node != victim.node, clock=clock)
        assert clock.now() - moved_at < 30  # engine seconds (the manual clock), not wall time
        after = _rows(db, cid)
        assert after["api-1"].node == spare and after["api-1"].ready
        assert after["api-2"].node == before["api-2"].node  # the others stay
        assert after["api-3"].node == before["api-3"].node
    finally:
        await rig.engine.stop()

    # A new engine keeps the rows and starts nothing that runs.
    starts = provider.replicas.starts
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        for _ in range(5):
            clock.advance(1.0)
            await asyncio.sleep(0.02)
        assert provider.replicas.starts == starts
        assert all(r.ready for r in _rows(db, cid).values())

        # Scale-in by a new document: api-3 stopped and its row dropped.
        await until(lambda: _cluster_settled(db, cid), clock=clock)
        sub = await asyncio.to_thread(
            rig.service.update, ADMIN, "svc", DOC.replace("REPLICAS", "2")
        )
        await until(lambda: sorted(_rows(db, cid)) == ["api-1", "api-2"], clock=clock)
        states = await provider.replicas.replica_states([replica_key(cid, "api-3")])
        assert states[replica_key(cid, "api-3")].value == "LOST"
    finally:
        await rig.engine.stop()


def _cluster_settled(db: Database, cid: str) -> bool:
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, cid)
    return c is not None and c.lock_action_id is None


async def test_a_runtime_that_forgot_its_containers_restarts_them_in_place(db: Database) -> None:
    """A new sim runtime (as after a restart of a sim server) knows no container: each replica
    is started again on the server its row names, with no back-off and no restart counted."""
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC.replace("REPLICAS", "3"))
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 3, clock=clock)
        await until(lambda: all(r.ready for r in _rows(db, cid).values()), clock=clock)
        before = _rows(db, cid)
        for key in [replica_key(cid, r) for r in before]:
            await provider.replicas.stop_replica(key)
        await until(lambda: provider.replicas.starts == 6, clock=clock, step_s=0.2)
        after = _rows(db, cid)
        assert {r: x.node for r, x in after.items()} == {r: x.node for r, x in before.items()}
        assert all(x.ready and x.restarts == 0 for x in after.values())
    finally:
        await rig.engine.stop()


TWO_GROUPS = """
name: svc
node_groups:
  - {name: ctl, profile: {type: server, flavor: m1.small, image: cirros}, count: 4}
  - {name: edge, profile: {type: server, flavor: m1.small, image: cirros}, count: 2}
groupings:
  - {name: apart, members: [ctl, edge], rule: anti-affinity, max_per_domain: 1}
workloads:
  api:
    replicas: 4
    containers: [{name: api, image: img, ports: [8080], resources: {cpu: 0.5}}]
    nodes: {groups: [ctl]}
  front:
    replicas: 2
    containers: [{name: front, image: img, ports: [80], resources: {cpu: 0.5}}]
    nodes: {groups: [edge]}
"""


async def test_a_reason_a_refusal_keeps_is_told_once(db: Database) -> None:
    """Issue 36: when a refusal's other reasons changed from one tick to the next (a second
    host lost), the reason that stayed was told again, an identical warning in the same
    second. Six servers on six hosts, none to spare: the lost ones cannot come back."""
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, TWO_GROUPS)
        cid = sub.cluster.id
        await until(lambda: len(_rows(db, cid)) == 6, clock=clock)
        with db.reading() as conn:
            nodes = {n.name: n for n in node_repo.list_nodes(conn, cid)}

        def warnings() -> list[str]:
            with db.reading() as conn:
                return [
                    e.message
                    for e in event_repo.list_events(conn, None, cluster_id=cid)
                    if e.message.startswith("replicas cannot be placed")
                ]

        assert nodes["edge-1"].host is not None and nodes["ctl-1"].host is not None
        await provider.fail_host(nodes["edge-1"].host)
        await until(lambda: any("front" in w for w in warnings()), clock=clock)
        await provider.fail_host(nodes["ctl-1"].host)
        await until(lambda: any("api" in w for w in warnings()), clock=clock)
        told = warnings()
        front = [w for w in told if "front" in w]
        assert len(front) == len(set(front)) == 1, told
        assert len(told) == len(set(told)), told
    finally:
        await rig.engine.stop()
