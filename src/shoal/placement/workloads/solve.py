"""Placing every replica of every workload: checks that prove a refusal on their own, then
greedy, then the exact model; whatever is returned has passed `verify`.

Reasons name what the user wrote: the workload, its rule in the document's words, the servers
and hosts and zones involved, the port two replicas would share.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from shoal.model.workloads import Workload, WorkloadRuleKind
from shoal.placement.workloads.exact import Verdict, solve_exact
from shoal.placement.workloads.greedy import Greedy
from shoal.placement.workloads.problem import (
    NodeSlot,
    Selection,
    WorkloadPlacement,
    WorkloadRefusal,
    replica_names,
)
from shoal.placement.workloads.verify import violations


def place_workloads(
    workloads: Sequence[Workload],
    slots: Sequence[NodeSlot],
    existing: Mapping[str, str] | None = None,
    *,
    exact_time_limit_s: float = 10.0,
) -> WorkloadPlacement | WorkloadRefusal:
    """Every replica (`NAME-I`) onto a server, or the reasons none exists. `existing` maps
    running replicas to their servers: they stay there when the rules still allow it."""
    existing = existing or {}
    wanted = [w for w in workloads if w.replicas > 0]
    reasons = precheck(wanted, slots)
    if reasons:
        return WorkloadRefusal(tuple(reasons))
    greedy = Greedy(wanted, slots)
    node_of = greedy.run(existing)
    method = "greedy"
    if node_of is None or violations(wanted, slots, node_of):
        answer = solve_exact(wanted, slots, existing, exact_time_limit_s)
        if answer.verdict is Verdict.UNKNOWN:
            return WorkloadRefusal(
                (
                    f"no placement found in time for workload {greedy.failed or '?'}; "
                    "the exact search was too large or ran out of time",
                ),
                undecided=True,
            )
        if answer.verdict is Verdict.NONE_EXISTS:
            return WorkloadRefusal(tuple(_together(wanted, greedy.failed)))
        node_of, method = answer.node_of, "exact"
    broken = violations(wanted, slots, node_of)
    if broken:  # pragma: no cover - both methods are checked; a bug is refused, not run
        return WorkloadRefusal(tuple(f"internal check failed: {b}" for b in broken))
    moved = tuple(sorted(r for r, n in existing.items() if r in node_of and node_of[r] != n))
    owner = {r: w.name for w in wanted for r in replica_names(w)}
    return WorkloadPlacement(node_of, owner, method, moved)


def precheck(workloads: Sequence[Workload], slots: Sequence[NodeSlot]) -> list[str]:
    """Refusals that need no search: each is a proof on its own."""
    out: list[str] = []
    names = {w.name for w in workloads}
    sel = Selection(slots)
    for w in workloads:
        mine = sel.of(w.selector)
        if not mine:
            out.append(f"workload {w.name}: no server matches its node selector{_sel(w)}")
            continue
        room = [
            s
            for s in mine
            if s.cpu_milli >= w.cpu_milli
            and s.memory_mb >= w.memory_mb
            and not (w.ports & s.bound_ports)
        ]
        if not room:
            out.append(
                f"workload {w.name}: no server has room for one replica "
                f"({w.cpu_milli}m CPU, {w.memory_mb} MiB{_ports(w)})"
            )
            continue
        limit = len(room) if w.ports else None
        if w.max_per_node is not None:
            limit = min(limit or 1 << 62, len(room) * w.max_per_node)
        if limit is not None and limit < w.replicas:
            why = (
                f"binds port {min(w.ports)} on the node's address"
                if w.ports
                else (f"has max_per_node {w.max_per_node}")
            )
            out.append(
                f"workload {w.name} {why}: {w.replicas} replicas need {w.replicas} places "
                f"but only {limit} fit on the {len(room)} servers it may use"
            )
        for r in w.rules:
            if r.against is not None:
                if r.against not in names and r.rule is WorkloadRuleKind.AFFINITY:
                    out.append(
                        f"{r.describe(w.name)}: workload {r.against} has no replicas to be near"
                    )
                continue
            if r.rule is WorkloadRuleKind.ANTI_AFFINITY:
                domains = sorted({s.domain(r.scope) for s in room})
                if len(domains) * r.max_per_domain < w.replicas:
                    out.append(
                        f"{r.describe(w.name)}: {w.replicas} replicas but the servers it may "
                        f"use are in {len(domains)} {r.scope}(s): {', '.join(domains[:10])}"
                    )
        total_cpu = sum(s.cpu_milli for s in room)
        total_mem = sum(s.memory_mb for s in room)
        if w.cpu_milli * w.replicas > total_cpu or w.memory_mb * w.replicas > total_mem:
            out.append(
                f"workload {w.name}: {w.replicas} replicas of {w.cpu_milli}m CPU and "
                f"{w.memory_mb} MiB exceed the {total_cpu}m CPU and {total_mem} MiB free "
                "on its servers"
            )
    out.extend(_shared_ports(workloads, slots))
    return out


def _shared_ports(workloads: Sequence[Workload], slots: Sequence[NodeSlot]) -> list[str]:
    """Two replicas never bind one node address and port: workloads sharing a port need as
    many servers between them as they have replicas."""
    out = []
    by_port: dict[int, list[Workload]] = defaultdict(list)
    for w in workloads:
        for p in w.ports:
            by_port[p].append(w)
    for port, group in sorted(by_port.items()):
        if len(group) < 2:
            continue
        servers = {s.node for s in slots if any(s.matches(w.selector) for w in group)}
        servers -= {s.node for s in slots if port in s.bound_ports}
        need = sum(w.replicas for w in group)
        if need > len(servers):
            names = " and ".join(w.name for w in group)
            out.append(
                f"workloads {names} all bind port {port} on the node's address: {need} "
                f"replicas need {need} servers, {len(servers)} may carry them"
            )
    return out


def _together(workloads: Sequence[Workload], failed: str | None) -> list[str]:
    w = next((x for x in workloads if x.name == failed), None)
    rules = [r.describe(w.name) for r in w.rules] if w is not None else []
    if w is not None and w.max_per_node is not None:
        rules.append(f"workload {w.name}'s max_per_node {w.max_per_node}")
    listed = "; ".join(rules) or "capacity and ports"
    who = f"workload {failed}" if failed else "the workloads"
    return [
        f"no placement of every replica keeps every rule at once (proven by the exact "
        f"search): {who} with {listed}, on the servers' free capacity"
    ]


def _sel(w: Workload) -> str:
    parts = []
    if w.selector.groups:
        parts.append("groups " + ", ".join(w.selector.groups))
    if w.selector.labels:
        parts.append("labels " + ", ".join(f"{k}={v}" for k, v in w.selector.labels.items()))
    return f" ({'; '.join(parts)})" if parts else ""


def _ports(w: Workload) -> str:
    return f", port {', '.join(map(str, sorted(w.ports)))}" if w.ports else ""
