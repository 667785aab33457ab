"""The engine end to end on a sim provider, on SQLite and PostgreSQL: create, scale, change node
groups, delete; dependency order; failures; cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionStatus, ClusterStatus, NodeStatus
from shoal.providers.sim.provider import SimProvider
from shoal.service.edits import Resize
from shoal.service.errors import Conflict, Invalid, Unplaceable
from shoal.service.resize import Adjustment
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import events as event_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, Rig, make_rig
from tests.support.polling import until

DOC = """
name: shop
node_groups:
  - name: db
    unit:
      server: {type: server, flavor: m1.small, image: cirros}
      data: {type: volume, size: 10}
    count: 2
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 3
    min: 1
    max: 6
    depends_on: [db]
groupings:
  - {name: db-apart, members: [db], rule: anti-affinity}
"""


@pytest.fixture
async def rig(db: Database) -> Rig:
    r = make_rig(db)
    await r.engine.start()
    yield r  # type: ignore[misc]
    await r.engine.stop()


def _nodes(rig: Rig, cluster_id: str) -> dict[str, node_repo.NodeRecord]:
    with rig.db.reading() as conn:
        return {n.name: n for n in node_repo.list_nodes(conn, cluster_id)}


async def test_create_scale_and_delete(rig: Rig) -> None:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    done = await rig.wait(sub.action.id)
    assert done.status is ActionStatus.SUCCEEDED, done.status_reason
    nodes = _nodes(rig, sub.cluster.id)
    assert sorted(nodes) == [
        "db-1-data",
        "db-1-server",
        "db-2-data",
        "db-2-server",
        "web-1",
        "web-2",
        "web-3",
    ]
    assert all(n.status is NodeStatus.ACTIVE for n in nodes.values())
    assert nodes["db-1-server"].host != nodes["db-2-server"].host
    assert nodes["db-1-data"].host == nodes["db-1-server"].host
    assert nodes["db-1-data"].attach_to == "db-1-server"

    out = await asyncio.to_thread(
        lambda: rig.service.scale(ADMIN, "shop", out=True, count=2, nodegroup="web")
    )
    assert (await rig.wait(out.action.id)).status is ActionStatus.SUCCEEDED
    assert {"web-4", "web-5"} <= set(_nodes(rig, sub.cluster.id))
    # Scale-out adds, never moves.
    after = _nodes(rig, sub.cluster.id)
    assert all(after[k].host == n.host for k, n in nodes.items())

    smaller = await asyncio.to_thread(
        lambda: rig.service.resize(ADMIN, "shop", Resize(Adjustment.EXACT_CAPACITY, 2, "web"))
    )
    assert (await rig.wait(smaller.action.id)).status is ActionStatus.SUCCEEDED
    assert sorted(n for n in _nodes(rig, sub.cluster.id) if n.startswith("web")) == [
        "web-1",
        "web-2",
    ]

    gone = await asyncio.to_thread(rig.service.delete, ADMIN, "shop")
    assert (await rig.wait(gone.action.id)).status is ActionStatus.SUCCEEDED
    with rig.db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, sub.cluster.id, include_deleted=True)
    assert cluster is not None and cluster.status is ClusterStatus.DELETED
    assert _nodes(rig, sub.cluster.id) == {}
    assert await rig.provider.list_resources() == []


async def test_dependencies_order_creation_and_reverse_deletion(rig: Rig) -> None:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    await rig.wait(sub.action.id)
    with rig.db.reading() as conn:
        events = event_repo.list_events(conn, None, cluster_id=sub.cluster.id, limit=10_000)
    active_at = {e.obj_name: e.id for e in events if e.obj_type == "NODE" and e.status == "ACTIVE"}
    started_at = {
        e.obj_name: e.id for e in events if e.obj_type == "NODE" and e.status == "CREATING"
    }
    # Every web node starts after every db node (and its volume attach) is done.
    assert min(started_at[f"web-{i}"] for i in (1, 2, 3)) > max(
        active_at[n] for n in ("db-1-server", "db-2-server", "db-1-data", "db-2-data")
    )
    gone = await asyncio.to_thread(rig.service.delete, ADMIN, "shop")
    await rig.wait(gone.action.id)
    with rig.db.reading() as conn:
        events = event_repo.list_events(conn, None, cluster_id=sub.cluster.id, limit=10_000)
    deleted_at = {
        e.obj_name: e.id for e in events if e.obj_type == "NODE" and e.status == "DELETED"
    }
    deleting_at = {
        e.obj_name: e.id for e in events if e.obj_type == "NODE" and e.status == "DELETING"
    }
    assert min(deleting_at[n] for n in ("db-1-server", "db-2-server")) > max(
        deleted_at[f"web-{i}"] for i in (1, 2, 3)
    )
    assert deleting_at["db-1-data"] > deleted_at["db-1-server"]


async def test_node_groups_can_be_added_changed_and_removed(rig: Rig) -> None:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    await rig.wait(sub.action.id)
    group = {
        "name": "cache",
        "profile": {"type": "server", "flavor": "m1.small", "image": "cirros"},
        "count": 2,
        "zones": ["az2"],
    }
    added = await asyncio.to_thread(rig.service.nodegroup_create, ADMIN, "shop", group)
    assert (await rig.wait(added.action.id)).status is ActionStatus.SUCCEEDED
    nodes = _nodes(rig, sub.cluster.id)
    assert nodes["cache-1"].zone == nodes["cache-2"].zone == "az2"
    changed = await asyncio.to_thread(
        rig.service.nodegroup_update, ADMIN, "shop", "cache", {"count": 1}
    )
    assert (await rig.wait(changed.action.id)).status is ActionStatus.SUCCEEDED
    assert "cache-2" not in _nodes(rig, sub.cluster.id)
    removed = await asyncio.to_thread(rig.service.nodegroup_delete, ADMIN, "shop", "cache")
    assert (await rig.wait(removed.action.id)).status is ActionStatus.SUCCEEDED
    assert not any(n.startswith("cache") for n in _nodes(rig, sub.cluster.id))
    with pytest.raises(Conflict):
        await asyncio.to_thread(rig.service.nodegroup_delete, ADMIN, "shop", "db")


async def test_del_nodes_removes_exactly_the_named_replica(rig: Rig) -> None:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    await rig.wait(sub.action.id)
    gone = await asyncio.to_thread(rig.service.del_nodes, ADMIN, "shop", ["web-2"])
    assert (await rig.wait(gone.action.id)).status is ActionStatus.SUCCEEDED
    assert sorted(n for n in _nodes(rig, sub.cluster.id) if n.startswith("web")) == [
        "web-1",
        "web-3",
    ]
    back = await asyncio.to_thread(
        lambda: rig.service.scale(ADMIN, "shop", out=True, count=1, nodegroup="web")
    )
    await rig.wait(back.action.id)
    # The freed index is reused once the old node is gone.
    assert sorted(n for n in _nodes(rig, sub.cluster.id) if n.startswith("web")) == [
        "web-1",
        "web-2",
        "web-3",
    ]


async def test_refusals_change_nothing(rig: Rig) -> None:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
    await rig.wait(sub.action.id)
    with rig.db.reading() as conn:
        before = cluster_repo.get_cluster(conn, sub.cluster.id)
    with pytest.raises(Conflict):  # above the group's max
        await asyncio.to_thread(
            lambda: rig.service.scale(ADMIN, "shop", out=True, count=10, nodegroup="web")
        )
    with pytest.raises(Invalid):  # several node groups: say which
        await asyncio.to_thread(
            lambda: rig.service.scale(ADMIN, "shop", out=True, count=1, nodegroup=None)
        )
    with pytest.raises(Unplaceable):
        big = {
            "name": "huge",
            "profile": {"type": "server", "flavor": "m1.xlarge", "image": "cirros"},
            "count": 13,
        }
        await asyncio.to_thread(rig.service.nodegroup_create, ADMIN, "shop", big)
    with pytest.raises(Conflict):
        await asyncio.to_thread(rig.service.create, ADMIN, DOC)  # the name is taken
    with rig.db.reading() as conn:
        after = cluster_repo.get_cluster(conn, sub.cluster.id)
        actions = action_repo.list_actions(conn, None, cluster_id=sub.cluster.id, top_level=True)
    assert before == after
    assert len(actions) == 1


async def test_a_busy_cluster_refuses_a_second_change(db: Database) -> None:
    slow = SimProvider(default_inventory(), create_latency_s=0.5)
    rig = make_rig(db, provider=slow)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        with pytest.raises(Conflict):
            await asyncio.to_thread(
                lambda: rig.service.scale(ADMIN, "shop", out=True, count=1, nodegroup="web")
            )
        assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED
    finally:
        await rig.engine.stop()


async def test_provider_failures_fail_the_action_and_mark_nodes(db: Database) -> None:
    broken = SimProvider(default_inventory(), failure_rate=1.0)
    rig = make_rig(db, provider=broken, retry=RetryPolicy(attempts=2, backoff_s=0.0))
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.FAILED
        assert "simulated" in done.status_reason
        with rig.db.reading() as conn:
            cluster = cluster_repo.get_cluster(conn, sub.cluster.id)
            counts = action_repo.child_counts(conn, sub.action.id)
        assert cluster is not None and cluster.status is ClusterStatus.ERROR
        assert cluster.lock_action_id is None
        assert counts[ActionStatus.FAILED] >= 1 and counts[ActionStatus.CANCELLED] >= 1
        assert all(
            n.status in (NodeStatus.ERROR, NodeStatus.INIT)
            for n in _nodes(rig, sub.cluster.id).values()
        )
        # The failed cluster can still be deleted.
        gone = await asyncio.to_thread(rig.service.delete, ADMIN, "shop")
        assert (await rig.wait(gone.action.id)).status is ActionStatus.SUCCEEDED
    finally:
        await rig.engine.stop()


async def test_temporary_failures_are_retried_on_the_injected_clock(db: Database) -> None:
    clock = ManualClock()
    flaky = SimProvider(default_inventory(), failure_rate=0.5, seed=3)
    rig = make_rig(db, provider=flaky, clock=clock, retry=RetryPolicy(attempts=8, backoff_s=5.0))
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        # Backoffs elapse only when the test says so: the clock moves 5 s at each look.
        await until(
            lambda: _action(rig, sub.action.id).status.is_terminal,
            "the create to end",
            clock=clock,
            step_s=5.0,
            every_s=0.01,
        )
        action = _action(rig, sub.action.id)
        assert action.status is ActionStatus.SUCCEEDED, action.status_reason
        with rig.db.reading() as conn:
            children = action_repo.list_actions(conn, None, parent_id=sub.action.id)
        assert len(await rig.provider.list_resources()) == 7
        assert all(c.status is ActionStatus.SUCCEEDED for c in children)
    finally:
        await rig.engine.stop()


async def test_cancel_stops_what_has_not_started(db: Database) -> None:
    """Cancelled while db's creates are in flight (they wait on the engine's clock): web, which
    waits on db, never starts. The test waits for that state instead of sleeping into it."""
    clock = ManualClock()
    slow = SimProvider(default_inventory(), create_latency_s=3.0, clock_sleep=clock.sleep)
    rig = make_rig(db, provider=slow, clock=clock)
    if rig.engine.manager is not None:
        # Only the cancelled action may act: the manager would converge the cluster (make the
        # missing nodes) once it is free, which is not what this test looks at.
        rig.engine.manager.converge_attempts = 0
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)

        def db_in_flight() -> bool:
            nodes = _nodes(rig, sub.cluster.id)
            return any(
                n.startswith("db") and r.status is NodeStatus.CREATING for n, r in nodes.items()
            )

        await until(db_in_flight, "db's creates to start", every_s=0.01, in_thread=True)
        await asyncio.to_thread(rig.service.cancel, ADMIN, sub.action.id)
        # The creates in flight finish as the clock moves; nothing new may start.
        await until(
            lambda: _action(rig, sub.action.id).status.is_terminal,
            "the cancelled create to end",
            clock=clock,
            step_s=1.0,
            in_thread=True,
        )
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.CANCELLED

        def locked() -> bool:
            with rig.db.reading() as conn:
                cluster = cluster_repo.get_cluster(conn, sub.cluster.id)
            assert cluster is not None
            return cluster.lock_action_id is not None

        # Released once the creates in flight end.
        await until(
            lambda: not locked(),
            "the cancelled create to unlock the cluster",
            clock=clock,
            step_s=1.0,
            in_thread=True,
        )
        # web waits on db, so it never started: not one web server was made, while db's were.
        made = [r.name for r in await rig.provider.list_resources()]
        assert any("-db-" in n for n in made), made
        assert not any("-web-" in n for n in made), made
    finally:
        await rig.engine.stop()


def _action(rig: Rig, action_id: str) -> action_repo.ActionRecord:
    with rig.db.reading() as conn:
        found = action_repo.get_action(conn, action_id)
    assert found is not None
    return found


async def test_wake_from_a_worker_thread_is_handed_to_the_loop(rig: Rig) -> None:
    """The service submits from FastAPI's thread pool: its wake reaches the engine's loop by
    call_soon_threadsafe, not by setting the loop's Event from the thread (which raced the
    engine's idle timeout: InvalidStateError, a 500 under load)."""
    wake = rig.engine._wake
    wake.clear()
    loop = asyncio.get_running_loop()
    handed: list[object] = []
    real = loop.call_soon_threadsafe

    def spy(callback: Any, *args: Any) -> Any:
        handed.append(callback)
        return real(callback, *args)

    loop.call_soon_threadsafe = spy  # type: ignore[method-assign]
    try:
        await asyncio.to_thread(rig.engine.wake)
    finally:
        loop.call_soon_threadsafe = real  # type: ignore[method-assign]
    assert wake.set in handed
    wake.clear()
    rig.engine.wake()  # on the loop itself: set at once (no await in between)
    assert wake.is_set()
