"""quotas and admission reservations

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "quotas",
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("resource", sa.String(length=32), nullable=False),
        sa.Column("hard_limit", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("project_id", "resource"),
    )
    op.create_table(
        "reservations",
        sa.Column("action_id", sa.String(length=36), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("vcpus", sa.Integer(), nullable=False),
        sa.Column("ram_mb", sa.Integer(), nullable=False),
        sa.Column("disk_gb", sa.Integer(), nullable=False),
        sa.Column("volume_gb", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("action_id", "host"),
    )
    op.create_index("ix_reservations_cluster", "reservations", ["cluster_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_reservations_cluster", table_name="reservations")
    op.drop_table("reservations")
    op.drop_table("quotas")
