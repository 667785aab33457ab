"""Named scorers: the soft rules and the objective, as sort keys over candidate zones and hosts.

Lower keys come first. Zones are ordered by a tuple of scorer keys (`zone_order`), which is
where soft rules win over the objective: a zone that keeps a soft rule is tried before a
zone that is merely emptier. Within a zone, hosts come from the sorted capacity index
(emptiest first to spread, fullest first to pack); `host_preference` then moves hosts that keep
soft rules to the front.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import neg
from typing import Any, Protocol

from shoal.model.enums import Objective, Rule, Scope
from shoal.placement.problem import Item, rule_key
from shoal.placement.state import SearchState

_SPREAD = rule_key(Rule.SPREAD, Scope.ZONE)
_SOFT_ANTI_ZONE = rule_key(Rule.SOFT_ANTI_AFFINITY, Scope.ZONE)
_SOFT_AFF_ZONE = rule_key(Rule.SOFT_AFFINITY, Scope.ZONE)
_SOFT_ANTI_HOST = rule_key(Rule.SOFT_ANTI_AFFINITY, Scope.HOST)
_SOFT_AFF_HOST = rule_key(Rule.SOFT_AFFINITY, Scope.HOST)


class ZoneScorer(Protocol):
    name: str

    def applies(self, item: Item) -> bool:
        """False when the score is the same for every zone (so ordering can skip it)."""
        ...

    def __call__(self, state: SearchState, item: Item, zone: int) -> float: ...

    def scores(self, state: SearchState, item: Item, zones: Sequence[int]) -> Iterable[float]:
        """`self(state, item, z)` for every zone of `zones` (ascending), in one go: an
        iterable read at once (it may be a view of the state, never kept)."""
        ...


class SpreadBalance:
    """Fill the zone with the fewest members of the item's spread groupings first."""

    name = "spread-balance"

    def applies(self, item: Item) -> bool:
        return _SPREAD in item.rules

    def __call__(self, state: SearchState, item: Item, zone: int) -> float:
        return sum(state.counts[c.index].get(zone, 0) for c, _ in item.rules.get(_SPREAD, ()))

    def scores(self, state: SearchState, item: Item, zones: Sequence[int]) -> Iterable[float]:
        rules = item.rules.get(_SPREAD, ())
        if len(rules) == 1:
            counts = state.zone_counts[rules[0][0].index]
            # `zones` is ascending: all of them is the list itself (read before any change).
            return counts if len(zones) == len(counts) else [counts[z] for z in zones]
        return [self(state, item, z) for z in zones]


class SoftZoneRules:
    """Count the soft zone rules a zone would break: soft anti-affinity over its limit, soft
    affinity away from members already placed."""

    name = "soft-zone-rules"

    def applies(self, item: Item) -> bool:
        return _SOFT_ANTI_ZONE in item.rules or _SOFT_AFF_ZONE in item.rules

    def __call__(self, state: SearchState, item: Item, zone: int) -> float:
        return _soft_breaks(state, item, zone, _SOFT_ANTI_ZONE, _SOFT_AFF_ZONE)

    def scores(self, state: SearchState, item: Item, zones: Sequence[int]) -> Iterable[float]:
        return [self(state, item, z) for z in zones]


class ObjectiveScore:
    """Spread: the zone with the most free capacity first. Pack: the fullest zone first."""

    name = "objective"

    def __init__(self, objective: Objective) -> None:
        self.sign = -1.0 if objective is Objective.SPREAD else 1.0

    def applies(self, item: Item) -> bool:
        return True

    def __call__(self, state: SearchState, item: Item, zone: int) -> float:
        return self.sign * state.zone_free_fraction(zone, item)

    def scores(self, state: SearchState, item: Item, zones: Sequence[int]) -> Iterable[float]:
        fraction = state.zone_fraction[state.index_key(item)]
        if len(zones) == len(fraction):  # ascending: every zone
            return map(neg, fraction) if self.sign < 0 else fraction
        if self.sign < 0:
            return [-fraction[z] for z in zones]
        return [fraction[z] for z in zones]


def zone_scorers(objective: Objective) -> tuple[ZoneScorer, ...]:
    # Hard-rule balance first (spread skew is cheapest kept by filling the emptiest domain),
    # then soft rules, then the objective.
    return (SpreadBalance(), SoftZoneRules(), ObjectiveScore(objective))


def zone_order(
    scorers: tuple[ZoneScorer, ...], state: SearchState, item: Item, zones: Sequence[int]
) -> list[int]:
    # Scorers that score every zone alike cannot change the order; most items have one left.
    ranked = ranked_zones(tuple(s for s in scorers if s.applies(item)), state, item, zones)
    return [key[-1] for key in ranked]


def ranked_zones(
    active: tuple[ZoneScorer, ...], state: SearchState, item: Item, zones: Sequence[int]
) -> list[tuple[Any, ...]]:
    """The zones' sort keys in order, best first: the zone is each key's last element."""
    return sorted(zone_keys(active, state, item, zones))


def zone_keys(
    active: tuple[ZoneScorer, ...], state: SearchState, item: Item, zones: Sequence[int]
) -> list[tuple[Any, ...]]:
    """Each zone's sort key (scorer keys, then the zone itself), in `zones` order.

    With the scorers that apply to `item` already chosen. The greedy takes the least key
    first and sorts the rest only when that zone has no host, so most items never sort.
    """
    if len(active) == 1:
        return list(zip(active[0].scores(state, item, zones), zones, strict=True))
    if len(active) == 2:  # spread balance and the objective: every item of a spread
        first, second = active
        return list(
            zip(
                first.scores(state, item, zones),
                second.scores(state, item, zones),
                zones,
                strict=True,
            )
        )
    return list(zip(*(s.scores(state, item, zones) for s in active), zones, strict=True))


def _soft_breaks(state: SearchState, item: Item, domain: int, anti: str, aff: str) -> int:
    broken = 0
    for c, m in item.rules.get(anti, ()):
        if state.counts[c.index].get(domain, 0) + m > c.limit:
            broken += 1
    for c, _ in item.rules.get(aff, ()):
        counts = state.counts[c.index]
        if counts and domain not in counts:
            broken += 1
    return broken


def soft_host_breaks(state: SearchState, item: Item, host: int) -> int:
    """How many soft host rules placing `item` on `host` would break."""
    return _soft_breaks(state, item, host, _SOFT_ANTI_HOST, _SOFT_AFF_HOST)


def affinity_hosts(state: SearchState, item: Item, zone: int) -> Iterator[int]:
    """Hosts in `zone` already holding members of the item's soft host-affinity groupings."""
    for c, _ in item.rules.get(_SOFT_AFF_HOST, ()):
        for h in state.counts[c.index]:
            if state.problem.host_zone[h] == zone:
                yield h


def has_soft_host_rules(item: Item) -> bool:
    return _SOFT_ANTI_HOST in item.rules or _SOFT_AFF_HOST in item.rules
