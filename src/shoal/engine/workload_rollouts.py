"""Rolling updates of workloads (issue 22, item 4), one step per manager tick.

When a workload's template (image, command, args, env, ports) changes in the document, the
keeper (engine/workloads.py) calls `step` each tick: the replicas still on another revision are
replaced on their own servers a batch at a time, and the next batch starts only when every
replica of the previous one reads ready. A batch that fails (the runtime refuses the new
template, or a replica is not ready within `PROGRESS_DEADLINE_S`) turns the rollout into a
rollback: the replicas move back to the previous template the same way, and the document's
revision is not tried again until the document changes. Each step is persisted as a typed
row (store/workload_rollouts.py) with the replicas' revisions, so an engine restart resumes it.

Replicas are replaced in place: containers use their server's address and ports (host
networking), so a surge replica on the same server could not bind them. A batch is
`max_unavailable` replicas (or `max_surge` when that is 0), fewer while others are not ready.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from shoal.engine.events import cluster_event
from shoal.model.workload_rollouts import ReplicaTemplate, WorkloadPhase, replica_template
from shoal.model.workloads import Workload
from shoal.providers.errors import ProviderError
from shoal.providers.replicas import ReplicaRuntime, ReplicaState
from shoal.store.events import NewEvent
from shoal.store.records import ClusterRecord, NodeRecord
from shoal.store.workload_rollouts import RolloutRow
from shoal.store.workloads import ReplicaRow

log = logging.getLogger("shoal.workloads")

PROGRESS_DEADLINE_S = 60.0
"""A replica of a batch not ready this long after its update fails the rollout (Kubernetes'
progressDeadlineSeconds is 600 s for a whole rollout; here it is per batch)."""


@dataclass(slots=True)
class StepOut:
    """What one step decided: rows and events to write (the keeper writes them in its
    transaction)."""

    rows: list[ReplicaRow] = field(default_factory=list)
    events: list[NewEvent] = field(default_factory=list)


def batch_size(w: Workload) -> int:
    return max(1, w.update.max_unavailable or w.update.max_surge)


def goal_of(r: RolloutRow) -> ReplicaTemplate:
    """The template replicas should run now (new replicas and restarts too)."""
    if r.phase in (WorkloadPhase.ROLLING_BACK, WorkloadPhase.ROLLED_BACK) and r.previous:
        return r.previous
    return r.target


def template_for(r: RolloutRow, revision: str | None) -> ReplicaTemplate:
    """The template a replica on `revision` restarts with: while rolling forward, its own (a
    later batch moves it); once a rollback began, the previous template for every replica."""
    if r.phase in (WorkloadPhase.ROLLING_BACK, WorkloadPhase.ROLLED_BACK):
        return goal_of(r)
    if r.previous is not None and revision == r.previous.revision:
        return r.previous
    if revision == r.target.revision:
        return r.target
    return goal_of(r)


def begin(
    cluster: ClusterRecord, w: Workload, rollout: RolloutRow | None, now: float, out: StepOut
) -> tuple[RolloutRow, bool]:
    """The workload's rollout after reading the document: a new one when its template changed.
    Returns the row and whether it changed."""
    tmpl = replica_template(w)
    if rollout is None:  # the first replicas run the document's template: nothing to roll
        return RolloutRow(cluster.id, w.name, WorkloadPhase.COMPLETE, tmpl, None, now), True
    if rollout.target.revision == tmpl.revision:
        return rollout, False
    # Roll from what last ran whole (a rollout replaced mid-way rolls from its own start).
    stable = (
        rollout.target
        if rollout.phase is WorkloadPhase.COMPLETE
        else (rollout.previous or rollout.target)
    )
    out.events.append(
        cluster_event(
            cluster,
            "WORKLOAD",
            f"workload {w.name}: rolling update from revision {stable.revision} to "
            f"{tmpl.revision}, {batch_size(w)} replica(s) at a time",
        )
    )
    return RolloutRow(cluster.id, w.name, WorkloadPhase.ROLLING, tmpl, stable, now), True


async def step(
    runtime: ReplicaRuntime,
    cluster: ClusterRecord,
    w: Workload,
    r: RolloutRow,
    rows: dict[str, ReplicaRow],
    states: dict[str, ReplicaState],
    live: dict[str, NodeRecord],
    key_of: dict[str, str],
    now: float,
    out: StepOut,
) -> RolloutRow:
    """One tick of a ROLLING or ROLLING_BACK rollout over the workload's `rows` (updated in
    place with what it saves); returns the rollout row as it now stands."""
    if r.phase not in (WorkloadPhase.ROLLING, WorkloadPhase.ROLLING_BACK):
        return r
    goal = goal_of(r)
    if r.batch:
        waiting = [
            x
            for x in r.batch
            if x in rows
            and (
                not rows[x].ready
                or states.get(key_of[x], ReplicaState.RUNNING) is not ReplicaState.RUNNING
            )
        ]
        if waiting:
            late = (
                r.batch_started_at is not None and now - r.batch_started_at >= PROGRESS_DEADLINE_S
            )
            if not late:
                return r
            if r.phase is WorkloadPhase.ROLLING:
                return _fail(
                    cluster,
                    r,
                    f"replica {waiting[0]} not ready {PROGRESS_DEADLINE_S:.0f} s after its update",
                    out,
                )
        r = replace(r, batch=(), batch_started_at=None)
    stale = sorted(x for x, row in rows.items() if row.revision != goal.revision)
    if not stale:
        done = (
            WorkloadPhase.COMPLETE
            if r.phase is WorkloadPhase.ROLLING
            else WorkloadPhase.ROLLED_BACK
        )
        what = "complete" if done is WorkloadPhase.COMPLETE else "rolled back"
        out.events.append(
            cluster_event(
                cluster,
                "WORKLOAD",
                f"workload {w.name}: rolling update to revision {goal.revision} {what} "
                f"({r.batches} batches)",
            )
        )
        return replace(r, phase=done, batch=(), batch_started_at=None)
    # Replicas already down cost no availability; the others fit the batch's budget.
    down_fresh = sum(1 for x, row in rows.items() if not row.ready and x not in stale)
    down_stale = [x for x in stale if not rows[x].ready]
    up_stale = [x for x in stale if rows[x].ready]
    budget = batch_size(w) - down_fresh - len(down_stale)
    batch = down_stale + up_stale[: max(0, budget)]
    batch = [x for x in batch if rows[x].node in live]  # the homeless are placed with `goal`
    if not batch:
        return r
    started: list[str] = []
    for x in batch:
        row = rows[x]
        server = live[row.node]
        assert server.provider_id is not None
        await runtime.stop_replica(key_of[x])
        try:
            await runtime.start_replica(key_of[x], server.provider_id, goal)
        except ProviderError as e:
            failed = replace(row, ready=False, revision=goal.revision, not_before=None)
            if r.phase is WorkloadPhase.ROLLING:
                rows[x] = failed
                out.rows.append(failed)
                return _fail(cluster, r, f"replica {x} on {row.node}: {e}", out)
            log.warning("rollback of %s on %s: %s; trying again next tick", x, row.node, e)
            failed = replace(row, ready=False)
            rows[x] = failed
            out.rows.append(failed)
            continue
        rows[x] = replace(row, revision=goal.revision, ready=True, started_at=now, not_before=None)
        out.rows.append(rows[x])
        started.append(x)
    if not started:
        return r
    r = replace(r, batch=tuple(started), batch_started_at=now, batches=r.batches + 1)
    verb = "rolling" if r.phase is WorkloadPhase.ROLLING else "rolling back"
    out.events.append(
        cluster_event(
            cluster,
            "WORKLOAD",
            f"workload {w.name}: {verb} batch {r.batches} to revision {goal.revision}: "
            + ", ".join(started),
        )
    )
    return r


def _fail(cluster: ClusterRecord, r: RolloutRow, reason: str, out: StepOut) -> RolloutRow:
    back = r.previous.revision if r.previous else r.target.revision
    out.events.append(
        cluster_event(
            cluster,
            "WORKLOAD",
            f"workload {r.workload}: rolling update to revision {r.target.revision} failed "
            f"({reason}); rolling back to {back}",
            level="WARNING",
        )
    )
    return replace(
        r,
        phase=WorkloadPhase.ROLLING_BACK,
        reason=reason,
        batch=(),
        batch_started_at=None,
        batches=0,
    )
