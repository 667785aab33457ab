"""The replica rows (issue 22) on SQLite and PostgreSQL: migrations 0013 and 0017 make exactly
the table the code uses; rows are saved, replaced, forgotten, listed a page at a time (not
those on a node that is gone), and dropped with their
cluster; probe counts come back as written."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from shoal.clock import ManualClock
from shoal.model.catalogs import default_inventory
from shoal.model.enums import ClusterStatus, NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.service.clusters import ClusterService
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import workloads as repo
from shoal.store.database import Database
from shoal.store.records import NewNode
from shoal.store.tables import metadata, workload_replicas
from shoal.store.workloads import ProbeCount, ProbeState, ReplicaRow
from tests.engine.support import ADMIN

DOC = """
name: svc
node_groups:
  - {name: ctl, profile: {type: server, flavor: m1.small, image: cirros}, count: 1}
"""


def _node(cid: str, name: str) -> NewNode:
    return NewNode(
        id=f"n-{cid[:8]}-{name}",
        project_id=ADMIN.project_id,
        name=name,
        kind=NodeKind.SERVER,
        status=NodeStatus.ACTIVE,
        host="h1",
        zone="az1",
        profile={"type": "server", "flavor": "m1.small"},
        demand=Demand(vcpus=1, ram_mb=512, disk_gb=1, volume_gb=0),
        created_at=1.0,
        updated_at=1.0,
        cluster_id=cid,
    )


def test_rows_saved_replaced_paged_forgotten_and_orphans_dropped(db: Database) -> None:
    with db.engine.connect() as conn:  # (one database per test: the migration checked here)
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diff if workload_replicas.name in repr(d)] == []
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    cid = service.create(ADMIN, DOC).cluster.id
    rows = [ReplicaRow(cid, f"w-{i:02d}", "w", "ctl-1", False) for i in range(12)]
    with db.transaction() as conn:
        node_repo.insert_nodes(conn, [_node(cid, "ctl-1")])
        repo.save(conn, rows, 1.0)
        repo.save(conn, [ReplicaRow(cid, "w-03", "w", "ctl-2", True, 2, 9.5, 3.0)], 2.0)
        repo.save(conn, [ReplicaRow("other", "w-01", "w", "x", True)], 2.0)
    with db.reading() as conn:
        found = repo.load(conn, [cid, "none"])
        assert found["none"] == {}
        assert found[cid]["w-03"] == ReplicaRow(cid, "w-03", "w", "ctl-2", True, 2, 9.5, 3.0)
        assert len(found[cid]) == 12
        first = repo.listed(conn, cid, 5, None)
        rest = repo.listed(conn, cid, 100, first[-1][0].replica)
    # w-03 runs on ctl-2, which is no node of the cluster: not listed (issue 36)
    assert [r.replica for r, _ in first + rest] == [f"w-{i:02d}" for i in range(12) if i != 3]
    assert all(live for _, live in first + rest)
    with db.transaction() as conn:
        repo.forget(conn, [(cid, "w-00"), (cid, "w-11")])
        repo.drop_orphans(conn)  # "other" is no cluster
    with db.reading() as conn:
        assert len(repo.load(conn, [cid])[cid]) == 10
        assert repo.load(conn, ["other"])["other"] == {}
    with db.transaction() as conn:
        cluster_repo.set_status(conn, cid, ClusterStatus.DELETED, "", 5.0)
        repo.drop_orphans(conn)
    with db.reading() as conn:
        assert repo.load(conn, [cid])[cid] == {}


def test_probe_counts_round_trip(db: Database) -> None:
    """Migration 0017's `probes` column: a replica's probe counts come back as written; a row
    without them reads None, and text that is not a state reads None (the probes start over)."""
    state = ProbeState(
        3.5,
        (
            ProbeCount("api", True, 2, False, False),
            ProbeCount("api", False, 0, True, None),
        ),
    )
    inv = default_inventory()
    service = ClusterService(db, lambda: inv, ManualClock(), lambda: None)
    cid = service.create(ADMIN, DOC).cluster.id
    with db.transaction() as conn:
        repo.save(
            conn,
            [
                ReplicaRow(cid, "w-1", "w", "ctl-1", True, started_at=3.5, probes=state),
                ReplicaRow(cid, "w-2", "w", "ctl-1", True),
            ],
            4.0,
        )
    with db.reading() as conn:
        found = repo.load(conn, [cid])[cid]
    assert found["w-1"].probes == state and found["w-2"].probes is None
    assert repo.probes_of("{not json") is None and repo.probes_of('{"at": 1}') is None
