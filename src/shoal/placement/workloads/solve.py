"""Placing every replica of every workload: checks that prove a refusal on their own, then
greedy, then the exact model; whatever is returned has passed `verify`.

A refusal is typed (`rejection.WorkloadRejection`: its kind and figures), worded in what the
user wrote: the workload, its rule in the document's words, the servers and hosts and zones
involved, the port two replicas would share.
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
from shoal.placement.workloads.rejection import WorkloadRejection
from shoal.placement.workloads.rejection import WorkloadRejectionKind as Kind
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
    refused = precheck(wanted, slots)
    if refused:
        return WorkloadRefusal(tuple(refused))
    greedy = Greedy(wanted, slots)
    node_of = greedy.run(existing)
    method = "greedy"
    if node_of is None or violations(wanted, slots, node_of):
        answer = solve_exact(wanted, slots, existing, exact_time_limit_s)
        if answer.verdict is Verdict.UNKNOWN:
            undecided = WorkloadRejection(Kind.UNDECIDED, greedy.failed or "")
            return WorkloadRefusal((undecided,))
        if answer.verdict is Verdict.NONE_EXISTS:
            return WorkloadRefusal((_together(wanted, greedy.failed),))
        node_of, method = answer.node_of, "exact"
    broken = violations(wanted, slots, node_of)
    if broken:  # pragma: no cover - both methods are checked; a bug is refused, not run
        return WorkloadRefusal(
            tuple(WorkloadRejection(Kind.BROKEN_CHECK, finding=b) for b in broken)
        )
    moved = tuple(sorted(r for r, n in existing.items() if r in node_of and node_of[r] != n))
    owner = {r: w.name for w in wanted for r in replica_names(w)}
    return WorkloadPlacement(node_of, owner, method, moved)


def precheck(workloads: Sequence[Workload], slots: Sequence[NodeSlot]) -> list[WorkloadRejection]:
    """Refusals that need no search: each is a proof on its own."""
    out: list[WorkloadRejection] = []
    names = {w.name for w in workloads}
    sel = Selection(slots)
    for w in workloads:
        mine = sel.of(w.selector)
        if not mine:
            out.append(WorkloadRejection(Kind.NO_SERVER_SELECTED, w.name, selector=w.selector))
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
                WorkloadRejection(
                    Kind.NO_ROOM,
                    w.name,
                    cpu_milli=w.cpu_milli,
                    memory_mb=w.memory_mb,
                    ports=w.ports,
                )
            )
            continue
        out.extend(_places(w, room))
        out.extend(_rules(w, room, names))
        total_cpu = sum(s.cpu_milli for s in room)
        total_mem = sum(s.memory_mb for s in room)
        if w.cpu_milli * w.replicas > total_cpu or w.memory_mb * w.replicas > total_mem:
            out.append(
                WorkloadRejection(
                    Kind.CAPACITY,
                    w.name,
                    need=w.replicas,
                    cpu_milli=w.cpu_milli,
                    memory_mb=w.memory_mb,
                    free_cpu_milli=total_cpu,
                    free_memory_mb=total_mem,
                )
            )
    out.extend(_shared_ports(workloads, slots))
    return out


def _places(w: Workload, room: Sequence[NodeSlot]) -> list[WorkloadRejection]:
    """A port on the node's address, or `max_per_node`, allowing fewer places than replicas."""
    limit = len(room) if w.ports else None
    if w.max_per_node is not None:
        limit = min(limit or 1 << 62, len(room) * w.max_per_node)
    if limit is None or limit >= w.replicas:
        return []
    return [
        WorkloadRejection(
            Kind.TOO_FEW_PLACES,
            w.name,
            need=w.replicas,
            have=limit,
            servers=len(room),
            port=min(w.ports) if w.ports else None,
            max_per_node=w.max_per_node,
        )
    ]


def _rules(w: Workload, room: Sequence[NodeSlot], names: set[str]) -> list[WorkloadRejection]:
    out = []
    for r in w.rules:
        if r.against is not None:
            if r.against not in names and r.rule is WorkloadRuleKind.AFFINITY:
                out.append(WorkloadRejection(Kind.NOTHING_TO_BE_NEAR, w.name, rule=r))
            continue
        if r.rule is WorkloadRuleKind.ANTI_AFFINITY:
            domains = sorted({s.domain(r.scope) for s in room})
            if len(domains) * r.max_per_domain < w.replicas:
                out.append(
                    WorkloadRejection(
                        Kind.TOO_FEW_DOMAINS,
                        w.name,
                        rule=r,
                        need=w.replicas,
                        have=len(domains),
                        domains=tuple(domains[:10]),
                    )
                )
    return out


def _shared_ports(
    workloads: Sequence[Workload], slots: Sequence[NodeSlot]
) -> list[WorkloadRejection]:
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
            out.append(
                WorkloadRejection(
                    Kind.SHARED_PORT,
                    workloads=tuple(w.name for w in group),
                    port=port,
                    need=need,
                    have=len(servers),
                )
            )
    return out


def _together(workloads: Sequence[Workload], failed: str | None) -> WorkloadRejection:
    w = next((x for x in workloads if x.name == failed), None)
    if w is None:
        return WorkloadRejection(Kind.NO_PLACEMENT)
    return WorkloadRejection(Kind.NO_PLACEMENT, w.name, rules=w.rules, max_per_node=w.max_per_node)
