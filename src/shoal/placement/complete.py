"""Completeness: settle what greedy could not, in small pieces, within one time limit.

Large tight problems are decomposed so CP-SAT only ever sees a small model:

1. *Repair.* Greedy places all it can (`keep_going`); the items it missed are released
   together with every item sharing a hard rule or zone block with them, and CP-SAT places
   that neighbourhood around the rest of greedy's placement. Usually the whole answer.
2. *Proof.* Items that share no hard rule, no zone block and no zone (directly or through
   others) never affect one another: such *independent parts* are solved whole and
   separately. A part with no placement proves the whole request infeasible; a part found
   everywhere places it. Parts greedy placed keep greedy's (soft-rule aware) placement.

Anything neither found nor disproved in time is *unknown*, reported as undecided.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from shoal.model.enums import Objective, Rule
from shoal.placement.cpsat import MAX_PAIRS, ExactVerdict, solve_exact
from shoal.placement.greedy import greedy
from shoal.placement.problem import Item, PlacementProblem
from shoal.placement.state import SearchState

_HARD = (Rule.ANTI_AFFINITY, Rule.SPREAD)


@dataclass(slots=True)
class Completion:
    verdict: ExactVerdict
    state: SearchState
    solver: str
    seconds: float
    detail: str = ""
    """For a proof: which part has no placement, in the user's words."""


class _Sets:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)


def independent_parts(problem: PlacementProblem) -> list[list[int]]:
    """Item indexes grouped so that no two groups share a hard rule, a zone block or a zone."""
    n, nz = len(problem.items), len(problem.zone_names)
    sets = _Sets(n + nz)
    for it in problem.items:
        if it.fixed_host is not None:
            zones: frozenset[int] | range = frozenset((problem.host_zone[it.fixed_host],))
        else:
            zones = it.zones if it.zones is not None else range(nz)
        for z in zones:
            sets.union(it.index, n + z)
    by_rule: dict[int, int] = {}
    for it in problem.items:
        for ci, _ in it.memberships:
            if problem.constraints[ci].rule in _HARD:
                sets.union(it.index, by_rule.setdefault(ci, it.index))
    for block in problem.blocks:
        for i in block[1:]:
            sets.union(block[0], i)
    parts: dict[int, list[int]] = {}
    for it in problem.items:
        parts.setdefault(sets.find(it.index), []).append(it.index)
    return list(parts.values())


def _neighbourhood(problem: PlacementProblem, missed: list[Item]) -> set[int]:
    """The missed items and every item sharing a hard rule or a zone block with one."""
    rules = {ci for it in missed for ci, _ in it.memberships}
    rules = {ci for ci in rules if problem.constraints[ci].rule in _HARD}
    blocks = {it.block for it in missed if it.block >= 0}
    out = {it.index for it in missed}
    for it in problem.items:
        if it.block in blocks or any(ci in rules for ci, _ in it.memberships):
            out.add(it.index)
    return out


def _keeping(
    problem: PlacementProblem, placed: SearchState, released: set[int], seed: int
) -> SearchState:
    """A fresh state holding `placed`'s placement of every item not in `released`."""
    state = SearchState(problem, seed)
    for it in problem.items:
        h = placed.host_of[it.index]
        if h >= 0 and it.index not in released:
            state.place(it, h)
    return state


def _shortlist(base: SearchState, kept: SearchState, released: set[int]) -> set[int] | None:
    """Hosts a large repair may use: where the released items sat, and per zone the roomiest
    hosts by RAM and by volume, as many as keep the model within `MAX_PAIRS`. None: all
    hosts fit in the model anyway."""
    p = base.problem
    if len(released) * len(p.host_zone) <= MAX_PAIRS // 2:
        return None
    nz = len(p.zone_names)
    per_list = max(4, MAX_PAIRS // (2 * len(released) * 2 * nz))
    pool = {kept.host_of[i] for i in released if kept.host_of[i] >= 0}
    for z in range(nz):
        for index in base.index[z]:
            pool.update(base.entry_host(e) for e in index.top(per_list))
    return pool


def _describe(problem: PlacementProblem, items: list[int]) -> str:
    groups = list(dict.fromkeys(n.group for i in items for n in problem.items[i].nodes))
    shown = ", ".join(groups[:4]) + (f" and {len(groups) - 4} more" if len(groups) > 4 else "")
    return f"{len(items)} item(s) of {shown}"


def complete(
    problem: PlacementProblem, objective: Objective, seed: int, time_limit_s: float
) -> Completion:
    """Place every item, prove no placement exists, or say it is unknown within the limit."""
    started = time.perf_counter()

    def left() -> float:
        return time_limit_s - (time.perf_counter() - started)

    kept = greedy(problem, objective, seed, keep_going=True)
    if not kept.missed:
        return Completion(ExactVerdict.FOUND, kept.state, "greedy", time.perf_counter() - started)
    missed_ids = {it.index for it in kept.missed}
    parts = [p for p in independent_parts(problem) if missed_ids.intersection(p)]
    in_parts = {i for p in parts for i in p}

    released = _neighbourhood(problem, kept.missed)
    base = _keeping(problem, kept.state, released, seed)
    items = [problem.items[i] for i in sorted(released)]
    # The repair gets a quarter of the time, unless it already is the whole proof step.
    whole = in_parts <= released
    pool = _shortlist(base, kept.state, released)
    whole = whole and pool is None
    repair = solve_exact(base, items, left() if whole else left() / 4, pool=pool)
    if repair.verdict is ExactVerdict.FOUND:
        for i, h in sorted(repair.host_of.items()):
            base.place(problem.items[i], h)
        return Completion(ExactVerdict.FOUND, base, "cpsat-repair", time.perf_counter() - started)
    if whole:
        return Completion(
            repair.verdict,
            base,
            "cpsat",
            time.perf_counter() - started,
            _describe(problem, sorted(released)),
        )

    base = _keeping(problem, kept.state, in_parts, seed)
    verdict = ExactVerdict.FOUND
    for part in parts:
        if left() <= 0:
            verdict = ExactVerdict.UNKNOWN
            break
        out = solve_exact(base, [problem.items[i] for i in part], left())
        if out.verdict is ExactVerdict.NONE_EXISTS:
            return Completion(
                out.verdict, base, "cpsat", time.perf_counter() - started, _describe(problem, part)
            )
        if out.verdict is ExactVerdict.UNKNOWN:
            verdict = ExactVerdict.UNKNOWN  # a later part may still prove infeasibility
            continue
        for i, h in sorted(out.host_of.items()):
            base.place(problem.items[i], h)
    return Completion(verdict, base, "cpsat", time.perf_counter() - started)
