"""Senlin's words for a size outside a cluster's bounds."""

from __future__ import annotations

from shoal.service.resize import Adjustment


def bounds_message(target: int, low: int, high: int | None) -> str:
    if target < low:
        return f"The target capacity ({target}) is less than the cluster's min_size ({low})."
    return f"The target capacity ({target}) is greater than the cluster's max_size ({high})."


def target_of(current: int, adjustment: Adjustment, number: float) -> int:
    if adjustment is Adjustment.EXACT_CAPACITY:
        return int(number)
    if adjustment is Adjustment.CHANGE_IN_CAPACITY:
        return current + int(number)
    delta = current * number / 100.0
    step = -(-abs(delta) // 1) if delta else 0
    return current + int(step if number > 0 else -step)
