"""The fast path: place items one by one, most constrained first, never looking back.

Each item walks the filter chain over zones, then over hosts in the chosen zone (taken from the
sorted capacity index, so most items look at a handful of hosts). Zone-affinity blocks are the
one place it retries: a block is placed whole in one zone or undone and tried in the next.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from shoal.model.enums import Objective, Rule, Scope
from shoal.placement.filters import (
    CAPACITY,
    HOST_FILTERS,
    ZONE_FILTERS,
    Filter,
    first_rejection,
)
from shoal.placement.problem import RAM, VCPU, VOL, Item, PlacementProblem, rule_key
from shoal.placement.scorers import (
    ObjectiveScore,
    SpreadBalance,
    ZoneScorer,
    affinity_hosts,
    has_soft_host_rules,
    soft_host_breaks,
    zone_keys,
    zone_scorers,
)
from shoal.placement.state import SearchState

_ANTI_ZONE = rule_key(Rule.ANTI_AFFINITY, Scope.ZONE)
_SPREAD_ZONE = rule_key(Rule.SPREAD, Scope.ZONE)

# How many more hosts to look at, once one is found that only breaks a soft rule, before
# settling for it: bounds the cost of soft rules on large inventories.
SOFT_LOOKAHEAD = 64


@dataclass(slots=True)
class GreedyOutcome:
    state: SearchState
    failed: Item | None
    missed: list[Item] = field(default_factory=list)
    """With `keep_going`: every item left unplaced (a failed block leaves all its items)."""


_HARD_KEYS = frozenset(
    rule_key(rule, scope) for rule in (Rule.ANTI_AFFINITY, Rule.SPREAD) for scope in Scope
)


def constrainedness(problem: PlacementProblem, item: Item) -> tuple[float, ...]:
    """Sort key: pinned items, then fewest zones, most hard rules, biggest demand."""
    nz = len(item.zones) if item.zones is not None else len(problem.zone_names)
    hard = 0
    for key, members in item.rules.items():  # one entry per membership, by rule and scope
        if key in _HARD_KEYS:
            hard += len(members)
    d = item.demand
    size = d[VCPU] / 8 + d[RAM] / 16384 + d[VOL] / 1000
    return (0 if item.fixed_host is not None else 1, nz, -hard, -size)


def work_units(
    problem: PlacementProblem, rng: random.Random | None = None
) -> tuple[list[int], list[list[int]]]:
    """The order the greedy places items in: a zone block whole, other items alone.

    Answers (order, blocks): an entry `i >= 0` of `order` is item `i` alone, an entry
    `-1 - k` is `blocks[k]`, a zone block's items, most constrained first. (A list per item
    cost more, on a large cluster, than ordering them.)

    Order: constrainedness, then (with `rng`, on retries) a random jitter, then the first
    item's index (a block's first as listed). Without `rng` the order is bucketed: a large
    cluster has a handful of distinct ranks (replicas of a group share theirs), so only the
    distinct ranks are sorted: linear in the items, where one sort of every unit grew as
    n log n.
    """
    items = problem.items
    memo: dict[tuple[int, int, bool], tuple[float, ...]] = {}

    def rank(it: Item) -> tuple[float, ...]:
        if it.rules:
            return constrainedness(problem, it)
        # Without rules the rank depends only on the demand, zones and pin, which replicas
        # of a group share (the same objects): one computation per group.
        key = (id(it.demand), id(it.zones), it.fixed_host is None)
        r = memo.get(key)
        if r is None:
            r = memo[key] = constrainedness(problem, it)
        return r

    listed = [b for b in problem.blocks if b]
    firsts = [b[0] for b in listed]
    blocks = [sorted(b, key=lambda i: (rank(items[i]), i)) for b in listed]
    if rng is not None:
        # (rank, jitter, first item, entry): the first item is unique, so entries are never
        # compared and no key function is needed.
        keyed = [(rank(items[b[0]]), rng.random(), firsts[k], -1 - k) for k, b in enumerate(blocks)]
        keyed.extend((rank(it), rng.random(), it.index, it.index) for it in items if it.block < 0)
        keyed.sort()
        return [ku[3] for ku in keyed], blocks
    by_rank: dict[tuple[float, ...], list[int]] = {}
    for k, b in enumerate(blocks):  # a block ranks as its most constrained item, its first
        by_rank.setdefault(rank(items[b[0]]), []).append(-1 - k)
    with_blocks = set(by_rank)
    for it in items:
        if it.block < 0:
            r = rank(it)
            bucket = by_rank.get(r)
            if bucket is None:
                bucket = by_rank[r] = []
            bucket.append(it.index)
    order: list[int] = []
    for r in sorted(by_rank):
        bucket = by_rank[r]
        if r in with_blocks:  # blocks came first: put every entry back in first-item order
            bucket.sort(key=lambda e: e if e >= 0 else firsts[-1 - e])
        order.extend(bucket)
    return order, blocks


def has_zone_filters(item: Item) -> bool:
    """Whether any zone filter can reject a zone for `item` (most items: none can)."""
    return (
        item.zones is not None
        or item.block >= 0
        or item.fixed_host is not None
        or _ANTI_ZONE in item.rules
        or _SPREAD_ZONE in item.rules
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """What can matter when placing one look of item: the filters that can reject it, the
    zone scorers that can reorder zones for it, whether soft host rules apply. Items of one
    node group share a plan; filters and scorers that cannot matter are not asked."""

    zone_filters: tuple[Filter, ...]
    host_filters: tuple[Filter, ...]
    scorers: tuple[ZoneScorer, ...]
    soft: bool
    roomiest: bool = False
    """No pinned host, no soft host rule, objective spread: the host is the emptiest with
    room that `rest` passes (`_roomiest`), as for every item of a large cluster."""
    rest: tuple[Filter, ...] = ()
    """The host filters besides capacity, for `_roomiest`."""
    objective_zone: int = 0
    """-1 (spread) or 1 (pack) when the objective is the only zone scorer, or the last after
    spread balance (`spread_first`): the best zone is then read off the state with no sort
    key per zone (most items of a large cluster); 0 otherwise."""
    spread_first: bool = False
    """Spread balance, then the objective: the zones with the fewest members first."""


def plans(
    problem: PlacementProblem,
    scorers: tuple[ZoneScorer, ...],
    objective: Objective,
) -> list[Plan]:
    """The plan of every item, by item index."""
    memo: dict[tuple[object, ...], Plan] = {}
    out: list[Plan] = []
    for it in problem.items:
        key = (it.zones is not None, it.block >= 0, it.fixed_host is not None, *it.rules)
        plan = memo.get(key)
        if plan is None:
            host_filters = tuple(f for f in HOST_FILTERS if f.can_reject(it))
            soft = has_soft_host_rules(it)
            active = tuple(s for s in scorers if s.applies(it))
            last = active[-1] if active else None
            spread_first = len(active) == 2 and isinstance(active[0], SpreadBalance)
            only = last if len(active) == 1 or spread_first else None
            plan = memo[key] = Plan(
                tuple(f for f in ZONE_FILTERS if f.can_reject(it)),
                host_filters,
                active,
                soft,
                not soft and objective is not Objective.PACK and it.fixed_host is None,
                tuple(f for f in host_filters if f is not CAPACITY),
                (-1 if only.sign < 0 else 1) if isinstance(only, ObjectiveScore) else 0,
                spread_first and isinstance(only, ObjectiveScore),
            )
        out.append(plan)
    return out


def feasible_zones(state: SearchState, item: Item) -> list[int]:
    if not has_zone_filters(item):
        return list(range(len(state.problem.zone_names)))
    return [
        z
        for z in range(len(state.problem.zone_names))
        if first_rejection(ZONE_FILTERS, state, item, z) is None
    ]


def pick_host(
    state: SearchState, item: Item, zone: int, objective: Objective, plan: Plan
) -> int | None:
    """The preferred host in `zone` that passes every host filter, or None (for plans
    without `roomiest`; `place_item` asks `_roomiest` for the others)."""
    filters = plan.host_filters
    if item.fixed_host is not None:
        h = item.fixed_host
        if state.problem.host_zone[h] == zone and first_rejection(filters, state, item, h) is None:
            return h
        return None
    soft = plan.soft
    if soft:
        for h in affinity_hosts(state, item, zone):
            if first_rejection(filters, state, item, h) is None and not soft_host_breaks(
                state, item, h
            ):
                return h
    fallback: int | None = None
    budget = SOFT_LOOKAHEAD
    for h in state.candidates(zone, item, pack=objective is Objective.PACK):
        if first_rejection(filters, state, item, h) is not None:
            continue
        if not soft or not soft_host_breaks(state, item, h):
            return h
        if fallback is None:
            fallback = h
        budget -= 1
        if budget <= 0:
            break
    return fallback


def _roomiest(
    state: SearchState, item: Item, zone: int, rest: tuple[Filter, ...] = ()
) -> int | None:
    """`pick_host` for a plan with `roomiest`: the emptiest host with room that the other
    host filters `rest` pass, read straight off the index (capacity checked inline).

    `state.candidates` for spread, unrolled: the hot path of a large cluster.
    """
    free = state.free
    d0, d1, d2, d3 = item.demand
    k = 0 if d1 > 0 or d3 == 0 else 1
    low = (d1 if k == 0 else d3) << state.bits  # the smallest entry with that much free
    chunks = state.index[zone][k].chunks
    by_rank, mask = state.by_rank, state.mask
    for c in reversed(chunks):
        for j in range(len(c) - 1, -1, -1):
            entry = c[j]
            if entry < low:
                return None  # emptiest first: every host from here on has less
            h = by_rank[entry & mask]
            f = free[h]
            if (f[0] >= d0 and f[1] >= d1 and f[2] >= d2 and f[3] >= d3) and (
                not rest or first_rejection(rest, state, item, h) is None
            ):
                return h
    return None


def _host_in_zone(
    state: SearchState, item: Item, zone: int, objective: Objective, plan: Plan
) -> int | None:
    """The host `item` would take in `zone`, or None when a zone filter rejects the zone
    or no host in it passes the host filters."""
    filters = plan.zone_filters
    if filters and first_rejection(filters, state, item, zone) is not None:
        return None
    if plan.roomiest:
        return _roomiest(state, item, zone, plan.rest)
    return pick_host(state, item, zone, objective, plan)


def _best_zone(state: SearchState, item: Item, plan: Plan, fraction: list[float]) -> int | None:
    """The zone with the least key (`zone_keys`: spread balance's count when it applies,
    the objective's score, then the zone) without making the keys: the first zone with the
    most free room (spread) or the least (pack), among those with the fewest members of the
    item's one zone spread. None when the general way must answer (several spreads)."""
    zones: list[int] | range = range(len(fraction))
    if plan.spread_first:
        rules = item.rules[_SPREAD_ZONE]
        if len(rules) != 1:
            return None
        counts = state.zone_counts[rules[0][0].index]
        low = min(counts)
        if counts.count(low) == 1:
            return counts.index(low)
        zones = [z for z, c in enumerate(counts) if c == low]
    pick = max if plan.objective_zone < 0 else min
    return pick(zones, key=fraction.__getitem__)


def place_item(state: SearchState, item: Item, objective: Objective, plan: Plan) -> int | None:
    # Soft host rules win over the zone order: a host that breaks one is kept only as a
    # fallback while a later zone may still offer one that does not (soft affinity with a
    # member in az1 must not settle for the emptier az2).
    soft = plan.soft
    # Zones are ordered lazily: the best zone (the least key) nearly always has a host, so
    # it is tried before the others are sorted, and most items never sort them. The order
    # does not depend on the filters, so zones are filtered as they come.
    if plan.objective_zone and item.zones is None:
        d = item.demand
        fraction = state.zone_fraction[0 if d[RAM] > 0 or d[VOL] == 0 else 1]
        z = _best_zone(state, item, plan, fraction) if fraction else None
        if z is not None:
            h = _host_in_zone(state, item, z, objective, plan)
            if h is not None and not (soft and soft_host_breaks(state, item, h)):
                state.place(item, h)
                return h
            # No host there: the general way below, which tries that zone first again.
    zones = state.all_zones if item.zones is None else sorted(item.zones)
    keys = zone_keys(plan.scorers, state, item, zones)
    if not keys:
        return None  # no zone allowed at all (build_problem has said so already)
    best = min(keys)
    h = _host_in_zone(state, item, best[-1], objective, plan)
    if h is not None and not (soft and soft_host_breaks(state, item, h)):
        state.place(item, h)
        return h
    fallback = h
    keys.sort()
    for key in keys[1:]:  # keys[0] is `best`: every key ends with its own zone
        h = _host_in_zone(state, item, key[-1], objective, plan)
        if h is None:
            continue
        if soft and soft_host_breaks(state, item, h):
            fallback = h if fallback is None else fallback
            continue
        state.place(item, h)
        return h
    if fallback is not None:
        state.place(item, fallback)
    return fallback


def _block_zones(state: SearchState, block: list[int], objective: Objective) -> list[int]:
    """Zones to try for a zone-affinity block: those that fit its total demand, best first."""
    p = state.problem
    fixed = state.block_zone[p.items[block[0]].block]
    if fixed is not None:
        return [fixed]
    need_ram = sum(p.items[i].demand[RAM] for i in block)
    need_vol = sum(p.items[i].demand[VOL] for i in block)
    zones = [
        z
        for z in range(len(p.zone_names))
        if state.zone_free[z][0] >= need_ram and state.zone_free[z][1] >= need_vol
    ]
    sign = -1 if objective is Objective.SPREAD else 1
    return sorted(zones, key=lambda z: (sign * state.zone_free_fraction(z, p.items[block[0]]), z))


def greedy(
    problem: PlacementProblem,
    objective: Objective,
    seed: int = 0,
    shuffle: bool = False,
    keep_going: bool = False,
) -> GreedyOutcome:
    """One greedy pass; `shuffle` perturbs ties in the order (used for retries). With
    `keep_going` it places all it can and lists the rest, so the exact method can re-solve
    just the part around them."""
    state = SearchState(problem, seed, track_used=objective is Objective.PACK)
    plan = plans(problem, zone_scorers(objective), objective)
    rng = random.Random(seed) if shuffle else None
    missed: list[Item] = []
    order, blocks = work_units(problem, rng)
    items = problem.items
    for entry in order:
        if entry >= 0:
            item = items[entry]
            if place_item(state, item, objective, plan[entry]) is None:
                if not keep_going:
                    return GreedyOutcome(state, item)
                missed.append(item)
            continue
        unit = blocks[-1 - entry]
        first = items[unit[0]]
        failed: Item | None = None
        for z in _block_zones(state, unit, objective):
            mark = state.mark()
            state.fix_block_zone(first.block, z)
            failed = None
            for i in unit:
                if place_item(state, items[i], objective, plan[i]) is None:
                    failed = items[i]
                    break
            if failed is None:
                break
            state.undo_to(mark)
        else:
            failed = failed or first
        if failed is not None:
            if not keep_going:
                return GreedyOutcome(state, failed)
            missed.extend(items[i] for i in unit if state.host_of[i] < 0)
    return GreedyOutcome(state, missed[0] if missed else None, missed)
