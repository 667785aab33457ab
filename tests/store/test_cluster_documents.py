"""Cluster rows listed with cached documents (issue 29), on SQLite and PostgreSQL: the same
records as a full read, a document read again only when its generation moved on."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import event

from shoal.model.enums import ClusterStatus
from shoal.store import clusters as repo
from shoal.store.database import Database
from shoal.store.records import ClusterRecord

NOW = 1_000.0


def _make(db: Database, n: int) -> list[str]:
    ids = [f"c{i:03d}" for i in range(n)]
    with db.transaction() as conn:
        for i, cid in enumerate(ids):
            repo.insert_cluster(
                conn,
                id=cid,
                project_id=f"p{i % 2}",
                name=f"n{i}",
                document={"name": f"n{i}", "node_groups": [{"name": "web", "count": i}]},
                source_format="native",
                now=NOW + i,
            )
    return ids


def _full(db: Database) -> list[ClusterRecord]:
    with db.reading() as conn:
        return repo.list_clusters(conn, None)


def _cached(db: Database, cache: repo.ClusterCache) -> list[ClusterRecord]:
    with db.reading() as conn:
        return repo.list_clusters_cached(conn, cache)


def test_cached_listing_matches_a_full_read_and_rereads_only_changed_documents(
    db: Database,
) -> None:
    ids = _make(db, 7)
    cache = repo.ClusterCache()
    assert _cached(db, cache) == _full(db)
    first = {cid: record for cid, (_, record) in cache.rows.items()}
    assert set(first) == set(ids)

    with db.transaction() as conn:
        repo.set_document(conn, "c002", {"name": "n2", "node_groups": []}, NOW + 50)
        repo.set_status(conn, "c003", ClusterStatus.ACTIVE, "settled", NOW + 50)
        repo.set_status(conn, "c004", ClusterStatus.DELETED, "", NOW + 50)
    again = _cached(db, cache)
    assert again == _full(db)
    assert "c004" not in cache.rows
    by_id = {c.id: c for c in again}
    assert by_id["c002"].document == {"name": "n2", "node_groups": []}
    assert by_id["c002"].generation == 2
    assert by_id["c003"].status is ClusterStatus.ACTIVE
    # An unchanged row gives the same record, a row changed at the same generation keeps
    # the document read the first time; only a new generation's document is read again.
    for cid in ("c000", "c001", "c005", "c006"):
        assert by_id[cid] is first[cid]
    assert by_id["c003"] is not first["c003"]
    assert by_id["c003"].document is first["c003"].document
    assert by_id["c002"].document is not first["c002"].document
    assert _cached(db, cache) == again


def test_scaled_at_is_read_with_the_row(db: Database) -> None:
    _make(db, 1)
    cache = repo.ClusterCache()
    assert _cached(db, cache)[0].scaled_at == {}
    with db.transaction() as conn:
        repo.set_scaled_at(conn, "c000", {"web": 1234.5})
    assert _cached(db, cache) == _full(db)
    assert _cached(db, cache)[0].scaled_at == {"web": 1234.5}


def test_a_document_cached_at_another_generation_is_never_used(db: Database) -> None:
    _make(db, 2)
    cache = repo.ClusterCache()
    stale = _cached(db, cache)
    # As if the cache had read c001 at a generation its row no longer has.
    _seen, record = cache.rows["c001"]
    cache.rows["c001"] = ((), replace(record, generation=7, document={"name": "old"}))
    assert _cached(db, cache) == _full(db) == stale


def test_a_document_written_between_the_two_reads_comes_with_its_own_row(db: Database) -> None:
    """The rows are read, then another transaction commits a new document, then the documents
    are read: the record never pairs one generation with another's document."""
    _make(db, 1)
    cache = repo.ClusterCache()
    written: list[bool] = []

    def between(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not written and "CAST(clusters.scaled_at" in statement:
            written.append(True)
            with db.transaction() as other:
                repo.set_document(other, "c000", {"name": "n0", "node_groups": []}, NOW + 9)

    with db.reading() as conn:
        event.listen(conn, "after_cursor_execute", between)
        (got,) = repo.list_clusters_cached(conn, cache)
    assert written
    if not db.is_sqlite:  # read committed: the document read saw the new one, so did the row
        assert got.generation == 2
    if got.generation == 1:  # a snapshot of the whole read (SQLite's WAL)
        assert got.document == {"name": "n0", "node_groups": [{"name": "web", "count": 0}]}
    else:
        assert (got.generation, got.document) == (2, {"name": "n0", "node_groups": []})
    assert _cached(db, cache) == _full(db)


def _statements(db: Database, cache: repo.ClusterCache) -> tuple[list[ClusterRecord], list[str]]:
    seen: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    with db.reading() as conn:
        event.listen(conn, "after_cursor_execute", count)
        got = repo.list_clusters_cached(conn, cache)
    return got, seen


def test_an_unchanged_installation_costs_one_read_whatever_its_clusters(db: Database) -> None:
    """Issue 29: the change counter the database keeps (migration 0012's triggers) lets a
    listing that finds it unmoved read nothing else, and one that finds it moved read only the
    rows changed since."""
    _make(db, 40)
    cache = repo.ClusterCache()
    assert _statements(db, cache)[0] == _full(db)
    got, statements = _statements(db, cache)
    assert got == _full(db) and len(statements) == 1
    with db.transaction() as conn:
        repo.set_status(conn, "c007", ClusterStatus.ACTIVE, "settled", NOW + 5)
    got, statements = _statements(db, cache)
    assert got == _full(db)
    changed_rows = [s for s in statements if "CAST(clusters.scaled_at" in s]
    assert len(changed_rows) == 1  # one chunk of changed rows, not a scan of all 40
    with db.transaction() as conn:
        repo.set_status(conn, "c008", ClusterStatus.DELETED, "", NOW + 6)
    got, _ = _statements(db, cache)
    assert got == _full(db) and "c008" not in {c.id for c in got}


def test_a_rolled_back_change_moves_nothing(db: Database) -> None:
    _make(db, 2)
    with db.reading() as conn:
        before = repo.change_seq(conn)
    with pytest.raises(RuntimeError), db.transaction() as conn:
        repo.set_status(conn, "c000", ClusterStatus.ACTIVE, "", NOW)
        raise RuntimeError("abandoned")
    with db.reading() as conn:
        assert repo.change_seq(conn) == before
    with db.transaction() as conn:
        repo.set_status(conn, "c000", ClusterStatus.ACTIVE, "", NOW)
    with db.reading() as conn:
        assert repo.change_seq(conn) > before
