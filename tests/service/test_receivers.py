"""The receiver service on the store (SQLite and PostgreSQL), with no engine running: what a
trigger records, and that a refused trigger records nothing — not even its cooldown."""

from __future__ import annotations

import pytest

from shoal.clock import ManualClock
from shoal.model.enums import ActionKind, ClusterStatus
from shoal.service.errors import Conflict, NotFound
from shoal.service.receivers import ReceiverService
from shoal.service.triggers import Cooldown
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import receivers as receiver_repo
from shoal.store.database import Database
from tests.engine.support import ADMIN, make_rig

DOC = """
name: shop
node_groups:
  - name: web
    profile: {type: server, flavor: m1.tiny, image: cirros}
    count: 2
    scaling: {number: 3, cooldown_s: 30}
"""


def setup(db: Database) -> tuple[ReceiverService, ManualClock, str, str]:
    """A cluster whose creation is still waiting (nothing runs it), and a receiver for it."""
    clock = ManualClock()
    rig = make_rig(db, clock=clock)
    sub = rig.service.create(ADMIN, DOC)
    receivers = ReceiverService(rig.service)
    hook = receivers.create(ADMIN, {"name": "grow", "cluster": "shop", "action": "scale_out"})
    return receivers, clock, sub.cluster.id, hook["webhook_url"].split("token=")[1]


def free(db: Database, cluster_id: str) -> None:
    """Release the cluster as if its creation had finished."""
    with db.transaction() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
        assert cluster is not None and cluster.lock_action_id is not None
        cluster_repo.unlock(conn, cluster_id, cluster.lock_action_id, 0.0)


def test_a_trigger_on_a_busy_cluster_records_nothing(db: Database) -> None:
    receivers, _clock, cluster_id, secret = setup(db)
    hook_id = receivers.get(ADMIN, "grow")["id"]
    with pytest.raises(Conflict, match="busy"):
        receivers.trigger(hook_id, secret)
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
        assert cluster is not None and cluster.scaled_at == {}
        found = receiver_repo.get_receiver(conn, hook_id)
        assert found is not None and found.triggered_at is None


def test_a_trigger_records_its_action_cooldown_and_time_together(db: Database) -> None:
    receivers, clock, cluster_id, secret = setup(db)
    free(db, cluster_id)
    hook_id = receivers.get(ADMIN, "grow")["id"]
    sub = receivers.trigger(hook_id, secret)
    assert sub.action.kind is ActionKind.CLUSTER_SCALE_OUT
    assert sub.action.inputs["count"] == 5
    with db.reading() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
        assert cluster is not None
        assert cluster.scaled_at == {"web": clock.now()}
        assert cluster.document["node_groups"][0]["count"] == 5
        found = receiver_repo.get_receiver(conn, hook_id)
        assert found is not None and found.triggered_at == clock.now()

    # Finished, and the cooldown still runs: refused, and the recorded time stays.
    with db.transaction() as conn:
        cluster_repo.unlock(conn, cluster_id, sub.action.id, clock.now())
    clock.advance(29)
    with pytest.raises(Cooldown) as refused:
        receivers.trigger(hook_id, secret)
    assert refused.value.ends_at == clock.now() + 1
    with db.reading() as conn:
        assert len(action_repo.list_actions(conn, None, cluster_id=cluster_id)) == 2


def test_the_secret_is_stored_only_as_a_hash(db: Database) -> None:
    receivers, _clock, _cluster_id, secret = setup(db)
    with db.reading() as conn:
        found = receiver_repo.get_receiver(conn, "grow")
    assert found is not None
    assert secret not in found.secret_hash
    assert receiver_repo.secret_matches(found.secret_hash, secret)
    assert not receiver_repo.secret_matches(found.secret_hash, secret + "x")
    with pytest.raises(NotFound):
        receivers.trigger(found.id, secret[:-1])


def test_receivers_are_deleted_with_their_cluster(db: Database) -> None:
    """Issue 9, point 8: native and Senlin receivers share the table; the store removes them
    when the cluster becomes DELETED, so a held URL answers like any unknown receiver."""
    receivers, clock, cluster_id, secret = setup(db)
    hook_id = receivers.get(ADMIN, "grow")["id"]
    with db.transaction() as conn:
        cluster_repo.set_status(conn, cluster_id, ClusterStatus.DELETED, "", clock.now())
    with db.reading() as conn:
        assert receiver_repo.get_receiver(conn, hook_id) is None
    assert receivers.list(ADMIN) == []
    with pytest.raises(NotFound) as gone:
        receivers.trigger(hook_id, secret)
    assert cluster_id not in gone.value.message
