"""`GET /v1/clusters/{ref}/workloads` and `shoal workloads` (issue 22): a cluster's replicas,
where each runs and whether it is ready, a page at a time (a cluster may hold 100,000), and
each workload's rolling update (at most one row per workload, so all of them on every page)."""

from __future__ import annotations

from typing import Any

from shoal.service.errors import NotFound
from shoal.store import clusters as cluster_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import Principal

MAX_PAGE = 10_000


def replicas(
    db: Database, who: Principal, ref: str, limit: int, after: str | None
) -> dict[str, Any]:
    """Up to `limit` (1..MAX_PAGE, checked at the edge) replicas ordered by name after `after`,
    and `next`: the marker of the following page (None on the last)."""
    with db.reading() as conn:
        c = cluster_repo.get_cluster(conn, ref, None if who.is_admin else who.project_id)
        if c is None:
            raise NotFound(f"no cluster {ref!r}")
        rows = replica_repo.page(conn, c.id, limit + 1, after)
        rolls = rollout_repo.of_cluster(conn, c.id)
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "cluster": c.name,
        "replicas": [
            {
                "replica": r.replica,
                "workload": r.workload,
                "node": r.node,
                "ready": r.ready,
                "restarts": r.restarts,
                "started_at": r.started_at,
                "revision": r.revision,
            }
            for r in rows
        ],
        "rollouts": [
            {
                "workload": r.workload,
                "phase": r.phase.value,
                "revision": r.target.revision,
                "images": [c.image for c in r.target.containers],
                "previous_revision": None if r.previous is None else r.previous.revision,
                "batches": r.batches,
                "batch": list(r.batch),
                "reason": r.reason,
                "started_at": r.started_at,
            }
            for r in rolls
        ],
        "next": rows[-1].replica if more and rows else None,
    }
