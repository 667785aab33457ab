"""Level triggering for what an action left undone (issue 9, points 2 and 3), on the sim
provider and both databases, time on a ManualClock:
- a cluster whose creation failed at placement is never ACTIVE with zero nodes;
- a failed create leaves no INIT node holding host capacity; the manager converges the cluster
  (bounded attempts with backoff, then ERROR with the reason); a WARNING or ERROR always says
  why; `recover` makes declared nodes that do not exist."""

from __future__ import annotations

import asyncio

from shoal.clock import ManualClock
from shoal.engine.nodework import RetryPolicy
from shoal.engine.profiles import profile_from_row
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.profile import ServerProfile
from shoal.providers.base import Resource, ServerRequest
from shoal.providers.sim.provider import SimProvider
from shoal.service.clusters import ClusterService
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord, NodeChange
from tests.engine.support import ADMIN, Rig, make_rig, managed_at
from tests.support.polling import until

DOC = """
name: shop
node_groups:
  - name: db
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 2
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 6
    depends_on: [db]
"""


def _cluster(rig: Rig, ref: str) -> ClusterRecord:
    with rig.db.reading() as conn:
        found = cluster_repo.get_cluster(conn, ref)
    assert found is not None
    return found


def _rig(db: Database, provider: SimProvider, clock: ManualClock) -> Rig:
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    assert rig.engine.manager is not None
    rig.engine.manager.reconcile_s = 1.0
    return rig


def _half(inv: Inventory) -> Inventory:
    return Inventory(inv.hosts[:1], inv.flavors, inv.images)


async def test_a_create_failed_at_placement_is_never_active_and_gives_up_with_a_reason(
    db: Database,
) -> None:
    clock = ManualClock()
    # The service sees six hosts, the engine (the provider) one: admitted, then unplaceable.
    tiny = _half(default_inventory())
    big = "\n".join(DOC.splitlines()).replace("count: 6", "count: 40")
    rig = _rig(db, SimProvider(tiny, clock_sleep=clock.sleep), clock)
    rig.service = ClusterService(db, default_inventory, clock, rig.engine.wake)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, big)
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.FAILED
        seen: set[ClusterStatus] = set()

        def gave_up() -> bool:
            c = _cluster(rig, "shop")
            seen.add(c.status)
            if c.status is not ClusterStatus.ACTIVE and c.lock_action_id is None:
                assert c.status_reason, f"{c.status} without a reason"
            return c.status_reason.startswith("gave up converging")

        await until(gave_up, clock=clock)
        assert ClusterStatus.ACTIVE not in seen
        final = _cluster(rig, "shop")
        assert final.status is ClusterStatus.ERROR
        assert "cannot place" in final.status_reason
        with rig.db.reading() as conn:
            recoveries = [
                a
                for a in action_repo.list_actions(conn, None, cluster_id=sub.cluster.id)
                if a.kind is ActionKind.CLUSTER_RECOVER
            ]
        assert 1 <= len(recoveries) <= 4  # bounded
        clock.advance(3600)
        await managed_at(rig, clock, clock.now())  # it looked again, an hour on, and gave up still
        with rig.db.reading() as conn:
            again = action_repo.list_actions(conn, None, cluster_id=sub.cluster.id)
        assert len([a for a in again if a.kind is ActionKind.CLUSTER_RECOVER]) == len(recoveries)
    finally:
        await rig.engine.stop()


async def test_a_failed_create_holds_no_capacity_and_converges(db: Database) -> None:
    clock = ManualClock()
    # Every create fails: the db nodes fail, so the web nodes waiting on them never start.
    provider = SimProvider(default_inventory(), failure_rate=1.0, clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    assert rig.engine.manager is not None
    rig.engine.manager.converge_backoff_s = 60.0  # nothing retried before the test says so
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        done = await rig.wait(sub.action.id)
        assert done.status is ActionStatus.FAILED
        with rig.db.reading() as conn:
            nodes = node_repo.list_nodes(conn, sub.cluster.id)
            used = node_repo.used_capacity(conn)
        assert sorted(n.name for n in nodes) == ["db-1", "db-2"]
        assert all(n.status is NodeStatus.ERROR for n in nodes)
        assert not any(n.status is NodeStatus.INIT for n in nodes)
        # Only the two db nodes (failed, their servers possibly made) hold capacity.
        assert sum(d.vcpus for d in used.values()) == 2
        cluster = _cluster(rig, "shop")
        assert cluster.status is ClusterStatus.ERROR and cluster.status_reason

        provider.failure_rate = 0.0  # the cloud heals; the manager converges on its own

        def converged() -> bool:
            with rig.db.reading() as conn:
                nodes = node_repo.list_nodes(conn, sub.cluster.id)
            c = _cluster(rig, "shop")
            return (
                c.status is ClusterStatus.ACTIVE
                and c.lock_action_id is None
                and len(nodes) == 8
                and all(n.status is NodeStatus.ACTIVE for n in nodes)
            )

        await until(converged, clock=clock, step_s=5.0)
        assert len(await provider.list_resources(sub.cluster.id)) == 8
    finally:
        await rig.engine.stop()


async def test_recover_makes_declared_nodes_that_do_not_exist(db: Database) -> None:
    clock = ManualClock()
    provider = SimProvider(default_inventory(), failure_rate=1.0, clock_sleep=clock.sleep)
    rig = make_rig(db, provider=provider, clock=clock, retry=RetryPolicy(attempts=1, backoff_s=0))
    rig.engine.manager = None  # no convergence on its own: the request does it
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(rig.service.create, ADMIN, DOC)
        assert (await rig.wait(sub.action.id)).status is ActionStatus.FAILED
        provider.failure_rate = 0.0
        again = await asyncio.to_thread(rig.service.recover, ADMIN, "shop")
        assert (await rig.wait(again.action.id)).status is ActionStatus.SUCCEEDED
        with rig.db.reading() as conn:
            nodes = node_repo.list_nodes(conn, sub.cluster.id)
        assert len(nodes) == 8 and all(n.status is NodeStatus.ACTIVE for n in nodes)
        assert _cluster(rig, "shop").status is ClusterStatus.ACTIVE
    finally:
        await rig.engine.stop()


async def test_a_duplicate_made_by_a_stalled_engine_is_deleted(db: Database) -> None:
    """Real-cloud mode: a second server with a node's key (a create that went on after its
    engine lost the claim) is deleted by the manager; the node keeps its own."""
    clock = ManualClock()
    provider = SimProvider(default_inventory(), real_cloud=True, clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(
            rig.service.create, ADMIN, DOC.replace("count: 6", "count: 1")
        )
        assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED
        with rig.db.reading() as conn:
            node = next(n for n in node_repo.list_nodes(conn, sub.cluster.id) if n.name == "web-1")
        profile = profile_from_row(node.profile, default_inventory())
        assert isinstance(profile, ServerProfile)
        extra = await provider.create_server(
            ServerRequest(
                node.id, "dup", sub.cluster.id, str(node.host), "az1", profile, fresh=True
            )
        )
        assert extra.id != node.provider_id

        async def ids() -> set[str]:
            return {r.id for r in await provider.list_resources(sub.cluster.id)}

        assert extra.id in await ids()

        async def gone() -> bool:
            return extra.id not in await ids()

        await until(gone, "the duplicate to be deleted", clock=clock)
        assert node.provider_id in await ids()
        assert len(await ids()) == 3
    finally:
        await rig.engine.stop()


class _FullDisk(SimProvider):
    """A cloud whose creates raise what no provider error is (the full disk under its files):
    the engine's crash path, not its provider-failure path."""

    full = True

    async def create_server(self, request: ServerRequest) -> Resource:
        if self.full:
            raise OSError(28, "No space left on device")
        return await super().create_server(request)


async def test_a_crashed_create_leaves_its_node_error_and_converges_once_the_cause_is_gone(
    db: Database,
) -> None:
    """Issue 39, item 4: a create that crashed left its node CREATING, which neither the
    convergence nor a repair looks at; the cluster stayed WARNING after the disk was freed."""
    clock = ManualClock()
    provider = _FullDisk(default_inventory(), clock_sleep=clock.sleep)
    rig = _rig(db, provider, clock)
    assert rig.engine.manager is not None
    rig.engine.manager.converge_backoff_s = 60.0  # nothing retried before the test says so
    await rig.engine.start()
    try:
        sub = await asyncio.to_thread(
            rig.service.create, ADMIN, DOC.replace("count: 6", "count: 1")
        )
        assert (await rig.wait(sub.action.id)).status is ActionStatus.FAILED
        with rig.db.reading() as conn:
            nodes = node_repo.list_nodes(conn, sub.cluster.id)
        assert {n.name for n in nodes} == {"db-1", "db-2"}
        for n in nodes:
            assert n.status is NodeStatus.ERROR, n
            assert "No space left on device" in n.status_reason

        provider.full = False

        def converged() -> bool:
            with rig.db.reading() as conn:
                nodes = node_repo.list_nodes(conn, sub.cluster.id)
            c = _cluster(rig, "shop")
            return (
                c.status is ClusterStatus.ACTIVE
                and c.lock_action_id is None
                and len(nodes) == 3
                and all(n.status is NodeStatus.ACTIVE for n in nodes)
            )

        await until(converged, clock=clock, step_s=5.0)
    finally:
        await rig.engine.stop()


async def test_a_node_error_by_a_failed_action_whose_server_runs_is_active_again(
    db: Database,
) -> None:
    """Issue 39, item 4: a delete that crashed left its node ERROR with its server running; once
    the node was declared again, nothing made it ACTIVE and its cluster stayed WARNING."""
    clock = ManualClock()
    rig = _rig(db, SimProvider(default_inventory(), clock_sleep=clock.sleep), clock)
    await rig.engine.start()
    try:
        doc = DOC.replace("count: 6", "count: 1")
        sub = await asyncio.to_thread(rig.service.create, ADMIN, doc)
        assert (await rig.wait(sub.action.id)).status is ActionStatus.SUCCEEDED
        with rig.db.transaction() as conn:
            node = next(n for n in node_repo.list_nodes(conn, sub.cluster.id) if n.name == "web-1")
            node_repo.update_nodes(
                conn,
                [
                    NodeChange(
                        node.id,
                        status=NodeStatus.ERROR,
                        status_reason="internal error: OSError(28, 'No space left on device')",
                    )
                ],
            )

        def active() -> bool:
            with rig.db.reading() as conn:
                nodes = node_repo.list_nodes(conn, sub.cluster.id)
            c = _cluster(rig, "shop")
            return c.status is ClusterStatus.ACTIVE and all(
                n.status is NodeStatus.ACTIVE for n in nodes
            )

        await until(active, clock=clock, step_s=1.0)
        with rig.db.reading() as conn:
            again = node_repo.get_nodes(conn, [node.id])[node.id]
        assert again.provider_id == node.provider_id  # the same server, not a new one
    finally:
        await rig.engine.stop()
