"""Receivers that scale a workload (issue 22, item 3), on the store (SQLite and PostgreSQL) with
no engine: `workload: W` with scale_out / scale_in, the workload's `scaling` policy under the
receiver's params, bounded by the workload's min/max (clamped, or refused with a pointer when
strict), its own cooldown, the change recorded as the same typed edit as
`shoal scale --workload`; bad receivers refused with every problem at once."""

from __future__ import annotations

import pytest

from shoal.clock import ManualClock
from shoal.model.enums import ActionKind
from shoal.service.edits import WORKLOAD_SCALED
from shoal.service.errors import Conflict, Invalid, NotFound, OutOfBounds
from shoal.service.receivers import ReceiverService
from shoal.service.triggers import Cooldown
from shoal.store import clusters as cluster_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, make_rig

DOC = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
workloads:
  api:
    replicas: 2
    min: 1
    max: 4
    scaling: {number: 2, cooldown_s: 30}
    containers: [{name: api, image: img, resources: {cpu: 0.25}}]
"""


def _unlock(db: Database, cluster_id: str, now: float) -> None:
    with db.transaction() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
        assert cluster is not None and cluster.lock_action_id is not None
        cluster_repo.unlock(conn, cluster_id, cluster.lock_action_id, now)


def _replicas(db: Database, cluster_id: str) -> int:
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
    assert cluster is not None
    return int(cluster.document["workloads"]["api"]["replicas"])


def test_a_workload_receiver_scales_its_replicas_within_bounds(db: Database) -> None:
    clock = ManualClock()
    rig = make_rig(db, clock=clock)
    cid = rig.service.create(ADMIN, DOC).cluster.id
    _unlock(db, cid, clock.now())
    receivers = ReceiverService(rig.service)

    # Every problem of a bad receiver at once, each with its pointer.
    with pytest.raises(Invalid) as bad:
        receivers.create(
            ADMIN,
            {
                "name": "x",
                "cluster": "shop",
                "action": "recover",
                "nodegroup": "web",
                "workload": "api",
            },
        )
    paths = [p.path for p in bad.value.problems]
    assert paths.count("/workload") == 2 and "/nodegroup" in paths
    with pytest.raises(NotFound) as missing:
        receivers.create(
            ADMIN, {"name": "x", "cluster": "shop", "action": "scale_out", "workload": "nope"}
        )
    assert [p.path for p in missing.value.problems] == ["/workload"]

    grow = receivers.create(
        ADMIN, {"name": "grow", "cluster": "shop", "action": "scale_out", "workload": "api"}
    )
    assert grow["action"] == "scale_out" and grow["workload"] == "api"
    assert grow["nodegroup"] is None
    shrink = receivers.create(
        ADMIN,
        {
            "name": "shrink",
            "cluster": "shop",
            "action": "scale_in",
            "workload": "api",
            "params": {"number": 5, "strict": True},
        },
    )
    assert receivers.get(ADMIN, "shrink")["workload"] == "api"

    def fire(view: dict[str, object]) -> ActionKind:
        url = str(view["webhook_url"])
        sub = receivers.trigger(str(view["id"]), url.split("token=")[1])
        assert sub.action.inputs["workload"] == "api"
        return sub.action.kind

    assert fire(grow) is ActionKind.CLUSTER_SCALE_OUT
    assert _replicas(db, cid) == 4  # the workload's scaling policy: 2 at a time
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cid)
    assert cluster is not None and cluster.scaled_at == {WORKLOAD_SCALED + "api": clock.now()}
    _unlock(db, cid, clock.now())

    # Its own cooldown (its policy's 30 s), then its max.
    clock.advance(20)
    with pytest.raises(Cooldown, match="workload api"):
        fire(grow)
    clock.advance(11)
    with pytest.raises(Conflict, match="already at its max of 4"):
        fire(grow)
    # A strict step below the min is refused with its pointer; nothing changes.
    with pytest.raises(OutOfBounds) as below:
        fire(shrink)
    assert [p.path for p in below.value.problems] == ["/params/number"]
    assert _replicas(db, cid) == 4
