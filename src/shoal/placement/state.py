"""Mutable search state: free capacity, per-domain counts, and sorted host indexes, with undo.

Hosts of each zone sit in two sorted indexes, by free RAM and by free volume storage (one int
per host: the amount, then a seeded tie-break rank in the low bits), so the
solver finds "the emptiest host that fits" or "the fullest host that fits" in O(log n) instead of
scanning every host for every node (the bucketing DESIGN.md describes). Every change is logged
so a search can take back a tentative placement exactly.
"""

from __future__ import annotations

import random
from bisect import bisect_left, insort
from collections.abc import Iterator
from dataclasses import dataclass

from shoal.model.enums import Rule
from shoal.placement.problem import RAM, VOL, Constraint, Item, PlacementProblem

_INDEXED = (RAM, VOL)


def _remove(index: list[int], entry: int) -> None:
    del index[bisect_left(index, entry)]


CHUNK = 512
"""Most entries a chunk of a capacity index holds (one that grows past it splits in halves):
a zone of up to this many hosts is one chunk, moved in as a flat list, and a placement moves
at most this many entries (4 KiB). Timed on the greedy pass alone: 128 cost 7 % on 10,000
nodes over 5,000 hosts in 10 zones (500 a zone, several chunks), 512 nothing there, and
both about 8 % less than one flat list on 100,000 nodes over 3 zones."""


class Chunked:
    """A capacity index: one sorted run of entries kept as sorted chunks, each chunk's last
    entry in `maxes`.

    A placement takes a host's entry out at the top and puts it back below every host with
    the room it had: in one flat list of a zone's hosts that moved every entry above its new
    place, half the zone per placement (2,065 of 4,166 on 100,000 nodes; issue 23: CPU per
    node grew with the inventory). In chunks it moves at most one chunk's entries. Read from
    the top with `descending`; `chunks` in place by `_roomiest`, the hot loop, which nothing
    changes while it runs.
    """

    __slots__ = ("chunks", "maxes")

    def __init__(self, entries: list[int]) -> None:
        entries = sorted(entries)
        self.chunks = [entries[i : i + CHUNK] for i in range(0, len(entries), CHUNK)]
        self.maxes = [c[-1] for c in self.chunks]

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    def descending(self, low: int) -> Iterator[int]:
        """Entries >= `low`, largest first."""
        for c in reversed(self.chunks):
            for j in range(len(c) - 1, -1, -1):
                entry = c[j]
                if entry < low:
                    return
                yield entry

    def top(self, count: int) -> list[int]:
        """The `count` largest entries (fewer when it holds fewer)."""
        out: list[int] = []
        for c in reversed(self.chunks):
            out[:0] = c[-(count - len(out)) :]
            if len(out) >= count:
                break
        return out

    def move(self, old: int, new: int) -> None:
        """Replace entry `old` (which it holds) by `new`."""
        chunks, maxes = self.chunks, self.maxes
        i = bisect_left(maxes, old)
        c = chunks[i]
        j = bisect_left(maxes, new)
        if i == j or (j == len(maxes) and i == j - 1):
            # Both in one chunk (every move of a small zone's, which is one chunk): its size
            # is unchanged, so it neither empties nor splits.
            del c[bisect_left(c, old)]
            insort(c, new)
            maxes[i] = c[-1]
            return
        del c[bisect_left(c, old)]
        if not c:
            del chunks[i]
            del maxes[i]
        elif maxes[i] == old:
            maxes[i] = c[-1]
        if not maxes:
            chunks.append([new])
            maxes.append(new)
            return
        i = bisect_left(maxes, new)
        if i == len(maxes):  # above every entry: the last chunk's new top
            i -= 1
            c = chunks[i]
            c.append(new)
            maxes[i] = new
        else:
            c = chunks[i]
            insort(c, new)
        if len(c) > CHUNK:
            half = len(c) // 2
            chunks[i : i + 1] = [c[:half], c[half:]]
            maxes[i : i + 1] = [c[half - 1], c[-1]]


def shuffled(n: int, seed: int) -> list[int]:
    """`random.Random(seed).shuffle(list(range(n)))`, the same permutation without a method
    call per element (a tenth of building the state on 5,000 hosts). The tie-break ranks,
    so every placement, depend on it: tests/placement/test_state.py holds it to `shuffle`."""
    order = list(range(n))
    getrandbits = random.Random(seed).getrandbits
    for i in reversed(range(1, n)):
        m = i + 1
        k = m.bit_length()
        j = getrandbits(k)
        while j >= m:
            j = getrandbits(k)
        order[i], order[j] = order[j], order[i]
    return order


@dataclass(slots=True)
class Capacity:
    """Every host's free room and its capacity index entries, per zone: what `SearchState`
    and the alike-units path (`batch.py`) both place against, made one way so both break
    ties alike."""

    free: list[list[int]]
    rank: list[int]
    """Each host's seeded tie-break rank (the low bits of its index entries)."""
    by_rank: list[int]
    """The host of each rank."""
    bits: int
    mask: int
    zone_free: list[list[int]]
    """Per zone, free RAM and free volume storage."""
    zone_cap: list[list[int]]
    zone_fraction: list[list[float]]
    """Per index (RAM, volume) and zone, the free fraction, kept current by each move."""
    entries: list[list[list[int]]]
    """Per zone, the index entries by free RAM and by free volume storage, unsorted: each
    user keeps them in its own structure (`SearchState`, sorted chunks; `batch.py`, heaps)."""


def capacity(
    base_free: list[list[int]],
    host_zone: list[int],
    nz: int,
    seed: int,
    kept: tuple[bool, bool] = (True, True),
    fresh: bool = False,
) -> Capacity:
    """The hosts' room and index entries before anything of the cluster is placed.

    `kept`: which indexes (by RAM, by volume storage) to make entries for (the other is
    left empty); `fresh`: `base_free` is the caller's own, to place against as it is."""
    free = base_free if fresh else [f[:] for f in base_free]
    order = shuffled(len(free), seed)
    rank = [0] * len(free)
    for r, h in enumerate(order):
        rank[h] = r
    # An index entry is one int, (free amount << bits) | tie-break rank: it sorts as the
    # pair would, compares and allocates as one number (a tuple costs several times
    # more in the bisections of every placement), and `by_rank` maps it back to a host.
    # Low bits zero, so OR adds the rank: negative amounts sort right as well.
    bits = max(1, len(free)).bit_length()
    in_zone: list[list[int]] = [[] for _ in range(nz)]
    for h, z in enumerate(host_zone):
        in_zone[z].append(h)
    entries: list[list[list[int]]] = []
    zone_free: list[list[int]] = []
    zone_cap: list[list[int]] = []
    # Zone by zone, in comprehensions: a loop statement per host cost twice as much
    # (`benchmarks/placement.py` `100k-on-50000`: 50,000 hosts, every solve).
    for hosts in in_zone:
        ranks = [rank[h] for h in hosts]
        ram = [free[h][RAM] for h in hosts]
        vol = [free[h][VOL] for h in hosts]
        entries.append(
            [
                [(a << bits) | r for a, r in zip(ram, ranks, strict=True)] if kept[0] else [],
                [(v << bits) | r for v, r in zip(vol, ranks, strict=True)] if kept[1] else [],
            ]
        )
        zone_free.append([sum(ram), sum(vol)])
        zone_cap.append([sum(a for a in ram if a > 0), sum(v for v in vol if v > 0)])
    # Free fraction per index and zone, kept current by each move: zone ordering reads it
    # for every zone of every item.
    fraction = [
        [zone_free[z][k] / zone_cap[z][k] if zone_cap[z][k] else 0.0 for z in range(nz)]
        for k in range(2)
    ]
    return Capacity(
        free, rank, order, bits, (1 << bits) - 1, zone_free, zone_cap, fraction, entries
    )


class SearchState:
    """Where items are, what is left, and how many members each domain holds."""

    def __init__(self, problem: PlacementProblem, seed: int = 0, track_used: bool = True) -> None:
        self.problem = problem
        # The index of used hosts serves packing only; spreading skips its upkeep.
        self.track_used = track_used
        cap = capacity(problem.base_free, problem.host_zone, len(problem.zone_names), seed)
        self.free = cap.free
        nz = len(problem.zone_names)
        self.all_zones = range(nz)
        self.rank = cap.rank
        self.bits = cap.bits
        self.mask = cap.mask
        self.by_rank = cap.by_rank
        self.zone_free = cap.zone_free
        self.zone_cap = cap.zone_cap
        self.zone_fraction = cap.zone_fraction
        # Sorted chunks with bisection: a zone holds hundreds to thousands of hosts, where
        # moving at most a chunk of pointers beats a balanced structure's bookkeeping.
        self.index = [[Chunked(e) for e in zk] for zk in cap.entries]
        # The same, for the hosts this cluster already uses: packing fills those first.
        self.used_index: list[list[list[int]]] = [[[] for _ in _INDEXED] for _ in range(nz)]
        self.host_of: list[int] = [-1] * len(problem.items)
        self.block_zone: list[int | None] = list(problem.block_fixed_zone)
        self.counts: list[dict[int, int]] = [{} for _ in problem.constraints]
        # Zone-scope constraints also count in a list by zone: zone ordering reads a count
        # for every zone of every item, and a list reads faster than a dict with a default.
        self.zone_counts: list[list[int]] = [
            [0] * nz if not c.by_host else [] for c in problem.constraints
        ]
        self.used_hosts: dict[int, int] = {}
        # Spread constraints track a histogram of counts over their domains, and every
        # constraint how many of its member units are still to be placed.
        self.hist: list[dict[int, int]] = [{} for _ in problem.constraints]
        self.minimum: list[int] = [0] * len(problem.constraints)
        self.maximum: list[int] = [0] * len(problem.constraints)
        self.remaining: list[int] = [0] * len(problem.constraints)
        # What to take back: an item's index (its host is `host_of`'s), or -1 - block for a
        # block's zone. An int the item already holds, so logging allocates nothing per item.
        self._undo: list[int] = []
        self._init_counts()

    def _init_counts(self) -> None:
        p = self.problem
        existing = p.existing_units
        for c in p.constraints:
            counts = self.counts[c.index]
            # Sorted: `units` is a set of strings, and the order of `counts` decides which
            # host soft affinity tries first; hash order would differ from process to process.
            # (A new cluster has nothing to count: skip the sort.)
            for unit in sorted(c.units) if existing else ():
                h = p.existing_units.get(unit)
                if h is None:
                    continue
                d = h if c.by_host else p.host_zone[h]
                counts[d] = counts.get(d, 0) + 1
                if not c.by_host:
                    self.zone_counts[c.index][d] += 1
            if c.rule is Rule.SPREAD:
                hist = self.hist[c.index]
                for d in c.domains:
                    v = counts.get(d, 0)
                    hist[v] = hist.get(v, 0) + 1
                self.minimum[c.index] = min(hist) if hist else 0
                self.maximum[c.index] = max(hist) if hist else 0
        for item in p.items:
            for ci, m in item.memberships:
                self.remaining[ci] += m
        for h in set(p.existing_units.values()):
            self.used_hosts[h] = self.used_hosts.get(h, 0) + 1
            self._index_used(h, +1)

    # -- queries ---------------------------------------------------------------------------

    def domain(self, by_host: bool, host: int) -> int:
        return host if by_host else self.problem.host_zone[host]

    def spread_shortfall(self, c: Constraint, domain: int, m: int) -> int:
        """Members the other domains of spread `c` would still need for max - min <= limit,
        once `m` more sit in `domain` (one of its domains).

        Counts only grow, so every domain must end at least (the largest count) - limit; a
        placement is hopeless when this shortfall exceeds the members left to place. A check
        on the current minimum alone would also reject orders that later members even out.
        """
        hist = self.hist[c.index]
        old = self.counts[c.index].get(domain, 0)
        floor = max(self.maximum[c.index], old + m) - c.limit
        if floor <= self.minimum[c.index]:
            return 0  # the common case: every domain is already high enough
        short = sum(n * (floor - v) for v, n in hist.items() if v < floor)
        return short - max(0, floor - old) + max(0, floor - old - m)

    def fits(self, item: Item, host: int) -> bool:
        f = self.free[host]
        d = item.demand
        return f[0] >= d[0] and f[1] >= d[1] and f[2] >= d[2] and f[3] >= d[3]

    def candidates(self, zone: int, item: Item, pack: bool) -> Iterator[int]:
        """Hosts of `zone` with enough of the item's main resource, in objective order.

        Spread: emptiest first. Pack: the hosts this cluster already uses, fullest first (best
        fit), then unused hosts, largest first (one big host holds what two small ones would).
        """
        k = 0 if item.demand[RAM] > 0 or item.demand[VOL] == 0 else 1
        low = item.demand[_INDEXED[k]] << self.bits  # the smallest entry with that much free
        index = self.index[zone][k]
        by_rank, mask = self.by_rank, self.mask
        # Walks by position; the caller places nothing until it stops asking.
        if not pack:
            for entry in index.descending(low):
                yield by_rank[entry & mask]
            return
        used = self.used_index[zone][k]
        for j in range(bisect_left(used, low), len(used)):
            yield by_rank[used[j] & mask]
        for entry in index.descending(low):
            h = by_rank[entry & mask]
            if h not in self.used_hosts:
                yield h

    def entry_host(self, entry: int) -> int:
        """The host of a capacity index entry."""
        return self.by_rank[entry & self.mask]

    def _index_used(self, host: int, sign: int) -> None:
        if not self.track_used:
            return
        z = self.problem.host_zone[host]
        f = self.free[host]
        for k, r in enumerate(_INDEXED):
            entry = (f[r] << self.bits) | self.rank[host]
            if sign > 0:
                insort(self.used_index[z][k], entry)
            else:
                _remove(self.used_index[z][k], entry)

    @staticmethod
    def index_key(item: Item) -> int:
        """Which index an item is looked up by: RAM (0), or volume (1) for a volume alone."""
        return 0 if item.demand[RAM] > 0 or item.demand[VOL] == 0 else 1

    def zone_free_fraction(self, zone: int, item: Item) -> float:
        return self.zone_fraction[self.index_key(item)][zone]

    # -- changes ---------------------------------------------------------------------------

    def mark(self) -> int:
        return len(self._undo)

    def place(self, item: Item, host: int) -> None:
        self._move(item, host, +1)
        self.host_of[item.index] = host
        self._undo.append(item.index)
        if item.block >= 0:
            self.fix_block_zone(item.block, self.problem.host_zone[host])

    def fix_block_zone(self, block: int, zone: int) -> None:
        """Decide the zone of a zone-affinity block before its first item is placed."""
        if self.block_zone[block] is None:
            self.block_zone[block] = zone
            self._undo.append(-1 - block)

    def undo_to(self, mark: int) -> None:
        while len(self._undo) > mark:
            a = self._undo.pop()
            if a < 0:
                self.block_zone[-1 - a] = None
                continue
            host = self.host_of[a]
            item = self.problem.items[a]
            self._move(item, host, -1)
            self.host_of[a] = -1

    def _move(self, item: Item, host: int, sign: int) -> None:
        # The hot path of every search: unrolled over the two indexed resources and four
        # resources, since a loop's bookkeeping costs more than the arithmetic.
        p = self.problem
        z = p.host_zone[host]
        f = self.free[host]
        need = item.demand
        track = self.track_used
        if track and host in self.used_hosts:
            self._index_used(host, -1)
        rank = self.rank[host]
        bits = self.bits
        zone_free = self.zone_free[z]
        if need[RAM]:
            delta = sign * need[RAM]
            self.index[z][0].move((f[RAM] << bits) | rank, ((f[RAM] - delta) << bits) | rank)
            zone_free[0] -= delta
            cap = self.zone_cap[z][0]
            self.zone_fraction[0][z] = zone_free[0] / cap if cap else 0.0
        if need[VOL]:
            delta = sign * need[VOL]
            self.index[z][1].move((f[VOL] << bits) | rank, ((f[VOL] - delta) << bits) | rank)
            zone_free[1] -= delta
            cap = self.zone_cap[z][1]
            self.zone_fraction[1][z] = zone_free[1] / cap if cap else 0.0
        f[0] -= sign * need[0]
        f[1] -= sign * need[1]
        f[2] -= sign * need[2]
        f[3] -= sign * need[3]
        used_hosts = self.used_hosts
        used = used_hosts.get(host, 0) + sign
        if used:
            used_hosts[host] = used
            if track:
                self._index_used(host, +1)
        else:
            del used_hosts[host]
        for ci, m in item.memberships:
            c = p.constraints[ci]
            d = host if c.by_host else z
            self.remaining[ci] -= sign * m
            counts = self.counts[ci]
            old = counts.get(d, 0)
            new = old + sign * m
            if not c.by_host:
                self.zone_counts[ci][d] = new
            if new:
                counts[d] = new
            else:
                del counts[d]
            if c.rule is Rule.SPREAD and d in c.domain_set:
                hist = self.hist[ci]
                hist[old] -= 1
                if not hist[old]:
                    del hist[old]
                hist[new] = hist.get(new, 0) + 1
                if sign > 0:
                    while hist and self.minimum[ci] not in hist:
                        self.minimum[ci] += 1
                    if new > self.maximum[ci]:
                        self.maximum[ci] = new
                else:
                    self.minimum[ci] = min(self.minimum[ci], new)
                    while hist and self.maximum[ci] not in hist:
                        self.maximum[ci] -= 1
