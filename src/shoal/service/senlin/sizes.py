"""A cluster's sizes as Senlin sees them, and Senlin's words for a size outside its bounds."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Bounds:
    """A cluster's sizes as Senlin saw them (max_size -1: no upper limit)."""

    min_size: int
    max_size: int
    desired: int


def bounds_of(doc: Mapping[str, Any]) -> Bounds:
    """A cluster's sizes as Senlin shows them, from its document: the sums over its node
    groups (no upper limit unless every group has one), its instances counted as desired."""
    groups: list[dict[str, Any]] = doc.get("node_groups", [])
    desired = sum(int(g.get("count", 0)) for g in groups) + len(doc.get("instances", []))
    bounded = bool(groups) and all("max" in g for g in groups)
    high = sum(int(g["max"]) for g in groups) if bounded else -1
    return Bounds(sum(int(g.get("min", 0)) for g in groups), high, desired)


def check_size_params(
    cluster: Bounds | None,
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    strict: bool,
) -> str | None:
    """Senlin's `scaleutils.check_size_params`: the first problem, in its words, or None."""
    if desired is not None:
        if min_size is not None and desired < min_size:
            return (
                f"The target capacity ({desired}) is less than the specified min_size ({min_size})."
            )
        if min_size is None and cluster is not None and desired < cluster.min_size and strict:
            return bounds_message(desired, cluster.min_size, cluster.max_size)
        if max_size is not None and 0 <= max_size < desired:
            return (
                f"The target capacity ({desired}) is greater than the specified max_size "
                f"({max_size})."
            )
        if max_size is None and cluster is not None and 0 <= cluster.max_size < desired and strict:
            return bounds_message(desired, cluster.min_size, cluster.max_size)
    if min_size is not None:
        if max_size is not None and 0 <= max_size < min_size:
            return (
                f"The specified min_size ({min_size}) is greater than the specified max_size "
                f"({max_size})."
            )
        if max_size is None and cluster is not None and 0 <= cluster.max_size < min_size:
            return (
                f"The specified min_size ({min_size}) is greater than the current max_size "
                f"({cluster.max_size}) of the cluster."
            )
        if desired is None and cluster is not None and min_size > cluster.desired and strict:
            return (
                f"The specified min_size ({min_size}) is greater than the current "
                f"desired_capacity ({cluster.desired}) of the cluster."
            )
    if max_size is not None:
        if min_size is None and cluster is not None and 0 <= max_size < cluster.min_size:
            return (
                f"The specified max_size ({max_size}) is less than the current min_size "
                f"({cluster.min_size}) of the cluster."
            )
        if desired is None and cluster is not None and 0 <= max_size < cluster.desired and strict:
            return (
                f"The specified max_size ({max_size}) is less than the current "
                f"desired_capacity ({cluster.desired}) of the cluster."
            )
    return None
