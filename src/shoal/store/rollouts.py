"""Where each deployment's rolling UPDATE stands, per cluster (`model/rollouts.py`).

One row per (cluster, deployment), overwritten as the rollout moves on; the engine holding the
cluster's deployer partition (issue 23) is the only writer, and any engine that takes the
partition over reads it back and goes on from there. The typed state is JSON here only;
`phase` is a column so the health gate can find the rollouts it has to look at without
reading every row.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, insert, select, update

from shoal.model.rollouts import RolloutPhase, SoftwareRollout
from shoal.store.tables import software_rollouts

_t = software_rollouts.c


def for_cluster(conn: Connection, cluster_id: str) -> dict[str, SoftwareRollout]:
    """The cluster's rollouts by deployment name."""
    q = select(_t.state).where(_t.cluster_id == cluster_id).order_by(_t.name)
    found = [SoftwareRollout.from_json(r[0]) for r in conn.execute(q)]
    return {r.deployment: r for r in found}


def in_phase(conn: Connection, phase: RolloutPhase) -> list[tuple[str, SoftwareRollout]]:
    """(cluster id, rollout) of every rollout in `phase`."""
    q = select(_t.cluster_id, _t.state).where(_t.phase == phase.value)
    return [(str(r[0]), SoftwareRollout.from_json(r[1])) for r in conn.execute(q)]


def save(
    conn: Connection, cluster_id: str, rollouts: Sequence[SoftwareRollout], now: float
) -> None:
    """Write these rollouts of one cluster (made or replaced)."""
    if not rollouts:
        return
    names = [r.deployment for r in rollouts]
    have = set(
        conn.execute(
            select(_t.name).where(_t.cluster_id == cluster_id, _t.name.in_(names))
        ).scalars()
    )
    for r in rollouts:
        values = {"phase": r.phase.value, "state": r.to_json(), "updated_at": now}
        if r.deployment in have:
            conn.execute(
                update(software_rollouts)
                .where(_t.cluster_id == cluster_id, _t.name == r.deployment)
                .values(**values)
            )
        else:
            conn.execute(
                insert(software_rollouts).values(cluster_id=cluster_id, name=r.deployment, **values)
            )
