"""Config changes roll through a node group in batches, gated on health, rolled back on failure.

A deployment's UPDATE on many nodes at once (its config or inputs changed) would take every
node of a group down together if the change is bad. When the target node group declares an
update policy (the same `UpdatePolicy` node rolling updates use), the UPDATE becomes a
`SoftwareRollout` (model/rollouts.py), stored per cluster and deployment:

- the nodes due UPDATE are cut into batches of `max_unavailable`, in name order; only the
  batches started so far may run it (one deployment per node at a time, as always);
- a batch is judged once every node in it completed the new revision or failed it for good
  (its retries spent): `failure_threshold` failures stop the rollout; otherwise, with
  `health_gate`, its nodes must pass their health check within `gate_timeout_s` (the async
  part is the deployer's `gate`, below it only the bookkeeping), then `pause_s`, then the next;
- stopping rolls back: each node of the batches started gets the revision it completed before
  (kept on its row) published again, `max_unavailable` at a time, and the rollout ends
  ROLLED_BACK with the reason (STOPPED when a node had no previous revision or its rollback
  failed too).

Level-triggered: the document still declares the new config, but a rollout that ended
ROLLED_BACK or STOPPED holds that deployment's UPDATE back for as long as the deployment's
`revision` (config, input sources, secrets; not membership) stays the same. Changing the
document (a fix, or the old config back) starts afresh; nothing loops. Groups without an
update policy, first runs (CREATE) and DELETE are not rolled. Pure: the caller reads the
store, and writes back the rollouts, runs and events this returns.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from shoal.model.policies import UpdatePolicy
from shoal.model.rollouts import Revision, RolloutPhase, SoftwareRollout
from shoal.model.software import (
    DeployAction,
    DeploymentRecord,
    DeploymentStatus,
    ResolvedDeployment,
    SoftwareSpec,
)
from shoal.planning.software import Plan, revision

GATE_EVERY_S = 0.5
"""How often (on the engine's clock) the gate checks a batch's nodes again."""


@dataclass(frozen=True, slots=True)
class Restore:
    """A rollback run due: `previous` published again on `node`."""

    deployment: str
    node: str
    previous: Revision


@dataclass(slots=True)
class Rolled:
    allowed: list[ResolvedDeployment] = field(default_factory=list)
    """The due items that may run now (rolled UPDATEs only for the batches started)."""
    restores: list[Restore] = field(default_factory=list)
    changed: list[SoftwareRollout] = field(default_factory=list)
    """Rollouts made or moved on (to store)."""
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(level, message) for the cluster's events."""


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((1, int(p)) if p.isdigit() else (0, p) for p in re.split(r"(\d+)", name) if p)


def _batches(names: Sequence[str], size: int) -> tuple[tuple[str, ...], ...]:
    ordered = sorted(set(names), key=_natural)
    size = max(1, size)
    return tuple(tuple(ordered[i : i + size]) for i in range(0, len(ordered), size))


def roll(
    plan: Plan,
    software: SoftwareSpec,
    policies: Mapping[str, UpdatePolicy],
    rollouts: Mapping[str, SoftwareRollout],
    records: Mapping[tuple[str, str], DeploymentRecord],
    live: set[tuple[str, str]],
    previous: Mapping[tuple[str, str], Revision],
    nodes: set[str],
    now: float,
) -> Rolled:
    """What may run now, given the plan and the stored rollouts.

    `records` and `live` (in-flight runs) by (deployment, node name); `previous` the revision
    each node completed before its current one (needed only while rolling back); `nodes` the
    names of the cluster's current servers.
    """
    out = Rolled()
    updates: dict[str, list[ResolvedDeployment]] = defaultdict(list)
    for item in plan.due:
        d = software.deployment(item.deployment)
        policy = policies.get(d.target.target) if d is not None else None
        if item.action is not DeployAction.UPDATE or policy is None:
            out.allowed.append(item)
        else:
            updates[item.deployment].append(item)
    active = {name for name, r in rollouts.items() if not r.phase.is_final}
    for name in sorted(set(updates) | active, key=_order(software)):
        items = updates.get(name, [])
        d = software.deployment(name)
        policy = policies.get(d.target.target) if d is not None else None
        r = rollouts.get(name)
        if d is None or policy is None:
            out.allowed.extend(items)
            if r is not None and not r.phase.is_final:
                why = "the deployment is gone" if d is None else "its group has no update policy"
                _change(out, dataclasses.replace(r, phase=RolloutPhase.STOPPED, reason=why), now)
            continue
        rev = revision(software, d)
        if r is not None and r.revision == rev and r.phase in _HOLDING:
            continue  # rolled back: held until the document changes this deployment
        if r is None or r.phase is RolloutPhase.DONE or r.revision != rev:
            if r is not None and not r.phase.is_final:
                r = dataclasses.replace(
                    r, phase=RolloutPhase.DONE, reason="superseded by a newer revision"
                )
                _change(out, r, now)
            if not items:
                continue
            batches = _batches([i.node for i in items], policy.max_unavailable)
            r = SoftwareRollout(
                name, rev, d.target.target, batches=batches, started_at=now, updated_at=now
            )
            out.notes.append(
                (
                    "INFO",
                    f"rolling update of deployment {name}: {len(items)} node(s) in "
                    f"{len(batches)} batch(es); batch 1: {', '.join(batches[0])}",
                )
            )
            _change(out, r, now)
        else:
            planned = {n for b in r.batches for n in b}
            extra = [i.node for i in items if i.node not in planned]
            if extra:
                r = dataclasses.replace(
                    r, batches=r.batches + _batches(extra, policy.max_unavailable)
                )
                _change(out, r, now)
        _step(out, r, items, policy, plan, records, live, previous, nodes, now)
    return out


_HOLDING = (RolloutPhase.ROLLED_BACK, RolloutPhase.STOPPED)


def _order(software: SoftwareSpec) -> Callable[[str], int]:
    position = {d.name: i for i, d in enumerate(software.deployments)}
    return lambda name: position.get(name, len(position))


def _change(out: Rolled, r: SoftwareRollout, now: float) -> None:
    r = dataclasses.replace(r, updated_at=now)
    out.changed = [c for c in out.changed if c.deployment != r.deployment] + [r]


def _step(
    out: Rolled,
    r: SoftwareRollout,
    items: list[ResolvedDeployment],
    policy: UpdatePolicy,
    plan: Plan,
    records: Mapping[tuple[str, str], DeploymentRecord],
    live: set[tuple[str, str]],
    previous: Mapping[tuple[str, str], Revision],
    nodes: set[str],
    now: float,
) -> None:
    name = r.deployment
    if r.phase is RolloutPhase.ROLLBACK:
        _roll_back(out, r, policy, plan, records, live, previous, nodes, now)
        return
    if r.phase is RolloutPhase.PAUSE and now >= r.resume_at:
        if r.started >= len(r.batches):
            _change(out, dataclasses.replace(r, phase=RolloutPhase.DONE), now)
            out.notes.append(("INFO", f"rolling update of deployment {name} done"))
            return
        r = dataclasses.replace(r, started=r.started + 1, phase=RolloutPhase.RUN)
        _change(out, r, now)
        out.notes.append(
            (
                "INFO",
                f"rolling update of deployment {name}: batch {r.started} of "
                f"{len(r.batches)}: {', '.join(r.current)}",
            )
        )
    updated = set(r.updated)
    out.allowed.extend(i for i in items if i.node in updated)
    if r.phase is not RolloutPhase.RUN:
        return  # GATE: the deployer's gate moves it on; PAUSE: not yet time
    pending = {i.node for i in items}
    failed: list[str] = []
    for node in r.current:
        if node not in nodes:
            continue  # gone meanwhile: nothing to wait for
        want = plan.wanted.get((name, node))
        rec = records.get((name, node))
        if node in pending or (name, node) in live or want is None or rec is None:
            return  # still running (or not yet runnable)
        if rec.digest != want:
            return
        if rec.status is DeploymentStatus.FAILED:
            failed.append(node)
        elif rec.status is not DeploymentStatus.COMPLETE:
            return
    if len(failed) >= policy.failure_threshold:
        why = f"deployment failed on {', '.join(failed)} (batch {r.started} of {len(r.batches)})"
        _stop(out, r, why, now)
    elif policy.health_gate:
        r = dataclasses.replace(
            r, phase=RolloutPhase.GATE, gate_until=now + policy.gate_timeout_s, gate_next=now
        )
        _change(out, r, now)
    else:
        r = dataclasses.replace(r, phase=RolloutPhase.PAUSE, resume_at=now + policy.pause_s)
        _change(out, r, now)


def _stop(out: Rolled, r: SoftwareRollout, why: str, now: float) -> None:
    stopped, text = stop(r, why, now)
    out.notes.append(("WARNING", text))
    _change(out, stopped, now)


def stop(r: SoftwareRollout, why: str, now: float) -> tuple[SoftwareRollout, str]:
    """The rollout rolling back because of `why` (for the gate), and the event's text."""
    text = f"rolling update of deployment {r.deployment} stopped: {why}; rolling back"
    return dataclasses.replace(r, phase=RolloutPhase.ROLLBACK, reason=why, updated_at=now), text


def _roll_back(
    out: Rolled,
    r: SoftwareRollout,
    policy: UpdatePolicy,
    plan: Plan,
    records: Mapping[tuple[str, str], DeploymentRecord],
    live: set[tuple[str, str]],
    previous: Mapping[tuple[str, str], Revision],
    nodes: set[str],
    now: float,
) -> None:
    name = r.deployment
    restored = list(r.restored)
    unknown: list[str] = []
    broken: list[str] = []
    waiting = 0
    due: list[Restore] = []
    for node in r.updated:
        if node in restored or node not in nodes:
            continue
        prev = previous.get((name, node))
        rec = records.get((name, node))
        want = plan.wanted.get((name, node))
        if (name, node) in live:
            waiting += 1
        elif rec is not None and rec.status is DeploymentStatus.COMPLETE and rec.digest != want:
            # Holds a revision other than the new one: never took it, or given back already.
            restored.append(node)
        elif prev is None or rec is None:
            unknown.append(node)
        elif rec.digest == prev.digest and rec.status is DeploymentStatus.FAILED:
            broken.append(node)
        else:
            due.append(Restore(name, node, prev))
    room = max(1, policy.max_unavailable) - waiting
    out.restores.extend(due[: max(0, room)])
    if tuple(restored) != r.restored:
        r = dataclasses.replace(r, restored=tuple(restored))
        _change(out, r, now)
    if waiting or due:
        return
    if broken or unknown:
        parts = [r.reason]
        if broken:
            parts.append(f"rollback failed on {', '.join(broken)}")
        if unknown:
            parts.append(f"no previous revision on {', '.join(unknown)}")
        r = dataclasses.replace(r, phase=RolloutPhase.STOPPED, reason="; ".join(parts))
        out.notes.append(("ERROR", f"rolling update of deployment {name}: {r.reason}"))
    else:
        r = dataclasses.replace(r, phase=RolloutPhase.ROLLED_BACK)
        out.notes.append(
            (
                "WARNING",
                f"rolling update of deployment {name} rolled back ({r.reason}); "
                "not retried until the document changes it",
            )
        )
    _change(out, r, now)
