"""An independent check of a second-level placement: every rule, capacity and port, counted
again from the answer alone. The solver runs it on what it returns (a bug in a fast path
becomes a refusal, never a broken placement), and the property tests use it as the judge."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from shoal.model.workloads import Workload, WorkloadRuleKind, WorkloadScope
from shoal.placement.workloads.problem import NodeSlot, Selection, replica_names


def violations(
    workloads: Sequence[Workload], slots: Sequence[NodeSlot], node_of: Mapping[str, str]
) -> list[str]:
    """Every broken rule of the placement `node_of` (replica -> server), in words."""
    out: list[str] = []
    sel = Selection(slots)
    by_node = {s.node: s for s in slots}
    where: dict[str, list[NodeSlot]] = {}
    for w in workloads:
        placed = []
        for r in replica_names(w):
            node = node_of.get(r)
            slot = by_node.get(node) if node is not None else None
            if slot is None:
                out.append(f"replica {r} is not on any of the cluster's servers")
                continue
            if not slot.matches(w.selector):
                out.append(f"replica {r} is on {slot.node}, outside its node selector")
            placed.append(slot)
        where[w.name] = placed
    _capacity(workloads, slots, where, out)
    for w in workloads:
        placed = where[w.name]
        if w.max_per_node is not None:
            for node, n in Counter(s.node for s in placed).items():
                if n > w.max_per_node:
                    out.append(f"workload {w.name} has {n} replicas on {node} (max_per_node)")
        for rule in w.rules:
            words = rule.describe(w.name)
            mine = Counter(s.domain(rule.scope) for s in placed)
            if rule.against is not None:
                theirs = Counter(s.domain(rule.scope) for s in where.get(rule.against, []))
                if rule.rule is WorkloadRuleKind.ANTI_AFFINITY and set(mine) & set(theirs):
                    out.append(f"{words} is broken in {sorted(set(mine) & set(theirs))[0]}")
                if rule.rule is WorkloadRuleKind.AFFINITY and set(mine) - set(theirs):
                    out.append(f"{words} is broken in {sorted(set(mine) - set(theirs))[0]}")
            elif rule.rule is WorkloadRuleKind.ANTI_AFFINITY:
                for d, n in mine.items():
                    if n > rule.max_per_domain:
                        out.append(f"{words} is broken in {d} ({n} replicas)")
            elif rule.rule is WorkloadRuleKind.AFFINITY:
                if len(mine) > 1:
                    out.append(f"{words} is broken: replicas in {', '.join(sorted(mine))}")
            else:
                domains = eligible_domains(w, slots, rule.scope, sel)
                counts = [mine.get(d, 0) for d in domains]
                if counts and max(counts) - min(counts) > rule.max_skew:
                    out.append(f"{words} is broken: {max(counts)} vs {min(counts)} replicas")
    return out


def eligible_domains(
    w: Workload, slots: Sequence[NodeSlot], scope: WorkloadScope, sel: Selection | None = None
) -> list[str]:
    """The domains a spread is measured over: those with a server the workload may use."""
    picked = sel.of(w.selector) if sel is not None else [s for s in slots if s.matches(w.selector)]
    return sorted({s.domain(scope) for s in picked})


def _capacity(
    workloads: Sequence[Workload],
    slots: Sequence[NodeSlot],
    where: Mapping[str, list[NodeSlot]],
    out: list[str],
) -> None:
    cpu: Counter[str] = Counter()
    mem: Counter[str] = Counter()
    ports: dict[str, Counter[int]] = defaultdict(Counter)
    for w in workloads:
        for s in where[w.name]:
            cpu[s.node] += w.cpu_milli
            mem[s.node] += w.memory_mb
            for p in w.ports:
                ports[s.node][p] += 1
    for s in slots:
        if cpu[s.node] > s.cpu_milli or mem[s.node] > s.memory_mb:
            out.append(f"server {s.node} is over capacity")
        for p, n in ports[s.node].items():
            if n + (p in s.bound_ports) > 1:
                out.append(f"port {p} is bound {n + (p in s.bound_ports)} times on {s.node}")
