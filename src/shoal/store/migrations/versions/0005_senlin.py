"""senlin policies in their own table; standalone nodes

Senlin policies used to be kept among a project's profiles (named `senlin-policy:<name>`), so
the native profile list showed them. They move to `senlin_policies`, names without the prefix.
A node may have no cluster (a Senlin standalone node); `senlin_nodes` keeps what a Senlin node
has beyond Shoal's node row.

Revision ID: 0005
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_PREFIX = "senlin-policy:"


def upgrade() -> None:
    op.create_table(
        "senlin_policies",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_senlin_policies_project", "senlin_policies", ["project_id", "created_at"])
    with op.batch_alter_table("nodes") as batch:
        batch.alter_column("cluster_id", existing_type=sa.String(length=36), nullable=True)
    op.create_table(
        "senlin_nodes",
        sa.Column("node_id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("profile_id", sa.String(length=36), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("role", sa.String(length=255), nullable=False),
        sa.Column("tainted", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("node_id"),
    )
    op.create_table(
        "senlin_receivers",
        sa.Column("receiver_id", sa.String(length=36), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("receiver_id"),
    )
    profiles = sa.table(
        "profiles",
        sa.column("id", sa.String),
        sa.column("project_id", sa.String),
        sa.column("name", sa.String),
        sa.column("type", sa.String),
        sa.column("spec", sa.JSON),
        sa.column("created_at", sa.Float),
    )
    policies = sa.table(
        "senlin_policies",
        sa.column("id", sa.String),
        sa.column("project_id", sa.String),
        sa.column("name", sa.String),
        sa.column("type", sa.String),
        sa.column("spec", sa.JSON),
        sa.column("created_at", sa.Float),
        sa.column("updated_at", sa.Float),
    )
    conn = op.get_bind()
    moved = conn.execute(
        sa.select(profiles).where(profiles.c.type.like("senlin.policy.%"))
    ).mappings()
    rows = []
    for r in moved:
        env = (r["spec"] or {}).get("senlin") or {}
        rows.append(
            {
                "id": r["id"],
                "project_id": r["project_id"],
                "name": str(r["name"]).removeprefix(_PREFIX),
                "type": r["type"],
                "spec": env.get("spec") or {},
                "created_at": r["created_at"],
                "updated_at": env.get("updated_at"),
            }
        )
    if rows:
        conn.execute(sa.insert(policies), rows)
        conn.execute(sa.delete(profiles).where(profiles.c.id.in_([r["id"] for r in rows])))


def downgrade() -> None:
    op.drop_table("senlin_receivers")
    op.drop_table("senlin_nodes")
    with op.batch_alter_table("nodes") as batch:
        batch.alter_column("cluster_id", existing_type=sa.String(length=36), nullable=False)
    op.drop_index("ix_senlin_policies_project", table_name="senlin_policies")
    op.drop_table("senlin_policies")
