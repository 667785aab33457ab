"""What the database says about the whole installation, for the metrics scrape (issue 27).

A handful of grouped counts, read in one read-only transaction: actions waiting and running,
the oldest waiting, actions past their lease, nodes, clusters, deployments and software
rollouts by status, and the manager lease. Group keys are statuses and kinds, never ids. Nodes
and deployments are read from the counts the database keeps as they change
(`store/counts.py`), so a scrape costs the same at 200,000 nodes as at 1,000.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, Connection, func, select

from shoal.model.enums import ActionStatus
from shoal.store import counts as counted
from shoal.store.counts import Counted
from shoal.store.database import Database
from shoal.store.tables import actions, clusters, leases, software_rollouts


@dataclass(frozen=True, slots=True)
class Snapshot:
    actions: dict[tuple[str, str], int] = field(default_factory=dict)
    """(kind, status) of actions not ended -> count."""
    oldest_ready_at: float | None = None
    """`created_at` of the oldest READY action."""
    lease_expired: int = 0
    """RUNNING actions whose lease ran out (their engine died or hangs)."""
    nodes: dict[tuple[str, str], int] = field(default_factory=dict)
    """(status, project or "") of nodes not deleted -> count."""
    clusters: dict[str, int] = field(default_factory=dict)
    deployments: dict[str, int] = field(default_factory=dict)
    rollouts: dict[str, int] = field(default_factory=dict)
    manager_holder: str | None = None
    """Who holds the manager lease now (None: nobody)."""


_LIVE = [s.value for s in ActionStatus if not s.is_terminal]


def snapshot(conn: Connection, now: float, *, by_project: bool) -> Snapshot:
    acts = {
        (str(k), str(s)): int(n)
        for k, s, n in conn.execute(
            select(actions.c.kind, actions.c.status, func.count())
            .where(actions.c.status.in_(_LIVE))
            .group_by(actions.c.kind, actions.c.status)
        )
    }
    oldest = conn.execute(
        select(func.min(actions.c.created_at)).where(actions.c.status == ActionStatus.READY)
    ).scalar()
    expired = conn.execute(
        select(func.count()).where(
            actions.c.status == ActionStatus.RUNNING, actions.c.lease_expires_at < now
        )
    ).scalar()
    # Kept by the database as nodes change (issue 37), not counted over every node here.
    node_counts = counted.by_status(conn, Counted.NODE, by_project=by_project)

    def by(col: ColumnElement[str], *where: ColumnElement[bool]) -> dict[str, int]:
        q = select(col, func.count()).where(*where).group_by(col)
        return {str(k): int(n) for k, n in conn.execute(q)}

    holder = conn.execute(
        select(leases.c.holder).where(leases.c.name == "manager", leases.c.expires_at >= now)
    ).scalar()
    return Snapshot(
        actions=acts,
        oldest_ready_at=float(oldest) if oldest is not None else None,
        lease_expired=int(expired or 0),
        nodes=node_counts,
        clusters=by(clusters.c.status, clusters.c.deleted_at.is_(None)),
        deployments={
            s: n
            for (s, _), n in counted.by_status(conn, Counted.DEPLOYMENT, by_project=False).items()
        },
        rollouts=by(software_rollouts.c.phase),
        manager_holder=str(holder) if holder else None,
    )


@dataclass(frozen=True, slots=True)
class PoolUse:
    size: int
    checked_out: int


def pool_use(db: Database) -> PoolUse:
    """The connection pool's size and the connections lent out now (0, 0: no such pool)."""
    pool = db.engine.pool
    size = getattr(pool, "size", None)
    out = getattr(pool, "checkedout", None)
    return PoolUse(
        int(size()) if callable(size) else 0,
        int(out()) if callable(out) else 0,
    )
