"""Named filters: the hard rules, one small class each, asked of a zone or of a host.

A filter answers None when a candidate is fine, or a typed `Rejection` when it is not; the
solver stops at the first rejection on its hot path, and `explain` asks every filter of every
candidate to say why an item found no home. The chain order (see `ZONE_FILTERS`,
`HOST_FILTERS`) puts the cheapest and most selective checks first.
"""

from __future__ import annotations

from typing import Protocol

from shoal.model.enums import Rule, Scope
from shoal.placement.problem import RESOURCE_NAMES, Item, rule_key
from shoal.placement.rejection import (
    HOST_PINNED,
    ZONE_AFFINITY,
    ZONE_NOT_ALLOWED,
    ZONE_PINNED,
    Rejection,
    lacking,
)
from shoal.placement.state import SearchState


class Filter(Protocol):
    """A hard rule checked against one candidate domain (zone index or host index)."""

    name: str

    def can_reject(self, item: Item) -> bool:
        """False when this filter passes every domain for `item` (the greedy skips it)."""
        ...

    def __call__(self, state: SearchState, item: Item, domain: int) -> Rejection | None: ...


class AllowedZone:
    """The item's own zones, its zone block's zone, and the zone of a host it is pinned to."""

    name = "zone"

    def can_reject(self, item: Item) -> bool:
        return item.zones is not None or item.block >= 0 or item.fixed_host is not None

    def __call__(self, state: SearchState, item: Item, domain: int) -> Rejection | None:
        if item.zones is not None and domain not in item.zones:
            return ZONE_NOT_ALLOWED
        if item.block >= 0:
            bz = state.block_zone[item.block]
            if bz is not None and bz != domain:
                return ZONE_AFFINITY
        if item.fixed_host is not None and state.problem.host_zone[item.fixed_host] != domain:
            return ZONE_PINNED
        return None


class _Counted:
    """Shared shape of the count-per-domain rules (anti-affinity and spread)."""

    key: str

    def can_reject(self, item: Item) -> bool:
        return self.key in item.rules

    def __call__(self, state: SearchState, item: Item, domain: int) -> Rejection | None:
        for c, m in item.rules.get(self.key, ()):
            count = state.counts[c.index].get(domain, 0) + m
            if c.rule is Rule.ANTI_AFFINITY:
                if count > c.limit:
                    return c.rejection
            elif domain not in c.domain_set:
                return c.rejection
            else:
                low = state.minimum[c.index]
                # Within the skew of the current minimum is always fine (the fast path);
                # beyond it, only hopeless when later members cannot even it out.
                if (count - low > c.limit or state.maximum[c.index] - low > c.limit) and (
                    state.spread_shortfall(c, domain, m) > state.remaining[c.index] - m
                ):
                    return c.rejection
        return None


class ZoneAntiAffinity(_Counted):
    name = "zone-anti-affinity"
    key = rule_key(Rule.ANTI_AFFINITY, Scope.ZONE)


class ZoneSpread(_Counted):
    name = "zone-spread"
    key = rule_key(Rule.SPREAD, Scope.ZONE)


class HostAntiAffinity(_Counted):
    name = "host-anti-affinity"
    key = rule_key(Rule.ANTI_AFFINITY, Scope.HOST)


class HostSpread(_Counted):
    name = "host-spread"
    key = rule_key(Rule.SPREAD, Scope.HOST)


class PinnedHost:
    """Nodes tied by affinity to an existing node go to that node's host."""

    name = "pinned"

    def can_reject(self, item: Item) -> bool:
        return item.fixed_host is not None

    def __call__(self, state: SearchState, item: Item, domain: int) -> Rejection | None:
        if item.fixed_host is not None and item.fixed_host != domain:
            return HOST_PINNED
        return None


_LACKING = tuple(lacking(name) for name in RESOURCE_NAMES)


class Capacity:
    """Free vcpus, RAM, root disk and volume storage all cover the item's demand."""

    name = "capacity"

    def can_reject(self, item: Item) -> bool:
        return True

    def __call__(self, state: SearchState, item: Item, domain: int) -> Rejection | None:
        f = state.free[domain]
        d = item.demand
        for r in range(4):
            if f[r] < d[r]:
                return _LACKING[r]
        return None


# Zone rules first: rejecting a zone rejects all its hosts at once.
ZONE_FILTERS: tuple[Filter, ...] = (AllowedZone(), ZoneAntiAffinity(), ZoneSpread())
# Pinning is the most selective; capacity is cheap; counted rules touch dictionaries.
CAPACITY = Capacity()
HOST_FILTERS: tuple[Filter, ...] = (PinnedHost(), CAPACITY, HostAntiAffinity(), HostSpread())


def first_rejection(
    filters: tuple[Filter, ...], state: SearchState, item: Item, domain: int
) -> Rejection | None:
    for f in filters:
        why = f(state, item, domain)
        if why is not None:
            return why
    return None
