"""workload replicas: where each replica of a workload runs, ready or not, restart back-off

One row per replica the engine runs (engine/workloads.py): its node, whether it is ready, how
many times its container was restarted and when the next restart may run.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workload_replicas",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("replica", sa.String(length=128), nullable=False),
        sa.Column("workload", sa.String(length=64), nullable=False),
        sa.Column("node", sa.String(length=255), nullable=False),
        sa.Column("ready", sa.Boolean(), nullable=False),
        sa.Column("restarts", sa.Integer(), nullable=False),
        sa.Column("not_before", sa.Float(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "replica"),
    )


def downgrade() -> None:
    op.drop_table("workload_replicas")
