"""The manager's cached read of live nodes (issue 23), on SQLite and PostgreSQL: it answers as
`live_nodes_by_cluster` after inserts, changes (one without `updated_at` too), renames and
deletes, reusing the records of rows that did not change."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import insert

from shoal.model.enums import NodeStatus
from shoal.store import nodes as repo
from shoal.store.database import Database
from shoal.store.records import NodeChange
from shoal.store.tables import clusters
from tests.store.test_node_rows import _new


def test_the_cached_read_follows_every_change(db: Database) -> None:
    with db.transaction() as conn:
        for cid in ("c1", "c2"):
            conn.execute(
                insert(clusters).values(
                    id=cid, project_id="proj", name=cid, status="ACTIVE", document={},
                    created_at=1.0, updated_at=1.0,
                )
            )  # fmt: skip
        rows = [replace(_new(n), cluster_id="c1", created_at=float(i)) for i, n in enumerate("abc")]
        repo.insert_nodes(conn, [*rows, replace(_new("d"), cluster_id="c2")])
    cache = repo.NodeCache()

    def same() -> dict[str, list[repo.NodeRecord]]:
        with db.reading() as conn:
            want = repo.live_nodes_by_cluster(conn, ["c1", "c2"])
            got = repo.live_nodes_by_cluster_cached(conn, ["c1", "c2"], cache)
        assert got == want
        return got

    first = same()
    again = same()
    assert all(x is y for x, y in zip(first["c1"], again["c1"], strict=True))
    with db.transaction() as conn:
        repo.update_nodes(
            conn,
            [
                NodeChange("a", status=NodeStatus.ERROR),  # no updated_at: still seen
                NodeChange("b", 2.0, name="b~old"),
                NodeChange("c", 2.0, deleted_at=2.0),
            ],
        )
        repo.insert_nodes(conn, [replace(_new("e"), cluster_id="c1", created_at=9.0)])
    changed = same()
    assert [n.id for n in changed["c1"]] == ["a", "b", "e"]
    assert changed["c1"][0].status is NodeStatus.ERROR
    assert changed["c2"][0] is again["c2"][0]  # untouched: the same record
    with db.reading() as conn:
        assert repo.live_nodes_by_cluster_cached(conn, ["c2"], cache) == {"c2": changed["c2"]}
    assert set(cache.rows) == {"d"}
