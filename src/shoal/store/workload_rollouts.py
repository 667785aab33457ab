"""Workloads' rolling updates as rows (issue 22, item 4): per workload, the template revision
it runs or rolls to, the previous one to roll back to, the batch in flight and the phase. The
engine (engine/workload_rollouts.py) reads them with the replicas every tick and writes them
when they change, so an engine restart (or a new holder of the manager lease) resumes a
rollout where it stopped; the API shows them beside the replicas. (store/rollouts.py is the
other rolling update: deployments' software.)"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, insert, select

from shoal.model.workload_rollouts import ContainerRun, ReplicaTemplate, WorkloadPhase
from shoal.store.cells import integer, real, real_or_none
from shoal.store.tables import workload_replicas, workload_rollouts

_t = workload_rollouts.c


@dataclass(frozen=True, slots=True)
class RolloutRow:
    cluster_id: str
    workload: str
    phase: WorkloadPhase
    target: ReplicaTemplate
    previous: ReplicaTemplate | None
    started_at: float
    batches: int = 0
    """Batches started so far in this rollout (or rollback)."""
    batch: tuple[str, ...] = ()
    """The replicas of the batch in flight (waiting to read ready)."""
    batch_started_at: float | None = None
    reason: str | None = None
    """Why it rolled back (the runtime's words about the failed replica)."""


def template_json(t: ReplicaTemplate) -> str:
    return json.dumps(
        {
            "revision": t.revision,
            "containers": [
                {
                    "name": c.name,
                    "image": c.image,
                    "command": c.command,
                    "args": c.args,
                    "env": c.env,
                    "cpu_milli": c.cpu_milli,
                    "memory_mb": c.memory_mb,
                }
                for c in t.containers
            ],
        }
    )


def template_of(text: str) -> ReplicaTemplate:
    d = json.loads(text)
    return ReplicaTemplate(
        str(d["revision"]),
        tuple(
            ContainerRun(
                str(c["name"]),
                str(c["image"]),
                tuple(str(x) for x in c["command"]),
                tuple(str(x) for x in c["args"]),
                # (rows written before env and limits were kept have none)
                env=tuple((str(k), str(v)) for k, v in c.get("env", ())),
                cpu_milli=int(c.get("cpu_milli", 0)),
                memory_mb=int(c.get("memory_mb", 0)),
            )
            for c in d["containers"]
        ),
    )


_COLUMNS = (
    _t.cluster_id,
    _t.workload,
    _t.phase,
    _t.template,
    _t.previous_template,
    _t.started_at,
    _t.batches,
    _t.batch,
    _t.batch_started_at,
    _t.reason,
)


def _row(r: Sequence[object]) -> RolloutRow:
    return RolloutRow(
        str(r[0]),
        str(r[1]),
        WorkloadPhase(str(r[2])),
        template_of(str(r[3])),
        None if r[4] is None else template_of(str(r[4])),
        real(r[5]),
        integer(r[6]),
        tuple(str(x) for x in json.loads(str(r[7]))),
        real_or_none(r[8]),
        None if r[9] is None else str(r[9]),
    )


def load(conn: Connection, cluster_ids: Iterable[str]) -> dict[tuple[str, str], RolloutRow]:
    """Every rollout row of these clusters by (cluster id, workload)."""
    ids = list(cluster_ids)
    if not ids:
        return {}
    found: dict[tuple[str, str], RolloutRow] = {}
    for r in conn.execute(select(*_COLUMNS).where(_t.cluster_id.in_(ids))):
        row = _row(tuple(r))
        found[(row.cluster_id, row.workload)] = row
    return found


def of_cluster(conn: Connection, cluster_id: str) -> list[RolloutRow]:
    """A cluster's rollouts by workload name (at most one per workload: 500)."""
    q = select(*_COLUMNS).where(_t.cluster_id == cluster_id).order_by(_t.workload)
    return [_row(tuple(r)) for r in conn.execute(q)]


def save(conn: Connection, rows: Sequence[RolloutRow], now: float) -> None:
    """Write these rows (made or replaced)."""
    if not rows:
        return
    forget(conn, [(r.cluster_id, r.workload) for r in rows])
    conn.execute(
        insert(workload_rollouts),
        [
            {
                "cluster_id": r.cluster_id,
                "workload": r.workload,
                "phase": r.phase.value,
                "revision": r.target.revision,
                "template": template_json(r.target),
                "previous_revision": None if r.previous is None else r.previous.revision,
                "previous_template": None if r.previous is None else template_json(r.previous),
                "batches": r.batches,
                "batch": json.dumps(list(r.batch)),
                "batch_started_at": r.batch_started_at,
                "reason": r.reason,
                "started_at": r.started_at,
                "updated_at": now,
            }
            for r in rows
        ],
    )


def forget(conn: Connection, keys: Sequence[tuple[str, str]]) -> None:
    """Drop these (cluster id, workload) rows."""
    for cluster_id, workload in keys:
        conn.execute(
            delete(workload_rollouts).where(_t.cluster_id == cluster_id, _t.workload == workload)
        )


def present(conn: Connection, cluster_id: str, replicas: Sequence[str]) -> set[str]:
    """Which of these replica names have a row (the views ask for a rollout's surge replicas:
    at most `max_surge` names per workload, so the IN list stays small)."""
    if not replicas:
        return set()
    r = workload_replicas.c
    found: set[str] = set()
    for i in range(0, len(replicas), 500):
        q = select(r.replica).where(
            r.cluster_id == cluster_id, r.replica.in_(list(replicas[i : i + 500]))
        )
        found |= {str(x) for x in conn.execute(q).scalars()}
    return found
