"""cluster changes: a database-kept counter of changes to cluster rows

Issue 29 / 23: the engine's loops read every cluster row every tick to find the few that
changed, so 3,000 empty clusters cost an idle server most of a core. Now every insert, update
or delete of a cluster row bumps one counter (`change_counters`, row "clusters") and records,
per cluster, the counter's value at its last change (`cluster_changes`). Triggers keep both, in
the same transaction as the change, so no writer can forget; a reader that saw counter value
N reads only the clusters changed after N. Also an index for node lists paged in SQL.

Commit order is counter order: on PostgreSQL the trigger is deferred to commit and takes the
counter row's lock there (held for the commit only), so a later value is never committed before
an earlier one; SQLite serialises writers already.

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_PG_FUNCTION = """
CREATE OR REPLACE FUNCTION shoal_cluster_changed() RETURNS trigger AS $$
DECLARE
    s bigint;
    cid varchar(36);
BEGIN
    IF TG_OP = 'DELETE' THEN
        cid := OLD.id;
    ELSE
        cid := NEW.id;
    END IF;
    UPDATE change_counters SET seq = seq + 1 WHERE name = 'clusters' RETURNING seq INTO s;
    INSERT INTO cluster_changes (cluster_id, seq) VALUES (cid, s)
        ON CONFLICT (cluster_id) DO UPDATE SET seq = EXCLUDED.seq;
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""

_PG_TRIGGER = """
CREATE CONSTRAINT TRIGGER clusters_changed
    AFTER INSERT OR UPDATE OR DELETE ON clusters
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION shoal_cluster_changed()
"""


def _sqlite_trigger(event: str, row: str) -> str:
    return f"""
CREATE TRIGGER clusters_changed_{event.lower()} AFTER {event} ON clusters
BEGIN
    UPDATE change_counters SET seq = seq + 1 WHERE name = 'clusters';
    INSERT INTO cluster_changes (cluster_id, seq)
        VALUES ({row}.id, (SELECT seq FROM change_counters WHERE name = 'clusters'))
        ON CONFLICT (cluster_id) DO UPDATE SET seq = excluded.seq;
END
"""


def upgrade() -> None:
    op.create_table(
        "change_counters",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "cluster_changes",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id"),
    )
    op.create_index("ix_cluster_changes_seq", "cluster_changes", ["seq"])
    # Node lists paged in SQL (issue 23), in list order per cluster.
    op.create_index("ix_nodes_cluster_order", "nodes", ["cluster_id", "created_at", "id"])
    op.execute("INSERT INTO change_counters (name, seq) VALUES ('clusters', 0)")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        op.execute(_PG_TRIGGER)
    else:
        op.execute(_sqlite_trigger("INSERT", "NEW"))
        op.execute(_sqlite_trigger("UPDATE", "NEW"))
        op.execute(_sqlite_trigger("DELETE", "OLD"))


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS clusters_changed ON clusters")
        op.execute("DROP FUNCTION IF EXISTS shoal_cluster_changed()")
    else:
        for event in ("insert", "update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS clusters_changed_{event}")
    op.drop_index("ix_nodes_cluster_order", table_name="nodes")
    op.drop_index("ix_cluster_changes_seq", table_name="cluster_changes")
    op.drop_table("cluster_changes")
    op.drop_table("change_counters")
