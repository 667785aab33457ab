"""The planning phase of a cluster action: decide, claim under the placement lock, record.

It reads what exists, decides replicas, places the whole request (all or nothing) and diffs,
on a snapshot without the lock; then under the lock checks the cluster did not change and the
new nodes still fit (deciding again there if not) and reserves their capacity per host; then
records the result — node rows holding their host claims, and child actions with their
dependencies — before any provider call. Each step commits whole; an engine dying between them
leaves the action (and what it reserved) to be planned again by whoever claims it next.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from shoal.engine.contracts import (
    AttachInputs,
    BarrierInputs,
    ClusterInputs,
    ClusterOutputs,
    DeleteInputs,
    Finish,
    NodeInputs,
    Repair,
    RollingState,
    StepInputs,
    StepLabel,
    server_group_hint,
)
from shoal.engine.decide import Decision, Unplaceable, decide, node_inputs
from shoal.engine.events import action_event, cluster_event
from shoal.engine.profiles import profile_row
from shoal.engine.settle import declared_nodes, settled_standing, settled_status, standing_of
from shoal.engine.stale import start_rolling
from shoal.gc_pause import collector_paused
from shoal.model.enums import ActionKind, ActionStatus, ClusterStatus, NodeKind, NodeStatus
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, demand_of
from shoal.model.profile import Profile
from shoal.planning import StepKind
from shoal.planning.servergroups import ServerGroups
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store import reservations as reservation_repo
from shoal.store.actions import NewAction
from shoal.store.database import Connection, Database
from shoal.store.events import add_events
from shoal.store.placement import lock_placement
from shoal.store.records import ActionRecord, ClusterRecord, NewNode, NodeChange, NodeRecord
from shoal.store.reservations import Reserved

log = logging.getLogger("shoal.engine")

_BUSY_STATUS = {
    ActionKind.CLUSTER_CREATE: ClusterStatus.CREATING,
    ActionKind.CLUSTER_DELETE: ClusterStatus.DELETING,
    ActionKind.CLUSTER_SCALE_OUT: ClusterStatus.RESIZING,
    ActionKind.CLUSTER_SCALE_IN: ClusterStatus.RESIZING,
    ActionKind.CLUSTER_RESIZE: ClusterStatus.RESIZING,
    ActionKind.CLUSTER_RECOVER: ClusterStatus.RECOVERING,
}


_IN_PLACE = {
    StepKind.RECREATE: ActionKind.NODE_CREATE,
    StepKind.REBOOT: ActionKind.NODE_REBOOT,
    StepKind.REBUILD: ActionKind.NODE_REBUILD,
}


def busy_status(kind: ActionKind) -> ClusterStatus:
    return _BUSY_STATUS.get(kind, ClusterStatus.UPDATING)


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    planned: bool
    empty: bool
    reasons: tuple[str, ...] = ()


def plan_action(
    db: Database,
    action: ActionRecord,
    inventory: Inventory,
    owner: str,
    now: float,
    *,
    stage: tuple[Repair, ...] | None = None,
    retire_first: bool = False,
    rolling: RollingState | None = None,
) -> PlanOutcome:
    """Plan `action` and record its children; a failure to place fails the action.

    With `stage`, plan one more batch of an action already running (a rolling update) and
    store its `rolling` state with it.
    """
    # Issue 23: a 100,000-node plan's million objects live until it returns; collections over
    # them found nothing and were a fifth of the planner's CPU.
    with collector_paused():
        return _plan_action(db, action, inventory, owner, now, stage, retire_first, rolling)


def _plan_action(
    db: Database,
    action: ActionRecord,
    inventory: Inventory,
    owner: str,
    now: float,
    stage: tuple[Repair, ...] | None,
    retire_first: bool,
    rolling: RollingState | None,
) -> PlanOutcome:
    inputs = ClusterInputs.from_json(action.inputs)
    # 1. Decide on a snapshot, without the placement lock: the solve, O(nodes), holds nobody
    # up (issue 23; optimistic, as Nova's placement claims are).
    with db.reading() as conn:
        seen = _snapshot(conn, action, owner, stage)
        guess: Decision | None = None
        if seen is not None:
            try:
                guess = decide(
                    conn, action.kind, inputs, seen[0], seen[1], inventory, stage, retire_first
                )
            except Unplaceable:
                guess = None  # decided again under the lock, which alone may refuse
    # 2. Claim under the lock: the guess stands if the cluster is as it was read and its new
    # nodes still fit beside what every other cluster holds now (a compare-and-set on
    # capacity, O(hosts)); otherwise decide again here, as the lock's holder.
    with db.transaction() as conn:
        lock_placement(conn, db, owner, now)
        current = action_repo.get_action(conn, action.id)
        if current is None or current.owner != owner:
            return PlanOutcome(planned=False, empty=False)
        recorded = ClusterOutputs.from_json(current.outputs)
        if stage is None and recorded.planned:
            return PlanOutcome(planned=False, empty=False)
        assert action.cluster_id is not None
        cluster = cluster_repo.get_cluster(conn, action.cluster_id, include_deleted=True)
        if cluster is None:
            action_repo.set_status(
                conn, action.id, ActionStatus.FAILED, now, reason="cluster is gone"
            )
            return PlanOutcome(planned=False, empty=False, reasons=("cluster is gone",))
        nodes = node_repo.list_nodes(conn, cluster.id)
        decision = guess
        # What the guess's new nodes take, per host: counted once, for the check and the
        # claims (issue 23: it was counted twice, node by node).
        held = (
            _held_by_host(decision)
            if decision is not None and seen is not None and _unchanged(seen, cluster, nodes)
            else None
        )
        if decision is None or held is None or not _fits(conn, cluster, nodes, held, inventory):
            try:
                decision = decide(
                    conn, action.kind, inputs, cluster, nodes, inventory, stage, retire_first
                )
            except Unplaceable as e:
                if stage is not None:
                    return PlanOutcome(planned=False, empty=False, reasons=e.reasons)
                _fail_planning(conn, action, cluster, e.reasons, now)
                return PlanOutcome(planned=False, empty=False, reasons=e.reasons)
            held = _held_by_host(decision)
        if held:
            # The claims, per host, replace whatever admission reserved; the lock is let go
            # here, before the node rows (100,000 of them take seconds to write).
            reservation_repo.release(conn, action.id)
            reservation_repo.reserve(conn, action.id, cluster.id, cluster.project_id, held)
    # 3. Record the plan: node rows (they take over the claims), children, status.
    with db.transaction() as conn:
        current = action_repo.get_action(conn, action.id)
        if current is None or current.owner != owner:
            return PlanOutcome(planned=False, empty=False)  # the next owner plans again
        recorded = ClusterOutputs.from_json(current.outputs)
        if stage is None and recorded.planned:
            return PlanOutcome(planned=False, empty=False)
        # From here the node rows hold the claims reserved above (or by admission).
        reservation_repo.release(conn, action.id)
        by_name = _apply_renames(conn, nodes, decision.renames, now)
        children = _record_plan(conn, action, cluster, decision, by_name, now)
        summary = decision.plan.summary()
        if stage is not None:
            outputs = dataclasses.replace(recorded, rolling=rolling or recorded.rolling)
        else:
            outputs = dataclasses.replace(
                ClusterOutputs.from_json(action.outputs),
                planned=True,
                plan=summary,
                rolling=start_rolling(cluster, nodes, inventory, action),
            )
        action_repo.set_status(
            conn, action.id, ActionStatus.RUNNING, now, outputs=outputs.to_json(), owner=owner
        )
        status = busy_status(action.kind)
        text = ", ".join(f"{v} {k}" for k, v in summary.items() if v) or "nothing to do"
        # The busy status says what replaced the last explanation, rather than wiping it.
        doing = f"{action.kind}: plan {text}"
        cluster_repo.set_status(conn, cluster.id, status, doing, now)
        add_events(
            conn,
            [
                cluster_event(cluster, status, doing, action_id=action.id),
                action_event(action, "RUNNING", f"planned {len(children)} steps: {text}"),
            ],
            now,
        )
        return PlanOutcome(planned=True, empty=decision.plan.empty)


_Seen = tuple[ClusterRecord, list[NodeRecord]]


def _snapshot(
    conn: Connection, action: ActionRecord, owner: str, stage: tuple[Repair, ...] | None
) -> _Seen | None:
    """The cluster and its nodes as the guess reads them; None when there is nothing to
    guess (not ours, planned already, no cluster: the locked phase says so)."""
    current = action_repo.get_action(conn, action.id)
    if current is None or current.owner != owner or action.cluster_id is None:
        return None
    if stage is None and ClusterOutputs.from_json(current.outputs).planned:
        return None
    cluster = cluster_repo.get_cluster(conn, action.cluster_id, include_deleted=True)
    if cluster is None:
        return None
    return cluster, node_repo.list_nodes(conn, cluster.id)


def _unchanged(seen: _Seen, cluster: ClusterRecord, nodes: list[NodeRecord]) -> bool:
    """The cluster as the guess read it: its document and every node's name, host, status."""
    before, was = seen
    if before.generation != cluster.generation or before.document != cluster.document:
        return False
    if len(was) != len(nodes):
        return False
    return all(
        (a.id, a.name, a.host, a.status) == (b.id, b.name, b.host, b.status)
        for a, b in zip(was, nodes, strict=True)
    )


def _held_by_host(decision: Decision) -> list[Reserved]:
    """What the plan's new nodes take, host by host."""
    # Counted per host and demand, then added up in plain ints: issue 23, a Demand made and
    # added per node (100,000 of them) cost more than the rest of the count. Groups have
    # profiles of their own (equal or not): their demands are told apart by value.
    demand_by_profile: dict[int, tuple[Profile, Demand]] = {}
    distinct: dict[Demand, Demand] = {}
    counts: dict[tuple[str, int], int] = {}
    for step in decision.plan.steps:
        spec = step.spec
        if step.kind is not StepKind.CREATE or spec is None or step.host is None:
            continue
        hit = demand_by_profile.get(id(spec.profile))
        if hit is None or hit[0] is not spec.profile:
            demand = demand_of(spec.profile)
            hit = demand_by_profile[id(spec.profile)] = (
                spec.profile,
                distinct.setdefault(demand, demand),
            )
        key = (step.host, id(hit[1]))
        counts[key] = counts.get(key, 0) + 1
    demands = {id(d): d for d in distinct}
    sums: dict[str, list[int]] = {}
    for (host, did), n in counts.items():
        d = demands[did]
        add = (n, d.vcpus * n, d.ram_mb * n, d.disk_gb * n, d.volume_gb * n)
        total = sums.get(host)
        if total is None:
            sums[host] = list(add)
        else:
            for i, v in enumerate(add):
                total[i] += v
    return [
        Reserved(host, t[0], Demand(t[1], t[2], t[3], t[4])) for host, t in sorted(sums.items())
    ]


def _fits(
    conn: Connection,
    cluster: ClusterRecord,
    nodes: list[NodeRecord],
    wanted: list[Reserved],
    inventory: Inventory,
) -> bool:
    """Whether the plan's new nodes (`wanted`, per host) fit now: on every host they go to,
    what other clusters hold and reserve, this cluster's nodes (leaving or staying) and the
    new ones, within the host's capacity."""
    if not wanted:
        return True
    used = node_repo.used_capacity(conn, exclude_cluster=cluster.id)
    for n in nodes:
        if n.host:
            used[n.host] = used.get(n.host, Demand()) + Demand(
                n.vcpus, n.ram_mb, n.disk_gb, n.volume_gb
            )
    hosts = {h.name: h for h in inventory.hosts}
    for r in wanted:
        h = hosts.get(r.host)
        if h is None:
            return False
        u = used.get(r.host, Demand()) + r.demand
        if u.vcpus > h.vcpus or u.ram_mb > h.ram_mb or u.disk_gb > h.disk_gb:
            return False
        if u.volume_gb > h.volume_gb:
            return False
    return True


def _apply_renames(
    conn: Connection, nodes: list[NodeRecord], renames: dict[str, str], now: float
) -> dict[str, NodeRecord]:
    """Rename replaced nodes out of the way; the node records by their names after that."""
    by_name = {n.name: n for n in nodes}
    if not renames:
        return by_name
    node_repo.update_nodes(
        conn,
        [
            NodeChange(by_name[old].id, now, name=new, status=NodeStatus.DELETING)
            for old, new in renames.items()
        ],
    )
    for old, new in renames.items():
        by_name[new] = dataclasses.replace(by_name.pop(old), name=new)
    return by_name


def _fail_planning(
    conn: Connection,
    action: ActionRecord,
    cluster: ClusterRecord,
    reasons: tuple[str, ...],
    now: float,
) -> None:
    reason = "cannot place: " + "; ".join(reasons)
    removed = (
        action.kind is ActionKind.CLUSTER_CREATE
        and ClusterInputs.from_json(action.inputs).place_in_engine
    )
    if removed:
        # A create the request did not place (issue 23) ends as a refused one would: the
        # cluster is removed (its name free again), the action says why, no node was written.
        reason = f"cluster {cluster.name} cannot be placed: " + "; ".join(reasons)
    action_repo.set_status(conn, action.id, ActionStatus.FAILED, now, reason=reason)
    reservation_repo.release(conn, action.id)
    if removed:
        new_status = ClusterStatus.DELETED
    elif action.kind is ActionKind.CLUSTER_CREATE:
        new_status = ClusterStatus.ERROR
    else:
        new_status = settled_status(
            node_repo.list_nodes(conn, cluster.id), declared_nodes(cluster.document)
        )[0]
    cluster_repo.set_status(conn, cluster.id, new_status, reason, now)
    cluster_repo.unlock(conn, cluster.id, action.id, now)
    add_events(
        conn,
        [
            cluster_event(cluster, new_status, reason, action_id=action.id, level="ERROR"),
            action_event(action, "FAILED", reason, level="ERROR"),
        ],
        now,
    )


def _record_plan(
    conn: Connection,
    action: ActionRecord,
    cluster: ClusterRecord,
    decision: Decision,
    by_name: dict[str, NodeRecord],
    now: float,
) -> list[NewAction]:
    plan = decision.plan
    node_ids: dict[str, str] = {name: n.id for name, n in by_name.items()}
    new_nodes: list[NewNode] = []
    attach_of = {s.node: s.server for s in plan.of(StepKind.ATTACH) if s.id.startswith("attach:")}
    creates = plan.of(StepKind.CREATE)
    fresh = _new_ids(len(creates) + len(plan.steps))
    # A group's nodes share one profile: its row and demand are made once, not per node
    # (a 100,000-node plan; the rows are only read).
    rows: dict[int, tuple[Profile, dict[str, Any], Demand]] = {}

    def row_of(profile: Profile) -> tuple[dict[str, Any], Demand]:
        hit = rows.get(id(profile))
        if hit is None or hit[0] is not profile:
            hit = rows[id(profile)] = (profile, profile_row(profile), demand_of(profile))
        return hit[1], hit[2]

    for step in creates:
        spec = step.spec
        assert spec is not None
        nid = next(fresh)
        node_ids[spec.name] = nid
        profile, demand = row_of(spec.profile)
        new_nodes.append(
            NewNode(
                id=nid,
                project_id=cluster.project_id,
                name=spec.name,
                kind=spec.kind,
                status=NodeStatus.INIT,
                host=step.host,
                zone=step.zone,
                profile=profile,
                demand=demand,
                created_at=now,
                updated_at=now,
                cluster_id=cluster.id,
                group_name=spec.group,
                part=spec.part,
                replica=spec.replica,
                attach_to=attach_of.get(spec.name),
            )
        )
    node_repo.insert_nodes(conn, new_nodes)
    deleting = [by_name[s.node] for s in plan.of(StepKind.DELETE)]
    node_repo.update_nodes(
        conn,
        [NodeChange(n.id, now, status=NodeStatus.DELETING) for n in deleting]
        + [
            NodeChange(by_name[name].id, now, status=NodeStatus.RECOVERING)
            for name in decision.recovering
        ],
    )
    action_ids = {s.id: next(fresh) for s in plan.steps}
    groups = ServerGroups(decision.spec) if decision.spec is not None else None
    children: list[NewAction] = []
    for s in plan.steps:
        inputs: StepInputs
        node_id: str | None = None
        if s.kind is StepKind.CREATE:
            assert s.spec is not None
            node_id = node_ids[s.node]
            kind = ActionKind.NODE_CREATE
            hint = None
            if groups is not None and s.spec.kind is NodeKind.SERVER:
                hint = server_group_hint(groups.of(s.spec.group, s.spec.part))
            inputs = NodeInputs(
                node=s.node,
                cluster_name=cluster.name,
                kind=s.spec.kind,
                host=s.host,
                zone=s.zone,
                profile=row_of(s.spec.profile)[0],
                server_group=hint,
            )
        elif s.kind is StepKind.DELETE:
            n = by_name[s.node]
            node_id = n.id
            kind = ActionKind.NODE_DELETE
            inputs = DeleteInputs(s.node, cluster.name, n.kind, n.provider_id)
        elif s.kind is StepKind.ATTACH:
            node_id = node_ids[s.node]
            kind = ActionKind.NODE_ATTACH
            assert s.server is not None
            inputs = AttachInputs(s.node, cluster.name, s.server, node_ids[s.server])
        elif s.kind in _IN_PLACE:
            n = by_name[s.node]
            node_id = n.id
            kind = _IN_PLACE[s.kind]
            inputs = node_inputs(n, cluster.name)
            if groups is not None and n.kind is NodeKind.SERVER:
                inputs = inputs.with_server_group(
                    server_group_hint(groups.of(n.group_name, n.part))
                )
        else:
            kind = ActionKind.BARRIER
            inputs = BarrierInputs(s.node, cluster.name)
        children.append(
            NewAction(
                id=action_ids[s.id],
                project_id=cluster.project_id,
                kind=kind,
                cluster_id=cluster.id,
                node_id=node_id,
                parent_id=action.id,
                inputs=inputs.to_json(),
                depends_on=[action_ids[d] for d in s.depends_on],
            )
        )
    action_repo.insert_actions(conn, children, now)
    return children


def _new_ids(count: int) -> Iterator[str]:
    """`count` random (version 4) UUIDs, from one read of the system's random source rather
    than one per id."""
    pool = bytearray(os.urandom(16 * count))
    for i in range(0, 16 * count, 16):
        # uuid.UUID's checks, for each of a plan's ids, cost more than the rest of this: the
        # version and variant bits are set here, the text is str(UUID(..., version=4))'s.
        pool[i + 6] = (pool[i + 6] & 0x0F) | 0x40
        pool[i + 8] = (pool[i + 8] & 0x3F) | 0x80
        h = pool[i : i + 16].hex()
        yield f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def finish_action(db: Database, action_id: str, owner: str, now: float) -> Finish:
    """Close a planned cluster action whose children are all done.

    PENDING while some still run; NEXT_STAGE when a rolling update has more to do; else CLOSED
    (with its final status recorded).
    """
    with db.transaction() as conn:
        action = action_repo.get_action(conn, action_id)
        if action is None or action.owner != owner or action.status.is_terminal:
            return Finish.PENDING
        if action.cancel_requested:
            action_repo.cancel_pending_children(conn, action.id, now, "cancelled by request")
        counts = action_repo.child_counts(conn, action.id)
        if counts.get(ActionStatus.FAILED) and not (
            counts.get(ActionStatus.RUNNING) or counts.get(ActionStatus.READY)
        ):
            # What still waits can only be waiting on a failed step: it will never run.
            action_repo.cancel_pending_children(conn, action.id, now, "a step it waits on failed")
            counts = action_repo.child_counts(conn, action.id)
        if any(not s.is_terminal and n for s, n in counts.items()):
            return Finish.PENDING
        if (
            ClusterOutputs.from_json(action.outputs).rolling is not None
            and not action.cancel_requested
        ):
            return Finish.NEXT_STAGE
        failed = counts.get(ActionStatus.FAILED, 0)
        cancelled = counts.get(ActionStatus.CANCELLED, 0) > 0 or action.cancel_requested
        if failed:
            samples = action_repo.failed_children(conn, action.id)
            reason = f"{failed} step(s) failed: " + "; ".join(
                f"{StepLabel.from_json(c.inputs).node or c.kind}: {c.status_reason}"
                for c in samples
            )
            final = ActionStatus.FAILED
        elif cancelled:
            reason, final = "cancelled by request", ActionStatus.CANCELLED
        else:
            reason, final = "", ActionStatus.SUCCEEDED
        close_action(conn, action, owner, now, final, reason)
        return Finish.CLOSED


def close_action(
    conn: Connection,
    action: ActionRecord,
    owner: str,
    now: float,
    final: ActionStatus,
    reason: str,
) -> None:
    """End a cluster action: its status, the cluster's resting status, the lock, events."""
    assert action.cluster_id is not None
    cluster = cluster_repo.get_cluster(conn, action.cluster_id, include_deleted=True)
    assert cluster is not None
    explanation = ""
    if final is ActionStatus.SUCCEEDED:
        # Counted in SQL: nothing unmade to drop, no node row needed (issue 23).
        counted = standing_of(conn, cluster.id)
        if action.kind is ActionKind.CLUSTER_DELETE and not counted.rows:
            status = ClusterStatus.DELETED
        else:
            status, explanation = settled_standing(counted, declared_nodes(cluster.document))
    else:
        nodes = _drop_unmade(conn, node_repo.list_nodes(conn, cluster.id), reason, now)
        status, explanation = settled_status(nodes, declared_nodes(cluster.document))
    action_repo.set_status(conn, action.id, final, now, reason=reason, owner=owner)
    # A cluster not ACTIVE always says why: the action's reason, else what its nodes show.
    cluster_reason = (reason or explanation) if status is not ClusterStatus.ACTIVE else reason
    cluster_repo.set_status(conn, cluster.id, status, cluster_reason, now)
    cluster_repo.unlock(conn, cluster.id, action.id, now)
    level = "INFO" if final is ActionStatus.SUCCEEDED else "WARNING"
    # The server's log tells the engine's work, not only HTTP access lines.
    log.log(
        logging.INFO if final is ActionStatus.SUCCEEDED else logging.WARNING,
        "%s of cluster %s %s; cluster %s%s",
        action.kind,
        cluster.name,
        final,
        status,
        f": {reason}" if reason else "",
    )
    add_events(
        conn,
        [
            action_event(action, str(final), reason or "done", level=level),
            cluster_event(
                cluster,
                status,
                cluster_reason or f"{action.kind} done",
                action_id=action.id,
                level=level,
            ),
        ],
        now,
    )


def _drop_unmade(
    conn: Connection, nodes: list[NodeRecord], reason: str, now: float
) -> list[NodeRecord]:
    """Forget nodes a failed or cancelled action never started making.

    Their create step was cancelled before any provider call (a node being made is CREATING),
    so nothing exists behind them; kept, they would hold host capacity forever. The cluster then
    lacks declared nodes, which the manager converges like any other difference.
    """
    unmade = [n for n in nodes if n.status is NodeStatus.INIT and n.provider_id is None]
    if not unmade:
        return nodes
    why = f"never created: {reason}" if reason else "never created"
    node_repo.update_nodes(
        conn,
        [
            NodeChange(
                n.id, now, status=NodeStatus.DELETED, status_reason=why[:2000], deleted_at=now
            )
            for n in unmade
        ],
    )
    gone = {n.id for n in unmade}
    return [n for n in nodes if n.id not in gone]
