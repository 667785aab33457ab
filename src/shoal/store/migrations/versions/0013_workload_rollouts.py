"""workload rollouts: each replica's template revision, and each workload's rolling update

`workload_replicas.revision` names the template a replica runs; `workload_rollouts` keeps, per
workload, the revision it rolls to, the previous one (to roll back to), the batch in flight
and the phase, so an engine restart resumes (engine/workload_rollouts.py).

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("workload_replicas", sa.Column("revision", sa.String(length=64), nullable=True))
    op.create_table(
        "workload_rollouts",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("workload", sa.String(length=64), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("revision", sa.String(length=64), nullable=False),
        sa.Column("template", sa.Text(), nullable=False),
        sa.Column("previous_revision", sa.String(length=64), nullable=True),
        sa.Column("previous_template", sa.Text(), nullable=True),
        sa.Column("batches", sa.Integer(), nullable=False),
        sa.Column("batch", sa.Text(), nullable=False),
        sa.Column("batch_started_at", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "workload"),
    )


def downgrade() -> None:
    op.drop_table("workload_rollouts")
    op.drop_column("workload_replicas", "revision")
