"""Scaling arithmetic of a trigger: the policy, its overrides, bounds and cooldowns (pure)."""

from __future__ import annotations

import pytest

from shoal.model.catalogs import CIRROS, CLASSIC_FLAVORS
from shoal.model.cluster import NodeGroup, UnitPart
from shoal.model.policies import AdjustmentType, ScalingPolicy
from shoal.model.profile import ServerProfile
from shoal.service.errors import Conflict, Invalid
from shoal.service.triggers import (
    Cooldown,
    bounded,
    check_cooldown,
    check_params,
    effective_policy,
    scaled_count,
)

PARTS = (UnitPart(None, ServerProfile(CLASSIC_FLAVORS[0], CIRROS)),)
CHANGE, PERCENT, EXACT = (
    AdjustmentType.CHANGE_IN_CAPACITY,
    AdjustmentType.CHANGE_IN_PERCENTAGE,
    AdjustmentType.EXACT_CAPACITY,
)


def group(count: int, low: int = 0, high: int | None = None) -> NodeGroup:
    return NodeGroup("web", PARTS, count, min_size=low, max_size=high)


@pytest.mark.parametrize(
    ("count", "policy", "out", "expected"),
    [
        (4, ScalingPolicy(), True, 5),
        (4, ScalingPolicy(), False, 3),
        (4, ScalingPolicy(CHANGE, 3), True, 7),
        (4, ScalingPolicy(CHANGE, -3), True, 7),  # the direction comes from the trigger
        (4, ScalingPolicy(CHANGE, 3), False, 1),
        (6, ScalingPolicy(PERCENT, 25), True, 8),  # 1.5 rounds away from zero
        (6, ScalingPolicy(PERCENT, 25), False, 4),
        (2, ScalingPolicy(PERCENT, 10, min_step=2), True, 4),
        (4, ScalingPolicy(EXACT, 6), True, 6),
        (4, ScalingPolicy(EXACT, 2), False, 2),
        (8, ScalingPolicy(CHANGE, 5), True, 10),  # clamped to max
        (3, ScalingPolicy(CHANGE, 5), False, 1),  # clamped to min
    ],
)
def test_scaled_count(count: int, policy: ScalingPolicy, out: bool, expected: int) -> None:
    assert scaled_count(group(count, 1, 10), policy, out=out) == expected


@pytest.mark.parametrize(
    ("count", "policy", "out", "message"),
    [
        (10, ScalingPolicy(), True, "already at its max of 10"),
        (1, ScalingPolicy(), False, "already at its min of 1"),
        (9, ScalingPolicy(CHANGE, 2, strict=True), True, "outside the node group's bounds 1..10"),
        (4, ScalingPolicy(EXACT, 2), True, "would not scale node group web out"),
        (4, ScalingPolicy(CHANGE, 0), True, "leaves node group web at 4"),
    ],
)
def test_nothing_to_do_or_out_of_bounds_is_a_conflict(
    count: int, policy: ScalingPolicy, out: bool, message: str
) -> None:
    with pytest.raises(Conflict, match=message):
        scaled_count(group(count, 1, 10), policy, out=out)


def test_params_override_the_policy() -> None:
    policy = ScalingPolicy(PERCENT, 50, min_step=2, cooldown_s=90, strict=True)
    assert effective_policy(policy, {"count": 3}) == ScalingPolicy(
        CHANGE, 3, min_step=2, cooldown_s=90, strict=True
    )
    assert effective_policy(None, {"adjustment_type": "EXACT_CAPACITY", "number": 7}) == (
        ScalingPolicy(EXACT, 7)
    )
    assert effective_policy(None, {}) == ScalingPolicy()


def test_bad_params_are_each_named() -> None:
    with pytest.raises(Invalid) as bad:
        check_params({"count": 2, "number": 1, "strict": "yes", "speed": 9, "min_step": 0})
    assert {d["path"] for d in bad.value.details} == {
        "/params/count",
        "/params/strict",
        "/params/speed",
        "/params/min_step",
    }
    with pytest.raises(Invalid):
        check_params([1])
    assert check_params(None) == {}


def test_cooldown() -> None:
    policy = ScalingPolicy(cooldown_s=30)
    check_cooldown("web", None, policy, 100.0)
    check_cooldown("web", 70.0, policy, 100.0)
    with pytest.raises(Cooldown) as refused:
        check_cooldown("web", 80.0, policy, 100.0)
    assert refused.value.ends_at == 110.0
    assert refused.value.body()["error"]["code"] == "cooldown"


def test_bounds_params_move_the_group_bounds_before_counting() -> None:
    g = group(4, 1, 5)
    assert bounded(g, {}) is g
    moved = bounded(g, {"min_size": 2, "max_size": 8})
    assert (moved.min_size, moved.max_size) == (2, 8)
    assert scaled_count(moved, ScalingPolicy(CHANGE, 3), out=True) == 7, "within the new max"
    assert bounded(g, {"max_size": -1}).max_size is None, "-1 lifts the upper bound"
    with pytest.raises(Conflict) as crossed:
        bounded(g, {"min_size": 6})
    assert crossed.value.details[0]["path"] == "/params/min_size"


def test_bounds_params_are_checked_together() -> None:
    with pytest.raises(Invalid) as bad:
        check_params({"min_size": -1, "max_size": -2})
    assert {d["path"] for d in bad.value.details} == {"/params/min_size", "/params/max_size"}
    with pytest.raises(Invalid) as crossed:
        check_params({"min_size": 4, "max_size": 3})
    assert [d["path"] for d in crossed.value.details] == ["/params/min_size"]
    assert check_params({"min_size": 0, "max_size": -1}) == {"min_size": 0, "max_size": -1}
