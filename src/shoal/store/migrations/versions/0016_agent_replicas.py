"""agent replicas: each workload replica delivered to its server's agents as a compose config

On a provider whose replicas run through the node-side agents (engine/agent_replicas.py), one
row per replica: the server it was delivered to, the generation, the run's action id and signal
hash, the compose config (never a secret value) and what the agents signalled.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "agent_replicas",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("replica", sa.String(length=128), nullable=False),
        sa.Column("workload", sa.String(length=64), nullable=False),
        sa.Column("node_id", sa.String(length=36), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("action_id", sa.String(length=36), nullable=False),
        sa.Column("signal_hash", sa.String(length=128), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("secret_env", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("stderr", sa.Text(), nullable=False),
        sa.Column("delivered_at", sa.Float(), nullable=False),
        sa.Column("ended_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("cluster_id", "replica"),
    )
    op.create_index("ix_agent_replicas_node", "agent_replicas", ["node_id"])
    op.create_index("ix_agent_replicas_action", "agent_replicas", ["action_id"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_agent_replicas_action", table_name="agent_replicas")
    op.drop_index("ix_agent_replicas_node", table_name="agent_replicas")
    op.drop_table("agent_replicas")
