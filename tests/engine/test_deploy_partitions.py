"""Deployments that divide (issue 23): the deployer's partitions (`deploy/<k>` leases) are
balanced over the engines that deploy, a death moves only its share, and each cluster's
deployments are decided by the engine holding its partition.

Time is the test's: leases run out when the test moves its clock, never by waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shoal.clock import ManualClock
from shoal.model.cluster import MemberRef
from shoal.model.enums import ActionStatus
from shoal.model.software import Deployment, HookGroup, SoftwareConfig, SoftwareSpec
from shoal.store import deployments as deployment_repo
from shoal.store import engines
from shoal.store.database import Database
from shoal.store.records import ClusterRecord
from tests.databases import database_url
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

SPEC = SoftwareSpec(
    configs=(SoftwareConfig("c", HookGroup.SCRIPT, "echo"),),
    deployments=(Deployment("setup", "c", MemberRef("app")),),
)


def _doc(name: str) -> str:
    return (
        f"name: {name}\nnode_groups:\n  - name: app\n"
        "    profile: {type: server, flavor: m1.tiny, image: cirros}\n    count: 1\n"
    )


def _rig(db: Database, clock: ManualClock, name: str) -> Rig:
    rig = make_rig(db, clock=clock, engine_id=name)
    rig.engine.deployer.software_of = lambda _c: SPEC
    return rig


def _split(rigs: list[Rig], clock: ManualClock) -> None:
    """Every engine registered as deploying, then each balances once: an even split."""
    for r in rigs:
        engines.register(r.db, r.engine.id, clock.now(), 30.0, prefix=engines.DEPLOYING_PREFIX)
    for r in rigs:
        r.engine.deployer._pace.balanced_at = -1e18
        r.engine.deployer._balance(clock.now())


def test_deployer_partitions_divide_and_a_death_moves_only_its_share(db: Database) -> None:
    clock = ManualClock(1_000.0)
    rigs = [_rig(db, clock, n) for n in ("a", "b", "c")]
    _split(rigs, clock)
    held = {r.engine.id: r.engine.deployer.partitions for r in rigs}
    assert sorted(p for ps in held.values() for p in ps) == list(range(engines.PARTITIONS))
    assert all(len(ps) >= 20 for ps in held.values()), held
    # Management's partitions are other leases: deploying registers no managing engine.
    assert not engines.balance(db, "manager-only", clock.now(), 30.0) < frozenset(
        range(engines.PARTITIONS)
    )
    # c dies (no more balances, nothing handed back): its leases run out, a and b take them.
    a, b = rigs[0].engine.deployer, rigs[1].engine.deployer
    for _ in range(8):
        clock.advance(5.0)
        for d in (a, b):
            engines.register(db, d.engine.owner, clock.now(), 30.0)
            d._balance(clock.now())
    assert held["a"] <= a.partitions and held["b"] <= b.partitions
    assert (a.partitions - held["a"]) | (b.partitions - held["b"]) == held["c"]
    assert not a.partitions & b.partitions


@pytest.fixture
def pg_db(tmp_path: Path) -> Iterator[Database]:
    """Two engines sharing one database: the PostgreSQL case is the point (no SQLite run)."""
    with database_url("postgresql", tmp_path) as url:
        database = Database(url)
        database.migrate()
        try:
            yield database
        finally:
            database.dispose()


@pytest.mark.parametrize("clusters", [6])
async def test_each_cluster_is_decided_by_its_partitions_engine(
    pg_db: Database, clusters: int
) -> None:
    db = pg_db
    clock = ManualClock(1_000.0)
    rigs = [_rig(db, clock, n) for n in ("a", "b")]
    _split(rigs, clock)
    split = {r.engine.id: r.engine.deployer.partitions for r in rigs}
    assert not split["a"] & split["b"]
    decided: list[tuple[str, str]] = []
    for r in rigs:
        d = r.engine.deployer

        def spy(
            c: ClusterRecord,
            s: SoftwareSpec,
            now: float,
            *,
            _orig: Callable[..., int] = d._decide_one,
            _who: str = r.engine.id,
        ) -> int:
            decided.append((_who, c.id))
            return _orig(c, s, now)

        d._decide_one = spy  # type: ignore[method-assign]
    for r in rigs:
        await r.engine.start()
    try:
        ids = []
        for i in range(clusters):
            sub = await asyncio.to_thread(rigs[0].service.create, ADMIN, _doc(f"c{i}"))
            done = await rigs[0].wait(sub.action.id)
            assert done.status is ActionStatus.SUCCEEDED, done.status_reason
            ids.append(sub.cluster.id)

        def complete() -> bool:
            with db.reading() as conn:
                found = [deployment_repo.for_cluster(conn, cid) for cid in ids]
            return all(len(f) == 1 and f[0].status.value == "COMPLETE" for f in found)

        # The engine that finished a create wakes only its own deployer; the partition's
        # owner decides on its next tick (2 s of the engine's clock).
        await until(
            complete, "the deployments to complete", clock=clock, every_s=0.05, in_thread=True
        )
    finally:
        for r in rigs:
            await r.engine.stop()
    # Both engines stayed alive: the split made before the start held throughout.
    by = {cid: {who for who, c in decided if c == cid} for cid in ids}
    expected = {
        cid: {who for who, ps in split.items() if engines.partition_of(cid) in ps} for cid in ids
    }
    assert by == expected


def test_idle_pass_waits_longer_until_the_live_runs_ended() -> None:
    """Issue 23: after a pass that left runs live, the next waits
    `IDLE_GAP` times that pass's own time, unless every run live then has ended here."""
    import time
    from typing import Any, cast

    from shoal.engine.software.runner import IDLE_GAP, Deployer

    d = Deployer(cast(Any, None), lambda _c: SPEC)
    pace = d._pace
    pace.decide_gap = 1.0
    pace.decided_end = time.perf_counter() - 2.0  # the gap has passed, IDLE_GAP x not
    assert IDLE_GAP * pace.decide_gap > 2.5
    pace.dirty = True
    assert d._due(0.0)
    pace.idle_passes, pace.live, pace.ended = 1, 10, 9
    assert not d._due(0.0)
    pace.ended = 10  # all ten ended: what waited on them is due now
    assert d._due(0.0)
    pace.idle_passes, pace.ended = 0, 0  # the last pass moved a rollout on
    assert d._due(0.0)
