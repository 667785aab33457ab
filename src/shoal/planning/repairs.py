"""Repair steps added to a plan: retire replaced nodes, recreate, reboot or rebuild in place.

Replacing a node is a create of a node with the same name (placed again, under every rule)
plus the delete of the old one, which was renamed out of the way. Whether the old goes first
(no spare capacity used, one node down) or last (the new one serves first: a surge) is the
caller's choice; rolling updates use both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from shoal.planning.plan import Plan, Step, StepKind
from shoal.planning.replicas import ObservedNode


@dataclass(frozen=True, slots=True)
class Retired:
    """An old node on its way out: `node` carries its new (renamed) name."""

    node: ObservedNode
    replaced_by: str


def add_repairs(
    plan: Plan,
    *,
    retire: Sequence[Retired] = (),
    recreate: Sequence[str] = (),
    reboot: Sequence[str] = (),
    rebuild: Sequence[str] = (),
    attached: Mapping[str, str] | None = None,
    retire_first: bool = False,
) -> Plan:
    """`plan` with repair steps appended (it is changed in place and returned)."""
    by_id = {s.id: s for s in plan.steps}
    attached = attached or {}
    retired_as = {r.replaced_by: r.node.name for r in retire}
    for r in retire:
        sid = f"delete:{r.node.name}"
        step = Step(sid, StepKind.DELETE, r.node.name)
        plan.steps.append(step)
        by_id[sid] = step
        new = by_id.get(f"create:{r.replaced_by}")
        if new is None:
            continue
        if retire_first:
            new.depends_on.append(sid)
        else:
            step.depends_on.append(new.id)
            attach = by_id.get(f"attach:{r.replaced_by}")
            if attach is not None:
                step.depends_on.append(attach.id)
    # An old volume goes after the old server it was attached to.
    for r in retire:
        server = attached.get(r.replaced_by)
        if server in retired_as:
            by_id[f"delete:{r.node.name}"].depends_on.append(f"delete:{retired_as[server]}")
    for kind, names in (
        (StepKind.RECREATE, recreate),
        (StepKind.REBOOT, reboot),
        (StepKind.REBUILD, rebuild),
    ):
        for name in names:
            step = Step(f"{kind}:{name}", kind, name)
            plan.steps.append(step)
            by_id[step.id] = step
    # A recreated volume or server needs its attachment made again.
    again = set(recreate) | set(rebuild)
    for volume, server in attached.items():
        if volume in again or server in again:
            after = [
                f"{k}:{n}"
                for n in (volume, server)
                for k in (StepKind.RECREATE, StepKind.REBUILD)
                if f"{k}:{n}" in by_id
            ]
            plan.steps.append(
                Step(f"reattach:{volume}", StepKind.ATTACH, volume, depends_on=after, server=server)
            )
    return plan
