"""The fast method: replicas one at a time onto the best server that keeps every rule.

Running replicas stay where they are when they still may (a change never moves what it does
not have to); then workloads are placed most constrained first, a workload another one must
be near (`affinity` with `against`) before it. Each workload keeps a heap of its servers keyed
by what only grows as replicas land (the replica counts of its spread domains, its own count
on the server, the server's load), so a stale key is simply recomputed when popped: O(R log N)
for R replicas on N servers. A failure here is not a refusal: the exact model decides.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from shoal.model.workloads import Workload, WorkloadRule, WorkloadRuleKind, WorkloadScope
from shoal.placement.workloads.problem import NodeSlot, replica_names


@dataclass(frozen=True, slots=True)
class _Demand:
    cpu: int
    mem: int
    ports: frozenset[int]


@dataclass(slots=True)
class _State:
    slots: Sequence[NodeSlot]
    dom: Mapping[WorkloadScope, list[str]]
    """Each server's domain per scope, worked out once."""
    cpu: list[int]
    mem: list[int]
    ports: list[set[int]]
    count: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    """Per workload, replicas per server index."""
    dcount: dict[tuple[str, WorkloadScope], Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter)
    )
    node_of: dict[str, str] = field(default_factory=dict)

    def place(self, w: Workload, d: _Demand, h: int, replica: str) -> None:
        self.cpu[h] -= d.cpu
        self.mem[h] -= d.mem
        if d.ports:
            self.ports[h] |= d.ports
        self.count[w.name][h] += 1
        for scope in WorkloadScope:
            self.dcount[(w.name, scope)][self.dom[scope][h]] += 1
        self.node_of[replica] = self.slots[h].node


class Greedy:
    def __init__(self, workloads: Sequence[Workload], slots: Sequence[NodeSlot]) -> None:
        self.workloads = list(workloads)
        self.slots = slots
        self.demand = {w.name: _Demand(w.cpu_milli, w.memory_mb, w.ports) for w in workloads}
        self.state = _State(
            slots,
            {sc: [s.domain(sc) for s in slots] for sc in WorkloadScope},
            [s.cpu_milli for s in slots],
            [s.memory_mb for s in slots],
            [set(s.bound_ports) for s in slots],
        )
        self.against: dict[str, list[tuple[str, WorkloadRule]]] = defaultdict(list)
        """Anti-affinity rules naming a workload, seen from that workload (they bind both)."""
        for w in workloads:
            for r in w.rules:
                if r.against is not None and r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                    self.against[r.against].append((w.name, r))
        self.failed: str | None = None
        self._selected: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], list[int]] = {}

    def run(self, existing: Mapping[str, str]) -> dict[str, str] | None:
        index = {s.node: i for i, s in enumerate(self.slots)}
        eligible = {w.name: self._eligible(w) for w in self.workloads}
        pending: dict[str, list[str]] = {}
        for w in self.workloads:
            left = []
            for r in replica_names(w):
                h = index.get(existing.get(r, ""))
                if h is not None and h in eligible[w.name] and self._fits(w, h, None):
                    self.state.place(w, self.demand[w.name], h, r)
                else:
                    left.append(r)
            pending[w.name] = left
        for w in self._order(eligible):
            if not self._place_all(w, pending[w.name], eligible[w.name]):
                self.failed = w.name
                return None
        return self.state.node_of

    def _eligible(self, w: Workload) -> set[int]:
        d = self.demand[w.name]
        return {
            i
            for i in self.selected(w)
            if (s := self.slots[i]).cpu_milli >= d.cpu
            and s.memory_mb >= d.mem
            and not (d.ports & s.bound_ports)
        }

    def selected(self, w: Workload) -> list[int]:
        key = (w.selector.groups, tuple(sorted(w.selector.labels.items())))
        found = self._selected.get(key)
        if found is None:
            found = self._selected[key] = [
                i for i, s in enumerate(self.slots) if s.matches(w.selector)
            ]
        return found

    def _order(self, eligible: Mapping[str, set[int]]) -> list[Workload]:
        by_name = {w.name: w for w in self.workloads}
        done: set[str] = set()
        ordered: list[Workload] = []

        def visit(w: Workload, depth: int) -> None:
            if w.name in done or depth > len(by_name):
                return
            for r in w.rules:
                if r.rule is WorkloadRuleKind.AFFINITY and r.against in by_name:
                    visit(by_name[r.against], depth + 1)
            if w.name not in done:
                done.add(w.name)
                ordered.append(w)

        for w in sorted(
            self.workloads,
            key=lambda w: (len(eligible[w.name]), -(w.cpu_milli + w.memory_mb) * w.replicas),
        ):
            visit(w, 0)
        return ordered

    def _place_all(self, w: Workload, replicas: list[str], eligible: set[int]) -> bool:
        if not replicas:
            return True
        hosts = eligible
        own_affinity = [
            r for r in w.rules if r.rule is WorkloadRuleKind.AFFINITY and r.against is None
        ]
        for rule in own_affinity:
            hosts = self._affinity_domain(w, rule, hosts, len(replicas))
        spreads = [r for r in w.rules if r.rule is WorkloadRuleKind.SPREAD]
        domains = {
            r.scope: sorted({self.state.dom[r.scope][i] for i in self.selected(w)}) for r in spreads
        }
        groups: dict[tuple[str, ...], list[tuple[tuple[int, int], int]]] = defaultdict(list)
        for h in hosts:
            cell = tuple(self.state.dom[r.scope][h] for r in spreads)
            groups[cell].append((self._key(w, h), h))
        for heap in groups.values():
            heapq.heapify(heap)
        return all(self._place_one(w, r, spreads, domains, groups) for r in replicas)

    def _place_one(
        self,
        w: Workload,
        replica: str,
        spreads: list[WorkloadRule],
        domains: Mapping[WorkloadScope, list[str]],
        groups: dict[tuple[str, ...], list[tuple[tuple[int, int], int]]],
    ) -> bool:
        """Into the least filled cell of the spread domains, onto its least loaded server."""
        st = self.state

        counts = [st.dcount[(w.name, r.scope)] for r in spreads]

        def fill(cell: tuple[str, ...]) -> tuple[int, ...]:
            return tuple(c[d] for c, d in zip(counts, cell, strict=True))

        order = sorted(groups, key=lambda c: (fill(c), c)) if len(groups) > 1 else list(groups)
        for cell in order:
            heap = groups[cell]
            while heap:
                key, h = heapq.heappop(heap)
                now = self._key(w, h)
                if now != key:
                    heapq.heappush(heap, (now, h))
                    continue
                if not self._fits(w, h, domains):
                    continue  # what blocks a server here only gets worse as replicas land
                st.place(w, self.demand[w.name], h, replica)
                heapq.heappush(heap, (self._key(w, h), h))
                return True
            del groups[cell]
            if spreads:
                return self._place_one(w, replica, spreads, domains, groups)
        return False

    def _key(self, w: Workload, h: int) -> tuple[int, int]:
        total = self.slots[h].cpu_milli
        load = (total - self.state.cpu[h]) * 1000 // max(total, 1)
        return (self.state.count[w.name][h], load)

    def _affinity_domain(
        self, w: Workload, rule: WorkloadRule, hosts: set[int], need: int
    ) -> set[int]:
        """Keep one domain: where replicas already are, else the one with most room."""
        st = self.state
        placed = st.dcount[(w.name, rule.scope)]
        by_domain: dict[str, set[int]] = defaultdict(set)
        for h in hosts:
            by_domain[self.slots[h].domain(rule.scope)].add(h)
        if placed:
            return by_domain.get(next(iter(placed)), set())

        def room(d: str) -> int:
            return sum(self._room(w, h) for h in by_domain[d])

        best = max(sorted(by_domain), key=room, default=None)
        return by_domain[best] if best is not None else set()

    def _room(self, w: Workload, h: int) -> int:
        st = self.state
        fits = [st.cpu[h] // w.cpu_milli if w.cpu_milli else 1 << 30]
        fits.append(st.mem[h] // w.memory_mb if w.memory_mb else 1 << 30)
        if w.ports:
            fits.append(0 if w.ports & st.ports[h] else 1)
        return min(fits)

    def _fits(self, w: Workload, h: int, domains: Mapping[WorkloadScope, list[str]] | None) -> bool:
        st = self.state
        dem = self.demand[w.name]
        if st.cpu[h] < dem.cpu or st.mem[h] < dem.mem or (dem.ports and dem.ports & st.ports[h]):
            return False
        if w.max_per_node is not None and st.count[w.name][h] >= w.max_per_node:
            return False
        for r in w.rules:
            d = st.dom[r.scope][h]
            mine = st.dcount[(w.name, r.scope)]
            if r.against is not None:
                theirs = st.dcount[(r.against, r.scope)][d]
                if r.rule is WorkloadRuleKind.ANTI_AFFINITY and theirs:
                    return False
                if r.rule is WorkloadRuleKind.AFFINITY and not theirs:
                    return False
            elif r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                if mine[d] >= r.max_per_domain:
                    return False
            elif r.rule is WorkloadRuleKind.AFFINITY:
                if mine and d not in mine:
                    return False
            elif domains is not None:
                low = min((mine[x] for x in domains[r.scope]), default=0)
                if mine[d] + 1 - low > r.max_skew:
                    return False
        for other, r in self.against.get(w.name, []):
            if st.dcount[(other, r.scope)][st.dom[r.scope][h]]:
                return False
        return True
