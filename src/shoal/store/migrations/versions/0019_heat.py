"""heat: the orchestration façade's stacks, marks and standalone software configs/deployments

Issue 38: Heat's API over Shoal's clusters. A stack is a cluster; `heat_stacks` keeps what the
client sent (template, environment, files, parameters: PATCH reuses them, `GET .../template`
shows the template) and Heat's fields Shoal has no column for (tags, timeout, rollback).
`heat_marks` records a resource a client marked unhealthy (Heat shows CHECK_FAILED and the
reason until the next action). Heat's software configs and deployments made through its API
(not from a template) have no cluster: they are kept as given, for agents and clients to read.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "heat_stacks",
        sa.Column("cluster_id", sa.String(length=36), primary_key=True),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("timeout_mins", sa.Integer(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=True),
        sa.Column("deleted_at", sa.Float(), nullable=True),
    )
    op.create_index("ix_heat_stacks_project_name", "heat_stacks", ["project_id", "name"])
    op.create_table(
        "heat_marks",
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("resource", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.String(length=1024), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("cluster_id", "resource"),
    )
    op.create_table(
        "heat_software_configs",
        sa.Column("id", sa.String(length=36), primary_key=True),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("group", sa.String(length=255), nullable=False),
        sa.Column("config", sa.Text(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
    )
    op.create_index(
        "ix_heat_software_configs_project", "heat_software_configs", ["project_id", "created_at"]
    )
    op.create_table(
        "heat_software_deployments",
        sa.Column("id", sa.String(length=36), primary_key=True),
        sa.Column("project_id", sa.String(length=64), nullable=False),
        sa.Column("config_id", sa.String(length=36), nullable=False),
        sa.Column("server_id", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("status_reason", sa.String(length=1024), nullable=False),
        sa.Column("input_values", sa.JSON(), nullable=False),
        sa.Column("output_values", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=True),
    )
    op.create_index(
        "ix_heat_software_deployments_server",
        "heat_software_deployments",
        ["project_id", "server_id"],
    )


def downgrade() -> None:
    op.drop_table("heat_software_deployments")
    op.drop_table("heat_software_configs")
    op.drop_table("heat_marks")
    op.drop_table("heat_stacks")
