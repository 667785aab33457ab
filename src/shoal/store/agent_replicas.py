"""Replicas delivered to their servers' agents (issue 22, point 6; table `agent_replicas`).

One row per replica on a provider whose replicas run through the node-side agents
(engine/agent_replicas.py): the server it was delivered to, its generation, the run's action id
and signal hash (as a deployment row keeps them), the compose config served to the node and
what the node's agents signalled. Kept apart from the deployment rows on purpose: those are the
document's deployments, which the resolver, listings, counts and rollouts all read; a replica is
none of those. No secret value is ever in a row (`secret_env` names the variables only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select, tuple_, update

from shoal.model.software import DeploymentStatus, Json
from shoal.store import nodes as node_repo
from shoal.store.records import NodeRecord
from shoal.store.tables import agent_replicas, clusters, nodes

_t = agent_replicas.c

STDERR_CHARS = 4096
"""How much of a failed run's stderr is kept (the end)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    cluster_id: str
    replica: str
    workload: str
    node_id: str
    generation: int
    action_id: str
    signal_hash: str
    digest: str
    config: Mapping[str, Json]
    secret_env: tuple[tuple[str, str], ...]
    status: DeploymentStatus
    delivered_at: float
    status_code: int | None = None
    stderr: str = ""
    ended_at: float | None = None

    @classmethod
    def from_row(cls, row: Any) -> Delivery:
        return cls(
            cluster_id=row.cluster_id,
            replica=row.replica,
            workload=row.workload,
            node_id=row.node_id,
            generation=int(row.generation),
            action_id=row.action_id,
            signal_hash=row.signal_hash,
            digest=row.digest,
            config=dict(row.config or {}),
            secret_env=tuple((str(s), str(v)) for s, v in (row.secret_env or ())),
            status=DeploymentStatus(row.status),
            delivered_at=float(row.delivered_at),
            status_code=row.status_code,
            stderr=row.stderr or "",
            ended_at=row.ended_at,
        )


def _values(d: Delivery) -> dict[str, Any]:
    return {
        "cluster_id": d.cluster_id,
        "replica": d.replica,
        "workload": d.workload,
        "node_id": d.node_id,
        "generation": d.generation,
        "action_id": d.action_id,
        "signal_hash": d.signal_hash,
        "digest": d.digest,
        "config": dict(d.config),
        "secret_env": [list(x) for x in d.secret_env],
        "status": d.status.value,
        "status_code": d.status_code,
        "stderr": d.stderr,
        "delivered_at": d.delivered_at,
        "ended_at": d.ended_at,
    }


def deliver(conn: Connection, d: Delivery) -> None:
    """`d` becomes the replica's current delivery (replacing the one before)."""
    conn.execute(
        delete(agent_replicas).where(_t.cluster_id == d.cluster_id, _t.replica == d.replica)
    )
    conn.execute(insert(agent_replicas), [_values(d)])


def get(conn: Connection, cluster_id: str, replica: str) -> Delivery | None:
    row = conn.execute(
        select(agent_replicas).where(_t.cluster_id == cluster_id, _t.replica == replica)
    ).first()
    return None if row is None else Delivery.from_row(row)


def for_keys(conn: Connection, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Delivery]:
    """The deliveries of (cluster id, replica) pairs, read by cluster (one query per 500)."""
    out: dict[tuple[str, str], Delivery] = {}
    clusters = sorted({c for c, _ in keys})
    wanted = set(keys)
    for i in range(0, len(clusters), 500):
        rows = conn.execute(
            select(agent_replicas).where(_t.cluster_id.in_(clusters[i : i + 500]))
        ).all()
        for row in rows:
            if (row.cluster_id, row.replica) in wanted:
                out[(row.cluster_id, row.replica)] = Delivery.from_row(row)
    return out


def for_node(conn: Connection, node_id: str) -> list[Delivery]:
    rows = conn.execute(
        select(agent_replicas).where(_t.node_id == node_id).order_by(_t.replica)
    ).all()
    return [Delivery.from_row(r) for r in rows]


def by_action(conn: Connection, action_id: str) -> Delivery | None:
    row = conn.execute(select(agent_replicas).where(_t.action_id == action_id)).first()
    return None if row is None else Delivery.from_row(row)


def finish(
    conn: Connection,
    action_id: str,
    status: DeploymentStatus,
    status_code: int,
    stderr: str,
    now: float,
) -> bool:
    """Record how a delivery's run ended, once: False when it had already ended (or the
    replica got a newer delivery, whose own run this is not)."""
    done = conn.execute(
        update(agent_replicas)
        .where(_t.action_id == action_id, _t.status == DeploymentStatus.IN_PROGRESS.value)
        .values(
            status=status.value,
            status_code=status_code,
            stderr=stderr[-STDERR_CHARS:],
            ended_at=now,
        )
    )
    return bool(done.rowcount)


def forget(conn: Connection, keys: Iterable[tuple[str, str]]) -> None:
    """Drop the deliveries of (cluster id, replica): no longer served, so the node's
    heat-config kills their compose projects."""
    found = list(keys)
    for i in range(0, len(found), 500):
        conn.execute(
            delete(agent_replicas).where(tuple_(_t.cluster_id, _t.replica).in_(found[i : i + 500]))
        )


def drop_orphans(conn: Connection) -> None:
    """Deliveries of clusters that no longer exist (a cluster delete leaves no row behind)."""
    live = select(clusters.c.id).where(clusters.c.deleted_at.is_(None))
    conn.execute(delete(agent_replicas).where(_t.cluster_id.not_in(live)))


def server_of(conn: Connection, cluster_id: str, provider_id: str) -> NodeRecord | None:
    """The cluster's node that is the provider's server `provider_id` (not deleted)."""
    row = conn.execute(
        select(nodes.c.id).where(
            nodes.c.cluster_id == cluster_id,
            nodes.c.provider_id == provider_id,
            nodes.c.deleted_at.is_(None),
        )
    ).first()
    return None if row is None else node_repo.get_node(conn, row.id)
