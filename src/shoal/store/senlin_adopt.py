"""Writing an imported Senlin cluster into Shoal's store, keeping Senlin's ids.

An import records what already exists: the cluster row ACTIVE with no action and no lock, its
nodes ACTIVE with their provider ids and hosts, and the Senlin profile, policies and receivers
under the ids Senlin gave them, all in the caller's one transaction per cluster. Nothing here
makes an action, so the engine has nothing to run for an imported cluster.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, insert, select, update

from shoal.model.enums import ClusterStatus
from shoal.store import auth
from shoal.store import clusters as cluster_repo
from shoal.store import receivers as receiver_repo
from shoal.store.tables import clusters, profiles, receivers, senlin_nodes, senlin_policies


def cluster_exists(conn: Connection, cluster_id: str) -> bool:
    q = select(clusters.c.id).where(clusters.c.id == cluster_id, clusters.c.deleted_at.is_(None))
    return conn.execute(q).first() is not None


def cluster_name_taken(conn: Connection, project_id: str, name: str) -> bool:
    q = select(clusters.c.id).where(
        clusters.c.project_id == project_id,
        clusters.c.name == name,
        clusters.c.deleted_at.is_(None),
    )
    return conn.execute(q).first() is not None


def remember_project(conn: Connection, project_id: str, now: float) -> None:
    auth.ensure_project(conn, project_id, project_id, now)


def put_profile(conn: Connection, row: dict[str, Any]) -> bool:
    """Insert the profile row unless one with its id exists; True when inserted."""
    if conn.execute(select(profiles.c.id).where(profiles.c.id == row["id"])).first():
        return False
    conn.execute(insert(profiles).values(**row))
    return True


def profile_name_taken(conn: Connection, project_id: str, name: str) -> bool:
    q = select(profiles.c.id).where(profiles.c.project_id == project_id, profiles.c.name == name)
    return conn.execute(q).first() is not None


def put_policy(conn: Connection, row: dict[str, Any]) -> bool:
    """Insert the Senlin policy row unless one with its id exists; True when inserted."""
    q = select(senlin_policies.c.id).where(senlin_policies.c.id == row["id"])
    if conn.execute(q).first():
        return False
    conn.execute(insert(senlin_policies).values(**row))
    return True


def insert_active_cluster(
    conn: Connection,
    *,
    id: str,
    project_id: str,
    name: str,
    document: dict[str, Any],
    status_reason: str,
    now: float,
) -> None:
    """The cluster row as a settled cluster: ACTIVE, generation 1, no lock."""
    cluster_repo.insert_cluster(
        conn,
        id=id,
        project_id=project_id,
        name=name,
        document=document,
        source_format="senlin",
        now=now,
    )
    conn.execute(
        update(clusters)
        .where(clusters.c.id == id)
        .values(status=ClusterStatus.ACTIVE, status_reason=status_reason)
    )


def receiver_exists(conn: Connection, receiver_id: str) -> bool:
    return (
        conn.execute(select(receivers.c.id).where(receivers.c.id == receiver_id)).first()
        is not None
    )


def insert_receiver(
    conn: Connection,
    *,
    id: str,
    project_id: str,
    cluster_id: str,
    name: str,
    action: str,
    params: dict[str, Any],
    secret: str,
    now: float,
) -> None:
    conn.execute(
        insert(receivers).values(
            id=id,
            project_id=project_id,
            cluster_id=cluster_id,
            name=name,
            action=action,
            nodegroup=None,
            params=params,
            secret_hash=receiver_repo.hash_secret(secret),
            created_at=now,
            triggered_at=None,
        )
    )


def insert_node_extras(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """The Senlin extras (profile, metadata, role) of a new cluster's nodes, in one statement."""
    if rows:
        conn.execute(insert(senlin_nodes), rows)
