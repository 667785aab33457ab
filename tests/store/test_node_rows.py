"""Typed node rows into the store, on SQLite and PostgreSQL: a NewNode is written as its columns
(health from the columns' defaults), and a NodeChange sets only the columns it names — None
included — leaving the rest, with changes of different shapes in one call."""

from __future__ import annotations

from dataclasses import replace

from shoal.model.enums import NodeKind, NodeStatus
from shoal.model.nodes import Demand
from shoal.store import nodes as repo
from shoal.store.database import Database
from shoal.store.records import NewNode, NodeChange
from tests.databases import fresh_postgres


def _new(nid: str) -> NewNode:
    return NewNode(
        id=nid,
        project_id="proj",
        name=f"node-{nid}",
        kind=NodeKind.SERVER,
        status=NodeStatus.ACTIVE,
        host="h1",
        zone="az1",
        profile={"type": "server", "flavor": "m1.tiny"},
        demand=Demand(vcpus=2, ram_mb=512, disk_gb=3, volume_gb=4),
        created_at=1.0,
        updated_at=1.0,
        provider_id=f"p-{nid}",
        address="10.0.0.1",
    )


def test_node_rows_are_written_and_changed_by_type(db: Database) -> None:
    with db.transaction() as conn:
        repo.insert_nodes(conn, [_new("a"), _new("b")])
    with db.transaction() as conn:
        repo.update_nodes(
            conn,
            [
                NodeChange("a", 5.0, status=NodeStatus.ERROR, address=None),
                NodeChange("b", 6.0, name="renamed", health="HEALTHY", checked_at=6.0),
            ],
        )
    with db.reading() as conn:
        found = repo.get_nodes(conn, ["a", "b"])
    a, b = found["a"], found["b"]
    assert (a.vcpus, a.ram_mb, a.disk_gb, a.volume_gb) == (2, 512, 3, 4)
    assert a.profile == {"type": "server", "flavor": "m1.tiny"}
    assert (a.status, a.address, a.updated_at) == (NodeStatus.ERROR, None, 5.0)
    assert (a.name, a.provider_id, a.health, a.checked_at) == ("node-a", "p-a", "UNKNOWN", None)
    assert (b.name, b.health, b.checked_at, b.updated_at) == ("renamed", "HEALTHY", 6.0, 6.0)
    assert (b.status, b.address, b.deleted_at) == (NodeStatus.ACTIVE, "10.0.0.1", None)


def test_a_change_names_only_the_columns_it_sets() -> None:
    assert NodeChange("a").columns() == {}
    assert NodeChange("a", 2.0, cluster_id=None).columns() == {
        "updated_at": 2.0,
        "cluster_id": None,
    }


def test_a_plan_sized_batch_reads_back_as_written(db: Database) -> None:
    """Issue 23: many rows at once go by COPY on PostgreSQL (executemany on SQLite); either
    way each reads back as the NewNode said, the JSON shared between rows and the text in it
    that COPY escapes (tabs, newlines, backslashes, quotes) included."""
    shared = {"type": "server", "flavor": "m1.tiny", "note": 'a\tb\nc\\d "e"'}
    rows = [
        NewNode(
            id=f"n{i}",
            project_id="proj",
            name=f"web-{i}",
            kind=NodeKind.VOLUME if i % 2 else NodeKind.SERVER,
            status=NodeStatus.INIT,
            host=None if i % 3 else f"h{i}",
            zone="az1",
            profile=shared if i % 5 else {},
            demand=Demand(vcpus=i, ram_mb=2 * i),
            created_at=1.0 + i / 3,
            updated_at=2.5,
            cluster_id=None,
            group_name="web",
            part="data" if i % 2 else None,
            replica=i,
        )
        for i in range(250)
    ]
    assert set(rows[0].columns()) >= {f for f in NewNode.__slots__ if f != "demand"}
    with db.transaction() as conn:
        repo.insert_nodes(conn, rows)
    with db.reading() as conn:
        found = repo.get_nodes(conn, [r.id for r in rows])
    for r in rows:
        got = found[r.id]
        assert (got.kind, got.status, got.host, got.part, got.replica) == (
            r.kind,
            r.status,
            r.host,
            r.part,
            r.replica,
        )
        assert (got.profile, got.vcpus, got.ram_mb, got.created_at) == (
            r.profile,
            r.demand.vcpus,
            r.demand.ram_mb,
            r.created_at,
        )
        assert (got.health, got.deleted_at, got.provider_id) == ("UNKNOWN", None, None)


def test_a_flush_sized_batch_sets_each_nodes_own_values(db: Database) -> None:
    """Issue 23: thousands of changes are one statement (PostgreSQL: values as arrays; all
    alike: one `IN` list); each node still gets its own values, None and enums included."""
    ids = [f"n{i:03d}" for i in range(250)]
    with db.transaction() as conn:
        repo.insert_nodes(conn, [_new(i) for i in ids])
    with db.transaction() as conn:
        repo.update_nodes(
            conn,
            [
                NodeChange(
                    i,
                    7.0,
                    status=NodeStatus.ACTIVE if k % 2 else NodeStatus.ERROR,
                    provider_id=f"srv-{i}",
                    address=None if k % 3 == 0 else f"10.1.0.{k}",
                )
                for k, i in enumerate(ids[:200])
            ]
            + [NodeChange(i, 8.0, status=NodeStatus.CREATING) for i in ids[200:]],
        )
    with db.reading() as conn:
        found = repo.get_nodes(conn, ids)
    for k, i in enumerate(ids[:200]):
        n = found[i]
        assert n.status is (NodeStatus.ACTIVE if k % 2 else NodeStatus.ERROR)
        assert (n.provider_id, n.updated_at, n.name) == (f"srv-{i}", 7.0, f"node-{i}")
        assert n.address == (None if k % 3 == 0 else f"10.1.0.{k}")
    for i in ids[200:]:
        n = found[i]
        assert (n.status, n.updated_at, n.provider_id) == (NodeStatus.CREATING, 8.0, f"p-{i}")


def test_a_plan_sized_insert_leaves_postgresql_statistics_current() -> None:
    """Issue 23: right after a 100,000-node create, PostgreSQL (its statistics counting the
    table empty) sorted every node of the cluster for its first page; an insert that at least
    doubles a table analyzes it in the inserting transaction."""
    with fresh_postgres() as url:
        db = Database(url)
        try:
            db.migrate()
            with db.transaction() as conn:
                repo.insert_nodes(
                    conn, [replace(_new(f"n{i}"), name=f"s-{i}") for i in range(10_000)]
                )
            with db.reading() as conn:
                counted = conn.exec_driver_sql(
                    "SELECT reltuples FROM pg_class WHERE relname = 'nodes'"
                ).scalar()
            assert counted == 10_000
        finally:
            db.dispose()


def test_a_clusters_standing_is_counted_as_its_rows_would_be(db: Database) -> None:
    """Issue 23: closing an action counts its cluster's nodes in SQL; the settled status and
    its words are those judged from the rows themselves."""
    from shoal.engine.settle import settled_standing, settled_status, standing_of
    from shoal.store import clusters as cluster_repo

    with db.transaction() as conn:
        cluster_repo.insert_cluster(
            conn, id="c", project_id="proj", name="c", document={}, source_format="native", now=1.0
        )
        statuses = [NodeStatus.ACTIVE] * 4 + [NodeStatus.ERROR] * 7 + [NodeStatus.DELETING]
        repo.insert_nodes(
            conn,
            [
                replace(_new(f"n{k:02}"), cluster_id="c", status=s, created_at=float(k))
                for k, s in enumerate(statuses)
            ]
            + [replace(_new("old"), cluster_id="c", name="web-1~1", status=NodeStatus.ERROR)],
        )
    with db.reading() as conn:
        counted = standing_of(conn, "c")
        rows = repo.list_nodes(conn, "c")
    assert (counted.rows, counted.current, counted.troubled) == (13, 11, 7)
    for declared in (11, 14):
        assert settled_standing(counted, declared) == settled_status(rows, declared)
