"""Which clusters a management tick looks at (issue 37, engine/attention.py), on the sim
provider with its change feed and on both databases: a calm cluster is left alone tick after
tick, and still repaired at once when its provider says it changed (a resource gone behind
Shoal's back, a host lost) or its row changed; a provider without a feed has every cluster
looked at every tick, as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from shoal.clock import ManualClock
from shoal.engine.attention import Attention
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import synthetic_inventory
from shoal.model.enums import ActionKind, NodeStatus
from shoal.providers.sim.provider import SimProvider
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord, NodeRecord
from tests.engine.support import ADMIN, Rig, make_rig, managed_at

CALM = """
name: calm
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 4
"""


@pytest.fixture
async def managed(db: Database) -> AsyncIterator[tuple[Rig, ManualClock]]:
    clock = ManualClock()
    provider = SimProvider(synthetic_inventory(6, 2), clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=2, backoff_s=0))
    rig.engine.manager.reconcile_s = 1.0  # type: ignore[union-attr]
    await rig.engine.start()
    yield rig, clock
    await rig.engine.stop()


async def _until(clock: ManualClock, check: Callable[[], bool], limit: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not check():
        assert loop.time() < deadline, "condition never held"
        clock.advance(0.5)
        await asyncio.sleep(0.02)


def _cluster(rig: Rig, cid: str) -> ClusterRecord:
    with rig.db.reading() as conn:
        found = cluster_repo.get_cluster(conn, cid)
    assert found is not None
    return found


def _nodes(rig: Rig, cid: str) -> list[NodeRecord]:
    with rig.db.reading() as conn:
        return node_repo.list_nodes(conn, cid)


def _settled(rig: Rig, cid: str) -> bool:
    c = _cluster(rig, cid)
    nodes = _nodes(rig, cid)
    return (
        c.lock_action_id is None
        and len(nodes) == 4
        and all(n.status is NodeStatus.ACTIVE for n in nodes)
    )


def _recovers(rig: Rig, cid: str) -> int:
    with rig.db.reading() as conn:
        found = action_repo.list_actions(conn, None, cluster_id=cid, top_level=True)
    return sum(1 for a in found if a.kind is ActionKind.CLUSTER_RECOVER)


async def test_a_calm_cluster_is_left_alone_and_still_repaired(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    manager = rig.engine.manager
    assert manager is not None
    sub = await asyncio.to_thread(rig.service.create, ADMIN, CALM)
    cid = sub.cluster.id
    await _until(clock, lambda: _settled(rig, cid))
    for _ in range(3):  # looked at once settled, found calm
        clock.advance(1.0)
        await managed_at(rig, clock, clock.now())
    assert not manager.attention.wants(_cluster(rig, cid), clock.now())
    victim = _nodes(rig, cid)[0]
    assert victim.provider_id is not None
    await rig.provider.delete(victim.kind, victim.provider_id)
    await _until(clock, lambda: _recovers(rig, cid) == 1 and _settled(rig, cid))
    again = {n.name: n for n in _nodes(rig, cid)}[victim.name]
    assert again.id == victim.id  # recreated in place, found through the feed
    lost = again.host
    assert lost is not None
    await _until(clock, lambda: not manager.attention.wants(_cluster(rig, cid), clock.now()))
    await rig.provider.fail_host(lost)
    await _until(
        clock,
        lambda: _settled(rig, cid) and all(n.host != lost for n in _nodes(rig, cid)),
    )


async def test_a_calm_cluster_is_looked_at_whole_now_and_then(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    manager = rig.engine.manager
    assert manager is not None
    sub = await asyncio.to_thread(rig.service.create, ADMIN, CALM)
    cid = sub.cluster.id
    await _until(clock, lambda: _settled(rig, cid))
    await _until(clock, lambda: not manager.attention.wants(_cluster(rig, cid), clock.now()))
    clock.advance(manager.attention.full_s)
    assert manager.attention.wants(_cluster(rig, cid), clock.now())


class _NoFeed:
    """A provider without `changes_since` (its other methods are never called here)."""


def test_without_a_feed_every_cluster_is_looked_at() -> None:
    attention = Attention(_NoFeed(), tick_s=1.0)  # type: ignore[arg-type]
    cluster = ClusterRecord.__new__(ClusterRecord)
    assert attention.feed is None
    assert attention.wants(cluster, 0.0)
