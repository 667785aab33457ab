"""Resize arithmetic: Senlin's adjustment types, bounded by a node group's min and max.

`exact` sets the count; `change` adds (or removes) a number of nodes; `percentage` changes the
count by a percentage, rounded away from zero and at least `min_step` nodes. With `strict`, a
result outside min/max is refused; without, it is clamped to the bounds.
"""

from __future__ import annotations

import math
from enum import StrEnum

from shoal.documents.native import MAX_REPLICAS
from shoal.model.problems import Problem
from shoal.service.errors import Invalid, OutOfBounds


class Adjustment(StrEnum):
    EXACT_CAPACITY = "EXACT_CAPACITY"
    CHANGE_IN_CAPACITY = "CHANGE_IN_CAPACITY"
    CHANGE_IN_PERCENTAGE = "CHANGE_IN_PERCENTAGE"


def is_finite(number: float) -> bool:
    """A finite number (an int too large for a float is not: it cannot be worked with)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def new_count(
    current: int,
    adjustment: Adjustment,
    number: float,
    *,
    min_size: int,
    max_size: int | None,
    min_step: int = 1,
    strict: bool = True,
    pointer: str = "/number",
) -> int:
    """The target count of a resize, or a refusal naming the request field at fault.

    The arithmetic is bounded first: a number that is not finite, or a target above
    MAX_REPLICAS, is refused here, before any document or node is built from it.
    """
    if isinstance(number, bool) or not is_finite(number):
        raise Invalid(
            "the number must be a finite number",
            [Problem(pointer, f"{number!r} is not a finite number")],
        )
    if adjustment is Adjustment.EXACT_CAPACITY:
        if number != int(number) or number < 0:
            raise Invalid(
                "an exact capacity is a whole number of nodes, 0 or more",
                [Problem(pointer, f"{number!r} is not a whole number >= 0")],
            )
        target = int(number)
    elif adjustment is Adjustment.CHANGE_IN_CAPACITY:
        if number != int(number):
            raise Invalid(
                "a change in capacity is a whole number of nodes",
                [Problem(pointer, f"{number!r} is not a whole number")],
            )
        target = current + int(number)
    else:
        delta = current * number / 100.0
        if not math.isfinite(delta) or abs(delta) > MAX_REPLICAS:
            delta = math.copysign(MAX_REPLICAS + 1, delta)
        step = math.ceil(abs(delta)) if delta else 0
        step = max(step, min_step) if number else 0
        target = current + (step if number > 0 else -step)
    if target > MAX_REPLICAS and (strict or max_size is None):
        raise Invalid(
            f"the new size {target} is more than any node group may have ({MAX_REPLICAS})",
            [Problem(pointer, f"gives {target} nodes, more than {MAX_REPLICAS}")],
        )
    low, high = min_size, max_size
    if target < low or (high is not None and target > high):
        bounds = f"{low}..{high if high is not None else 'unbounded'}"
        if strict:
            raise OutOfBounds(
                f"the new size {target} is outside the node group's bounds {bounds}",
                [Problem(pointer, f"gives {target} nodes, outside {bounds}")],
                current=current,
                low=low,
                high=high,
            )
        target = max(low, target if high is None else min(high, target))
    return target
