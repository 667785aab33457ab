"""senlin receivers keep the name and params Senlin clients gave

Senlin lets receivers share a name and keeps a receiver's params as given (`{"count": "2"}`);
Shoal's receiver names are unique per project and its params are typed. `senlin_receivers`
keeps the Senlin name and params beside the native row; its action becomes optional.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("senlin_receivers") as batch:
        batch.alter_column("action", existing_type=sa.String(length=32), nullable=True)
        batch.add_column(sa.Column("name", sa.String(length=255), nullable=True))
        batch.add_column(sa.Column("params", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM senlin_receivers WHERE action IS NULL")
    with op.batch_alter_table("senlin_receivers") as batch:
        batch.drop_column("params")
        batch.drop_column("name")
        batch.alter_column("action", existing_type=sa.String(length=32), nullable=False)
