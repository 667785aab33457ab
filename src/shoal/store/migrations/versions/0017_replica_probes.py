"""replica probes: what each replica's liveness and readiness probes saw since its last start

`workload_replicas.probes` keeps, per replica, the start its probes belong to and each probe's
consecutive failures, verdict and last result (JSON; engine/workload_probes.py), so an engine
restart or a new holder of the manager lease goes on counting instead of starting from zero.
Written only when a count or result changes: a replica whose probes keep passing costs nothing.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("workload_replicas", sa.Column("probes", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("workload_replicas", "probes")
