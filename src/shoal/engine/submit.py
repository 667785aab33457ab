"""Actions the engine starts on its own: recoveries decided by health checks and the reconciler.

Like a user's request, a recovery takes the cluster's lock in the transaction that records it;
when another action holds the cluster, nothing is recorded and the manager tries again later.
"""

from __future__ import annotations

import logging
import uuid

from shoal.engine.contracts import ClusterInputs, Repair
from shoal.engine.events import cluster_event
from shoal.model.enums import ActionKind
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store.actions import NewAction
from shoal.store.database import Database
from shoal.store.events import add_events
from shoal.store.records import ClusterRecord
from shoal.telemetry import metrics, requestid

log = logging.getLogger("shoal.manager")


def submit_recover(
    db: Database, cluster: ClusterRecord, repairs: list[Repair], now: float, why: str
) -> str | None:
    """Record a CLUSTER_RECOVER action for `repairs`; None when the cluster is busy."""
    action_id = str(uuid.uuid4())
    # The engine's own work gets a request id of its own (issue 27), to follow it into Nova.
    with requestid.bound(requestid.get() or requestid.new()), db.transaction() as conn:
        if not cluster_repo.try_lock(conn, cluster.id, action_id, now):
            return None
        action_repo.insert_actions(
            conn,
            [
                NewAction(
                    id=action_id,
                    project_id=cluster.project_id,
                    kind=ActionKind.CLUSTER_RECOVER,
                    cluster_id=cluster.id,
                    inputs=ClusterInputs(repairs=tuple(repairs), reason=why).to_json(),
                )
            ],
            now,
        )
        for r in repairs:  # issue 27: repairs by how and why
            metrics.REPAIRS.labels(str(r.how), metrics.repair_reason(r.why)).inc()
        names = ", ".join(f"{r.node} ({r.how})" for r in repairs[:10])
        more = f" and {len(repairs) - 10} more" if len(repairs) > 10 else ""
        log.info("cluster %s: %s: repairing %s%s", cluster.name, why, names, more)
        add_events(
            conn,
            [
                cluster_event(
                    cluster, "RECOVERING", f"{why}: repairing {names}{more}", action_id=action_id
                )
            ],
            now,
        )
    return action_id
