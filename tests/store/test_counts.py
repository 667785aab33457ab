"""Live nodes and deployments counted by the database as they change (issue 37, migration
0018), on SQLite and PostgreSQL: after inserts (one by one and as a plan's COPY), status
changes of every shape, soft and hard deletes, the kept counts equal a GROUP BY over the rows,
before and after the deltas are folded; and the schema is the tables' own."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import delete, func, insert, select, update

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.store import counts
from shoal.store import nodes as repo
from shoal.store.counts import Counted
from shoal.store.database import Database
from shoal.store.observe import snapshot
from shoal.store.records import NewNode, NodeChange
from shoal.store.tables import deployments, metadata, nodes


def _new(nid: str, project: str, cluster: str | None) -> NewNode:
    return NewNode(
        id=nid,
        project_id=project,
        name=f"node-{nid}",
        kind=NodeKind.SERVER,
        status=NodeStatus.CREATING,
        host="h1",
        zone="az1",
        profile={"type": "server", "flavor": "m1.tiny"},
        demand=Demand(vcpus=1, ram_mb=512, disk_gb=1),
        created_at=1.0,
        updated_at=1.0,
        cluster_id=cluster,
    )


def _counted(db: Database, by_project: bool = True) -> dict[tuple[str, str], int]:
    with db.reading() as conn:
        return counts.by_status(conn, Counted.NODE, by_project=by_project)


def _recounted(db: Database) -> dict[tuple[str, str], int]:
    with db.reading() as conn:
        rows = conn.execute(
            select(nodes.c.status, nodes.c.project_id, func.count())
            .where(nodes.c.deleted_at.is_(None))
            .group_by(nodes.c.status, nodes.c.project_id)
        )
        return {(str(s), str(p)): int(n) for s, p, n in rows}


def _same(db: Database) -> None:
    assert _counted(db) == _recounted(db)
    counts.fold_counts(db)
    assert _counted(db) == _recounted(db)


def test_counts_follow_every_change(db: Database) -> None:
    assert _counted(db) == {}
    with db.transaction() as conn:
        repo.insert_nodes(conn, [_new(f"a{i}", "p1", None) for i in range(5)])
        repo.insert_nodes(conn, [_new(f"b{i}", "p2", None) for i in range(300)])  # COPY-sized
    _same(db)
    with db.transaction() as conn:  # one shape for all (one IN list), then mixed shapes
        repo.update_nodes(
            conn, [NodeChange(f"b{i}", 2.0, status=NodeStatus.ACTIVE) for i in range(200)]
        )
        repo.update_nodes(
            conn,
            [
                NodeChange("a0", 3.0, status=NodeStatus.ERROR, address="x"),
                NodeChange("a1", 3.0, health="HEALTHY"),  # no status change: counts the same
                NodeChange("b0", 3.0, status=NodeStatus.DELETING, address=None),
                NodeChange("b1", 3.0, deleted_at=3.0),
                NodeChange("b2", 3.0, status=NodeStatus.ACTIVE),  # to the status it had
            ],
        )
    _same(db)
    assert _counted(db)[("ACTIVE", "p2")] == 198
    with db.transaction() as conn:
        conn.execute(delete(nodes).where(nodes.c.id.in_(["a2", "b3", "b1"])))  # b1 was deleted
        repo.update_nodes(conn, [NodeChange("b1", 4.0, deleted_at=None)])  # (already gone)
    _same(db)
    with db.reading() as conn:
        snap = snapshot(conn, 5.0, by_project=False)
    assert snap.nodes == {(s, ""): n for (s, _), n in _counted(db, by_project=False).items()}
    assert sum(snap.nodes.values()) == sum(_recounted(db).values()) == 302


def _deployment(i: int, status: str) -> dict[str, object]:
    return {
        "id": f"d{i}",
        "project_id": "p1",
        "cluster_id": "c1",
        "node_id": f"n{i}",
        "node_name": f"web-{i}",
        "name": "setup",
        "config": "cfg",
        "hook": "script",
        "action": "CREATE",
        "status": status,
        "inputs": {},
        "secret_inputs": {},
        "outputs": {},
        "created_at": 1.0,
    }


def _deployments(db: Database) -> tuple[dict[str, int], dict[str, int]]:
    with db.reading() as conn:
        kept = counts.by_status(conn, Counted.DEPLOYMENT, by_project=False)
        rows = conn.execute(
            select(deployments.c.status, func.count()).group_by(deployments.c.status)
        )
        return {s: n for (s, _), n in kept.items()}, {str(s): int(n) for s, n in rows}


def test_deployments_are_counted_as_they_change(db: Database) -> None:
    with db.transaction() as conn:
        conn.execute(insert(deployments), [_deployment(i, "PENDING") for i in range(150)])
        conn.execute(
            update(deployments).where(deployments.c.id.in_(["d1", "d2"])).values(status="COMPLETE")
        )
        conn.execute(update(deployments).where(deployments.c.id == "d3").values(stdout="x"))
        conn.execute(delete(deployments).where(deployments.c.id.in_(["d2", "d4"])))
    kept, recounted = _deployments(db)
    assert kept == recounted == {"PENDING": 147, "COMPLETE": 1}
    counts.fold_counts(db)
    assert _deployments(db)[0] == recounted
    with db.reading() as conn:
        assert snapshot(conn, 5.0, by_project=False).deployments == recounted


def test_the_schema_is_the_tables_own(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diff if "count" in str(d)] == []
