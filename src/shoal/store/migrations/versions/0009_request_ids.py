"""request ids: the API request (X-Openstack-Request-Id) that caused an action or an event

Issue 27: an operator follows one request from the API through the engine to Nova; the id is
kept on what the request caused. Nullable: work the engine starts on its own has its own id,
rows from before have none.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("actions") as batch:
        batch.add_column(sa.Column("request_id", sa.String(length=64), nullable=True))
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("request_id", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.drop_column("request_id")
    with op.batch_alter_table("actions") as batch:
        batch.drop_column("request_id")
