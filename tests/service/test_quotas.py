"""Per-project quotas (issue 9, point 1), Nova's and Senlin's model: defaults, per-project
overrides, -1 unlimited; growth past a limit is a 403 `quota_exceeded` naming the resource, the
limit, what is in use and what was requested; shrinking is always allowed. Accepted creates
that are not planned yet count (their reservations). SQLite and PostgreSQL, no engine."""

from __future__ import annotations

import pytest

from shoal.api.errors import http_status
from shoal.clock import ManualClock
from shoal.model.enums import ActionStatus
from shoal.service.errors import Forbidden, Invalid
from shoal.service.limits import Limits, QuotaExceeded
from shoal.service.quotas import QuotaService
from shoal.service.receivers import ReceiverService
from shoal.store import actions as action_repo
from shoal.store import auth as auth_repo
from shoal.store import clusters as cluster_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from tests.engine.support import ADMIN, Rig, make_rig

DOC = """
name: %s
node_groups:
  - name: web
    profile: {type: server, flavor: m1.small, image: cirros}
    count: %d
"""


def tenant(db: Database, rig: Rig) -> Principal:
    with db.transaction() as conn:
        project_id = auth_repo.create_project(conn, "acme", 0.0)
    return Principal(project_id, is_admin=False)


def settle(db: Database, cluster_id: str) -> None:
    """End the cluster's action as if it had run (no nodes made: nothing runs them)."""
    with db.transaction() as conn:
        cluster = cluster_repo.get_cluster(conn, cluster_id)
        assert cluster is not None and cluster.lock_action_id is not None
        action_repo.set_status(conn, cluster.lock_action_id, ActionStatus.SUCCEEDED, 0.0)
        cluster_repo.unlock(conn, cluster_id, cluster.lock_action_id, 0.0)


def test_growth_past_a_quota_names_resource_limit_use_and_request(db: Database) -> None:
    rig = make_rig(db, clock=ManualClock())
    acme = tenant(db, rig)
    quotas = QuotaService(db, ManualClock(), rig.service.limits)
    quotas.set(ADMIN, "acme", {"quotas": {"nodes": 4, "vcpus": 100}})

    first = rig.service.create(acme, DOC % ("a", 3))
    # Not planned yet, the first cluster's three nodes already count.
    with pytest.raises(QuotaExceeded) as e:
        rig.service.create(acme, DOC % ("b", 2))
    assert http_status(e.value) == 403 and e.value.code == "quota_exceeded"
    (detail,) = e.value.details
    assert detail["resource"] == "nodes"
    assert (detail["limit"], detail["in_use"], detail["requested"]) == (4, 3, 2)

    settle(db, first.cluster.id)
    with pytest.raises(QuotaExceeded):
        rig.service.scale(acme, "a", out=True, count=2, nodegroup=None)
    rig.service.scale(acme, "a", out=True, count=1, nodegroup=None)  # exactly at the limit
    settle(db, first.cluster.id)

    # Over quota after the admin lowers it: shrinking still works.
    quotas.set(ADMIN, "acme", {"nodes": 1})
    rig.service.scale(acme, "a", out=False, count=1, nodegroup=None)

    shown = quotas.show(acme, acme.project_id).model_dump()["quotas"]
    assert shown["nodes"] == {"limit": 1, "in_use": 3, "default": False}
    assert shown["clusters"]["default"] is True and shown["clusters"]["limit"] == -1


def test_the_cluster_quota_and_the_defaults_from_settings(db: Database) -> None:
    rig = make_rig(db)
    rig.service.limits = Limits(quotas={"clusters": 1})
    acme = tenant(db, rig)
    rig.service.create(acme, DOC % ("a", 1))
    with pytest.raises(QuotaExceeded, match="clusters: limit 1, in use 1, requested 1"):
        rig.service.create(acme, DOC % ("b", 1))
    rig.service.create(ADMIN, DOC % ("b", 1))  # another project has its own


def test_a_receiver_whose_first_trigger_would_exceed_the_quota_is_refused(db: Database) -> None:
    rig = make_rig(db)
    acme = tenant(db, rig)
    QuotaService(db, ManualClock(), rig.service.limits).set(ADMIN, "acme", {"vcpus": 3})
    sub = rig.service.create(acme, DOC % ("a", 2))
    settle(db, sub.cluster.id)
    receivers = ReceiverService(rig.service)
    body = {"name": "grow", "cluster": "a", "action": "scale_out", "params": {"count": 2}}
    with pytest.raises(QuotaExceeded) as e:
        receivers.create(acme, body)
    assert e.value.details[0]["path"] == "/params/count"


def test_only_an_admin_sets_quotas_and_values_are_checked(db: Database) -> None:
    rig = make_rig(db)
    acme = tenant(db, rig)
    quotas = QuotaService(db, ManualClock(), rig.service.limits)
    with pytest.raises(Forbidden):
        quotas.set(acme, "acme", {"nodes": 100})
    with pytest.raises(Invalid) as bad:
        quotas.set(ADMIN, "acme", {"nodes": -2, "cpus": 4, "ram_mb": True})
    assert {d["path"] for d in bad.value.details} == {
        "/quotas/nodes",
        "/quotas/cpus",
        "/quotas/ram_mb",
    }
