"""What a scaling trigger does to a node group: its scaling policy, overridden by the
receiver's `params`, turned into a new count; and the cooldown between two triggers.

A webhook carries only a direction. The policy says by how much (`adjustment_type`, `number`,
`min_step`) and what to do at the group's bounds (`strict` refuses, otherwise the count is
clamped); a receiver's `min_size` / `max_size` move those bounds first (Senlin's resize
webhook). A group without a policy behaves as if it had an empty one (one node at a time,
clamped, 60 s cooldown). A trigger that would not change the count is refused, so the caller
learns the group is already at its bound.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from shoal.documents.native import MAX_REPLICAS
from shoal.model.cluster import NodeGroup
from shoal.model.policies import AdjustmentType, ScalingPolicy
from shoal.model.problems import Problem
from shoal.model.workloads import Workload
from shoal.service.errors import Conflict, Invalid
from shoal.service.resize import Adjustment, is_finite, new_count
from shoal.service.views import iso

PARAMS = ("count", "adjustment_type", "number", "min_step", "strict", "min_size", "max_size")


class Cooldown(Conflict):
    code = "cooldown"
    title = "Cooling down"

    def __init__(self, message: str, ends_at: float) -> None:
        super().__init__(message, [Problem("", f"cooldown ends at {iso(ends_at)}")])
        self.ends_at = ends_at


def check_params(params: object) -> dict[str, Any]:
    """A receiver's `params` (overrides of the scaling policy), or a 422 naming each problem."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise Invalid("params must be an object", [Problem("/params", "not an object")])
    problems: list[Problem] = []

    def bad(key: str, message: str) -> None:
        problems.append(Problem(f"/params/{key}", message))

    for key, value in params.items():
        if key not in PARAMS:
            bad(key, f"unknown parameter; use {', '.join(PARAMS)}")
        elif key == "count" and not (_is_int(value) and 1 <= value <= MAX_REPLICAS):
            bad(key, f"a whole number of nodes, 1 to {MAX_REPLICAS}")
        elif key == "min_step" and not (_is_int(value) and 1 <= value <= MAX_REPLICAS):
            bad(key, f"a whole number, 1 to {MAX_REPLICAS}")
        elif key == "number" and (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not is_finite(value)
            or abs(value) > MAX_REPLICAS
        ):
            bad(key, f"a number from -{MAX_REPLICAS} to {MAX_REPLICAS}")
        elif key == "strict" and not isinstance(value, bool):
            bad(key, "true or false")
        elif key == "adjustment_type" and value not in set(AdjustmentType):
            bad(key, f"one of {', '.join(AdjustmentType)}")
        elif key == "min_size" and not (_is_int(value) and 0 <= value <= MAX_REPLICAS):
            bad(key, f"a whole number of nodes, 0 to {MAX_REPLICAS}")
        elif key == "max_size" and not (_is_int(value) and -1 <= value <= MAX_REPLICAS):
            bad(key, f"a whole number of nodes, 0 to {MAX_REPLICAS}, or -1 for no limit")
    if "count" in params and ({"adjustment_type", "number"} & params.keys()):
        bad("count", "give either count, or adjustment_type and number")
    low, high = params.get("min_size"), params.get("max_size")
    if not problems and low is not None and high is not None and 0 <= high < low:
        bad("min_size", f"min_size ({low}) is above max_size ({high})")
    if problems:
        raise Invalid(f"params has {len(problems)} problem(s)", problems)
    return dict(params)


def bounded(group: NodeGroup, params: dict[str, Any]) -> NodeGroup:
    """The group with the bounds a receiver's `min_size` / `max_size` give it (Senlin's resize
    webhook moves them before it counts; max_size -1 lifts the upper bound), or a 409 when one
    given bound crosses the group's other."""
    if "min_size" not in params and "max_size" not in params:
        return group
    low = int(params.get("min_size", group.min_size))
    high = params.get("max_size", group.max_size)
    high = None if high is None or high < 0 else int(high)
    if high is not None and low > high:
        key = "min_size" if "min_size" in params else "max_size"
        message = (
            f"node group {group.name} would have min_size {low} above max_size {high}; "
            "give both bounds"
        )
        raise Conflict(message, [Problem(f"/params/{key}", message)])
    return dataclasses.replace(group, min_size=low, max_size=high)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def effective_policy(policy: ScalingPolicy | None, params: dict[str, Any]) -> ScalingPolicy:
    """The group's policy (or the defaults) with the receiver's overrides applied."""
    changes: dict[str, Any] = {}
    if "count" in params:
        changes.update(adjustment_type=AdjustmentType.CHANGE_IN_CAPACITY, number=params["count"])
    if "adjustment_type" in params:
        changes["adjustment_type"] = AdjustmentType(params["adjustment_type"])
    for key in ("number", "min_step", "strict"):
        if key in params:
            changes[key] = params[key]
    return dataclasses.replace(policy or ScalingPolicy(), **changes)


def check_cooldown(
    group: str, last: float | None, policy: ScalingPolicy, now: float, *, what: str = "node group"
) -> None:
    """Refuse a trigger within `cooldown_s` of the last one that scaled `group` (a node group,
    or with `what="workload"` a workload)."""
    if last is None:
        return
    ends_at = last + policy.cooldown_s
    if now < ends_at:
        raise Cooldown(
            f"{what} {group} was scaled {now - last:.0f}s ago; its cooldown of "
            f"{policy.cooldown_s:g}s ends at {iso(ends_at)} (in {ends_at - now:.0f}s)",
            ends_at,
        )


@dataclass(frozen=True, slots=True)
class Scalable:
    """What a trigger scales, in its own words: a node group's count or a workload's replicas
    (`what` names the kind in messages), with the bounds it must stay within."""

    what: str
    name: str
    count: int
    min_size: int
    max_size: int | None

    @classmethod
    def of_group(cls, group: NodeGroup) -> Scalable:
        return cls("node group", group.name, group.count, group.min_size, group.max_size)

    @classmethod
    def of_workload(cls, w: Workload) -> Scalable:
        return cls("workload", w.name, w.replicas, w.min_replicas, w.max_replicas)


def scaled_count(group: NodeGroup, policy: ScalingPolicy, *, out: bool) -> int:
    """The group's count after one trigger, or a 409 when the policy leaves nothing to do."""
    return scaled(Scalable.of_group(group), policy, out=out)


def scaled(target_of: Scalable, policy: ScalingPolicy, *, out: bool) -> int:
    """The count after one trigger (bounded by min/max: clamped, or refused with the pointer
    `/params/number` when `strict`), or a 409 when the policy leaves nothing to do."""
    it = target_of
    adjustment = Adjustment(str(policy.adjustment_type))
    number = policy.number
    if adjustment is not Adjustment.EXACT_CAPACITY:
        number = abs(number) if out else -abs(number)
    target = new_count(
        it.count,
        adjustment,
        number,
        min_size=it.min_size,
        max_size=it.max_size,
        min_step=policy.min_step,
        strict=policy.strict,
        pointer="/params/number",
    )
    if (target > it.count) if out else (target < it.count):
        return target
    direction = "out" if out else "in"
    at_bound = it.count == (it.max_size if out else it.min_size)
    if adjustment is Adjustment.EXACT_CAPACITY:
        message = (
            f"an exact capacity of {target} would not scale {it.what} {it.name} "
            f"{direction} (it has {it.count})"
        )
    elif at_bound:
        bound = f"its max of {it.max_size}" if out else f"its min of {it.min_size}"
        message = f"{it.what} {it.name} is already at {bound}; nothing to scale {direction}"
    else:
        message = (
            f"the scaling policy leaves {it.what} {it.name} at {it.count}; "
            f"nothing to scale {direction}"
        )
    raise Conflict(message, [Problem("", message)])
