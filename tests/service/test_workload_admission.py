"""Workloads at the door (issue 22): a create or update whose replicas cannot all be placed on
the cluster's servers is refused (409) with the second level's reasons and writes nothing; one
that fits is accepted and the stored document keeps its workloads — on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from shoal.clock import ManualClock
from shoal.documents import cluster_from_tree
from shoal.model.catalogs import default_inventory
from shoal.service.clusters import ClusterService
from shoal.service.errors import Unplaceable
from shoal.store import clusters as cluster_repo
from shoal.store.database import Database
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
