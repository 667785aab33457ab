"""Workloads' replicas as rows (issue 22): which node each runs on, whether it is ready, its
restart back-off and what its probes saw since its last start. The engine's keeper
(engine/workloads.py) reads every row of the clusters it manages in one query per tick and
writes only the rows that changed; the API lists them a page at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, exists, insert, select

from shoal.store.cells import integer, real_or_none
from shoal.store.tables import clusters, nodes, workload_replicas, workload_rollouts

_t = workload_replicas.c
_GONE = ("DELETING", "DELETED")
"""Statuses of a node that is gone, or going: its replicas are not listed."""
_LIVE = ("ACTIVE", "WARNING")
"""Statuses of a node whose replicas may read ready."""


@dataclass(frozen=True, slots=True)
class ProbeCount:
    """What one probe of one container saw (engine/workload_probes.py)."""

    container: str
    liveness: bool
    failures: int
    """Consecutive failures (a pass resets them; counted up to the probe's threshold)."""
    ok: bool
    """A readiness probe's verdict: passed last time it decided (unused for liveness)."""
    last: bool | None
    """The last result (None: not probed since the start)."""


@dataclass(frozen=True, slots=True)
class ProbeState:
    """A replica's probes since its start at `started_at` (a row restarted since carries a
    state of an older start, which the keeper ignores)."""

    started_at: float
    checks: tuple[ProbeCount, ...]


def probes_json(p: ProbeState) -> str:
    return json.dumps(
        {
            "at": p.started_at,
            "checks": [[c.container, c.liveness, c.failures, c.ok, c.last] for c in p.checks],
        },
        separators=(",", ":"),
    )


def probes_of(text: object) -> ProbeState | None:
    """The stored state, or None (none stored, or not readable: the probes start over)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        raw = json.loads(text)
        return ProbeState(
            float(raw["at"]),
            tuple(
                ProbeCount(str(c), bool(lv), int(f), bool(ok), None if last is None else bool(last))
                for c, lv, f, ok, last in raw["checks"]
            ),
        )
    except (ValueError, TypeError, KeyError):
        return None


@dataclass(frozen=True, slots=True)
class ReplicaRow:
    cluster_id: str
    replica: str
    workload: str
    node: str
    ready: bool
    restarts: int = 0
    not_before: float | None = None
    """When a restart of its exited container may run (None: running, nothing to wait for)."""
    started_at: float | None = None
    revision: str | None = None
    """The template revision its containers run (None: written before rollouts existed)."""
    probes: ProbeState | None = None
    """What its probes saw (None: never probed, or written before probes were kept)."""


def _row(r: Sequence[object]) -> ReplicaRow:
    return ReplicaRow(
        str(r[0]),
        str(r[1]),
        str(r[2]),
        str(r[3]),
        bool(r[4]),
        integer(r[5]),
        real_or_none(r[6]),
        real_or_none(r[7]),
        None if r[8] is None else str(r[8]),
        probes_of(r[9]),
    )


_COLUMNS = (
    _t.cluster_id,
    _t.replica,
    _t.workload,
    _t.node,
    _t.ready,
    _t.restarts,
    _t.not_before,
    _t.started_at,
    _t.revision,
    _t.probes,
)


def load(conn: Connection, cluster_ids: Iterable[str]) -> dict[str, dict[str, ReplicaRow]]:
    """Every replica of these clusters: cluster id -> replica name -> row."""
    ids = list(cluster_ids)
    found: dict[str, dict[str, ReplicaRow]] = {c: {} for c in ids}
    if not ids:
        return found
    for r in conn.execute(select(*_COLUMNS).where(_t.cluster_id.in_(ids))):
        row = _row(tuple(r))
        found[row.cluster_id][row.replica] = row
    return found


def clusters_with_rows(conn: Connection, cluster_ids: Sequence[str]) -> set[str]:
    """Of these clusters, those with any replica row (bounded IN lists)."""
    found: set[str] = set()
    for i in range(0, len(cluster_ids), 500):
        part = list(cluster_ids[i : i + 500])
        q = select(_t.cluster_id).where(_t.cluster_id.in_(part)).distinct()
        found.update(str(r[0]) for r in conn.execute(q))
    return found


def listed(
    conn: Connection, cluster_id: str, limit: int, after: str | None
) -> list[tuple[ReplicaRow, bool]]:
    """What the views list (issue 36): up to `limit` replicas of a cluster ordered by name after
    `after`, each with whether its node is live (ACTIVE or WARNING). A replica whose node is
    gone (no row, deleted, or being deleted) is not listed: until the keeper moves or drops it,
    it runs nowhere anyone could reach."""
    n = nodes.c
    there = select(n.id).where(
        n.cluster_id == cluster_id,
        n.name == _t.node,
        n.deleted_at.is_(None),
        n.status.not_in(_GONE),
    )
    live = there.where(n.status.in_(_LIVE))
    q = select(*_COLUMNS, exists(live).label("live")).where(
        _t.cluster_id == cluster_id, exists(there)
    )
    if after is not None:
        q = q.where(_t.replica > after)
    return [
        (_row(tuple(r)[:-1]), bool(r[-1]))
        for r in conn.execute(q.order_by(_t.replica).limit(limit))
    ]


def save(conn: Connection, rows: Sequence[ReplicaRow], now: float) -> None:
    """Write these rows (made or replaced)."""
    if not rows:
        return
    forget(conn, [(r.cluster_id, r.replica) for r in rows])
    conn.execute(
        insert(workload_replicas),
        [
            {
                "cluster_id": r.cluster_id,
                "replica": r.replica,
                "workload": r.workload,
                "node": r.node,
                "ready": r.ready,
                "restarts": r.restarts,
                "not_before": r.not_before,
                "started_at": r.started_at,
                "revision": r.revision,
                "probes": None if r.probes is None else probes_json(r.probes),
                "updated_at": now,
            }
            for r in rows
        ],
    )


def forget(conn: Connection, keys: Sequence[tuple[str, str]]) -> None:
    """Drop these (cluster id, replica) rows."""
    by_cluster: dict[str, list[str]] = {}
    for cluster_id, replica in keys:
        by_cluster.setdefault(cluster_id, []).append(replica)
    for cluster_id, replicas in by_cluster.items():
        for i in range(0, len(replicas), 500):  # bounded IN lists
            conn.execute(
                delete(workload_replicas).where(
                    _t.cluster_id == cluster_id, _t.replica.in_(replicas[i : i + 500])
                )
            )


def drop_orphans(conn: Connection) -> None:
    """Rows of clusters that no longer exist (deleted while the keeper was not looking)."""
    live = select(clusters.c.id).where(clusters.c.deleted_at.is_(None))
    conn.execute(delete(workload_replicas).where(_t.cluster_id.not_in(live)))
    conn.execute(delete(workload_rollouts).where(workload_rollouts.c.cluster_id.not_in(live)))
