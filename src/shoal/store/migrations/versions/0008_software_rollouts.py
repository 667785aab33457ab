"""software rollouts: a config change rolls in batches and can roll back

Each deployment row keeps the config it was published with (`config_body`) and the revision
the node completed before a newer one (`previous`), so a rollback can serve it again after the
document moved on. `software_rollouts` holds where each deployment's rolling UPDATE stands.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deployments") as batch:
        batch.add_column(sa.Column("config_body", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("previous", sa.JSON(), nullable=True))
    op.create_table(
        "software_rollouts",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "name"),
    )
    op.create_index("ix_software_rollouts_phase", "software_rollouts", ["phase"])


def downgrade() -> None:
    op.drop_index("ix_software_rollouts_phase", table_name="software_rollouts")
    op.drop_table("software_rollouts")
    with op.batch_alter_table("deployments") as batch:
        batch.drop_column("previous")
        batch.drop_column("config_body")
