"""deployment actions: which of CREATE, UPDATE, DELETE a row's deployment declared

Issue 36: a deployment the document no longer declares is retired from its nodes, running its
DELETE action first where it declared one. The document that declared it is gone by then, so
each row keeps the actions its deployment declared when it last ran (JSON list; NULL for rows
written before, read as Heat's default: CREATE and UPDATE, no DELETE).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("deployments", sa.Column("actions", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.drop_column("deployments", "actions")
