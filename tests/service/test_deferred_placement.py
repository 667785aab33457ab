"""A create above `sync_place_max_nodes` is placed by its action, not in the request (issue 23).

The request checks size, quotas and the free capacity in total and reserves on no host; the
planner places the whole cluster. Still all or nothing: an infeasible one fails its action with
the reasons, writes no node, and removes the cluster (its name free again).
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Connection

from shoal.clock import ManualClock
from shoal.engine import planner
from shoal.engine.contracts import ClusterInputs
from shoal.engine.decide import Decision
from shoal.engine.planner import plan_action
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus
from shoal.model.inventory import Host, Inventory
from shoal.service.clusters import ClusterService
from shoal.service.errors import Unplaceable
from shoal.service.limits import Limits
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import quotas as quota_repo
from shoal.store.database import Database
from shoal.store.records import ActionRecord, ClusterRecord
from tests.engine.support import ADMIN

DOC = """
name: {name}
node_groups:
  - name: db
    profile: {{type: server, flavor: m1.medium, image: cirros}}
    count: {count}
groupings:
  - {{name: apart, members: [db], rule: anti-affinity, scope: host}}
"""


def three_hosts() -> Inventory:
    """Three hosts with room for two m1.medium (2 vCPUs) each."""
    base = default_inventory()
    hosts = tuple(Host(f"h{i}", "az1", 4, 16384, 400, 0) for i in (1, 2, 3))
    return Inventory(hosts, base.flavors, base.images)


def _service(db: Database, sync_max: int = 2) -> ClusterService:
    inv = three_hosts()
    return ClusterService(
        db, lambda: inv, ManualClock(), lambda: None, Limits(sync_place_max_nodes=sync_max)
    )


def _plan(db: Database, service: ClusterService) -> ActionRecord:
    now = service.clock.now()
    with db.transaction() as conn:
        (claimed,) = action_repo.claim(
            conn,
            owner="e1",
            now=now,
            lease_s=30,
            limit=1,
            node_level=False,
            skip_locked=False,
            kinds=[str(ActionKind.CLUSTER_CREATE)],
        )
    plan_action(db, claimed, service.inventory(), "e1", now)
    with db.reading() as conn:
        found = action_repo.get_action(conn, claimed.id)
    assert found is not None
    return found


def test_an_infeasible_large_create_is_accepted_then_fails_and_leaves_nothing(
    db: Database,
) -> None:
    service = _service(db)
    # 4 anti-affine nodes on 3 hosts: the total capacity (6 x 2 vCPUs) holds them, no
    # placement does. Above the threshold, so the request does not place it.
    sub = service.create(ADMIN, DOC.format(name="big", count=4))
    assert ClusterInputs.from_json(sub.action.inputs).place_in_engine
    with db.reading() as conn:
        # Held for the quota while it waits, on no host.
        assert quota_repo.usage(conn, ADMIN.project_id).nodes == 4
        assert node_repo.used_capacity(conn) == {}
    action = _plan(db, service)
    assert action.status is ActionStatus.FAILED
    assert "cannot be placed" in action.status_reason
    assert "anti-affinity" in action.status_reason or "apart" in action.status_reason
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, sub.cluster.id, include_deleted=True)
        assert cluster is not None and cluster.status is ClusterStatus.DELETED
        assert cluster.lock_action_id is None
        assert node_repo.list_nodes(conn, sub.cluster.id, include_deleted=True) == []
        assert quota_repo.usage(conn, ADMIN.project_id).nodes == 0
    # Its name is free again.
    again = service.create(ADMIN, DOC.format(name="big", count=3))
    assert again.cluster.id != sub.cluster.id


def test_a_large_create_is_placed_by_its_action_and_admission_counts_it(db: Database) -> None:
    service = _service(db)
    sub = service.create(ADMIN, DOC.format(name="big", count=3))
    assert ClusterInputs.from_json(sub.action.inputs).place_in_engine
    # Accepted, unplaced: 3 of 6 slots are promised, so 4 more cannot be admitted, whether
    # placed by the request (2, below the threshold) or by the action.
    placing = _service(db, sync_max=10)
    for admitting in (service, placing):
        try:
            admitting.create(ADMIN, DOC.format(name="more", count=4).replace("anti-", ""))
        except Unplaceable as e:
            assert "free in the whole inventory" in str(e)
        else:
            raise AssertionError("admitted past the free capacity")
    # What still fits is admitted.
    small = service.create(ADMIN, DOC.format(name="small", count=1))
    assert not ClusterInputs.from_json(small.action.inputs).place_in_engine
    action = _plan(db, service)
    assert action.status is ActionStatus.RUNNING, action.status_reason
    with db.reading() as conn:
        placed = node_repo.list_nodes(conn, sub.cluster.id)
        assert len({n.host for n in placed}) == 3
        # From here the node rows hold the claims; the reservation is gone.
        assert quota_repo.usage(conn, ADMIN.project_id).nodes == 4


def test_a_guess_another_planner_overtook_is_decided_again_under_the_lock(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner solves without the placement lock, then claims under it only if its new
    nodes still fit. Here another cluster's plan commits between the two, onto the very host
    the guess chose: the claim check catches it and the plan is made again, elsewhere."""
    service = _service(db, sync_max=0)
    doc = (
        "name: {name}\nnode_groups:\n  - {{name: w, count: 1, "
        "profile: {{type: server, flavor: m1.large, image: cirros}}}}\n"
    )
    first = service.create(ADMIN, doc.format(name="a"))
    second = service.create(ADMIN, doc.format(name="b"))
    now = service.clock.now()
    with db.transaction() as conn:
        claimed = {
            a.id: a
            for a in action_repo.claim(
                conn,
                owner="e1",
                now=now,
                lease_s=30,
                limit=2,
                node_level=False,
                skip_locked=False,
                kinds=[str(ActionKind.CLUSTER_CREATE)],
            )
        }
    real = planner.decide
    calls: list[str] = []

    def overtaken(
        conn: Connection,
        kind: ActionKind,
        inputs: ClusterInputs,
        cluster: ClusterRecord,
        *rest: Any,
    ) -> Decision:
        decision = real(conn, kind, inputs, cluster, *rest)
        calls.append(cluster.name)
        if calls == ["b"]:
            # `a` is planned (claims committed) after `b` read the capacity it solved with.
            plan_action(db, claimed[first.action.id], service.inventory(), "e1", now)
        return decision

    monkeypatch.setattr(planner, "decide", overtaken)
    plan_action(db, claimed[second.action.id], service.inventory(), "e1", now)
    # b guessed, a guessed and claimed, b's claim failed the check and was decided again.
    assert calls == ["b", "a", "b"]
    with db.reading() as conn:
        (a,) = node_repo.list_nodes(conn, first.cluster.id)
        (b,) = node_repo.list_nodes(conn, second.cluster.id)
    assert a.host != b.host  # an m1.large fills a host: never two on one
