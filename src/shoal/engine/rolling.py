"""Rolling updates, batch by batch: plan a batch, let it run, gate on health, pause, go on.

The state lives in the action's outputs (`rolling`), so an engine that dies mid-update leaves
it to the next engine exactly where it was. A batch whose failures (failed steps, or new nodes
not healthy within the gate's time) reach the policy's threshold stops the update: the cluster's
previous document is restored and the nodes already updated are replaced back, batch by batch,
the same way; the action then ends FAILED, saying it rolled back.
"""

from __future__ import annotations

import asyncio
import dataclasses

import httpx

from shoal.engine.context import EngineContext
from shoal.engine.contracts import (
    ClusterInputs,
    ClusterOutputs,
    Repair,
    RepairHow,
    RollingPhase,
    RollingStage,
    RollingState,
)
from shoal.engine.decide import declared_cluster
from shoal.engine.events import action_event
from shoal.engine.planner import close_action, plan_action
from shoal.engine.probes import probe
from shoal.engine.stale import stages_for
from shoal.model.enums import ActionStatus, NodeStatus
from shoal.model.policies import HealthPolicy
from shoal.store import actions as action_repo
from shoal.store import clusters as cluster_repo
from shoal.store import nodes as node_repo
from shoal.store.events import add_events
from shoal.store.records import ActionRecord, ClusterRecord, NodeRecord

# How often the health gate probes a batch's new nodes.
GATE_EVERY_S = 0.5


def _failed_children(ctx: EngineContext, action_id: str) -> int:
    with ctx.db.reading() as conn:
        return action_repo.child_counts(conn, action_id).get(ActionStatus.FAILED, 0)


async def advance(ctx: EngineContext, action: ActionRecord) -> bool:
    """Move a rolling update one step; True when something changed."""
    r = ClusterOutputs.from_json(action.outputs).rolling
    assert r is not None
    now = ctx.clock.now()
    failed_total = await ctx.run_in_thread(_failed_children, ctx, action.id)
    current = r.current

    if r.phase is RollingPhase.RUN:
        assert current is not None
        failed_now = failed_total - r.failed_before
        if failed_now >= current.threshold:
            return await _stop(ctx, action, r, f"{failed_now} step(s) failed in batch {r.next}")
        if current.gate:
            r = dataclasses.replace(
                r, phase=RollingPhase.GATE, gate_until=now + current.gate_timeout_s, gate_next=now
            )
        else:
            r = dataclasses.replace(r, phase=RollingPhase.PAUSE, resume_at=now + current.pause_s)
        return await _save(ctx, action, r)

    if r.phase is RollingPhase.GATE:
        assert current is not None
        if now < r.gate_next:
            return False
        unhealthy = await _unhealthy(ctx, action, current)
        if not unhealthy:
            r = dataclasses.replace(r, phase=RollingPhase.PAUSE, resume_at=now + current.pause_s)
            await _event(ctx, action, f"batch {r.next} healthy")
            return await _save(ctx, action, r)
        if now >= r.gate_until:
            if len(unhealthy) >= current.threshold:
                why = f"batch {r.next}: {', '.join(unhealthy)} not healthy in time"
                return await _stop(ctx, action, r, why)
            r = dataclasses.replace(r, phase=RollingPhase.PAUSE, resume_at=now + current.pause_s)
            return await _save(ctx, action, r)
        return await _save(ctx, action, dataclasses.replace(r, gate_next=now + GATE_EVERY_S))

    if r.phase is RollingPhase.PAUSE and now < r.resume_at:
        return False

    if r.next >= len(r.stages):
        return await _finish(ctx, action, r)
    stage = r.stages[r.next]
    r = dataclasses.replace(r, phase=RollingPhase.RUN, next=r.next + 1, failed_before=failed_total)
    inventory = await ctx.inventory()
    outcome = await ctx.run_in_thread(
        plan_action,
        ctx.db,
        action,
        inventory,
        ctx.owner,
        now,
        stage=tuple(Repair(n, RepairHow.REPLACE) for n in stage.nodes),
        retire_first=stage.retire_first,
        rolling=r,
    )
    if not outcome.planned:
        return await _stop(ctx, action, r, "cannot place batch: " + "; ".join(outcome.reasons))
    await _event(ctx, action, f"batch {r.next} of {len(r.stages)}: {', '.join(stage.nodes)}")
    ctx.wake()
    return True


async def _unhealthy(ctx: EngineContext, action: ActionRecord, stage: RollingStage) -> list[str]:
    """Names of the batch's new nodes that do not pass their health check (yet)."""
    assert action.cluster_id is not None
    cluster_id = action.cluster_id

    def read() -> tuple[list[NodeRecord], ClusterRecord | None]:
        with ctx.db.reading() as conn:
            cluster = cluster_repo.get_cluster(conn, cluster_id)
            return node_repo.list_nodes(conn, cluster_id), cluster

    nodes, cluster = await ctx.run_in_thread(read)
    if cluster is None:
        return []
    spec = declared_cluster(cluster, await ctx.inventory())
    policy = spec.health_of(stage.group) or HealthPolicy()
    wanted = set(stage.nodes)
    batch = [n for n in nodes if n.name in wanted or _sibling(n, nodes, wanted)]
    bad = [n.name for n in batch if n.status is not NodeStatus.ACTIVE]
    async with httpx.AsyncClient(trust_env=False) as client:
        answers = await asyncio.gather(
            *(probe(n, policy, ctx.provider, client) for n in batch if n.name not in bad)
        )
    bad += [
        n.name for n, a in zip([n for n in batch if n.name not in bad], answers, strict=True) if a
    ]
    return sorted(bad)


def _sibling(n: NodeRecord, nodes: list[NodeRecord], names: set[str]) -> bool:
    return n.replica > 0 and any(
        m.name in names and m.group_name == n.group_name and m.replica == n.replica for m in nodes
    )


async def _stop(ctx: EngineContext, action: ActionRecord, r: RollingState, why: str) -> bool:
    """A batch failed: roll back (once), or end the action if the rollback failed too."""
    if r.rollback:
        return await _close(ctx, action, ActionStatus.FAILED, f"{r.reason}; rollback failed: {why}")
    previous = ClusterInputs.from_json(action.inputs).previous_document
    if previous is None:
        return await _close(ctx, action, ActionStatus.FAILED, why)
    assert action.cluster_id is not None
    cluster_id = action.cluster_id
    now = ctx.clock.now()
    inventory = await ctx.inventory()

    def restore() -> tuple[list[RollingStage], int]:
        with ctx.db.transaction() as conn:
            cluster_repo.set_document(conn, cluster_id, previous, now)
            cluster = cluster_repo.get_cluster(conn, cluster_id)
            nodes = node_repo.list_nodes(conn, cluster_id)
            failed = action_repo.child_counts(conn, action.id).get(ActionStatus.FAILED, 0)
        assert cluster is not None
        return stages_for(declared_cluster(cluster, inventory), nodes), failed

    stages, failed_total = await ctx.run_in_thread(restore)
    await _event(ctx, action, f"update stopped ({why}); rolling back", level="WARNING")
    fresh = RollingState(tuple(stages), failed_before=failed_total, rollback=True, reason=why)
    return await _save(ctx, action, fresh)


async def _finish(ctx: EngineContext, action: ActionRecord, r: RollingState) -> bool:
    if r.rollback:
        return await _close(
            ctx, action, ActionStatus.FAILED, f"update failed ({r.reason}); rolled back"
        )
    return await _close(ctx, action, ActionStatus.SUCCEEDED, "")


async def _close(
    ctx: EngineContext, action: ActionRecord, final: ActionStatus, reason: str
) -> bool:
    now = ctx.clock.now()

    def close() -> None:
        with ctx.db.transaction() as conn:
            close_action(conn, action, ctx.owner, now, final, reason)

    await ctx.run_in_thread(close)
    return True


async def _save(ctx: EngineContext, action: ActionRecord, r: RollingState) -> bool:
    now = ctx.clock.now()
    outputs = dataclasses.replace(ClusterOutputs.from_json(action.outputs), rolling=r)

    def save() -> None:
        with ctx.db.transaction() as conn:
            action_repo.set_status(
                conn,
                action.id,
                ActionStatus.RUNNING,
                now,
                outputs=outputs.to_json(),
                owner=ctx.owner,
            )

    await ctx.run_in_thread(save)
    return True


async def _event(ctx: EngineContext, action: ActionRecord, text: str, level: str = "INFO") -> None:
    now = ctx.clock.now()

    def write() -> None:
        with ctx.db.transaction() as conn:
            add_events(conn, [action_event(action, "RUNNING", text, level=level)], now)

    await ctx.run_in_thread(write)
