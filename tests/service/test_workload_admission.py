"""Workloads at the door (issue 22): a create or update whose replicas cannot all be placed on
the cluster's servers is refused (409) with the second level's reasons and writes nothing; one
that fits is accepted and the stored document keeps its workloads; `scale_workload` sets the
replicas within min/max, refuses outside them by pointer and refuses what cannot be placed — on
SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from shoal.clock import ManualClock
from shoal.documents import cluster_from_tree
from shoal.model.catalogs import default_inventory
from shoal.service.clusters import ClusterService
from shoal.service.errors import Invalid, NotFound, Unplaceable
from shoal.store import clusters as cluster_repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord
from tests.engine.support import ADMIN

DOC = """
name: svc
node_groups:
  - name: ctl
    profile: {type: server, flavor: m1.small, image: cirros}
    count: 3
workloads:
  api:
    replicas: REPLICAS
    containers: [{name: api, image: img, ports: [8080], resources: {cpu: 0.5}}]
    rules: [{rule: anti-affinity, scope: host}]
"""


def test_replicas_that_do_not_fit_are_refused_and_nothing_is_written(db: Database) -> None:
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    with pytest.raises(Unplaceable) as refused:
        service.create(ADMIN, DOC.replace("REPLICAS", "4"))
    reasons = " ".join(str(p["message"]) for p in refused.value.details)
    assert "workload api" in reasons and "port 8080" in reasons
    with db.reading() as conn:
        assert cluster_repo.get_cluster(conn, "svc") is None
    service.create(ADMIN, DOC.replace("REPLICAS", "3"))
    with db.reading() as conn:
        stored = cluster_repo.get_cluster(conn, "svc")
    assert stored is not None
    spec = cluster_from_tree(stored.document, inv)
    assert [w.replicas for w in spec.workloads] == [3]


def test_a_preview_shows_where_the_replicas_go(db: Database) -> None:
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    service.create(ADMIN, DOC.replace("REPLICAS", "2"))
    plan = service.preview(ADMIN, "svc", DOC.replace("REPLICAS", "3"))
    assert sorted(r["replica"] for r in plan["replicas"]) == ["api-1", "api-2", "api-3"]
    assert len({r["host"] for r in plan["replicas"]}) == 3
    with pytest.raises(Unplaceable):
        service.preview(ADMIN, "svc", DOC.replace("REPLICAS", "5"))


def test_scale_workload_keeps_min_max_and_placement(db: Database) -> None:
    inv = default_inventory()
    clock = ManualClock()
    service = ClusterService(db, lambda: inv, clock, lambda: None)
    doc = DOC.replace("REPLICAS", "2").replace("    rules:", "    min: 1\n    max: 4\n    rules:")
    service.create(ADMIN, doc)
    _unlock(db)  # the create's action is done (no engine runs here)
    service.scale_workload(ADMIN, "svc", "api", 3)
    stored = _unlock(db)
    assert [w.replicas for w in cluster_from_tree(stored.document, inv).workloads] == [3]
    for bad, word in ((5, "above the max 4"), (0, "below the min 1")):
        with pytest.raises(Invalid) as refused:
            service.scale_workload(ADMIN, "svc", "api", bad)
        assert [(p["path"], word in p["message"]) for p in refused.value.details] == [
            ("/replicas", True)
        ]
    with pytest.raises(NotFound):
        service.scale_workload(ADMIN, "svc", "nope", 2)
    with pytest.raises(Unplaceable):  # 4 within max, but 3 servers for a port
        service.scale_workload(ADMIN, "svc", "api", 4)


def _unlock(db: Database) -> ClusterRecord:
    with db.transaction() as conn:
        c = cluster_repo.get_cluster(conn, "svc")
        assert c is not None and c.lock_action_id is not None
        cluster_repo.unlock(conn, c.id, c.lock_action_id, 1.0)
    return c
