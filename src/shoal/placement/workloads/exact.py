"""The exact method for the second level: a CP-SAT model over replica counts.

Replicas of one workload are interchangeable, so the model counts them per server
(x[w, n] in 0..replicas) instead of choosing a server per replica: 50 workloads on 1,000
servers is 50,000 small integers, not 10,000 x 1,000 booleans. It runs only when greedy
failed, and answers found, proven impossible, or unknown (too big or out of time), so Shoal
never says "cannot be placed" when it only gave up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from shoal.model.workloads import Workload, WorkloadRuleKind, WorkloadScope
from shoal.placement.workloads.problem import NodeSlot, replica_names
from shoal.placement.workloads.verify import eligible_domains

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

MAX_PAIRS = 200_000
"""Workload x server pairs above which the model is not built (answer: unknown)."""


class Verdict(StrEnum):
    FOUND = "found"
    NONE_EXISTS = "none-exists"
    UNKNOWN = "unknown"


@dataclass(slots=True)
class ExactAnswer:
    verdict: Verdict
    node_of: dict[str, str] = field(default_factory=dict)


def solve_exact(
    workloads: Sequence[Workload],
    slots: Sequence[NodeSlot],
    existing: Mapping[str, str],
    time_limit_s: float = 10.0,
) -> ExactAnswer:
    eligible = {
        w.name: [i for i, s in enumerate(slots) if s.matches(w.selector)] for w in workloads
    }
    if sum(len(v) for v in eligible.values()) > MAX_PAIRS:
        return ExactAnswer(Verdict.UNKNOWN)
    # OR-Tools is imported only when the exact method runs: it costs ~0.3 s and pulls in
    # pandas, which a plan greedy answers never needs (issue 37; benchmarks/cli.py).
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    x: dict[tuple[str, int], cp_model.IntVar] = {}
    for w in workloads:
        cap = w.replicas if w.max_per_node is None else min(w.replicas, w.max_per_node)
        if w.ports:
            cap = min(cap, 1)
        for h in eligible[w.name]:
            if not (w.ports & slots[h].bound_ports):
                x[(w.name, h)] = m.new_int_var(0, cap, f"x_{w.name}_{h}")
        m.add(sum(x[(w.name, h)] for h in eligible[w.name] if (w.name, h) in x) == w.replicas)
    for h, s in enumerate(slots):
        here = [(w, x[(w.name, h)]) for w in workloads if (w.name, h) in x]
        if not here:
            continue
        m.add(sum(w.cpu_milli * v for w, v in here) <= s.cpu_milli)
        m.add(sum(w.memory_mb * v for w, v in here) <= s.memory_mb)
        by_port: dict[int, list[cp_model.IntVar]] = defaultdict(list)
        for w, v in here:
            for p in w.ports:
                by_port[p].append(v)
        for vs in by_port.values():
            if len(vs) > 1:
                m.add(sum(vs) <= 1)
    present: dict[tuple[str, WorkloadScope, str], cp_model.IntVar] = {}

    def total(w: Workload, scope: WorkloadScope, d: str) -> cp_model.LinearExprT:
        return sum(
            x[(w.name, h)]
            for h in eligible[w.name]
            if (w.name, h) in x and slots[h].domain(scope) == d
        )

    def used(w: Workload, scope: WorkloadScope, d: str) -> cp_model.IntVar:
        key = (w.name, scope, d)
        if key not in present:
            b = m.new_bool_var(f"in_{w.name}_{scope}_{d}")
            t = total(w, scope, d)
            m.add(t >= 1).only_enforce_if(b)
            m.add(t == 0).only_enforce_if(~b)
            present[key] = b
        return present[key]

    by_name = {w.name: w for w in workloads}
    all_domains = {sc: sorted({s.domain(sc) for s in slots}) for sc in WorkloadScope}
    for w in workloads:
        for r in w.rules:
            domains = all_domains[r.scope]
            other = by_name.get(r.against) if r.against is not None else None
            if r.against is not None and other is None:
                if r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                    continue  # nothing to keep away from: a workload scaled to 0
                return ExactAnswer(Verdict.NONE_EXISTS)
            if other is not None:
                for d in domains:
                    if r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                        m.add(used(w, r.scope, d) + used(other, r.scope, d) <= 1)
                    else:
                        m.add(used(w, r.scope, d) <= used(other, r.scope, d))
            elif r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                for d in domains:
                    m.add(total(w, r.scope, d) <= r.max_per_domain)
            elif r.rule is WorkloadRuleKind.AFFINITY:
                if w.replicas:
                    m.add(sum(used(w, r.scope, d) for d in domains) == 1)
            else:
                spread = eligible_domains(w, slots, r.scope)
                low = m.new_int_var(0, w.replicas, f"lo_{w.name}")
                high = m.new_int_var(0, w.replicas, f"hi_{w.name}")
                for d in spread:
                    m.add(total(w, r.scope, d) >= low)
                    m.add(total(w, r.scope, d) <= high)
                m.add(high - low <= r.max_skew)
    kept = []
    index = {s.node: i for i, s in enumerate(slots)}
    for w in workloads:
        on: dict[int, int] = defaultdict(int)
        for name in replica_names(w):
            at = index.get(existing.get(name, ""))
            if at is not None and (w.name, at) in x:
                on[at] += 1
        for h, n in on.items():
            k = m.new_int_var(0, n, f"k_{w.name}_{h}")
            m.add(k <= x[(w.name, h)])
            kept.append(k)
    if kept:
        m.maximize(sum(kept))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 1
    status = solver.solve(m)
    if status == cp_model.INFEASIBLE:
        return ExactAnswer(Verdict.NONE_EXISTS)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return ExactAnswer(Verdict.UNKNOWN)
    return ExactAnswer(Verdict.FOUND, _assign(workloads, slots, existing, x, solver))


def _assign(
    workloads: Sequence[Workload],
    slots: Sequence[NodeSlot],
    existing: Mapping[str, str],
    x: Mapping[tuple[str, int], cp_model.IntVar],
    solver: cp_model.CpSolver,
) -> dict[str, str]:
    """Counts to replica names: a replica keeps its server when its server kept a count."""
    node_of: dict[str, str] = {}
    for w in workloads:
        left = {slots[h].node: solver.value(v) for (name, h), v in x.items() if name == w.name}
        names = replica_names(w)
        for r in names:
            n = existing.get(r)
            if n is not None and left.get(n, 0) > 0:
                node_of[r] = n
                left[n] -= 1
        free = [n for n, c in sorted(left.items()) for _ in range(c)]
        for r in names:
            if r not in node_of:
                node_of[r] = free.pop()
    return node_of
