"""scale indexes: what the claim loops and the deployments' counts need at 100,000 nodes

Issue 23: the node loop's and the deployer's claims (and `claimable`, asked at every poll)
pick runnable actions by status and kind; with an index on status alone, every RUNNING
action of every kind was read to find none of the asked kind whose lease ran out, a cost per
poll that grew with the deployments under way. The deployments' counts by status (the
cluster's deployments page, watched while they run) read every row of the cluster, bodies and
outputs included; a covering index counts them from the index. A page of them (one row, to go
with the counts) sorted every row of the cluster: an index in page order reads only the page.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_actions_runnable", "actions", ["status", "kind", "lease_expires_at"])
    op.create_index(
        "ix_deployments_cluster_status", "deployments", ["cluster_id", "status", "node_id"]
    )
    op.create_index(
        "ix_deployments_cluster_order", "deployments", ["cluster_id", "created_at", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_deployments_cluster_order", table_name="deployments")
    op.drop_index("ix_deployments_cluster_status", table_name="deployments")
    op.drop_index("ix_actions_runnable", table_name="actions")
