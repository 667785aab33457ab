"""Cluster rows: create, find by id or name within a project, lock, status, document.

A cluster that becomes DELETED takes its receivers with it, in the same statement batch.
Every write of `document` bumps `generation` (insert: 1, `set_document`: +1), so a document
read once is good for as long as its row's generation stays the same; and every change of a
row at all bumps a counter the database keeps (triggers of migration 0012, `cluster_changes`).
`list_clusters_cached` relies on both: it reads only the rows changed since its last look, and
their documents only when their generation moved (issue 29: the engine's loops read every
cluster row every tick, so 3,000 empty clusters kept an idle server busy).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, Text, and_, cast, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from shoal.model.enums import ClusterStatus
from shoal.store.errors import NameTaken
from shoal.store.pages import page_rows
from shoal.store.records import ClusterRecord
from shoal.store.tables import change_counters, cluster_changes, clusters, receivers


def insert_cluster(
    conn: Connection,
    *,
    id: str,
    project_id: str,
    name: str,
    document: dict[str, Any],
    source_format: str,
    now: float,
    lock_action_id: str | None = None,
) -> ClusterRecord:
    taken = conn.execute(
        select(clusters.c.id).where(
            clusters.c.project_id == project_id,
            clusters.c.name == name,
            clusters.c.deleted_at.is_(None),
        )
    ).first()
    if taken is not None:
        raise NameTaken("cluster", name)
    try:
        conn.execute(
            insert(clusters).values(
                id=id,
                project_id=project_id,
                name=name,
                status=ClusterStatus.INIT,
                status_reason="",
                document=document,
                source_format=source_format,
                lock_action_id=lock_action_id,
                generation=1,
                created_at=now,
                updated_at=now,
                deleted_at=None,
            )
        )
    except IntegrityError as e:
        raise NameTaken("cluster", name) from e
    found = get_cluster(conn, id)
    assert found is not None
    return found


def get_cluster(
    conn: Connection, ref: str, project_id: str | None = None, *, include_deleted: bool = False
) -> ClusterRecord | None:
    """By id, or by name among live clusters; `project_id` None means any project (admin)."""
    cond = [
        or_(clusters.c.id == ref, and_(clusters.c.name == ref, clusters.c.deleted_at.is_(None)))
    ]
    if project_id is not None:
        cond.append(clusters.c.project_id == project_id)
    if not include_deleted:
        cond.append(clusters.c.deleted_at.is_(None))
    rows = conn.execute(select(clusters).where(*cond)).mappings().all()
    # An id match wins over a name match.
    rows = sorted(rows, key=lambda r: r["id"] != ref)
    return ClusterRecord.from_row(rows[0]) if rows else None


def list_clusters(conn: Connection, project_id: str | None) -> list[ClusterRecord]:
    q = select(clusters).where(clusters.c.deleted_at.is_(None)).order_by(clusters.c.created_at)
    if project_id is not None:
        q = q.where(clusters.c.project_id == project_id)
    return [ClusterRecord.from_row(r) for r in conn.execute(q).mappings()]


def page_clusters(
    conn: Connection, project_id: str | None, limit: int, marker: str | None
) -> tuple[list[ClusterRecord], bool] | None:
    """A page of live clusters after the cluster `marker` (by id); None: no such cluster."""
    q = select(clusters).where(clusters.c.deleted_at.is_(None))
    if project_id is not None:
        q = q.where(clusters.c.project_id == project_id)
    got = page_rows(conn, clusters, q, limit, marker)
    if got is None:
        return None
    rows, more = got
    return [ClusterRecord.from_row(r) for r in rows], more


class ClusterCache:
    """Clusters already read, by id: the row as last seen (every column but the document, the
    JSON of `scaled_at` as text) and the record built from it.

    Owned by one reader (the manager, the deployer); the records and documents it hands out
    are shared from one read to the next and must be treated as read-only.
    """

    __slots__ = ("listed", "rows", "seq")

    def __init__(self) -> None:
        self.rows: dict[str, tuple[tuple[Any, ...], ClusterRecord]] = {}
        self.seq: int | None = None
        """The change counter as of the last read (None: nothing read yet)."""
        self.listed: list[ClusterRecord] = []
        """The live clusters as of `seq`, in `list_clusters`' order."""


_SCALARS = [c for c in clusters.c if c.name not in ("document", "scaled_at")]
_NAMES = [c.name for c in _SCALARS]
_GENERATION = _NAMES.index("generation")
_HEAD = select(*_SCALARS, cast(clusters.c.scaled_at, Text))
_CHUNK = 500


def change_seq(conn: Connection) -> int:
    """The cluster change counter now (0 before any change)."""
    seq = conn.execute(
        select(change_counters.c.seq).where(change_counters.c.name == "clusters")
    ).scalar()
    return int(seq or 0)


def list_clusters_cached(conn: Connection, cache: ClusterCache) -> list[ClusterRecord]:
    """Every live cluster (all projects), as `list_clusters(conn, None)`, reading only what
    changed since the cache's last read: nothing when the change counter has not moved, the
    changed rows when it has (issue 29: idle cost flat in the number of clusters).

    The counter is read first: every change it counts is committed (the triggers take it at
    commit, in commit order), so the rows read after it show at least those changes; a row
    read newer than the counter is simply read again next time.
    """
    seq = change_seq(conn)
    if cache.seq is not None and seq == cache.seq:
        return list(cache.listed)
    if cache.seq is None:
        cache.listed = _read_all(conn, cache)
        cache.seq = seq
        return list(cache.listed)
    changed = [
        str(r[0])
        for r in conn.execute(
            select(cluster_changes.c.cluster_id).where(cluster_changes.c.seq > cache.seq)
        )
    ]
    known = cache.rows
    for i in range(0, len(changed), _CHUNK):
        chunk = changed[i : i + _CHUNK]
        q = _HEAD.where(clusters.c.id.in_(chunk), clusters.c.deleted_at.is_(None))
        heads = [tuple(r) for r in conn.execute(q).all()]
        for gone in set(chunk) - {h[0] for h in heads}:
            known.pop(gone, None)  # deleted
        _apply(conn, known, heads)
    cache.listed = sorted((r for _, r in known.values()), key=lambda r: (r.created_at, r.id))
    cache.seq = seq
    return list(cache.listed)


def _read_all(conn: Connection, cache: ClusterCache) -> list[ClusterRecord]:
    """Every live cluster (all projects), as `list_clusters(conn, None)`, without decoding
    what did not change: a row equal to the one last seen gives the same record again, and a
    document is read only for a generation the cache does not hold (issue 29: 3,000 empty
    clusters decoded every tick kept an idle server busy).

    Rows are read without their documents first and the missing documents after, in another
    statement: a document read at another generation than its row (a write committed in
    between) is not used; that cluster's whole row is read again in one statement.
    """
    q = _HEAD.where(clusters.c.deleted_at.is_(None)).order_by(clusters.c.created_at)
    heads = [tuple(r) for r in conn.execute(q).all()]
    known = cache.rows
    for gone in known.keys() - {h[0] for h in heads}:
        del known[gone]
    return _apply(conn, known, heads)


def _apply(
    conn: Connection,
    known: dict[str, tuple[tuple[Any, ...], ClusterRecord]],
    heads: list[tuple[Any, ...]],
) -> list[ClusterRecord]:
    """The records of `heads` (rows without documents), reusing what `known` holds."""
    stale = [
        h[0] for h in heads if h[0] not in known or known[h[0]][1].generation != h[_GENERATION]
    ]
    documents: dict[str, tuple[int, dict[str, Any]]] = {}
    for i in range(0, len(stale), _CHUNK):
        read = select(clusters.c.id, clusters.c.generation, clusters.c.document).where(
            clusters.c.id.in_(stale[i : i + _CHUNK])
        )
        for cid, read_at, tree in conn.execute(read).all():
            documents[cid] = (read_at, dict(tree))
    out: list[ClusterRecord] = []
    for h in heads:
        seen = known.get(h[0])
        if seen is not None and seen[0] == h:
            out.append(seen[1])
            continue
        document: dict[str, Any] | None = None
        if seen is not None and seen[1].generation == h[_GENERATION]:
            document = seen[1].document
        elif h[0] in documents and documents[h[0]][0] == h[_GENERATION]:
            document = documents[h[0]][1]
        if document is None:
            again = get_cluster(conn, h[0])
            if again is not None:
                known[again.id] = ((), again)  # built from its own row: compared afresh next time
                out.append(again)
            continue
        record = _record(h, document)
        known[record.id] = (h, record)
        out.append(record)
    return out


def _record(head: tuple[Any, ...], document: dict[str, Any]) -> ClusterRecord:
    row = dict(zip(_NAMES, head, strict=False))
    row["status"] = ClusterStatus(row["status"])
    scaled_at = head[len(_NAMES)]
    return ClusterRecord(
        **row, document=document, scaled_at=dict(json.loads(scaled_at) or {}) if scaled_at else {}
    )


def try_lock(conn: Connection, cluster_id: str, action_id: str, now: float) -> bool:
    """Take the cluster's one mutating-action slot; False when another action holds it."""
    res = conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id, clusters.c.lock_action_id.is_(None))
        .values(lock_action_id=action_id, updated_at=now)
    )
    return res.rowcount == 1


def unlock(conn: Connection, cluster_id: str, action_id: str, now: float) -> None:
    conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id, clusters.c.lock_action_id == action_id)
        .values(lock_action_id=None, updated_at=now)
    )


def set_status(
    conn: Connection, cluster_id: str, status: ClusterStatus, reason: str, now: float
) -> None:
    values: dict[str, Any] = {"status": status, "status_reason": reason, "updated_at": now}
    if status is ClusterStatus.DELETED:
        values["deleted_at"] = now
        # A webhook must not outlive its cluster (nor answer naming the deleted one).
        conn.execute(delete(receivers).where(receivers.c.cluster_id == cluster_id))
    conn.execute(update(clusters).where(clusters.c.id == cluster_id).values(**values))


def set_document(conn: Connection, cluster_id: str, document: dict[str, Any], now: float) -> None:
    conn.execute(
        update(clusters)
        .where(clusters.c.id == cluster_id)
        .values(document=document, updated_at=now, generation=clusters.c.generation + 1)
    )


def set_scaled_at(conn: Connection, cluster_id: str, scaled_at: dict[str, float]) -> None:
    """Record when scaling triggers last changed each node group (read back for cooldowns)."""
    conn.execute(update(clusters).where(clusters.c.id == cluster_id).values(scaled_at=scaled_at))
