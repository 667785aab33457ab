"""Rolling updates, batch by batch: plan a batch, let it run, gate on health, pause, go on.

The state lives in the action's outputs (`rolling`), so an engine that dies mid-update leaves
it to the next engine exactly where it was. A batch whose failures (failed steps, or new nodes
not healthy within the gate's time) reach the policy's threshold stops the update: the cluster's
previous document is restored and the nodes already updated are replaced back, batch by batch,
the same way; the action then ends FAILED, saying it rolled back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import httpx

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
from shoal.store.records import ActionRecord, NodeRecord

if TYPE_CHECKING:
    from shoal.engine.runtime import Engine

# How often the health gate probes a batch's new nodes.
GATE_EVERY_S = 0.5


async def advance(engine: Engine, action: ActionRecord) -> bool:
    """Move a rolling update one step; True when something changed."""
    r: dict[str, Any] = dict(action.outputs["rolling"])
    now = engine.clock.now()
    with engine.db.reading() as conn:
        counts = action_repo.child_counts(conn, action.id)
    failed_total = counts.get(ActionStatus.FAILED, 0)
    phase = r.get("phase", "plan")
    stages: list[dict[str, Any]] = r["stages"]
    current = stages[r["next"] - 1] if r["next"] > 0 else None

    if phase == "run":
        assert current is not None
        failed_now = failed_total - int(r.get("failed_before", 0))
        if failed_now >= current["threshold"]:
            return await _stop(
                engine, action, r, f"{failed_now} step(s) failed in batch {r['next']}"
            )
        if current["gate"]:
            r.update(phase="gate", gate_until=now + current["gate_timeout_s"], gate_next=now)
        else:
            r.update(phase="pause", resume_at=now + current["pause_s"])
        return await _save(engine, action, r)

    if phase == "gate":
        assert current is not None
        if now < r.get("gate_next", 0):
            return False
        unhealthy = await _unhealthy(engine, action, current)
        if not unhealthy:
            r.update(phase="pause", resume_at=now + current["pause_s"])
            await _event(engine, action, f"batch {r['next']} healthy")
            return await _save(engine, action, r)
        if now >= r["gate_until"]:
            if len(unhealthy) >= current["threshold"]:
                why = f"batch {r['next']}: {', '.join(unhealthy)} not healthy in time"
                return await _stop(engine, action, r, why)
            r.update(phase="pause", resume_at=now + current["pause_s"])
            return await _save(engine, action, r)
        r["gate_next"] = now + GATE_EVERY_S
        return await _save(engine, action, r)

    if phase == "pause" and now < r.get("resume_at", 0):
        return False

    if r["next"] >= len(stages):
        return await _finish(engine, action, r)
    stage = stages[r["next"]]
    r.update(phase="run", next=r["next"] + 1, failed_before=failed_total)
    inventory = await engine.inventory()
    outcome = await asyncio.to_thread(
        plan_action,
        engine.db,
        action,
        inventory,
        engine.id,
        now,
        stage=[{"node": n, "how": "replace"} for n in stage["nodes"]],
        retire_first=stage["retire_first"],
        outputs=dict(action.outputs, rolling=r),
    )
    if not outcome.planned:
        return await _stop(engine, action, r, "cannot place batch: " + "; ".join(outcome.reasons))
    await _event(engine, action, f"batch {r['next']} of {len(stages)}: {', '.join(stage['nodes'])}")
    engine.wake()
    return True


async def _unhealthy(engine: Engine, action: ActionRecord, stage: dict[str, Any]) -> list[str]:
    """Names of the batch's new nodes that do not pass their health check (yet)."""
    assert action.cluster_id is not None
    cluster_id = action.cluster_id

    def read() -> tuple[list[NodeRecord], Any]:
        with engine.db.reading() as conn:
            cluster = cluster_repo.get_cluster(conn, cluster_id)
            return node_repo.list_nodes(conn, cluster_id), cluster

    nodes, cluster = await asyncio.to_thread(read)
    if cluster is None:
        return []
    spec = declared_cluster(cluster, await engine.inventory())
    policy = spec.health_of(stage["group"]) or HealthPolicy()
    wanted = set(stage["nodes"])
    batch = [n for n in nodes if n.name in wanted or _sibling(n, nodes, wanted)]
    bad = [n.name for n in batch if n.status is not NodeStatus.ACTIVE]
    async with httpx.AsyncClient(trust_env=False) as client:
        answers = await asyncio.gather(
            *(probe(n, policy, engine.provider, client) for n in batch if n.name not in bad)
        )
    bad += [
        n.name for n, a in zip([n for n in batch if n.name not in bad], answers, strict=True) if a
    ]
    return sorted(bad)


def _sibling(n: NodeRecord, nodes: list[NodeRecord], names: set[str]) -> bool:
    return n.replica > 0 and any(
        m.name in names and m.group_name == n.group_name and m.replica == n.replica for m in nodes
    )


async def _stop(engine: Engine, action: ActionRecord, r: dict[str, Any], why: str) -> bool:
    """A batch failed: roll back (once), or end the action if the rollback failed too."""
    if r.get("rollback"):
        return await _close(
            engine, action, ActionStatus.FAILED, f"{r['reason']}; rollback failed: {why}"
        )
    previous = action.inputs.get("previous_document")
    if previous is None:
        return await _close(engine, action, ActionStatus.FAILED, why)
    assert action.cluster_id is not None
    cluster_id = action.cluster_id
    now = engine.clock.now()

    def restore() -> list[dict[str, Any]]:
        with engine.db.transaction() as conn:
            cluster_repo.set_document(conn, cluster_id, previous, now)
            cluster = cluster_repo.get_cluster(conn, cluster_id)
            nodes = node_repo.list_nodes(conn, cluster_id)
        assert cluster is not None
        return stages_for(declared_cluster(cluster, inventory), nodes)

    inventory = await engine.inventory()
    stages = await asyncio.to_thread(restore)
    with engine.db.reading() as conn:
        failed_total = action_repo.child_counts(conn, action.id).get(ActionStatus.FAILED, 0)
    await _event(engine, action, f"update stopped ({why}); rolling back", level="WARNING")
    fresh = {
        "stages": stages,
        "next": 0,
        "phase": "plan",
        "failed_before": failed_total,
        "rollback": True,
        "reason": why,
    }
    return await _save(engine, action, fresh)


async def _finish(engine: Engine, action: ActionRecord, r: dict[str, Any]) -> bool:
    if r.get("rollback"):
        return await _close(
            engine, action, ActionStatus.FAILED, f"update failed ({r['reason']}); rolled back"
        )
    return await _close(engine, action, ActionStatus.SUCCEEDED, "")


async def _close(engine: Engine, action: ActionRecord, final: ActionStatus, reason: str) -> bool:
    now = engine.clock.now()

    def close() -> None:
        with engine.db.transaction() as conn:
            close_action(conn, action, engine.id, now, final, reason)

    await asyncio.to_thread(close)
    return True


async def _save(engine: Engine, action: ActionRecord, r: dict[str, Any]) -> bool:
    now = engine.clock.now()

    def save() -> None:
        with engine.db.transaction() as conn:
            action_repo.set_status(
                conn,
                action.id,
                ActionStatus.RUNNING,
                now,
                outputs=dict(action.outputs, rolling=r),
                owner=engine.id,
            )

    await asyncio.to_thread(save)
    return True


async def _event(engine: Engine, action: ActionRecord, text: str, level: str = "INFO") -> None:
    now = engine.clock.now()

    def write() -> None:
        with engine.db.transaction() as conn:
            add_events(conn, [action_event(action, "RUNNING", text, level=level)], now)

    await asyncio.to_thread(write)
