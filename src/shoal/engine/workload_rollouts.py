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
networking), so a second copy on the same server could not bind them. `max_surge` is honoured
on *other* servers instead: while a workload rolls forward, the keeper asks the second-level
solver for `max_surge` extra replicas (`NAME-(N+1)`.. `NAME-(N+S)`, see `surge_of`) under every
rule, started on the new revision; each ready surge replica lets one more old replica be
replaced in the same batch, so a batch is `max_unavailable` + ready surge replicas, fewer while
others are not ready, and the workload's ready count never drops below replicas −
max_unavailable. The surge replicas are stopped once the rollout ends (complete or rolling
back). When the solver finds no room for them (anti-affinity over as many hosts as replicas),
the rollout goes on in place with batches of `max_unavailable` (or `max_surge` when that is
0), and an event says so.
"""

from __future__ import annotations

import hashlib
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
    """A batch without surge replicas (in place only)."""
    return max(1, w.update.max_unavailable or w.update.max_surge)


def surge_of(w: Workload, r: RolloutRow | None) -> int:
    """How many surge replicas the workload runs now beside its count: `max_surge` while it
    rolls forward, none otherwise (a rollback replaces in place: the surge replicas run the
    revision that failed)."""
    if r is None or r.phase is not WorkloadPhase.ROLLING or w.replicas == 0:
        return 0
    return w.update.max_surge


def surged(w: Workload, surge: int) -> Workload:
    """The workload as the solver places it during a rollout: its replicas and `surge` more
    (`NAME-(N+1)`..), under the same rules, so surge replicas land only where the rules let a
    replica go."""
    return w if surge <= 0 else replace(w, replicas=w.replicas + surge)


def is_surge(w: Workload, replica: str) -> bool:
    """Whether `replica` is one of `w`'s surge replicas (beyond its declared count)."""
    prefix = f"{w.name}-"
    if not replica.startswith(prefix):
        return False
    index = replica[len(prefix) :]
    return index.isdigit() and int(index) > w.replicas


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


def rendered(w: Workload, salt: str) -> ReplicaTemplate:
    """The workload's template with what its env read from members (`salt`, a digest of those
    values; engine/workload_members.py) folded into its revision: when the members it names
    come and go, its revision moves and it rolls, as a node group's deployments re-run."""
    tmpl = replica_template(w)
    if not salt:
        return tmpl
    digest = hashlib.sha256(f"{tmpl.revision}\0{salt}".encode()).hexdigest()[:16]
    return ReplicaTemplate(digest, tmpl.containers)


def begin(
    cluster: ClusterRecord,
    w: Workload,
    rollout: RolloutRow | None,
    now: float,
    out: StepOut,
    *,
    salt: str = "",
    members: tuple[str, ...] = (),
    outputs: tuple[str, ...] = (),
) -> tuple[RolloutRow, bool]:
    """The workload's rollout after reading the document (and, with `salt`, the members and
    deployment outputs its env reads): a new one when its template changed. Returns the row and
    whether it changed."""
    tmpl = rendered(w, salt)
    if rollout is None:  # the first replicas run the document's template: nothing to roll
        return RolloutRow(cluster.id, w.name, WorkloadPhase.COMPLETE, tmpl, None, now), True
    if rollout.target.revision == tmpl.revision:
        return rollout, False
    sourced = bool(members or outputs) and tmpl.containers == rollout.target.containers
    if rollout.phase is WorkloadPhase.ROLLED_BACK and sourced:
        # Only the members or outputs its env reads moved: the template that failed is not
        # tried again for that (the document must change); the replicas stay on the previous.
        return rollout, False
    # Roll from what last ran whole (a rollout replaced mid-way rolls from its own start).
    stable = (
        rollout.target
        if rollout.phase is WorkloadPhase.COMPLETE
        else (rollout.previous or rollout.target)
    )
    why = ""
    if sourced:
        read = [f"the ready members of {', '.join(members)}"] if members else []
        read += [f"the outputs {', '.join(outputs)}"] if outputs else []
        why = f" ({' or '.join(read)} changed)"
    surge = f", {w.update.max_surge} surge" if w.update.max_surge else ""
    out.events.append(
        cluster_event(
            cluster,
            "WORKLOAD",
            f"workload {w.name}: rolling update from revision {stable.revision} to "
            f"{tmpl.revision}{why}, {batch_size(w)} replica(s) at a time{surge}",
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
    place with what it saves; surge replicas among them when the keeper placed some: they run
    the goal already, and each ready one widens the batch by one); returns the rollout row as it
    now stands."""
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
    stale = sorted(
        x for x, row in rows.items() if row.revision != goal.revision and not is_surge(w, x)
    )
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
    # Replicas already down cost no availability; the others fit the batch's budget, widened
    # by each ready surge replica (it stands in for one replica being replaced).
    surges = {x: row for x, row in rows.items() if is_surge(w, x)}
    surge_up = sum(1 for row in surges.values() if row.ready and row.revision == goal.revision)
    if surges:
        # Surge replicas stand in for the replicas a batch takes down: with max_unavailable 0,
        # nothing goes down until one reads ready. One that never started (the runtime refused
        # the new template) or stays unready past the deadline fails the rollout.
        size = w.update.max_unavailable + surge_up
        if size == 0 and r.phase is WorkloadPhase.ROLLING:
            never = sorted(x for x, row in surges.items() if row.started_at is None)
            since = r.batch_started_at if r.batch_started_at is not None else r.started_at
            if never:
                return _fail(cluster, r, f"surge replica {never[0]} could not start", out)
            if now - since >= PROGRESS_DEADLINE_S:
                return _fail(
                    cluster,
                    r,
                    f"no surge replica ready {PROGRESS_DEADLINE_S:.0f} s into the rollout",
                    out,
                )
    else:  # in place (no room for surge replicas): `max_surge` may stand for the batch
        size = batch_size(w)
    down_fresh = sum(
        1 for x, row in rows.items() if not row.ready and x not in stale and not is_surge(w, x)
    )
    down_stale = [x for x in stale if not rows[x].ready]
    up_stale = [x for x in stale if rows[x].ready]
    budget = size - down_fresh - len(down_stale)
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
    beside = f" ({surge_up} surge replica(s) ready beside it)" if surge_up else ""
    out.events.append(
        cluster_event(
            cluster,
            "WORKLOAD",
            f"workload {w.name}: {verb} batch {r.batches} to revision {goal.revision}: "
            + ", ".join(started)
            + beside,
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
