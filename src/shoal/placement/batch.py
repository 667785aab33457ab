"""Alike units, group by group: the greedy's own answer for a new cluster, without an item,
a plan or a filter call per unit.

Why it exists: issue 37 asks placement for at least 0.8 of the bucket greedy's CPU speed
(`benchmarks/placement.py`, `10k-on-5000` and `100k-on-50000`, `ratio_cpu`); the general
pipeline made an `Item` per unit, a plan lookup and a filter chain per placement, prechecks
over every item, and was at 0.44 and 0.41. Every replica of a node group looks alike (the
same parts, demand, zones and groupings), so what the general path works out per unit is
worked out here once per group (a *look*), and the loop per unit is the greedy's decision
only: the best zone, the roomiest host with room there, the counts it moves.

It answers exactly what `greedy.greedy` answers (tests/placement/test_batch.py holds the
two to the same host for every unit on random clusters and inventories), for the shapes it
takes: a new cluster (nothing exists), objective `spread`, hard anti-affinity (host or zone)
and zone spread as the only rules, no host over capacity already. Anything else answers
None, and a unit that finds no host an answer that is not `complete`: either way the general
pipeline runs from the start (prechecks, retries, the exact method), so this path never
refuses a cluster; the solver still checks its answer with the independent verifier.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush, heapreplace

from shoal.model.cluster import ClusterSpec
from shoal.model.enums import Objective, Rule, Scope
from shoal.model.inventory import Inventory
from shoal.model.nodes import Demand, allowed_zones, demand_of
from shoal.model.profile import Profile
from shoal.placement.problem import RAM, VCPU, VOL, index_hosts
from shoal.placement.state import Capacity, capacity


@dataclass(slots=True)
class _Rule:
    """One hard counted rule (anti-affinity, or spread over zones) and its counts so far,
    kept as `SearchState` keeps them (its filters' arithmetic is repeated here)."""

    spread: bool
    by_host: bool
    limit: int
    per_host: dict[int, int]
    """Members per host (a rule over hosts)."""
    per_zone: list[int]
    """Members per zone (a rule over zones)."""
    domain_set: frozenset[int] = frozenset()
    hist: dict[int, int] = field(default_factory=dict)
    """Spread: how many of its domains hold each count."""
    minimum: int = 0
    maximum: int = 0
    remaining: int = 0
    """Members still to place."""


@dataclass(slots=True, eq=False)
class Look:
    """A node group's replicas (or one instance): units that look alike to the greedy."""

    name: str
    parts: list[tuple[str | None, Profile, tuple[str, ...]]]
    """Each part's name, profile and allowed zones, as `expand` gives its nodes."""
    units: int
    first: int
    """Index of its first unit among the cluster's units (in the order of the nodes)."""
    demand: tuple[int, int, int, int]
    zones: list[int] | None
    """Allowed zone indexes, ascending; None for any zone."""
    anti_host: list[_Rule] = field(default_factory=list)
    anti_zone: list[_Rule] = field(default_factory=list)
    spreads: list[_Rule] = field(default_factory=list)

    def rules(self) -> list[_Rule]:
        return [*self.anti_host, *self.anti_zone, *self.spreads]


@dataclass(slots=True)
class Alike:
    """The answer: the cluster's looks in node order and each unit's host index."""

    looks: list[Look]
    host_of: list[int]
    """Each unit's host index; -1 for units left unplaced when `complete` is false."""
    complete: bool
    """Every unit placed; false when one found no host (the greedy would stop there too)."""


def _looks(spec: ClusterSpec, zone_index: dict[str, int]) -> list[Look] | None:
    """Every instance and group as a look, in node order (instances first, as `expand`);
    None when two units could share a name (the general path would merge them) or a look
    allows no zone."""
    looks: list[Look] = []
    groups = {g.name for g in spec.node_groups}
    if len(groups) != len(spec.node_groups):
        return None
    seen: set[str] = set()
    for inst in spec.instances:
        base, _, tail = inst.name.rpartition("-")
        if inst.name in groups or inst.name in seen or (base in groups and tail.isdigit()):
            return None
        seen.add(inst.name)
        zones = allowed_zones((inst.zone,) if inst.zone else (), inst.profile)
        looks.append(_look(inst.name, [(None, inst.profile, zones)], 1, zone_index))
    for g in spec.node_groups:
        if g.replicas is not None and len(set(g.replicas)) != len(g.replicas):
            return None
        parts = [(p.part, p.profile, allowed_zones(g.zones, p.profile)) for p in g.parts]
        looks.append(_look(g.name, parts, len(g.replica_indexes), zone_index))
    at = 0
    for look in looks:
        if not look.parts or (look.zones is not None and not look.zones):
            return None
        look.first = at
        at += look.units
    return looks


def _look(
    name: str,
    parts: list[tuple[str | None, Profile, tuple[str, ...]]],
    units: int,
    zone_index: dict[str, int],
) -> Look:
    d = [0, 0, 0, 0]
    zones: set[int] | None = None
    for _, profile, allowed in parts:
        pd: Demand = demand_of(profile)
        d[0] += pd.vcpus
        d[1] += pd.ram_mb
        d[2] += pd.disk_gb
        d[3] += pd.volume_gb
        if allowed:
            known = {zone_index[z] for z in allowed if z in zone_index}
            zones = known if zones is None else zones & known
    demand = (d[0], d[1], d[2], d[3])
    return Look(name, parts, units, 0, demand, None if zones is None else sorted(zones))


def _rules(spec: ClusterSpec, looks: list[Look], zone_index: dict[str, int]) -> bool:
    """Attach each grouping's counted rule to the looks it names; False for a rule this path
    does not take (affinity, soft rules, spread over hosts, anti-affinity below 1)."""
    nz = len(zone_index)
    by_name = {look.name: look for look in looks}
    for g in spec.groupings:
        spread = g.rule is Rule.SPREAD
        if not (g.rule is Rule.ANTI_AFFINITY or (spread and g.scope is Scope.ZONE)):
            return False
        by_host = g.scope is Scope.HOST
        limit = g.max_skew if spread else g.max_per_domain
        if not spread and limit < 1:
            return False  # the general path words the contradiction
        # As `member_units`: each target's units once (names are unique, checked above).
        members = list(dict.fromkeys(by_name[r.target] for r in g.members if r.target in by_name))
        rule = _Rule(spread, by_host, limit, {}, [] if by_host else [0] * nz)
        rule.remaining = sum(look.units for look in members)
        if spread:
            domains: set[int] = set()
            for look in members:
                if not look.units:
                    continue  # no node: no zone to measure over
                for _, _, allowed in look.parts:
                    if allowed:
                        domains.update(zone_index[z] for z in allowed if z in zone_index)
                    else:
                        domains.update(range(nz))
            rule.domain_set = frozenset(domains)
            rule.hist = {0: len(domains)} if domains else {}
        for look in members:
            if spread:
                look.spreads.append(rule)
            elif by_host:
                look.anti_host.append(rule)
            else:
                look.anti_zone.append(rule)
    return True


def _rank(look: Look, nz: int) -> tuple[float, ...]:
    """`greedy.constrainedness` of the look's units (none is pinned)."""
    d = look.demand
    hard = len(look.anti_host) + len(look.anti_zone) + len(look.spreads)
    size = d[VCPU] / 8 + d[RAM] / 16384 + d[VOL] / 1000
    return (1, len(look.zones) if look.zones is not None else nz, -hard, -size)


def place_alike(
    spec: ClusterSpec,
    inventory: Inventory,
    used: Mapping[str, Demand],
    objective: Objective,
    seed: int,
) -> Alike | None:
    """Each unit's host as the greedy would place it, or None when this path does not
    apply. When a unit finds no host the answer is not `complete` (the general pipeline
    then decides). The caller has checked that nothing of the cluster exists yet."""
    if objective is not Objective.SPREAD:
        return None
    hosts = index_hosts(inventory, used)
    if used and any(min(f) < 0 for f in hosts.base_free):
        return None  # already over capacity: the prechecks refuse, with the reasons
    looks = _looks(spec, hosts.zone_index)
    if looks is None or not _rules(spec, looks, hosts.zone_index):
        return None
    nz = len(hosts.zone_names)
    kept = (any(_key(lk) == 0 for lk in looks), any(_key(lk) == 1 for lk in looks))
    cap = capacity(hosts.base_free, hosts.host_zone, nz, seed, kept, fresh=True)
    room = _Room(cap, kept)
    host_of = [-1] * sum(look.units for look in looks)
    # The greedy's work order: by rank, then by first unit (a group's units are adjacent).
    for look in sorted(looks, key=lambda lk: (_rank(lk, nz), lk.first)):
        if look.units and not _place_look(room, hosts.host_zone, look, host_of):
            return Alike(looks, host_of, False)
    return Alike(looks, host_of, True)


def _key(look: Look) -> int:
    """The index a look's units are found by (`SearchState.index_key`): 0 by free RAM, 1 by
    free volume storage for a volume alone."""
    d = look.demand
    return 0 if d[RAM] > 0 or d[VOL] == 0 else 1


class _Room:
    """The capacity index as heaps, one per zone and index key: the greedy's index (sorted
    chunks, `state.Chunked`) read in the same order, emptiest host first, ties by rank.

    A placement lowers the host's entry in place when it is the top (`_lower`, nearly
    always), else pushes the new entry and leaves the old one, which reading drops
    (`finder`): an entry is current when it is the one the host's free room makes now, and
    room only shrinks here, so an old entry is always larger than its host's current one.
    A sift in C per placement, where the sorted chunks moved a chunk's entries in Python;
    and an index no look is found by is not kept at all.
    The benchmark that justifies it: `benchmarks/placement.py` `100k-on-50000` (the chunk
    moves were a third of this path at 100,000 nodes over 50,000 hosts).
    """

    __slots__ = ("cap", "heaps", "kept", "resource")

    def __init__(self, cap: Capacity, kept: tuple[bool, bool]) -> None:
        self.cap = cap
        self.kept = kept
        self.resource = (RAM, VOL)
        self.heaps: list[list[list[int]]] = []
        for zk in cap.entries:
            self.heaps.append([_heap(e) if read else [] for e, read in zip(zk, kept, strict=True)])

    def walk(self, look: Look, zone: int, k: int) -> int:
        """`greedy._roomiest`: the emptiest current host of `zone` with room that the host
        anti-affinities pass; -1 when none."""
        return self.finder(look, k)(zone)

    def finder(self, look: Look, k: int) -> Callable[[int], int]:
        """`walk` for the units of `look`, with what it reads bound once (the loop's
        largest cost per unit after the move itself)."""
        cap = self.cap
        heaps = [zk[k] for zk in self.heaps]
        free, ranks, by_rank, mask, bits = cap.free, cap.rank, cap.by_rank, cap.mask, cap.bits
        d0, d1, d2, d3 = look.demand
        r = self.resource[k]
        low = (d1 if k == 0 else d3) << bits
        anti = look.anti_host

        def find(zone: int) -> int:
            heap = heaps[zone]
            passed: list[int] | None = None
            found = -1
            while heap:
                entry = -heap[0]
                if entry < low:
                    break
                h = by_rank[entry & mask]
                f = free[h]
                if (f[r] << bits) | ranks[h] != entry:
                    heappop(heap)  # an old entry of a host placed on since: dropped for good
                    continue
                if (
                    f[0] >= d0
                    and f[1] >= d1
                    and f[2] >= d2
                    and f[3] >= d3
                    and (not anti or _host_ok(anti, h))
                ):
                    found = h
                    break
                if passed is None:
                    passed = []
                passed.append(heappop(heap))
            for entry in passed or ():
                heappush(heap, entry)  # passed over, not taken: back for the next unit
            return found

        return find


def _lower(heap: list[int], old: int, new: int) -> None:
    """A host's entry from `old` to `new` (lower): in place when it is the top, as it
    nearly always is (the emptiest host took the unit); else pushed, the old one left for
    reading the top to drop."""
    if heap and heap[0] == -old:
        heapreplace(heap, -new)
    else:
        heappush(heap, -new)


def _heap(entries: list[int]) -> list[int]:
    heap = [-e for e in entries]  # heapq keeps the least first: the largest entry, negated
    heapify(heap)
    return heap


def _place_look(room: _Room, host_zone: list[int], look: Look, host_of: list[int]) -> bool:
    """Place every unit of `look` in turn as `greedy.place_item` would; False when one
    finds no host (what is placed stays: the caller drops the whole answer)."""
    k = _key(look)
    fraction = room.cap.zone_fraction[k]
    nz = len(fraction)
    spreads = look.spreads
    # `greedy._best_zone`: the best zone read off the state, with no key per zone; with
    # one zone spread, zones taken in turns (`_round`).
    quick = nz > 0 and look.zones is None and len(spreads) <= 1
    rule = spreads[0] if quick and spreads else None
    order: list[int] = []
    at = 0
    take = _taker(room, look, k)
    find = room.finder(look, k)
    zoned = bool(look.anti_zone)
    every = range(nz)
    pick = fraction.__getitem__
    for u in range(look.first, look.first + look.units):
        h = -1
        if quick:
            check = zoned
            if rule is None:
                z = max(every, key=pick)
            else:
                if at >= len(order):
                    order, at = _round(rule.per_zone, fraction), 0
                z = order[at]
                at += 1
                # The spread's filter only beyond the skew of the current minimum.
                least = rule.minimum
                if rule.per_zone[z] + 1 - least > rule.limit or rule.maximum - least > rule.limit:
                    check = True
            if not check or _zone_ok(look, z):
                h = find(z)
        if h < 0:
            h = _by_keys(room, look, k)
            if h < 0:
                return False
            order = []  # the general way chose: work the turns out afresh
        take(h, host_zone[h])
        host_of[u] = h
    return True


def _round(counts: list[int], fraction: list[float]) -> list[int]:
    """The zones a look with one zone spread takes next, in turn: those with the fewest
    members, most free room first (the key `greedy._best_zone` takes the least of).

    Placing a unit changes only its zone's count and room, and takes that zone out of the
    fewest, so the others keep their order: sorted once per round of the zones, not per unit.
    """
    least = min(counts)
    return sorted((z for z, c in enumerate(counts) if c == least), key=lambda z: (-fraction[z], z))


def _by_keys(room: _Room, look: Look, k: int) -> int:
    """The general way (`greedy.place_item`): zones by their sort keys (spread balance, the
    free fraction, the zone), the first whose filters pass with a host; -1 when none."""
    fraction = room.cap.zone_fraction[k]
    zones = look.zones if look.zones is not None else range(len(fraction))
    spreads = look.spreads
    keyed = [(sum(r.per_zone[z] for r in spreads), -fraction[z], z) for z in zones]
    for *_, z in sorted(keyed):
        if _zone_ok(look, z):
            h = room.walk(look, z, k)
            if h >= 0:
                return h
    return -1


def _zone_ok(look: Look, z: int) -> bool:
    """The zone filters (`filters.ZoneAntiAffinity`, `filters.ZoneSpread`) for one more
    member in zone `z`."""
    for r in look.anti_zone:
        if r.per_zone[z] + 1 > r.limit:
            return False
    for r in look.spreads:
        if z not in r.domain_set:
            return False
        count = r.per_zone[z] + 1
        low = r.minimum
        if (count - low > r.limit or r.maximum - low > r.limit) and _shortfall(
            r, z
        ) > r.remaining - 1:
            return False
    return True


def _shortfall(r: _Rule, z: int) -> int:
    """`SearchState.spread_shortfall` for one more member in zone `z`."""
    old = r.per_zone[z]
    floor = max(r.maximum, old + 1) - r.limit
    if floor <= r.minimum:
        return 0
    short = sum(n * (floor - v) for v, n in r.hist.items() if v < floor)
    return short - max(0, floor - old) + max(0, floor - old - 1)


def _host_ok(anti: list[_Rule], h: int) -> bool:
    """`filters.HostAntiAffinity` for one more member on host `h`."""
    return all(r.per_host.get(h, 0) < r.limit for r in anti)


def _taker(room: _Room, look: Look, k: int) -> Callable[[int, int], None]:
    """`SearchState._move` of one unit of `look` onto a host in a zone, as a function with
    everything it reads bound once per look (the loop's largest cost per unit); `k`, the
    index the look's units are found by."""
    d0, d1, d2, d3 = look.demand
    cap = room.cap
    free, ranks, bits = cap.free, cap.rank, cap.bits
    zone_free, zone_cap, heaps = cap.zone_free, cap.zone_cap, room.heaps
    ram_fraction, vol_fraction = cap.zone_fraction
    by_ram, by_vol = room.kept
    by_host = [r.per_host for r in look.anti_host]
    by_zone = [r.per_zone for r in look.anti_zone]
    spreads = look.spreads
    rules = look.rules()

    def take(host: int, z: int) -> None:
        f = free[host]
        rank = ranks[host]
        zf = zone_free[z]
        if d1:
            if by_ram:
                _lower(heaps[z][0], (f[1] << bits) | rank, ((f[1] - d1) << bits) | rank)
            zf[0] -= d1
            total = zone_cap[z][0]
            ram_fraction[z] = zf[0] / total if total else 0.0
        if d3:
            if by_vol:
                _lower(heaps[z][1], (f[3] << bits) | rank, ((f[3] - d3) << bits) | rank)
            zf[1] -= d3
            total = zone_cap[z][1]
            vol_fraction[z] = zf[1] / total if total else 0.0
        f[0] -= d0
        f[1] -= d1
        f[2] -= d2
        f[3] -= d3
        if not rules:
            return
        for r in rules:
            r.remaining -= 1
        for per_host in by_host:
            per_host[host] = per_host.get(host, 0) + 1
        for per_zone in by_zone:
            per_zone[z] += 1
        for r in spreads:
            per_zone = r.per_zone
            old = per_zone[z]
            per_zone[z] = old + 1
            if z in r.domain_set:
                # The histogram of counts, its minimum and maximum (`SearchState._move`).
                hist = r.hist
                left = hist[old] - 1
                if left:
                    hist[old] = left
                else:
                    del hist[old]
                hist[old + 1] = hist.get(old + 1, 0) + 1
                while r.minimum not in hist:
                    r.minimum += 1
                if old >= r.maximum:
                    r.maximum = old + 1

    return take
