"""`GET /v1/clusters/{ref}/workloads` and `shoal workloads` (issue 22): a cluster's replicas,
where each runs and whether it is ready, a page at a time (a cluster may hold 100,000), and
each workload's rolling update (at most one row per workload, so all of them on every page),
with its batch in flight and the surge replicas running beside it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from shoal.service.errors import NotFound
from shoal.service.views import iso
from shoal.store import clusters as cluster_repo
from shoal.store import workload_rollouts as rollout_repo
from shoal.store import workloads as replica_repo
from shoal.store.database import Database
from shoal.store.records import Principal
from shoal.store.workload_rollouts import RolloutRow

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
        rows = replica_repo.page(conn, c.id, limit + 1, after, standing=True)
        rolls = rollout_repo.of_cluster(conn, c.id)
        declared = _declared(c.document)
        maybe = [name for r in rolls for name in _surge_names(r.workload, declared)]
        surging = rollout_repo.present(conn, c.id, maybe)
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
                "started_at": iso(r.started_at),
                "revision": r.revision,
            }
            for r in rows
        ],
        "rollouts": [_rollout_view(r, declared, surging) for r in rolls],
        "next": rows[-1].replica if more and rows else None,
    }


@dataclass(frozen=True, slots=True)
class _Declared:
    """What the views need of a workload's stored declaration: its count and update bounds
    (the defaults when the stored document does not say)."""

    replicas: int = 0
    max_unavailable: int = 1
    max_surge: int = 1


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _declared(document: Mapping[str, Any]) -> dict[str, _Declared]:
    """Each workload's count and update bounds, from the stored (native, validated) document."""
    found = document.get("workloads")
    if not isinstance(found, Mapping):
        return {}
    out: dict[str, _Declared] = {}
    for name, body in found.items():
        if not isinstance(body, Mapping):
            continue
        update = body.get("update")
        update = update if isinstance(update, Mapping) else {}
        out[str(name)] = _Declared(
            _int(body.get("replicas"), 0),
            _int(update.get("max_unavailable"), 1),
            _int(update.get("max_surge"), 1),
        )
    return out


def _surge_names(workload: str, declared: Mapping[str, _Declared]) -> list[str]:
    """The names a rollout's surge replicas take (engine/workload_rollouts.py `surged`)."""
    d = declared.get(workload)
    if d is None:
        return []
    return [f"{workload}-{d.replicas + i}" for i in range(1, d.max_surge + 1)]


def _rollout_view(
    r: RolloutRow, declared: Mapping[str, _Declared], surging: set[str]
) -> dict[str, Any]:
    """A workload's rollout: phase, revisions, the batch in flight, the surge replicas running
    beside it (issue 22, items 2 and 4) and a one-line summary."""
    d = declared.get(r.workload, _Declared())
    surge = [x for x in _surge_names(r.workload, declared) if x in surging]
    return {
        "workload": r.workload,
        "phase": r.phase.value,
        "revision": r.target.revision,
        "images": [c.image for c in r.target.containers],
        "previous_revision": None if r.previous is None else r.previous.revision,
        "batches": r.batches,
        "batch": list(r.batch),
        "batch_started_at": iso(r.batch_started_at),
        "surge": surge,
        "max_unavailable": d.max_unavailable,
        "max_surge": d.max_surge,
        "reason": r.reason,
        "started_at": iso(r.started_at),
        "summary": _summary(r, surge),
    }


def _summary(r: RolloutRow, surge: list[str]) -> str:
    """The rollout in a line, for the CLI and the dashboard."""
    text = f"{r.phase.value.lower().replace('_', ' ')} to {r.target.revision[:8]}"
    if r.batches:
        text += f", batch {r.batches}"
    if r.batch:
        text += f" ({', '.join(r.batch)})"
    if surge:
        text += f", {len(surge)} surge"
    if r.reason:
        text += f": {r.reason}"
    return text
