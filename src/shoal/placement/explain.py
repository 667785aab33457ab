"""Why a cluster cannot be placed, in the user's own names.

Two sources of reasons: *prechecks*, cheap necessary conditions tested before any search
(a node no host can hold, an anti-affinity grouping with fewer domains than it needs, a spread
over a zone with no room), and *diagnosis* of the item a search got stuck on, where every filter
is asked about every candidate and the rejections are counted.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from shoal.model.enums import Rule
from shoal.placement.filters import HOST_FILTERS, ZONE_FILTERS, first_rejection
from shoal.placement.problem import RESOURCE_NAMES, Constraint, Item, PlacementProblem
from shoal.placement.rejection import Rejection, RejectionKind
from shoal.placement.state import SearchState


def and_list(names: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _allowed_hosts(problem: PlacementProblem, item: Item) -> Sequence[int]:
    if item.fixed_host is not None:
        return [item.fixed_host]
    if item.zones is None:
        return range(len(problem.host_zone))
    return [h for h, z in enumerate(problem.host_zone) if z in item.zones]


def _describe_demand(item: Item) -> str:
    return ", ".join(f"{item.demand[r]} {RESOURCE_NAMES[r]}" for r in range(4) if item.demand[r])


def _member_flavors(items: list[Item]) -> str:
    """What the members look like: "m1.large with a 100 GiB volume", the two commonest."""
    looks: Counter[str] = Counter()
    for it in items:
        flavors = [n.flavor_name for n in it.nodes if n.flavor_name]
        vol = sum(n.demand.volume_gb for n in it.nodes)
        text = " + ".join(flavors)
        if vol:
            text = f"{text} with a {vol} GiB volume" if text else f"a {vol} GiB volume"
        looks[text] += 1
    return " or ".join(name for name, _ in looks.most_common(2)) or "its members"


class _Room:
    """The hosts with room (fresh) for one look of item, found lazily: most prechecks are
    settled by the first few, so the inventory is rarely read whole."""

    def __init__(self, problem: PlacementProblem, item: Item, by_zone: list[list[int]]) -> None:
        self.problem = problem
        self.demand = item.demand
        self.hosts = _allowed_hosts(problem, item)
        self.by_zone = by_zone
        self.allowed = item.zones
        self.pinned = item.fixed_host
        self.found: list[int] = []
        self.next = 0
        self._zones: set[int] | None = None

    def _fits(self, h: int) -> bool:
        f, d = self.problem.base_free[h], self.demand
        return f[0] >= d[0] and f[1] >= d[1] and f[2] >= d[2] and f[3] >= d[3]

    def first(self, n: int) -> list[int]:
        """At least `n` hosts with room, or all there are."""
        while len(self.found) < n and self.next < len(self.hosts):
            h = self.hosts[self.next]
            self.next += 1
            if self._fits(h):
                self.found.append(h)
        return self.found

    def zones(self) -> set[int]:
        """The zones with at least one host with room."""
        if self._zones is None:
            if self.pinned is not None:
                hosts = self.first(1)
                self._zones = {self.problem.host_zone[h] for h in hosts}
            else:
                zones = range(len(self.by_zone)) if self.allowed is None else self.allowed
                self._zones = {z for z in zones if any(self._fits(h) for h in self.by_zone[z])}
        return self._zones


def prechecks(problem: PlacementProblem) -> list[str]:
    """Necessary conditions; any reason returned proves the request infeasible."""
    reasons = _precheck_existing(problem)
    if reasons:
        return reasons
    zones = problem.zone_names
    # Items of one node group look alike: one lazy "hosts with room" per look.
    by_look: dict[tuple[object, ...], _Room] = {}
    room: dict[int, _Room] = {}
    by_zone: list[list[int]] = [[] for _ in zones]
    for h, z in enumerate(problem.host_zone):
        by_zone[z].append(h)
    for item in problem.items:
        look = (item.demand, item.zones, item.fixed_host)
        hosts = by_look.get(look)
        if hosts is None:
            hosts = by_look[look] = _Room(problem, item, by_zone)
        room[item.index] = hosts
        if not hosts.found and not hosts.first(1):
            where = (
                f" in {', '.join(zones[z] for z in sorted(item.zones))}"
                if item.zones is not None
                else ""
            )
            reasons.append(
                f"{item.label()} fits on no host{where}: it needs {_describe_demand(item)}"
            )
    if reasons:
        return reasons
    members: dict[int, list[Item]] = {}
    for item in problem.items:
        for ci, _ in item.memberships:
            members.setdefault(ci, []).append(item)
    for c in problem.constraints:
        reasons.extend(_precheck_constraint(problem, c, members.get(c.index, []), room))
    reasons.extend(_precheck_totals(problem))
    return reasons


def _precheck_existing(problem: PlacementProblem) -> list[str]:
    """What already exists (and what others use) breaks a hard rule before anything moves.

    Existing nodes never move, so the search cannot repair this; without these checks it
    would "succeed" and leave the breach to `verify_placement`.
    """
    reasons: list[str] = []
    hosts = problem.inventory.hosts
    for h, free in enumerate(problem.base_free):
        if min(free) >= 0:
            continue  # the common case: read each host once, word only the few over
        cap = (hosts[h].vcpus, hosts[h].ram_mb, hosts[h].disk_gb, hosts[h].volume_gb)
        for r in range(4):
            if free[r] < 0:
                reasons.append(
                    f"host {hosts[h].name} is already over capacity on {RESOURCE_NAMES[r]}: "
                    f"existing nodes and other users take {cap[r] - free[r]} of {cap[r]}"
                )
    if not problem.existing_units:
        return reasons  # nothing exists yet: no rule can be broken already
    for n in problem.nodes:
        at = problem.existing_units.get(n.unit)
        if at is None or not n.zones:
            continue
        zone = problem.zone_names[problem.host_zone[at]]
        if zone not in n.zones:
            reasons.append(
                f"node {n.name} may only be in {and_list(list(n.zones))}, but {n.unit} "
                f"already sits on host {hosts[at].name} in {zone}"
            )
    with_new_members = {ci for it in problem.items for ci, _ in it.memberships}
    for c in problem.constraints:
        if c.rule not in (Rule.ANTI_AFFINITY, Rule.SPREAD):
            continue
        on = [problem.existing_units[u] for u in sorted(c.units) if u in problem.existing_units]
        if not on:
            continue  # none of its members exists yet: nothing to break
        counts = Counter(h if c.by_host else problem.host_zone[h] for h in on)
        g = c.grouping
        name = [h.name for h in hosts] if c.by_host else problem.zone_names
        if c.rule is Rule.ANTI_AFFINITY:
            reasons.extend(
                f"{g.describe()}: {k} of its members already sit in {g.scope} {name[d]}"
                for d, k in sorted(counts.items())
                if k > c.limit
            )
        elif c.index not in with_new_members and c.domains:
            per = sorted(c.domains, key=lambda d: (counts.get(d, 0), d))
            low, high = per[0], per[-1]
            if counts.get(high, 0) - counts.get(low, 0) > c.limit:
                reasons.append(
                    f"{g.describe()}: all its members exist already, {counts.get(high, 0)} in "
                    f"{g.scope} {name[high]} and {counts.get(low, 0)} in {name[low]}"
                )
    return reasons


def _precheck_constraint(
    problem: PlacementProblem, c: Constraint, members: list[Item], room: dict[int, _Room]
) -> list[str]:
    if not members or c.rule not in (Rule.ANTI_AFFINITY, Rule.SPREAD):
        return []
    existing = [problem.existing_units[u] for u in c.units if u in problem.existing_units]
    n = len(existing) + sum(m for it in members for ci, m in it.memberships if ci == c.index)

    looks = list(dict.fromkeys(room[it.index] for it in members))
    needed = math.ceil(n / c.limit)
    with_room: set[int]
    if c.by_host:
        # Each look either has `needed` hosts with room or is exhausted: when the union
        # falls short, every look was read whole and the count is exact.
        with_room = set(existing).union(*(look.first(needed) for look in looks))
    else:
        with_room = {problem.host_zone[h] for h in existing}.union(*(lk.zones() for lk in looks))
    g = c.grouping
    if c.rule is Rule.ANTI_AFFINITY and len(with_room) < needed:
        if c.by_host:
            have = f"only {len(with_room)} {'has' if len(with_room) == 1 else 'have'} room"
        elif with_room:
            names = [problem.zone_names[z] for z in sorted(with_room)]
            have = f"only {and_list(names)} {'has' if len(names) == 1 else 'have'} room"
        else:
            have = "none has room"
        flavors = _member_flavors(members)
        return [f"{g.describe()} needs {needed} {g.scope}s with room for {flavors}; {have}"]
    if c.rule is Rule.SPREAD and not c.by_host and c.domains:
        lowest = math.ceil(n / len(c.domains)) - c.limit
        empty = [problem.zone_names[z] for z in c.domains if z not in with_room]
        if lowest > 0 and empty:
            flavors = _member_flavors(members)
            return [
                f"{g.describe()} needs at least {lowest} member(s) in every zone of "
                f"{', '.join(problem.zone_names[z] for z in c.domains)}, "
                f"but {', '.join(empty)} has no room for {flavors}"
            ]
    return []


def _precheck_totals(problem: PlacementProblem) -> list[str]:
    need = [0, 0, 0, 0]
    nz = len(problem.zone_names)
    zones: set[int] = set()
    for it in problem.items:
        d = it.demand
        need[0] += d[0]
        need[1] += d[1]
        need[2] += d[2]
        need[3] += d[3]
        if len(zones) < nz:
            zones.update(it.zones if it.zones is not None else range(nz))
    have = [0, 0, 0, 0]
    host_zone = problem.host_zone
    for h, f in enumerate(problem.base_free):
        if host_zone[h] in zones:
            # max(v, 0), without a call per value: this reads every host.
            v0, v1, v2, v3 = f
            have[0] += v0 if v0 > 0 else 0
            have[1] += v1 if v1 > 0 else 0
            have[2] += v2 if v2 > 0 else 0
            have[3] += v3 if v3 > 0 else 0
    return [
        f"the cluster needs {need[r]} {RESOURCE_NAMES[r]} but only {have[r]} are free "
        f"in {', '.join(problem.zone_names[z] for z in sorted(zones))}"
        for r in range(4)
        if need[r] > have[r]
    ]


_SAY_FIXED = {
    RejectionKind.ZONE_NOT_ALLOWED: "are outside the node's zones",
    RejectionKind.ZONE_AFFINITY: "are outside the zone its zone-affinity grouping already uses",
    RejectionKind.ZONE_PINNED: "are not the zone of the host it is tied to",
    RejectionKind.HOST_PINNED: "are not the host it is tied to",
}


def _say(problem: PlacementProblem, why: Rejection) -> str:
    """What rejected domains "are" or "lack", after their count ("3 hosts ...")."""
    if why.kind is RejectionKind.CAPACITY:
        return f"lack free {why.resource}"
    if why.kind is RejectionKind.GROUPING:
        return f"are ruled out by {problem.constraints[why.constraint].grouping.describe()}"
    return _SAY_FIXED[why.kind]


def diagnose(state: SearchState, item: Item) -> str:
    """Why `item` has no home in `state`: every zone and host rejection, counted."""
    p = state.problem
    zone_rejects: Counter[Rejection] = Counter()
    # None counts hosts no hard rule rejects (only a soft rule kept the item away).
    host_rejects: Counter[Rejection | None] = Counter()
    for z in range(len(p.zone_names)):
        why = first_rejection(ZONE_FILTERS, state, item, z)
        if why is not None:
            zone_rejects[why] += 1
            continue
        for h, hz in enumerate(p.host_zone):
            if hz == z:
                host_rejects[first_rejection(HOST_FILTERS, state, item, h)] += 1
    parts = [f"{n} zone{'s' if n > 1 else ''} {_say(p, k)}" for k, n in zone_rejects.most_common()]
    parts.extend(
        f"{n} host{'s' if n > 1 else ''} {_say(p, k)}"
        for k, n in host_rejects.most_common()
        if k is not None
    )
    return f"{item.label()} could not be placed: " + "; ".join(parts or ["no candidates"])
