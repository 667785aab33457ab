"""The exact method: a CP-SAT model of the items greedy could not settle.

Why OR-Tools is a runtime dependency and not an extra: a placement service must never answer
"infeasible" when it only gave up (issue 15). The hand-written depth-first search it replaces
spent its 200,000-step budget (10-19 s) on cases CP-SAT places in 0.04 s, and could not prove
infeasibility beyond toy sizes. With the exact method optional, the same document would be
"placed" on one server and "cannot be placed" on another depending on what happens to be
installed; OR-Tools ships wheels for every platform Shoal runs on, so every install has it.

The model reads the solver's own `PlacementProblem` and a `SearchState` holding whatever stays
put (existing nodes, and items kept from a greedy pass when only a part is re-solved), so a
part of a large problem is as cheap to model as a small problem. Three answers: found, proven
impossible, or unknown within the time limit; `solver.py` turns them into placed, infeasible
and undecided.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from shoal.model.enums import Rule
from shoal.placement.problem import Item
from shoal.placement.state import SearchState

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

# Models larger than this (item x candidate host pairs) are not built: building alone would
# take longer than the answer is worth, and the caller reports "undecided" instead.
MAX_PAIRS = 250_000


class ExactVerdict(StrEnum):
    FOUND = "found"
    NONE_EXISTS = "none-exists"
    UNKNOWN = "unknown"
    """Neither found nor disproved within the time limit (or too big to model)."""


@dataclass(slots=True)
class ExactOutcome:
    verdict: ExactVerdict
    host_of: dict[int, int] = field(default_factory=dict)
    """Item index to host index, for the items solved, when found."""
    seconds: float = 0.0
    optimal: bool = False
    pairs: int = 0


def _candidates(state: SearchState, item: Item, pool: set[int] | None = None) -> list[int]:
    """Hosts `item` may take given what stays put: zones, pins, spread domains, free room
    (and only hosts of `pool`, when given)."""
    p = state.problem
    zones = item.zones
    bz = state.block_zone[item.block] if item.block >= 0 else None
    if bz is not None:
        zones = frozenset((bz,)) if zones is None or bz in zones else frozenset()
    within = pool
    hosts: Iterable[int] = (
        (item.fixed_host,)
        if item.fixed_host is not None
        else (sorted(pool) if pool is not None else range(len(p.host_zone)))
    )
    spreads = [c for ci, _ in item.memberships if (c := p.constraints[ci]).rule is Rule.SPREAD]
    d0, d1, d2, d3 = item.demand
    out = []
    for h in hosts:
        if within is not None and h not in within:
            continue
        if zones is not None and p.host_zone[h] not in zones:
            continue
        f = state.free[h]
        if f[0] < d0 or f[1] < d1 or f[2] < d2 or f[3] < d3:
            continue
        if any(
            (h if c.by_host else p.host_zone[h]) not in c.domain_set for c in spreads
        ):  # spread members stay inside the domains their skew is measured over
            continue
        out.append(h)
    return out


def _prune_lookalikes(
    state: SearchState, items: list[Item], cands: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Drop surplus interchangeable hosts: of hosts alike in zone and free room that nothing
    counts yet (no member, no pin), a placement uses at most one per item, so more are never
    needed. The dropped ones keep count 0, which host-scope spread still sees (as a domain
    no released item reaches)."""
    p = state.problem
    counted: set[int] = set(state.used_hosts)
    for c in p.constraints:
        if c.by_host:
            counted.update(state.counts[c.index])
    counted.update(it.fixed_host for it in items if it.fixed_host is not None)
    keep_per_look = len(items)
    seen: dict[tuple[object, ...], int] = {}
    dropped: set[int] = set()
    for h in sorted({h for hs in cands.values() for h in hs}):
        if h in counted:
            continue
        look = (p.host_zone[h], *state.free[h])
        n = seen.get(look, 0)
        if n >= keep_per_look:
            dropped.add(h)
        else:
            seen[look] = n + 1
    if not dropped:
        return cands
    return {i: [h for h in hs if h not in dropped] for i, hs in cands.items()}


def solve_exact(
    state: SearchState,
    items: list[Item],
    time_limit_s: float,
    *,
    min_hosts: bool = False,
    hint: Mapping[int, int] | None = None,
    deterministic_s: float | None = None,
    pool: set[int] | None = None,
) -> ExactOutcome:
    """Place `items` (none of them placed in `state`) around what `state` holds.

    `min_hosts`: among valid placements, the fewest hosts busy (hosts `state` already uses
    count as busy). `hint`: a known placement to start from. `deterministic_s`: also stop
    after this much of CP-SAT's deterministic time, so the answer does not depend on load.
    `pool`: consider only these hosts (a repair's shortlist); NONE_EXISTS then means none
    within the pool, which proves nothing about the whole problem.
    """
    started = time.perf_counter()
    p = state.problem
    cands = {it.index: _candidates(state, it, pool) for it in items}
    if any(not hs for hs in cands.values()):
        return ExactOutcome(ExactVerdict.NONE_EXISTS, seconds=time.perf_counter() - started)
    cands = _prune_lookalikes(state, items, cands)
    pairs = sum(len(hs) for hs in cands.values())
    if pairs > MAX_PAIRS:
        return ExactOutcome(ExactVerdict.UNKNOWN, pairs=pairs)

    # OR-Tools is imported only when the exact method runs: it costs ~0.3 s and pulls in
    # pandas, which a plan greedy answers never needs (issue 37; benchmarks/cli.py).
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x: dict[int, dict[int, cp_model.IntVar]] = {}
    on_host: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
    for it in items:
        row = x[it.index] = {h: m.new_bool_var("") for h in cands[it.index]}
        m.add_exactly_one(row.values())
        for h, v in row.items():
            on_host.setdefault(h, []).append((it.index, v))

    # Capacity, only where the candidates could overfill a host.
    for h, placed in on_host.items():
        free = state.free[h]
        for r in range(4):
            need = [(p.items[i].demand[r], v) for i, v in placed if p.items[i].demand[r]]
            if sum(d for d, _ in need) > free[r]:
                m.add(sum(d * v for d, v in need) <= free[r])

    def in_zone(i: int, z: int) -> cp_model.LinearExprT:
        return sum(v for h, v in x[i].items() if p.host_zone[h] == z)

    # Zone blocks not yet decided: every item of a block in the block's one zone.
    nz = len(p.zone_names)
    blocks: dict[int, list[int]] = {}
    for it in items:
        if it.block >= 0 and state.block_zone[it.block] is None:
            blocks.setdefault(it.block, []).append(it.index)
    for block in blocks.values():
        zb = [m.new_bool_var("") for _ in range(nz)]
        m.add_exactly_one(zb)
        for i in block:
            for z in range(nz):
                m.add(in_zone(i, z) == zb[z])

    # Hard counted rules, over the domains the released members could reach.
    mine = {it.index for it in items}
    for c in p.constraints:
        if c.rule not in (Rule.ANTI_AFFINITY, Rule.SPREAD):
            continue
        members = [
            (i, mult) for i in sorted(mine) for ci, mult in p.items[i].memberships if ci == c.index
        ]
        if not members:
            continue
        base = state.counts[c.index]
        reach: set[int] = set()
        for i, _ in members:
            reach.update(h if c.by_host else p.host_zone[h] for h in x[i])

        def count(
            d: int, members: list[tuple[int, int]] = members, by_host: bool = c.by_host
        ) -> cp_model.LinearExprT:
            if by_host:
                return sum(mult * x[i][d] for i, mult in members if d in x[i])
            return sum(mult * in_zone(i, d) for i, mult in members)

        if c.rule is Rule.ANTI_AFFINITY:
            for d in sorted(reach):
                m.add(count(d) <= c.limit - base.get(d, 0))
            continue
        total = sum(mult for _, mult in members) + sum(base.values())
        hi = m.new_int_var(0, total, "")
        lo = m.new_int_var(0, total, "")
        for d in c.domains:
            if d in reach:
                level = count(d) + base.get(d, 0)
                m.add(level <= hi)
                m.add(level >= lo)
            else:
                m.add(hi >= base.get(d, 0))
                m.add(lo <= base.get(d, 0))
        m.add(hi - lo <= c.limit)

    if min_hosts:
        busy: list[cp_model.IntVar] = []
        for h, placed in on_host.items():
            if h in state.used_hosts:
                continue
            b = m.new_bool_var("")
            for _, v in placed:
                m.add_implication(v, b)
            busy.append(b)
        m.minimize(sum(busy))
    for i, h in (hint or {}).items():
        if i in x and h in x[i]:
            for hh, v in x[i].items():
                m.add_hint(v, hh == h)

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(time_limit_s, 0.01)
    if deterministic_s is not None:
        solver.parameters.max_deterministic_time = deterministic_s
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    # The full LP relaxation: pigeonhole-like proofs (12 members on 11 hosts) take one worker
    # seconds without it and milliseconds with it.
    solver.parameters.linearization_level = 2
    status = solver.solve(m)
    seconds = time.perf_counter() - started
    if status == cp_model.INFEASIBLE:
        return ExactOutcome(ExactVerdict.NONE_EXISTS, seconds=seconds, pairs=pairs)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ExactOutcome(ExactVerdict.UNKNOWN, seconds=seconds, pairs=pairs)
    host_of = {i: next(h for h, v in row.items() if solver.value(v)) for i, row in x.items()}
    return ExactOutcome(
        ExactVerdict.FOUND,
        host_of,
        seconds=seconds,
        optimal=status == cp_model.OPTIMAL,
        pairs=pairs,
    )
