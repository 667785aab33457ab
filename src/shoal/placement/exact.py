"""The exact fallback for small problems: depth-first search with undo, within a step budget.

Greedy never looks back, so tight capacity plus anti-affinity can defeat it where a placement
exists. For small requests the solver then searches exhaustively, with the same filters, so it
either finds a placement or proves there is none; the step budget keeps the worst case bounded
and is reported when it runs out. Hosts that nothing of this cluster touches yet and that look
the same (zone, free capacity, labels) are interchangeable, so only one of them is tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from shoal.model.enums import Objective
from shoal.placement.filters import HOST_FILTERS, first_rejection
from shoal.placement.greedy import feasible_zones, work_units
from shoal.placement.problem import RAM, Item, PlacementProblem
from shoal.placement.scorers import soft_host_breaks
from shoal.placement.state import SearchState

DEFAULT_STEP_BUDGET = 200_000


class ExactVerdict(StrEnum):
    FOUND = "found"
    NONE_EXISTS = "none-exists"
    GAVE_UP = "gave-up"


@dataclass(slots=True)
class ExactOutcome:
    verdict: ExactVerdict
    state: SearchState
    steps: int


class _OutOfSteps(Exception):
    pass


def _interchangeable(a: Item, b: Item) -> bool:
    """Items that swapping never tells apart: same demand, zones and rules, neither pinned."""
    return (
        a.fixed_host is None
        and b.fixed_host is None
        and a.demand == b.demand
        and a.zones == b.zones
        and a.block == b.block
        and a.memberships == b.memberships
    )


def _candidates(state: SearchState, item: Item, objective: Objective, lowest: int = 0) -> list[int]:
    p = state.problem
    # A pinned item still answers to the zone rules (zone anti-affinity, spread, affinity).
    zones = set(feasible_zones(state, item))
    pool = [item.fixed_host] if item.fixed_host is not None else range(lowest, len(p.host_zone))
    hosts = [h for h in pool if p.host_zone[h] in zones]
    seen: set[tuple[object, ...]] = set()
    out: list[int] = []
    labels = p.inventory.hosts
    for h in hosts:
        if first_rejection(HOST_FILTERS, state, item, h) is not None:
            continue
        if h not in state.used_hosts:
            sig = (p.host_zone[h], tuple(state.free[h]), tuple(sorted(labels[h].labels.items())))
            if sig in seen:
                continue
            seen.add(sig)
        out.append(h)
    if objective is Objective.SPREAD:
        out.sort(key=lambda h: (soft_host_breaks(state, item, h), -state.free[h][RAM], h))
    else:
        out.sort(
            key=lambda h: (
                soft_host_breaks(state, item, h),
                h not in state.used_hosts,
                state.free[h][RAM],
                h,
            )
        )
    return out


def exact_search(
    problem: PlacementProblem,
    objective: Objective,
    seed: int = 0,
    budget: int = DEFAULT_STEP_BUDGET,
) -> ExactOutcome:
    state = SearchState(problem, seed)
    order = [i for unit in work_units(problem) for i in unit]
    # Replicas of one group are interchangeable: trying them on hosts in every order repeats
    # the same placements. Each such item takes a host no lower (by index) than the previous
    # one did; this bound comes before the look-alike-host pruning, which keeps both sound.
    after = [
        k > 0 and _interchangeable(problem.items[order[k - 1]], problem.items[order[k]])
        for k in range(len(order))
    ]
    steps = 0

    def dfs(k: int) -> bool:
        nonlocal steps
        if k == len(order):
            return True
        item = problem.items[order[k]]
        lowest = state.host_of[order[k - 1]] if after[k] else 0
        for h in _candidates(state, item, objective, lowest):
            steps += 1
            if steps > budget:
                raise _OutOfSteps
            mark = state.mark()
            state.place(item, h)
            if dfs(k + 1):
                return True
            state.undo_to(mark)
        return False

    try:
        found = dfs(0)
    except _OutOfSteps:
        return ExactOutcome(ExactVerdict.GAVE_UP, state, steps)
    return ExactOutcome(ExactVerdict.FOUND if found else ExactVerdict.NONE_EXISTS, state, steps)
