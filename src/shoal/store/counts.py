"""Live nodes and deployments counted by project, cluster and status, as the database keeps
them (issue 37).

Triggers of migration 0018 keep the counts in the transaction that changes a row: on SQLite in
`counts` itself; on PostgreSQL as appended `count_deltas` (no writer waits on a counter row
another engine's flush holds), which `fold` moves into `counts` now and then. A reader sums
both, so its answer is exact whenever it reads, folded or not, and costs the number of
(kind, project, cluster, status) groups plus the deltas not yet folded: not the rows counted.
"""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import Connection, func, select, text, union_all

from shoal.store.database import Database
from shoal.store.tables import count_deltas, counts


class Counted(StrEnum):
    NODE = "node"
    """Nodes not deleted."""
    DEPLOYMENT = "deployment"


_FOLD = text(
    "WITH moved AS (DELETE FROM count_deltas RETURNING kind, project_id, cluster_id, status, "
    "delta) "
    "INSERT INTO counts (kind, project_id, cluster_id, status, n) "
    "SELECT kind, project_id, cluster_id, status, sum(delta) FROM moved "
    "GROUP BY kind, project_id, cluster_id, status "
    "ORDER BY kind, project_id, cluster_id, status "
    "ON CONFLICT (kind, project_id, cluster_id, status) DO UPDATE SET n = counts.n + excluded.n"
)
"""Every delta moved into the totals at once. Two folds at once fold each delta once (a row
deleted by one is skipped by the other), and both change the totals in key order, so they
never deadlock."""


def fold(conn: Connection) -> None:
    """Move the deltas into `counts` and drop groups that reached 0 (PostgreSQL; SQLite's
    triggers keep `counts` itself)."""
    if conn.dialect.name != "postgresql":
        return
    conn.execute(_FOLD)
    conn.execute(counts.delete().where(counts.c.n == 0))


def fold_counts(db: Database) -> None:
    """`fold` in a transaction of its own, on PostgreSQL only: each engine's heartbeat folds,
    so the deltas stay few whether or not anything scrapes."""
    if db.engine.dialect.name != "postgresql":
        return
    with db.transaction() as conn:
        fold(conn)


def by_status(conn: Connection, kind: Counted, *, by_project: bool) -> dict[tuple[str, str], int]:
    """(status, project or "") -> how many of `kind`, from the counts and the deltas not yet
    folded."""
    t, d = counts.c, count_deltas.c
    both = union_all(
        select(t.project_id, t.status, t.n.label("n")).where(t.kind == kind.value),
        select(d.project_id, d.status, d.delta.label("n")).where(d.kind == kind.value),
    ).subquery()
    cols = [both.c.status, *([both.c.project_id] if by_project else [])]
    q = select(*cols, func.sum(both.c.n)).group_by(*cols).having(func.sum(both.c.n) != 0)
    return {
        (str(row[0]), str(row[1]) if by_project else ""): int(row[-1]) for row in conn.execute(q)
    }
