"""The schema, as SQLAlchemy Core tables (the Alembic migrations create exactly these).

Times are float seconds since the epoch, read from the injectable clock, so leases and tests
agree on "now". JSON columns hold documents and small structured values.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

metadata = MetaData()

projects = Table(
    "projects",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("created_at", Float, nullable=False),
)

tokens = Table(
    "tokens",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("project_id", String(64), ForeignKey("projects.id"), nullable=False),
    Column("is_admin", Boolean, nullable=False, default=False),
    Column("name", String(255), nullable=False, default=""),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=True),  # None: never
    Column("revoked_at", Float, nullable=True),
)

clusters = Table(
    "clusters",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("status", String(16), nullable=False),
    Column("status_reason", Text, nullable=False, default=""),
    Column("document", JSON, nullable=False),
    Column("source_format", String(16), nullable=False, default="native"),
    Column("lock_action_id", String(36), nullable=True),
    Column("generation", Integer, nullable=False, default=1),
    # Per node group, when a scaling trigger last changed it (for cooldowns).
    Column("scaled_at", JSON, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("deleted_at", Float, nullable=True),
    Index(
        "ix_clusters_live_name",
        "project_id",
        "name",
        unique=True,
        sqlite_where=Column("deleted_at").is_(None),
        postgresql_where=Column("deleted_at").is_(None),
    ),
)

# Changes to cluster rows, kept by triggers (migration 0012): a counter bumped by every insert,
# update or delete of a cluster, and per cluster the counter's value at its last change, so a
# reader reads only what changed since it last looked (`store/clusters.list_clusters_cached`).
change_counters = Table(
    "change_counters",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("seq", BigInteger, nullable=False),
)

cluster_changes = Table(
    "cluster_changes",
    metadata,
    Column("cluster_id", String(36), primary_key=True),
    Column("seq", BigInteger, nullable=False),
    Index("ix_cluster_changes_seq", "seq"),
)

nodes = Table(
    "nodes",
    metadata,
    Column("id", String(36), primary_key=True),
    # NULL for a Senlin standalone node (created through /clustering/v1/nodes, no cluster).
    Column("cluster_id", String(36), ForeignKey("clusters.id"), nullable=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("group_name", String(255), nullable=False),
    Column("part", String(255), nullable=True),
    Column("replica", Integer, nullable=False, default=0),
    Column("status", String(16), nullable=False),
    Column("status_reason", Text, nullable=False, default=""),
    Column("host", String(255), nullable=True),
    Column("zone", String(255), nullable=True),
    Column("address", String(255), nullable=True),
    Column("provider_id", String(255), nullable=True),
    Column("profile", JSON, nullable=False),
    Column("vcpus", Integer, nullable=False, default=0),
    Column("ram_mb", Integer, nullable=False, default=0),
    Column("disk_gb", Integer, nullable=False, default=0),
    Column("volume_gb", Integer, nullable=False, default=0),
    Column("attach_to", String(255), nullable=True),
    Column("health", String(16), nullable=False, default="UNKNOWN", server_default="UNKNOWN"),
    Column("health_reason", Text, nullable=False, default="", server_default=""),
    Column("checked_at", Float, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("deleted_at", Float, nullable=True),
    Index("ix_nodes_cluster", "cluster_id"),
    # Pages of a cluster's nodes in list order (issue 23: the first page of 100,000 nodes must
    # not sort them all).
    Index("ix_nodes_cluster_order", "cluster_id", "created_at", "id"),
    Index(
        "ix_nodes_live_name",
        "cluster_id",
        "name",
        unique=True,
        sqlite_where=Column("deleted_at").is_(None),
        postgresql_where=Column("deleted_at").is_(None),
    ),
)

counts = Table(
    # Live nodes and deployments by project, cluster and status, kept by triggers (migration
    # 0018; folded from `count_deltas` on PostgreSQL): /metrics reads these, not every row
    # (issue 37). `kind`: "node" or "deployment".
    "counts",
    metadata,
    Column("kind", String(16), nullable=False),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=False),
    Column("status", String(16), nullable=False),
    Column("n", BigInteger, nullable=False),
    PrimaryKeyConstraint("kind", "project_id", "cluster_id", "status"),
)

count_deltas = Table(
    "count_deltas",
    metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=False),
    Column("status", String(16), nullable=False),
    Column("delta", BigInteger, nullable=False),
)

actions = Table(
    "actions",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=True),
    Column("node_id", String(36), nullable=True),
    Column("parent_id", String(36), nullable=True),
    Column("kind", String(32), nullable=False),
    Column("status", String(16), nullable=False),
    Column("status_reason", Text, nullable=False, default=""),
    Column("inputs", JSON, nullable=False),
    Column("outputs", JSON, nullable=False),
    Column("owner", String(64), nullable=True),
    Column("lease_expires_at", Float, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("deps_pending", Integer, nullable=False, default=0),
    Column("cancel_requested", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float, nullable=True),
    Column("ended_at", Float, nullable=True),
    Column("request_id", String(64), nullable=True),  # issue 27 (0009)
    Index("ix_actions_status", "status", "parent_id"),
    # Claims pick runnable actions by status and kind, and RUNNING ones by their lease
    # (issue 23, migration 0015): not every RUNNING action of every kind.
    Index("ix_actions_runnable", "status", "kind", "lease_expires_at"),
    Index("ix_actions_parent", "parent_id"),
    Index("ix_actions_cluster", "cluster_id"),
)

action_deps = Table(
    "action_deps",
    metadata,
    Column("action_id", String(36), primary_key=True),
    Column("depends_on", String(36), primary_key=True),
    Index("ix_action_deps_on", "depends_on"),
)

events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("ts", Float, nullable=False),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=True),
    Column("node_id", String(36), nullable=True),
    Column("action_id", String(36), nullable=True),
    Column("level", String(8), nullable=False, default="INFO"),
    Column("obj_type", String(16), nullable=False),
    Column("obj_name", String(255), nullable=False, default=""),
    Column("status", String(16), nullable=False, default=""),
    Column("message", Text, nullable=False, default=""),
    Column("request_id", String(64), nullable=True),  # issue 27 (0009)
    Index("ix_events_cluster", "cluster_id", "id"),
)

receivers = Table(
    "receivers",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=False),
    Column("name", String(255), nullable=False),
    Column("action", String(32), nullable=False),
    Column("nodegroup", String(255), nullable=True),
    Column("params", JSON, nullable=False),
    Column("secret_hash", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("triggered_at", Float, nullable=True),
    Index("ix_receivers_name", "project_id", "name", unique=True),
)

# Named leases for work one engine at a time should do (health checks, reconciling).
leases = Table(
    "leases",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("holder", String(64), nullable=True),
    Column("expires_at", Float, nullable=False, default=0.0),
)

profiles = Table(
    "profiles",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("type", String(32), nullable=False),
    Column("spec", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_profiles_name", "project_id", "name", unique=True),
)

# One row, locked while a placement decides and records its claims, so two planners never
# hand out the same capacity.
placement_lock = Table(
    "placement_lock",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("holder", String(64), nullable=True),
    Column("updated_at", Float, nullable=False, default=0.0),
)

# Per-project quota overrides (Nova's model: a limit per resource; absent means the default
# from settings; -1 means unlimited).
quotas = Table(
    "quotas",
    metadata,
    Column("project_id", String(64), primary_key=True),
    Column("resource", String(32), primary_key=True),
    Column("hard_limit", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# Capacity an accepted action will take once planned, per host, recorded with the action under
# the placement lock; it counts as used until the planner records node claims instead (or the
# action ends), so a 202 means "it fitted when accepted" even under concurrent requests.
reservations = Table(
    "reservations",
    metadata,
    Column("action_id", String(36), primary_key=True),
    Column("host", String(255), primary_key=True),
    Column("cluster_id", String(36), nullable=False),
    Column("project_id", String(64), nullable=False),
    Column("nodes", Integer, nullable=False, default=0),
    Column("vcpus", Integer, nullable=False, default=0),
    Column("ram_mb", Integer, nullable=False, default=0),
    Column("disk_gb", Integer, nullable=False, default=0),
    Column("volume_gb", Integer, nullable=False, default=0),
    Index("ix_reservations_cluster", "cluster_id"),
)

# Senlin policy objects (the façade at /clustering): created, renamed and deleted on their own,
# then attached to clusters. Unlike profiles, Senlin lets names repeat.
senlin_policies = Table(
    "senlin_policies",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("type", String(64), nullable=False),
    Column("spec", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=True),
    Index("ix_senlin_policies_project", "project_id", "created_at"),
)

# What a Senlin node keeps beyond Shoal's node row: the Senlin profile it was made from, its
# metadata, role and tainted flag (standalone nodes and nodes created through the façade).
senlin_nodes = Table(
    "senlin_nodes",
    metadata,
    Column("node_id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("profile_id", String(36), nullable=True),
    Column("metadata", JSON, nullable=False),
    Column("role", String(255), nullable=False, default=""),
    Column("tainted", Boolean, nullable=False, default=False),
)

# What a Senlin receiver keeps beyond Shoal's receiver row: the Senlin action it was created
# for when Shoal's receivers have no such action (CLUSTER_RESIZE runs as a scale by the
# receiver's params), and the name and params as the client gave them (Senlin's names repeat;
# its params may be strings).
senlin_receivers = Table(
    "senlin_receivers",
    metadata,
    Column("receiver_id", String(36), primary_key=True),
    Column("action", String(32), nullable=True),
    Column("name", String(255), nullable=True),
    Column("params", JSON, nullable=True),
)

# Software deployments (issue 11): one row per deployment x node, what last ran there and how it
# ended. The digest (config + resolved inputs) is the idempotency key: a COMPLETE row with the
# digest a run would have is never run again. Inputs are stored with secrets redacted; stdout
# and stderr are bounded tails; the signal secret only as its hash.
deployments = Table(
    "deployments",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("cluster_id", String(36), nullable=False),
    Column("node_id", String(36), nullable=False),
    Column("node_name", String(255), nullable=False),
    Column("name", String(255), nullable=False),
    Column("config", String(255), nullable=False),
    Column("hook", String(32), nullable=False),
    Column("action", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("digest", String(64), nullable=False, default=""),
    Column("inputs", JSON, nullable=False),
    Column("secret_inputs", JSON, nullable=False),
    Column("outputs", JSON, nullable=False),
    Column("stdout", Text, nullable=False, default=""),
    Column("stderr", Text, nullable=False, default=""),
    Column("status_code", Integer, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("action_id", String(36), nullable=True),
    Column("signal_hash", String(64), nullable=False, default=""),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float, nullable=True),
    Column("ended_at", Float, nullable=True),
    # The config as published to the node, and what it completed before (rollback, 0008).
    Column("config_body", JSON, nullable=True),
    Column("previous", JSON, nullable=True),
    # The actions its deployment declared when it last ran: a retired one's DELETE (0021).
    Column("actions", JSON, nullable=True),
    Index("ix_deployments_node_name", "node_id", "name", unique=True),
    Index("ix_deployments_cluster", "cluster_id"),
    # A cluster's deployments counted by status from the index alone (issue 23, 0015).
    Index("ix_deployments_cluster_status", "cluster_id", "status", "node_id"),
    # Its pages in (created_at, id) order, read without sorting every row (issue 23, 0015).
    Index("ix_deployments_cluster_order", "cluster_id", "created_at", "id"),
    Index("ix_deployments_action", "action_id"),
)

# Containers of deployments that keep exiting, per node (issue 36; model/restarts.py
# `ContainerLoop`): what the manager last saw of the node's provider, replaced per node.
container_loops = Table(
    "container_loops",
    metadata,
    Column("node_id", String(36), nullable=False),
    Column("container", String(255), nullable=False),
    Column("cluster_id", String(36), nullable=False),
    Column("project", String(255), nullable=False, default=""),
    Column("exits", Integer, nullable=False, default=0),
    Column("exit_code", Integer, nullable=True),
    Column("output", Text, nullable=False, default=""),
    Column("restart_at", Float, nullable=True),
    Column("updated_at", Float, nullable=False),
    PrimaryKeyConstraint("node_id", "container"),
    Index("ix_container_loops_cluster", "cluster_id"),
)

# Where each deployment's rolling UPDATE stands (model/rollouts.py), per cluster.
software_rollouts = Table(
    "software_rollouts",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("name", String(255), nullable=False),
    Column("phase", String(16), nullable=False),
    Column("state", JSON, nullable=False),
    Column("updated_at", Float, nullable=False),
    PrimaryKeyConstraint("cluster_id", "name"),
    Index("ix_software_rollouts_phase", "phase"),
)

# Keys the API derives per-server and per-run secrets from (HMAC), created on first use, so a
# node's metadata URL can be computed wherever it is needed without storing each secret.
software_keys = Table(
    "software_keys",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
)

# Repairs the manager made that did not change what they found (engine/manager.py): one row
# per node in trouble, so the back-off and the report survive a restart or a new lease holder.
repair_attempts = Table(
    "repair_attempts",
    metadata,
    Column("node_id", String(36), primary_key=True),
    Column("cluster_id", String(36), nullable=False),
    Column("finding", Text, nullable=False),
    Column("generation", Integer, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("not_before", Float, nullable=False),
    Column("reported", Boolean, nullable=False, default=False),
    Column("updated_at", Float, nullable=False),
)

# Workloads' replicas (issue 22, engine/workloads.py): where each runs and whether it is ready,
# with the restart back-off, so a restart or a new lease holder keeps them as they are.
workload_replicas = Table(
    "workload_replicas",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("replica", String(128), nullable=False),
    Column("workload", String(64), nullable=False),
    Column("node", String(255), nullable=False),
    Column("ready", Boolean, nullable=False, default=False),
    Column("restarts", Integer, nullable=False, default=0),
    Column("not_before", Float, nullable=True),
    Column("started_at", Float, nullable=True),
    Column("updated_at", Float, nullable=False),
    Column("revision", String(64), nullable=True),
    # What its probes saw since its last start (store/workloads.py `ProbeState`, JSON).
    Column("probes", Text, nullable=True),
    PrimaryKeyConstraint("cluster_id", "replica"),
)

# A workload's rolling update (issue 22, item 4; store/rollouts.py): one row per workload that
# runs, so an engine restart resumes a rollout or a rollback where it stopped.
workload_rollouts = Table(
    "workload_rollouts",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("workload", String(64), nullable=False),
    Column("phase", String(16), nullable=False),
    Column("revision", String(64), nullable=False),
    Column("template", Text, nullable=False),
    Column("previous_revision", String(64), nullable=True),
    Column("previous_template", Text, nullable=True),
    Column("batches", Integer, nullable=False, default=0),
    Column("batch", Text, nullable=False, default="[]"),
    Column("batch_started_at", Float, nullable=True),
    Column("reason", Text, nullable=True),
    Column("started_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    PrimaryKeyConstraint("cluster_id", "workload"),
)

# What the cloud assigned to a cluster's ports, floating IPs and balancers (migration 0014,
# store/network_addresses.py): read by outputs, written by the engine's networking sync.
network_addresses = Table(
    "network_addresses",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("attr", String(32), nullable=False),
    Column("name", String(255), nullable=False),
    Column("address", String(64), nullable=False),
    Column("updated_at", Float, nullable=False),
    PrimaryKeyConstraint("cluster_id", "attr", "name"),
)

# Workload replicas delivered to their servers' agents as compose configs (migration 0016,
# store/agent_replicas.py): on providers whose replicas run through the node-side agents.
agent_replicas = Table(
    "agent_replicas",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("replica", String(128), nullable=False),
    Column("workload", String(64), nullable=False),
    Column("node_id", String(36), nullable=False),
    Column("generation", Integer, nullable=False),
    Column("action_id", String(36), nullable=False),
    Column("signal_hash", String(128), nullable=False),
    Column("digest", String(64), nullable=False),
    Column("config", JSON, nullable=False),
    Column("secret_env", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("status_code", Integer, nullable=True),
    Column("stderr", Text, nullable=False),
    Column("delivered_at", Float, nullable=False),
    Column("ended_at", Float, nullable=True),
    PrimaryKeyConstraint("cluster_id", "replica"),
    Index("ix_agent_replicas_node", "node_id"),
    Index("ix_agent_replicas_action", "action_id", unique=True),
)

# The orchestration (Heat) façade (issue 38): what a Heat client gave for a stack beside the
# cluster Shoal made of it (the body, so PATCH reuses it and `template` shows it), a resource
# a client marked unhealthy, and Heat's standalone software configs and deployments.
heat_stacks = Table(
    "heat_stacks",
    metadata,
    Column("cluster_id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("body", JSON, nullable=False),
    Column("disable_rollback", Boolean, nullable=False, default=True),
    Column("timeout_mins", Integer, nullable=True),
    Column("tags", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=True),
    Column("deleted_at", Float, nullable=True),
    Index("ix_heat_stacks_project_name", "project_id", "name"),
)

heat_marks = Table(
    "heat_marks",
    metadata,
    Column("cluster_id", String(36), nullable=False),
    Column("resource", String(255), nullable=False),
    Column("status", String(32), nullable=False),
    Column("reason", String(1024), nullable=False),
    Column("at", Float, nullable=False),
    PrimaryKeyConstraint("cluster_id", "resource"),
)

heat_software_configs = Table(
    "heat_software_configs",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("group", String(255), nullable=False),
    Column("config", Text, nullable=False),
    Column("details", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_heat_software_configs_project", "project_id", "created_at"),
)

heat_software_deployments = Table(
    "heat_software_deployments",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("project_id", String(64), nullable=False),
    Column("config_id", String(36), nullable=False),
    Column("server_id", String(255), nullable=False),
    Column("action", String(255), nullable=False),
    Column("status", String(255), nullable=False),
    Column("status_reason", String(1024), nullable=False),
    Column("input_values", JSON, nullable=False),
    Column("output_values", JSON, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=True),
    Index("ix_heat_software_deployments_server", "project_id", "server_id"),
)
