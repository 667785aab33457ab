"""The health gate between a rollout's batches: the async half of `rolling.py`.

A batch whose nodes all completed the new revision is gated: each of them must be running
(ACTIVE, or WARNING for another reason than this deployment) and pass its group's health check
when the group has one (the same probes health management and node rolling updates use), by
`gate_timeout_s` on the engine's clock. Checked every `GATE_EVERY_S` by the engine holding the
cluster's deployer partition (issue 23); the outcome moves the stored rollout on (PAUSE, or
ROLLBACK once the time is out with `failure_threshold` nodes still unhealthy). The rollout is
written only if it is still the one that was checked, so a document change meanwhile wins.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Protocol

import httpx

from shoal.engine.context import EngineContext
from shoal.engine.events import cluster_event
from shoal.engine.probes import probe
from shoal.engine.software.decide import HealthOf, PoliciesOf
from shoal.engine.software.rolling import GATE_EVERY_S, stop
from shoal.model.enums import NodeStatus
from shoal.model.policies import HealthPolicy, UpdatePolicy
from shoal.model.rollouts import RolloutPhase, SoftwareRollout
from shoal.model.software import DeploymentStatus
from shoal.store import clusters as cluster_repo
from shoal.store import deployments as deployment_repo
from shoal.store import nodes as node_repo
from shoal.store import rollouts as rollout_repo
from shoal.store.events import NewEvent, add_events
from shoal.store.records import ClusterRecord, NodeRecord

log = logging.getLogger("shoal.deployer")


class Gated(Protocol):
    """What `check_gates` needs of the deployer (kept narrow: no import of the runner)."""

    engine: EngineContext
    policies_of: PoliciesOf
    health_of: HealthOf

    def mine(self, cluster_id: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class _Batch:
    cluster: ClusterRecord
    rollout: SoftwareRollout
    nodes: list[NodeRecord]
    """The batch's nodes that completed the new revision (failed ones were counted before)."""
    update: UpdatePolicy
    health: HealthPolicy | None


async def check_gates(d: Gated) -> bool:
    """Check the gated batches due a look; True when a rollout moved on."""
    e = d.engine
    now = e.clock.now()
    batches = await asyncio.to_thread(_gated, d, now)
    if not batches:
        return False
    async with httpx.AsyncClient(trust_env=False) as client:
        verdicts = await asyncio.gather(*(_unhealthy(b, e, client) for b in batches))
    moved = await asyncio.to_thread(_judge, d, list(zip(batches, verdicts, strict=True)))
    return moved


def _gated(d: Gated, now: float) -> list[_Batch]:
    out: list[_Batch] = []
    with d.engine.db.reading() as conn:
        for cluster_id, r in rollout_repo.in_phase(conn, RolloutPhase.GATE):
            if now < r.gate_next or not d.mine(cluster_id):
                continue
            cluster = cluster_repo.get_cluster(conn, cluster_id)
            if cluster is None:
                continue
            try:
                update = d.policies_of(cluster).get(r.group) or UpdatePolicy()
                health = d.health_of(cluster).get(r.group)
            except Exception:  # an unreadable document: the next pass looks again
                log.exception("reading the policies of %s failed", cluster.name)
                continue
            wanted = set(r.current)
            nodes = [n for n in node_repo.list_nodes(conn, cluster_id) if n.name in wanted]
            rows = {
                (row.node_id, row.name): row
                for row in deployment_repo.rows_for(
                    conn, [(n.id, r.deployment) for n in nodes]
                ).values()
            }
            done = [
                n
                for n in nodes
                if (row := rows.get((n.id, r.deployment))) is None
                or row.status is not DeploymentStatus.FAILED
            ]
            out.append(_Batch(cluster, r, done, update, health))
    return out


async def _unhealthy(b: _Batch, e: EngineContext, client: httpx.AsyncClient) -> list[str]:
    bad: list[str] = []
    checked: list[NodeRecord] = []
    for n in b.nodes:
        running = n.status is NodeStatus.ACTIVE or (
            n.status is NodeStatus.WARNING
            and not n.status_reason.startswith(f"deployment {b.rollout.deployment} ")
        )
        if n.deleted_at is not None or not running:
            bad.append(n.name)
        else:
            checked.append(n)
    if b.health is not None and checked:
        health = b.health
        answers = await asyncio.gather(*(probe(n, health, e.provider, client) for n in checked))
        bad += [n.name for n, why in zip(checked, answers, strict=True) if why is not None]
    return sorted(bad)


def _judge(d: Gated, checked: list[tuple[_Batch, list[str]]]) -> bool:
    e = d.engine
    now = e.clock.now()
    moved = False
    with e.db.transaction() as conn:
        for b, bad in checked:
            r = b.rollout
            stored = rollout_repo.for_cluster(conn, b.cluster.id).get(r.deployment)
            if stored != r:
                continue  # moved on meanwhile (a document change, another pass)
            events: list[NewEvent] = []
            batch = f"batch {r.started} of {len(r.batches)}"
            if not bad:
                nxt = dataclasses.replace(
                    r, phase=RolloutPhase.PAUSE, resume_at=now + b.update.pause_s, updated_at=now
                )
                text = f"rolling update of deployment {r.deployment}: {batch} healthy"
                events.append(cluster_event(b.cluster, "ROLLOUT", text))
                moved = True
            elif now >= r.gate_until:
                if len(bad) >= b.update.failure_threshold:
                    why = f"{', '.join(bad)} not healthy in time ({batch})"
                    nxt, text = stop(r, why, now)
                    events.append(cluster_event(b.cluster, "ROLLOUT", text, level="WARNING"))
                else:
                    nxt = dataclasses.replace(
                        r,
                        phase=RolloutPhase.PAUSE,
                        resume_at=now + b.update.pause_s,
                        updated_at=now,
                    )
                moved = True
            else:
                nxt = dataclasses.replace(r, gate_next=now + GATE_EVERY_S)
            rollout_repo.save(conn, b.cluster.id, [nxt], now)
            add_events(conn, events, now)
    return moved
