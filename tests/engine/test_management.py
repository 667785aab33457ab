"""Active management on the sim provider, on both databases: drift repair, host loss, health
checks with their short circuit, and rolling updates with their batches and rollback. Time is
a ManualClock: intervals, grace periods and cooldowns pass when a test says so."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.model.catalogs import synthetic_inventory
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeStatus
from shoal.providers.sim.provider import SimProvider
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, NodeRecord
from tests.engine.support import ADMIN, Rig, make_rig, managed_at
from tests.support.polling import until

WEB = """
name: web
health:
  check: provider
  interval_s: 1
  failures: 2
  grace_s: 0
  recovery: replace
  max_unhealthy: 2
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 6
    update: {max_unavailable: 1, health_gate: true, gate_timeout_s: 5}
groupings:
  - {name: apart, members: [web], rule: anti-affinity, max_per_domain: 1}
"""


@pytest.fixture
async def managed(db: Database) -> AsyncIterator[tuple[Rig, ManualClock]]:
    clock = ManualClock()
    # Eight hosts: six anti-affine nodes still fit when one host is lost.
    provider = SimProvider(synthetic_inventory(8, 2), clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=2, backoff_s=0))
    rig.engine.manager.reconcile_s = 1.0  # type: ignore[union-attr]
    await rig.engine.start()
    yield rig, clock
    await rig.engine.stop()


def _nodes(rig: Rig, cluster_id: str) -> list[NodeRecord]:
    with rig.db.reading() as conn:
        return node_repo.list_nodes(conn, cluster_id)


def _actions(rig: Rig, cluster_id: str) -> list[ActionRecord]:
    with rig.db.reading() as conn:
        return action_repo.list_actions(conn, None, cluster_id=cluster_id, top_level=True)


def _all_active(rig: Rig, cluster_id: str, count: int) -> bool:
    nodes = _nodes(rig, cluster_id)
    with rig.db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
    return (
        cluster is not None
        and cluster.lock_action_id is None
        and len(nodes) == count
        and all(n.status is NodeStatus.ACTIVE for n in nodes)
    )


async def _create(rig: Rig, clock: ManualClock, doc: str) -> str:
    sub = await asyncio.to_thread(rig.service.create, ADMIN, doc)
    await until(lambda: _all_active(rig, sub.cluster.id, 6), clock=clock)
    return sub.cluster.id


async def test_a_resource_deleted_behind_shoals_back_is_recreated(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    cid = await _create(rig, clock, WEB)
    victim = _nodes(rig, cid)[0]
    assert victim.provider_id is not None
    await rig.provider.delete(victim.kind, victim.provider_id)
    await until(
        lambda: (
            any(a.kind is ActionKind.CLUSTER_RECOVER for a in _actions(rig, cid))
            and _all_active(rig, cid, 6)
        ),
        clock=clock,
    )
    again = {n.name: n for n in _nodes(rig, cid)}[victim.name]
    assert again.id == victim.id and again.host == victim.host  # recreated in place
    assert len(await rig.provider.list_resources(cid)) == 6


async def test_a_failed_host_s_nodes_come_back_elsewhere_keeping_anti_affinity(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    cid = await _create(rig, clock, WEB)
    lost_host = _nodes(rig, cid)[0].host
    assert lost_host is not None
    await rig.provider.fail_host(lost_host)
    await until(
        lambda: _all_active(rig, cid, 6) and all(n.host != lost_host for n in _nodes(rig, cid)),
        clock=clock,
    )
    hosts = [n.host for n in _nodes(rig, cid)]
    assert len(set(hosts)) == 6  # anti-affinity still holds
    assert all(a.status is ActionStatus.SUCCEEDED for a in _actions(rig, cid))


async def test_too_many_failures_at_once_short_circuit(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    cid = await _create(rig, clock, WEB)
    for n in _nodes(rig, cid)[:3]:
        assert n.provider_id is not None
        await rig.provider.kill_node_process(n.provider_id)
    await until(
        lambda: (c := _cluster(rig, cid)) is not None and c.status is ClusterStatus.WARNING,
        clock=clock,
    )
    clock.advance(5)
    await managed_at(rig, clock, clock.now())  # the manager judged the three failures as of now
    assert not any(a.kind is ActionKind.CLUSTER_RECOVER for a in _actions(rig, cid))
    cluster = _cluster(rig, cid)
    assert cluster is not None and "max_unhealthy" in cluster.status_reason


def _cluster(rig: Rig, cid: str) -> cluster_repo.ClusterRecord | None:
    with rig.db.reading() as conn:
        return cluster_repo.get_cluster(conn, cid)


async def test_rolling_update_keeps_at_most_one_node_down(
    managed: tuple[Rig, ManualClock],
) -> None:
    rig, clock = managed
    cid = await _create(rig, clock, WEB)
    new_doc = WEB.replace("flavor: m1.tiny", "flavor: m1.small")
    sub = await asyncio.to_thread(rig.service.update, ADMIN, "web", new_doc)
    worst = 0

    def done() -> bool:
        nonlocal worst
        nodes = [n for n in _nodes(rig, cid) if "~" not in n.name]
        up = sum(1 for n in nodes if n.status is NodeStatus.ACTIVE)
        worst = max(worst, 6 - up)
        with rig.db.reading() as conn:
            a = action_repo.get_action(conn, sub.action.id)
        return a is not None and a.status.is_terminal

    await until(done, clock=clock, step_s=0.2)
    with rig.db.reading() as conn:
        action = action_repo.get_action(conn, sub.action.id)
    assert action is not None and action.status is ActionStatus.SUCCEEDED, action
    nodes = _nodes(rig, cid)
    assert len(nodes) == 6
    assert all(n.profile["flavor"] == "m1.small" for n in nodes)
    assert worst <= 1
    assert len({n.host for n in nodes}) == 6


async def test_a_busy_cluster_s_nodes_keep_their_health_state(
    managed: tuple[Rig, ManualClock],
) -> None:
    """While a cluster is busy (not managed), its nodes' check schedule and grace period are
    kept: once it settles, a failure is seen within the checks' own time, not after a new
    grace period (regression: they were forgotten whenever another cluster was managed)."""
    rig, clock = managed
    doc = WEB.replace("grace_s: 0", "grace_s: 10").replace("recovery: replace", "recovery: rebuild")
    cid = await _create(rig, clock, doc)
    await _create(rig, clock, doc.replace("name: web", "name: other", 1))
    clock.advance(11)  # past the grace period: every node is judged from now on
    await managed_at(rig, clock, clock.now())
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1e9  # only the health checks may notice
    now = clock.now()
    with rig.db.transaction() as conn:
        cluster_repo.set_status(conn, cid, ClusterStatus.UPDATING, "", now)
    for _ in range(3):  # ticks that manage only the other cluster
        clock.advance(1)
        await managed_at(rig, clock, clock.now())
    with rig.db.transaction() as conn:
        cluster_repo.set_status(conn, cid, ClusterStatus.ACTIVE, "", clock.now())
    victim = _nodes(rig, cid)[0]
    assert victim.provider_id is not None
    await rig.provider.kill_node_process(victim.provider_id)
    # Two failed checks at 1 s intervals; up to 8 s of Shoal's time, still inside the 10 s a
    # forgotten (restarted) grace period would take, so the regression stays caught.
    for _ in range(8):  # each step a manager tick (1 s), waited for rather than slept into
        clock.advance(1.0)
        await managed_at(rig, clock, clock.now())
        if any(a.kind is ActionKind.CLUSTER_RECOVER for a in _actions(rig, cid)):
            break
    assert any(a.kind is ActionKind.CLUSTER_RECOVER for a in _actions(rig, cid))


async def test_a_lost_host_is_replaced_even_when_a_health_check_notices_first(
    managed: tuple[Rig, ManualClock],
) -> None:
    """Health recovery `rebuild` cannot work on a failed host: the node is replaced, whichever
    of drift repair or the health check sees it first (regression: a rebuild was tried)."""
    rig, clock = managed
    cid = await _create(rig, clock, WEB.replace("recovery: replace", "recovery: rebuild"))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1e9
    for _ in range(3):  # drift repair has its first pass now, then never again: only checks
        clock.advance(1)
        await managed_at(rig, clock, clock.now())
    lost_host = _nodes(rig, cid)[0].host
    assert lost_host is not None
    await rig.provider.fail_host(lost_host)
    await until(
        lambda: _all_active(rig, cid, 6) and all(n.host != lost_host for n in _nodes(rig, cid)),
        clock=clock,
    )
    recoveries = [a for a in _actions(rig, cid) if a.kind is ActionKind.CLUSTER_RECOVER]
    assert [r["how"] for a in recoveries for r in a.inputs["repairs"]] == ["replace"]
    assert all(a.status is ActionStatus.SUCCEEDED for a in recoveries)
