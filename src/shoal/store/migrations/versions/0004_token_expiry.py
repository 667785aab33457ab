"""tokens expire and can be revoked

Revision ID: 0004
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expires_at", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("expires_at")
