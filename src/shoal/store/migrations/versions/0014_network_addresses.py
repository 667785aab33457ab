"""network addresses: what the cloud assigned to a cluster's ports, floating IPs and balancers

A document may leave a port's fixed IP, a floating IP's address or a balancer's VIP to the
cloud; the engine records what Neutron and Octavia picked (engine/networks.py), so outputs
resolve to it instead of `pending` (planning/outputs.py, docs/networks.md).

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "network_addresses",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("attr", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "attr", "name"),
    )


def downgrade() -> None:
    op.drop_table("network_addresses")
