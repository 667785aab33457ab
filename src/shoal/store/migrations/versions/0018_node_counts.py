"""node counts: live nodes counted by project, cluster and status as they change

Issue 37: `/metrics` counted nodes by status with a GROUP BY over every node row at each scrape
(0.7-0.9 s at 200,000 nodes, on SQLite and PostgreSQL alike). Now the database keeps the counts
as rows change, in the changing transaction, so no writer can forget:

- PostgreSQL: statement-level triggers (with transition tables: one statement of a flush or a
  COPY of a plan is one trigger run, not one per row) append the change of each
  (project, cluster, status) count to `node_count_deltas`. Appending takes no lock another
  writer waits for, so engines flushing the same cluster never queue on a counter row; a
  reader sums `node_counts` and the deltas, and folds the deltas into `node_counts` now and
  then (`store/node_counts.py`);
- SQLite (one writer at a time already): row triggers change `node_counts` directly.

A node counts while `deleted_at` is NULL, under its status.

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

_KEY = "coalesce(project_id, ''), coalesce(cluster_id, ''), status"

_PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION shoal_node_counts() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO node_count_deltas (project_id, cluster_id, status, delta)
            SELECT {_KEY}, count(*) FROM new_rows WHERE deleted_at IS NULL GROUP BY 1, 2, 3;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO node_count_deltas (project_id, cluster_id, status, delta)
            SELECT {_KEY}, -count(*) FROM old_rows WHERE deleted_at IS NULL GROUP BY 1, 2, 3;
    ELSE
        INSERT INTO node_count_deltas (project_id, cluster_id, status, delta)
            SELECT p, c, s, sum(d) FROM (
                SELECT {_KEY}, -1 AS d FROM old_rows WHERE deleted_at IS NULL
                UNION ALL
                SELECT {_KEY}, 1 AS d FROM new_rows WHERE deleted_at IS NULL
            ) AS changed (p, c, s, d)
            GROUP BY p, c, s HAVING sum(d) <> 0;
    END IF;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""

_PG_TRIGGERS = (
    "CREATE TRIGGER nodes_counted_insert AFTER INSERT ON nodes "
    "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION shoal_node_counts()",
    "CREATE TRIGGER nodes_counted_update AFTER UPDATE ON nodes "
    "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION shoal_node_counts()",
    "CREATE TRIGGER nodes_counted_delete AFTER DELETE ON nodes "
    "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION shoal_node_counts()",
)


def _sqlite_add(row: str, sign: str) -> str:
    return f"""
    INSERT INTO node_counts (project_id, cluster_id, status, n)
        VALUES (coalesce({row}.project_id, ''), coalesce({row}.cluster_id, ''),
                {row}.status, {sign}1)
        ON CONFLICT (project_id, cluster_id, status) DO UPDATE SET n = n {sign} 1;"""


_SQLITE_TRIGGERS = (
    "CREATE TRIGGER nodes_counted_insert AFTER INSERT ON nodes WHEN NEW.deleted_at IS NULL "
    f"BEGIN {_sqlite_add('NEW', '+')} END",
    "CREATE TRIGGER nodes_counted_delete AFTER DELETE ON nodes WHEN OLD.deleted_at IS NULL "
    f"BEGIN {_sqlite_add('OLD', '-')} END",
    "CREATE TRIGGER nodes_counted_gone AFTER UPDATE OF deleted_at, status, cluster_id, project_id "
    "ON nodes WHEN OLD.deleted_at IS NULL AND (NEW.deleted_at IS NOT NULL "
    "OR NEW.status IS NOT OLD.status OR NEW.cluster_id IS NOT OLD.cluster_id "
    "OR NEW.project_id IS NOT OLD.project_id) "
    f"BEGIN {_sqlite_add('OLD', '-')} END",
    "CREATE TRIGGER nodes_counted_come AFTER UPDATE OF deleted_at, status, cluster_id, project_id "
    "ON nodes WHEN NEW.deleted_at IS NULL AND (OLD.deleted_at IS NOT NULL "
    "OR NEW.status IS NOT OLD.status OR NEW.cluster_id IS NOT OLD.cluster_id "
    "OR NEW.project_id IS NOT OLD.project_id) "
    f"BEGIN {_sqlite_add('NEW', '+')} END",
)

_SQLITE_NAMES = ("insert", "delete", "gone", "come")


def upgrade() -> None:
    op.create_table(
        "node_counts",
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("project_id", "cluster_id", "status"),
    )
    op.create_table(
        "node_count_deltas",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("delta", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute(
        "INSERT INTO node_counts (project_id, cluster_id, status, n) "
        f"SELECT {_KEY}, count(*) FROM nodes WHERE deleted_at IS NULL GROUP BY 1, 2, 3"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        for trigger in _PG_TRIGGERS:
            op.execute(trigger)
    else:
        for trigger in _SQLITE_TRIGGERS:
            op.execute(trigger)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS nodes_counted_{event} ON nodes")
        op.execute("DROP FUNCTION IF EXISTS shoal_node_counts()")
    else:
        for name in _SQLITE_NAMES:
            op.execute(f"DROP TRIGGER IF EXISTS nodes_counted_{name}")
    op.drop_table("node_count_deltas")
    op.drop_table("node_counts")
