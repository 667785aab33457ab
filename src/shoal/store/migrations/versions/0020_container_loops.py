"""container loops: containers of deployments that keep exiting, per node

Issue 36, item 3: a compose deployment whose container kept dying read COMPLETE. The manager
now keeps, per node, the containers its provider saw exit again and again (model/restarts.py
`ContainerLoop`: exits in a row, last exit code, the end of the output, when it starts again),
and the deployment views show such a deployment DEGRADED with that in its reason.

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "container_loops",
        sa.Column("node_id", sa.String(36), nullable=False),
        sa.Column("container", sa.String(255), nullable=False),
        sa.Column("cluster_id", sa.String(36), nullable=False),
        sa.Column("project", sa.String(255), nullable=False),
        sa.Column("exits", sa.Integer(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("restart_at", sa.Float(), nullable=True),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("node_id", "container"),
    )
    op.create_index("ix_container_loops_cluster", "container_loops", ["cluster_id"])


def downgrade() -> None:
    op.drop_index("ix_container_loops_cluster", "container_loops")
    op.drop_table("container_loops")
